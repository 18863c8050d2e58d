// The phone of the five-minute journey (README "Five minutes to a connected
// team"): a device that knows nothing but the text of the enrollment QR code
// it was shown. It does what ATAK's "Scan QR" does with that text, through a
// third-party TAK library, @tak-ps/node-tak:
//
//  1. reads host, username and token from the tak://com.atakmap.app/enroll
//     link (nothing else is given to it: no port, no certificate, no CA);
//  2. enrolls on the enrollment port ATAK assumes, 8446, with node-tak's own
//     enrollment code (Credentials.generate: GET /Marti/api/tls/config, a CSR
//     made with its subject entries, POST /Marti/api/tls/signClient/v2), the
//     token standing in for the password;
//  3. connects to the streaming port ATAK assumes for SSL, 8089, with the
//     certificate it was given (node-tak's TAK client), sends its position
//     every second and waits for PEER_UID's position.
//
// node-tak's password auth normally logs in through an OAuth endpoint first
// (/oauth/token, which Outpost does not serve) and then sends a cookie; a
// device sends HTTP Basic credentials on every enrollment request, as ATAK
// and pytak do, so the auth below adds them and skips that login. The server
// is trusted on first use (NODE_TLS_REJECT_UNAUTHORIZED=0 for the enrollment
// request, as a device shown a new server's fingerprint accepts it); the
// test checks the server certificate itself.
//
// Prints one JSON line per step with its duration in milliseconds; exits 0
// when all pass, 1 otherwise. Environment: TAK_URL (the QR text), DEVICE_UID,
// PEER_UID, TIMEOUT_MS (default 30000).
import TAK, { CoT, TAKAPI, APIAuthPassword } from '@tak-ps/node-tak';

const timeoutMs = parseInt(process.env.TIMEOUT_MS || '30000', 10);
let last = Date.now();
const step = (name, extra = {}) => {
    const now = Date.now();
    console.log(JSON.stringify({ step: name, ms: now - last, ...extra }));
    last = now;
};
function fail(msg) {
    console.log(JSON.stringify({ step: 'fail', message: msg }));
    process.exit(1);
}
const env = (k) => process.env[k] || fail(`missing environment variable ${k}`);

class BasicAuth extends APIAuthPassword {
    async init() { /* no OAuth login: Basic credentials on each request */ }
    async fetch(api, url, opts) {
        opts.headers = { ...(opts.headers || {}), Authorization: 'Basic ' + btoa(`${this.username}:${this.password}`) };
        opts.nocookies = true;
        return super.fetch(api, url, opts);
    }
}

function readQR(text) {
    let u;
    try { u = new URL(text); } catch (e) { fail(`the QR text is not a URL: ${e.message}`); }
    if (u.protocol !== 'tak:' || u.host !== 'com.atakmap.app' || u.pathname !== '/enroll') {
        fail(`the QR text is not an ATAK enrollment link: ${text}`);
    }
    const q = (k) => u.searchParams.get(k) || fail(`the enrollment link has no ${k}`);
    return { host: q('host'), username: q('username'), token: q('token') };
}

const sa = (uid, lat, lon) => {
    const now = new Date();
    const stale = new Date(now.getTime() + 5 * 60 * 1000);
    return new CoT(`<event version="2.0" uid="${uid}" type="a-f-G-U-C" how="m-g" ` +
        `time="${now.toISOString()}" start="${now.toISOString()}" stale="${stale.toISOString()}">` +
        `<point lat="${lat}" lon="${lon}" hae="10" ce="9.9" le="9999999"/>` +
        `<detail><contact callsign="${uid}" endpoint="*:-1:stcp"/>` +
        `<__group name="Cyan" role="Team Member"/></detail></event>`);
};

async function main() {
    const qr = readQR(env('TAK_URL'));
    step('qr-read', { host: qr.host, username: qr.username });

    const api = new TAKAPI(new URL(`https://${qr.host}:8446`), new BasicAuth(qr.username, qr.token));
    const { cert, key } = await api.Credentials.generate();
    if (!cert.includes('BEGIN CERTIFICATE') || !key.includes('PRIVATE KEY')) {
        fail('the enrollment gave no certificate and key');
    }
    step('enrolled', { cert: cert.length });

    const me = env('DEVICE_UID');
    const peer = env('PEER_UID');
    const tak = await TAK.connect('journey', new URL(`ssl://${qr.host}:8089`), { cert, key });
    tak.on('error', (err) => fail(`streaming connection: ${err.message}`));
    step('connected');

    const got = new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no position of ${peer} within ${timeoutMs} ms`)), timeoutMs);
        tak.on('cot', (c) => {
            if (c.raw.event._attributes.uid === peer) { clearTimeout(timer); resolve(); }
        });
    });
    const send = () => tak.write([sa(me, 59.3293, 18.0686)]);
    send();
    const every = setInterval(send, 1000);
    await got;
    clearInterval(every);
    step('exchanged', { peer });
    tak.destroy();
    process.exit(0);
}

main().catch((err) => fail(err.message));

// Interoperability check with a real third-party TAK client library:
// @tak-ps/node-tak (streaming over mutual TLS) with @tak-ps/node-cot (which
// rejects any event without version, <point> or stale).
//
// Two clients connect to OUTPOST_COT_URL (ssl://host:port) with their own
// certificates. Both must receive pongs to node-tak's pings; client A sends a
// position report that client B must receive intact. Every received event
// must parse with node-cot. Prints one JSON line per step; exits 0 when all
// steps pass, 1 otherwise.
//
// Environment: OUTPOST_COT_URL, CERT_A, KEY_A, CERT_B, KEY_B (PEM file paths),
// TIMEOUT_MS (default 20000).
import fs from 'node:fs';
import TAK, { CoT } from '@tak-ps/node-tak';

const env = (k) => {
    const v = process.env[k];
    if (!v) { fail(`missing environment variable ${k}`); }
    return v;
};
const timeoutMs = parseInt(process.env.TIMEOUT_MS || '20000', 10);
const step = (name, extra = {}) => console.log(JSON.stringify({ step: name, ...extra }));
function fail(msg) {
    console.log(JSON.stringify({ step: 'fail', message: msg }));
    process.exit(1);
}

// node-tak reports events it cannot parse on console.error ("Error parsing").
const parseErrors = [];
const origError = console.error;
console.error = (...args) => {
    if (typeof args[0] === 'string' && args[0].startsWith('Error parsing')) {
        parseErrors.push(String(args[1]));
    }
    origError(...args);
};

const url = new URL(env('OUTPOST_COT_URL'));
const auth = (c, k) => ({ cert: fs.readFileSync(env(c), 'utf8'), key: fs.readFileSync(env(k), 'utf8') });

const waitFor = (emitter, event, match = () => true) => new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no ${event} within ${timeoutMs} ms`)), timeoutMs);
    const on = (arg) => {
        if (!match(arg)) return;
        clearTimeout(timer);
        emitter.off(event, on);
        resolve(arg);
    };
    emitter.on(event, on);
});

const sa = (uid, callsign, lat, lon) => {
    const now = new Date();
    const stale = new Date(now.getTime() + 5 * 60 * 1000);
    return new CoT(`<event version="2.0" uid="${uid}" type="a-f-G-U-C" how="m-g" ` +
        `time="${now.toISOString()}" start="${now.toISOString()}" stale="${stale.toISOString()}">` +
        `<point lat="${lat}" lon="${lon}" hae="12.5" ce="9.9" le="9999999"/>` +
        `<detail><contact callsign="${callsign}" endpoint="*:-1:stcp"/>` +
        `<__group name="Cyan" role="Team Member"/><takv device="node" platform="node-tak" os="linux" version="8.9.0"/>` +
        `</detail></event>`);
};

async function main() {
    const a = await TAK.connect('A', url, auth('CERT_A', 'KEY_A'));
    const b = await TAK.connect('B', url, auth('CERT_B', 'KEY_B'));
    for (const [name, c] of [['A', a], ['B', b]]) {
        c.on('error', (err) => fail(`client ${name}: ${err.message}`));
        c.on('end', () => step('end', { client: name }));
    }
    step('connected');

    // node-tak pings on connect and every 5 s; a pong emits 'ping'.
    await Promise.all([waitFor(a, 'ping'), waitFor(b, 'ping')]);
    step('pong', { clients: ['A', 'B'] });

    const received = waitFor(b, 'cot', (cot) => cot.raw.event._attributes.uid === 'NODE-TAK-A');
    a.write([sa('NODE-TAK-A', 'NODE-ALPHA', 59.3293, 18.0686)]);
    const cot = await received;
    const ev = cot.raw.event;
    const callsign = ev.detail && ev.detail.contact && ev.detail.contact._attributes.callsign;
    const lat = Number(ev.point._attributes.lat);
    if (callsign !== 'NODE-ALPHA' || Math.abs(lat - 59.3293) > 1e-9) {
        fail(`position report arrived changed: callsign ${callsign}, lat ${lat}`);
    }
    step('relayed', { uid: ev._attributes.uid, callsign, type: ev._attributes.type });

    // A second round of pings after the relay: the connection stays healthy.
    await waitFor(a, 'ping');
    step('pong-again', { client: 'A' });

    if (parseErrors.length) {
        fail(`node-cot could not parse ${parseErrors.length} event(s) from the server: ${parseErrors[0].slice(0, 300)}`);
    }
    a.destroy();
    b.destroy();
    step('done');
    process.exit(0);
}

main().catch((err) => fail(err.message));

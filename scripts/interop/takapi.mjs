// What the node-tak interoperability scripts share: the server's URL and
// an authenticated TAKAPI (a client certificate on HTTPS, none on HTTP), and
// the one-JSON-line-per-step output the Go tests read.
//
// Environment: OUTPOST_URL (http://host:port or https://host:port), CERT,
// KEY (PEM files; HTTPS only).
import fs from 'node:fs';
import TAKAPI from '@tak-ps/node-tak/lib/api';
import { APIAuth, APIAuthCertificate } from '@tak-ps/node-tak/lib/auth';

export const url = new URL(process.env.OUTPOST_URL);

// out prints one step's result: {"step": ..., "ok": true|false, ...extra}.
export const out = (step, ok, extra = {}) => console.log(JSON.stringify({ step, ok, ...extra }));

// errText is what a failed step reports of its error.
export const errText = (err) => String((err && (err.safeMessage || err.message)) || err);

// connect returns a TAKAPI for url.
export async function connect() {
    const auth = url.protocol === 'https:'
        ? new APIAuthCertificate(fs.readFileSync(process.env.CERT, 'utf8'), fs.readFileSync(process.env.KEY, 'utf8'))
        : new APIAuth();
    return TAKAPI.init(url, auth);
}

// What the node-tak interoperability scripts share: the server's URL and
// an authenticated TAKAPI (a client certificate on HTTPS, none on HTTP), the
// one-JSON-line-per-step output the Go tests read, and the check of an
// answer against one of node-tak's schemas.
//
// Environment: OUTPOST_URL (http://host:port or https://host:port), CERT,
// KEY (PEM files; HTTPS only).
import fs from 'node:fs';
import { Value } from '@sinclair/typebox/value';
import TAKAPI from '@tak-ps/node-tak/lib/api';
import { APIAuth, APIAuthCertificate } from '@tak-ps/node-tak/lib/auth';

export const url = new URL(process.env.OUTPOST_URL);

// out prints one step's result: {"step": ..., "ok": true|false, ...extra}.
export const out = (step, ok, extra = {}) => console.log(JSON.stringify({ step, ok, ...extra }));

// errText is what a failed step reports of its error.
export const errText = (err) => String((err && (err.safeMessage || err.message)) || err);

// step runs one step and prints its result: ok with what fn returns, or
// not ok with the error.
export async function step(name, fn) {
    try {
        out(name, true, (await fn()) || {});
    } catch (err) {
        out(name, false, { error: errText(err) });
    }
}

// check throws unless value matches node-tak's schema, naming the first
// paths that do not.
export function check(schema, value, what) {
    if (!Value.Check(schema, value)) {
        const errs = [...Value.Errors(schema, value)].slice(0, 3).map((e) => `${e.path}: ${e.message}`);
        throw new Error(`${what} does not match node-tak's schema: ${errs.join('; ')}: ${JSON.stringify(value).slice(0, 600)}`);
    }
}

// connect returns a TAKAPI for url.
export async function connect() {
    const auth = url.protocol === 'https:'
        ? new APIAuthCertificate(fs.readFileSync(process.env.CERT, 'utf8'), fs.readFileSync(process.env.KEY, 'utf8'))
        : new APIAuth();
    return TAKAPI.init(url, auth);
}

// Interoperability check of the enrollment port's password login with
// @tak-ps/node-tak's own classes, unmodified: TAKAPI.init with
// APIAuthPassword logs in through OAuth.login (POST /oauth/token with
// grant_type=password, the JWT then sent as the cookie access_token), and
// Credentials.generate() reads GET /Marti/api/tls/config with that cookie,
// makes a CSR with the subject entries and posts it to
// /Marti/api/tls/signClient/v2 with HTTP Basic. The certificate is then
// used on the client API's mutual-TLS port.
//
// Steps, each printed as one JSON line {"step": ..., "ok": true|false, ...}:
//   login     TAKAPI.init(OUTPOST_URL, new APIAuthPassword(user, password));
//             the JWT's contents (OAuth.parse) checked with TokenContents
//   config    Credentials.config(): the certificateConfig document
//   generate  Credentials.generate(), checked with CertificateResponse
//   use       the certificate on HTTPS_URL: Group.list() checked with TAKList_Group
//   again     a second Credentials.generate() on the same login (ok when
//             it succeeds; an invitation of one use must make it fail)
//
// Environment: OUTPOST_URL (the enrollment listener, https://host:enrollport), HTTPS_URL
// (https://host:httpsport), TAK_USER, TAK_PASSWORD (a password or an
// invitation's token). The server's CA comes from NODE_EXTRA_CA_CERTS:
// node-tak's fetch verifies the server.
import TAKAPI from '@tak-ps/node-tak/lib/api';
import { APIAuthPassword, APIAuthCertificate } from '@tak-ps/node-tak/lib/auth';
import { CertificateResponse } from '@tak-ps/node-tak/lib/api/credentials';
import { TokenContents } from '@tak-ps/node-tak/lib/api/oauth';
import { TAKList_Group } from '@tak-ps/node-tak/lib/api/groups';
import { out, step, check } from './takapi.mjs';

const user = process.env.TAK_USER;
let api;
await step('login', async () => {
    api = await TAKAPI.init(new URL(process.env.OUTPOST_URL), new APIAuthPassword(user, process.env.TAK_PASSWORD));
    const contents = api.OAuth.parse(api.auth.jwt);
    check(TokenContents, contents, 'the token contents');
    if (contents.sub !== user) throw new Error(`the token names ${contents.sub}, not ${user}`);
    return { sub: contents.sub, ttl: contents.exp - contents.iat };
});
if (!api) process.exit(0);

await step('config', async () => {
    const xml = await api.Credentials.config();
    if (!String(xml).includes('ns2:certificateConfig')) throw new Error(`not a certificateConfig: ${String(xml).slice(0, 200)}`);
    return {};
});

let creds;
await step('generate', async () => {
    creds = await api.Credentials.generate();
    check(CertificateResponse, creds, 'the certificate answer');
    if (!creds.cert.includes('BEGIN CERTIFICATE') || !creds.key.includes('PRIVATE KEY')) throw new Error('no certificate or key');
    return {};
});

if (creds) {
    await step('use', async () => {
        const mtls = await TAKAPI.init(new URL(process.env.HTTPS_URL), new APIAuthCertificate(creds.cert, creds.key));
        const groups = await mtls.Group.list({ useCache: true });
        check(TAKList_Group, groups, 'the group list');
        return { groups: groups.data };
    });
}

await step('again', async () => {
    check(CertificateResponse, await api.Credentials.generate(), 'the second certificate answer');
    return {};
});
out('done', true);

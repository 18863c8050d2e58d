// Interoperability check of Outpost's history export (the official
// server's POST /Marti/ExportMissionKML) with @tak-ps/node-tak 8.9.0's
// Export class. node-tak has no schema for the answer (a KML or KMZ
// stream): the steps read it and check the document.
//
// Steps, each printed as one JSON line {"step": ..., "ok": true|false, ...}:
//   kml   Export.export({startTime, endTime, groups: [], format: 'kml'}):
//         a KML document with a folder for CONTACT_UID
//   kmz   the same as KMZ: a zip whose doc.kml names CONTACT_UID
//   bad   Export.export() with endTime before startTime: refused (400)
//
// Environment: OUTPOST_URL, CERT and KEY (HTTPS only), CONTACT_UID (a uid
// with stored events in the last hour).
import { Readable } from 'node:stream';
import { out, step, errText, connect } from './takapi.mjs';

const contact = process.env.CONTACT_UID;
const api = await connect();
const hourAgo = new Date(Date.now() - 3600 * 1000).toISOString();
const soon = new Date(Date.now() + 60 * 1000).toISOString();

async function bytes(body) {
    if (body && typeof body.getReader === 'function') body = Readable.fromWeb(body);
    const chunks = [];
    for await (const c of body) chunks.push(Buffer.from(c));
    return Buffer.concat(chunks);
}

await step('kml', async () => {
    const doc = String(await bytes(await api.Export.export({ startTime: hourAgo, endTime: soon, groups: [], format: 'kml' })));
    if (!doc.includes('<kml') || !doc.includes('<Folder>') || !doc.includes(`id="${contact}"`)) throw new Error(doc.slice(0, 400));
    return { bytes: doc.length };
});

await step('kmz', async () => {
    const zip = await bytes(await api.Export.export({ startTime: hourAgo, endTime: soon, groups: [], format: 'kmz' }));
    if (zip.subarray(0, 2).toString() !== 'PK' || !zip.includes('doc.kml')) throw new Error(zip.subarray(0, 100).toString('hex'));
    return { bytes: zip.length };
});

await step('bad', async () => {
    // Export.export reads the raw answer: a refusal is a status to check.
    const url = new URL('/Marti/ExportMissionKML', process.env.OUTPOST_URL);
    const res = await api.fetch(url, { method: 'POST', body: new URLSearchParams({ startTime: soon, endTime: hourAgo, format: 'kml' }) }, true);
    const text = await res.text();
    if (res.status !== 400 || !text.includes('endTime')) throw new Error(`${res.status} ${text}`);
    return { refused: text.trim() };
});

out('done', true);

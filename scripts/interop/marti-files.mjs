// Interoperability check of Outpost's file and subscription routes with a
// real third-party client: @tak-ps/node-tak's Files, Package and
// Subscription APIs, every answer checked against node-tak's own TypeBox
// schemas (the JSON CloudTAK expects from a TAK Server) with Value.Check.
//
// Where a schema asks for another type than Outpost's interface fixes (the
// search's Size is an integer there, a string in node-tak's Package), the
// step reports the paths that differ as "deviations" and the Go test
// decides which it accepts; everything else must match.
//
// Steps, each printed as one JSON line {"step": ..., "ok": true|false, ...}:
//   meta          Files.meta(): GET /Marti/sync/{hash}/metadata, the record
//                 against Content and Package
//   list          Package.list({tool, uid}): GET /Marti/sync/search, each
//                 record against Package
//   apisearch     GET /Marti/api/sync/search?hash= through TAKAPI.fetch,
//                 against TAKList of the resource (node-tak 8.9.0's
//                 Files.list is a stub; the item is the fields later
//                 versions' TAKList_Content asks for)
//   files         GET /Marti/api/files/metadata through TAKAPI.fetch, an
//                 envelope of string-valued items (TAKList)
//   count         Files.count(): GET /Marti/api/files/metadata/count, against
//                 TAKItem(integer)
//   config        Files.config(): GET /files/api/config, against Config
//   subscriptions Subscription.list(): GET /Marti/api/subscriptions/all,
//                 against TAKList_Subscription, listing CONTACT_UID
//   delete        Files.delete(): DELETE /Marti/sync/delete?hash=, then
//                 Files.meta() of it answers that there is no such file
//
// Environment: OUTPOST_URL (http://host:port or https://host:port), CERT,
// KEY (PEM files; HTTPS only), META_HASH and META_UID (a stored file),
// DELETE_HASH (a stored file to delete), CONTACT_UID (a connected client).
import { Type } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { Package } from '@tak-ps/node-tak/lib/api/package';
import { Content, Config } from '@tak-ps/node-tak/lib/api/files';
import { TAKList_Subscription } from '@tak-ps/node-tak/lib/api/subscriptions';
import { TAKList, TAKItem } from '@tak-ps/node-tak/lib/api/types';
import { url, out, step, check, connect } from './takapi.mjs';

const metaHash = process.env.META_HASH;
const metaUID = process.env.META_UID;
const deleteHash = process.env.DELETE_HASH;
const contact = process.env.CONTACT_UID;

const api = await connect();

// deviations lists the paths where value differs from schema, sorted.
function deviations(schema, value) {
    return [...new Set([...Value.Errors(schema, value)].map((e) => e.path))].sort();
}

await step('meta', async () => {
    const text = await api.Files.meta(metaHash);
    const rec = JSON.parse(text);
    if (rec.Hash !== metaHash || rec.UID !== metaUID || rec.EXPIRATION !== '-1') throw new Error(`unexpected record: ${text}`);
    return { hash: rec.Hash, deviations: [...deviations(Content, rec), ...deviations(Package, rec)] };
});

await step('list', async () => {
    const res = await api.Package.list({ tool: 'public', uid: metaUID });
    if (res.resultCount !== 1 || res.results.length !== 1 || res.results[0].Hash !== metaHash) {
        throw new Error(`unexpected list: ${JSON.stringify(res)}`);
    }
    return { hashes: res.results.map((r) => r.Hash), deviations: deviations(Package, res.results[0]) };
});

const Resource = Type.Object({
    filename: Type.String(),
    keywords: Type.Array(Type.String()),
    mimeType: Type.String(),
    name: Type.String(),
    submissionTime: Type.String(),
    submitter: Type.String(),
    uid: Type.String(),
    size: Type.Integer(),
});

await step('apisearch', async () => {
    const res = await api.fetch(new URL(`/Marti/api/sync/search?hash=${metaHash}`, url), { method: 'GET' });
    check(TAKList(Resource), res, 'the /Marti/api search');
    if (res.type !== 'Resource' || res.data.length !== 1 || res.data[0].uid !== metaUID) throw new Error(`unexpected search: ${JSON.stringify(res)}`);
    return { hashes: res.data.map((r) => r.hash) };
});

await step('files', async () => {
    const res = await api.fetch(new URL('/Marti/api/files/metadata', url), { method: 'GET' });
    check(TAKList(Type.Record(Type.String(), Type.String())), res, 'the file list');
    if (res.type !== 'Files' || !res.data.some((f) => f.Hash === metaHash)) throw new Error(`file missing: ${JSON.stringify(res).slice(0, 600)}`);
    return { hashes: res.data.map((f) => f.Hash) };
});

await step('count', async () => {
    const res = await api.Files.count();
    check(TAKItem(Type.Integer()), res, 'the file count');
    if (res.type !== 'Count' || res.data < 1) throw new Error(`unexpected count: ${JSON.stringify(res)}`);
    return { count: res.data };
});

await step('config', async () => {
    const res = await api.Files.config();
    check(Config, res, 'the file configuration');
    return { uploadSizeLimit: res.uploadSizeLimit };
});

await step('subscriptions', async () => {
    const res = await api.Subscription.list({ sortBy: 'CALLSIGN', direction: 'ASCENDING', page: -1, limit: -1 });
    check(TAKList_Subscription, res, 'the subscriptions');
    if (!res.data.some((s) => s.clientUid === contact)) throw new Error(`${contact} missing: ${JSON.stringify(res).slice(0, 600)}`);
    return { uids: res.data.map((s) => s.clientUid) };
});

await step('delete', async () => {
    await api.Files.delete(deleteHash);
    const text = await api.Files.meta(deleteHash);
    if (!text.includes('no file with hash')) throw new Error(`still described after the delete: ${text}`);
    return { hash: deleteHash };
});
out('done', true);

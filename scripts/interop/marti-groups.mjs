// Interoperability check of Outpost's groups (ATAK's channels) with a real
// third-party client: @tak-ps/node-tak's Group API, every list checked
// against its TypeBox schema (TAKList_Group, what CloudTAK expects from a
// TAK Server). Run over HTTPS with the certificate of a system user that is
// a member of groups.
//
// Steps, each printed as one JSON line {"step": ..., "ok": true|false, ...}:
//   list    Group.list({useCache: true}): GET /Marti/api/groups/all, the
//           caller's groups one item per direction ("groups": [...])
//   update  Group.update(): PUT /Marti/api/groups/active with the listed
//           items of GROUP_OFF, switched off (as ATAK's channel toggle does)
//   relist  Group.list() again: what the update left ("groups": [...])
//
// Environment: OUTPOST_URL (https://host:port), CERT, KEY (PEM files),
// GROUP_OFF (the name of the group to switch off).
import { TAKList_Group } from '@tak-ps/node-tak/lib/api/groups';
import { out, step, check, connect } from './takapi.mjs';

const groupOff = process.env.GROUP_OFF;

const api = await connect();

// list returns the caller's groups, checked against node-tak's schema.
async function list() {
    const res = await api.Group.list({ useCache: true });
    check(TAKList_Group, res, 'the group list');
    if (res.version !== '3' || res.type !== 'com.bbn.marti.remote.groups.Group') {
        throw new Error(`unexpected envelope: ${JSON.stringify(res)}`);
    }
    return res.data;
}

let listed = [];
await step('list', async () => {
    listed = await list();
    return { groups: listed };
});

await step('update', async () => {
    const off = listed.filter((g) => g.name === groupOff).map((g) => ({ ...g, active: false }));
    if (off.length === 0) throw new Error(`no group ${groupOff} among ${JSON.stringify(listed)}`);
    await api.Group.update(off);
    return { switchedOff: off.length };
});

await step('relist', async () => ({ groups: await list() }));
out('done', true);

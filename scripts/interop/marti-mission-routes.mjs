// Interoperability check of the mission routes past the create/subscribe/
// contents flow (marti-missions.mjs has that) with @tak-ps/node-tak 8.9.0's
// Mission and MissionLog APIs: roles, the caller's subscription, contacts,
// the guid routes, log entries by id, the settings node-tak has no method
// for (keywords, password, expiration, invitations: sent through
// TAKAPI.fetch, the answer checked against node-tak's schema of it) and
// delete. Every answer is checked against node-tak's TypeBox schemas with
// Value.Check.
//
// Steps, each printed as one JSON line {"step": ..., "ok": true|false, ...}:
//   create       Mission.create() (the owner NODE-1's token kept) and
//                Mission.subscribe() of NODE-2
//   role         Mission.role() with NODE-2's token: MISSION_SUBSCRIBER
//   setRole      Mission.setRole() by the owner's token: NODE-2 read-only
//   subscription Mission.subscription(): NODE-2's, its role read-only
//   contacts     Mission.contacts(): a list of Contact, CONTACT_UID in it
//   list         Mission.list() with passwordProtected, defaultRole, tool
//   getGuid      Mission.getGuid() and Mission.get() by guid
//   guidRoutes   by guid: latestCots, subscriptions, subscriptionRoles,
//                changes, role, subscription, contacts, attach/detach
//   access       Mission.access(): true by name and guid, false for an
//                unknown mission
//   logs         MissionLog.create() (by name and by guid), get(),
//                delete(); get after delete fails
//   logUpdate    MissionLog.update() (node-tak 8.9.0 sends no id: the
//                server must refuse it as a bad request, changing nothing)
//   keywords     PUT .../keywords (a JSON list): the Mission answer
//   password     PUT .../password?password= then DELETE .../password:
//                the mission read back passwordProtected, then not
//   expiration   PUT .../expiration?expiration=: the mission read back
//   invitations  PUT .../invite/clientUid/{uid}, GET .../invitations and
//                GET missions/all/invitations
//   upload       Mission.upload(): a mission package into the mission
//                (PUT .../contents/missionpackage)
//   archive      Mission.getArchive(): the mission package (a zip with
//                MANIFEST/manifest.xml and cot/<CONTACT_UID>.cot)
//   delete       Mission.delete() by name and, of a second mission, by
//                guid: each answers the mission (TAKList_Mission); get
//                after delete fails
// A step that fails because of node-tak itself (not the server) is reported
// with "clientLimit": <why>, and the Go test decides what it accepts.
//
// Environment: OUTPOST_URL (http://host:port or https://host:port), CERT,
// KEY (PEM files; HTTPS only), MISSION (a name to create), CONTACT_UID (a
// connected client with a stored event).
import { Readable } from 'node:stream';
import { Type } from '@sinclair/typebox';
import { url, out, errText, check, connect } from './takapi.mjs';
import {
    Mission, MissionRole, MissionSubscriber, TAKList_Mission, TAKList_MissionChange, TAKList_MissionSubscriber,
} from '@tak-ps/node-tak/lib/api/mission';
import { TAKItem_MissionLog } from '@tak-ps/node-tak/lib/api/mission-log';
import { Contact } from '@tak-ps/node-tak/lib/api/contacts';
import { TAKList } from '@tak-ps/node-tak/lib/api/types';

const name = process.env.MISSION;
const contact = process.env.CONTACT_UID;
const api = await connect();
const enc = encodeURIComponent;

async function step(stepName, fn) {
    try {
        out(stepName, true, (await fn()) || {});
    } catch (err) {
        const msg = errText(err);
        // undici's fetch refuses a stream body without duplex: 'half', which
        // node-tak 8.9.0 does not pass on its unauthenticated (HTTP) path.
        const clientLimit = /duplex/i.test(msg) ? 'node-tak passes a stream body to fetch without duplex: half' : undefined;
        out(stepName, false, { error: msg, clientLimit });
    }
}

// expectFail runs fn and throws unless it fails with an error whose text
// matches re.
async function expectFail(what, re, fn) {
    try {
        await fn();
    } catch (err) {
        if (re.test(errText(err))) return errText(err);
        throw new Error(`${what}: failed otherwise: ${errText(err)}`);
    }
    throw new Error(`${what}: did not fail`);
}

const raw = (path, method = 'GET', body) => api.fetch(new URL(path, url), body === undefined ? { method } : { method, body });

let ownerToken = '';
let memberToken = '';
let guid = '';
await step('create', async () => {
    const m = await api.Mission.create(name, { creatorUid: 'NODE-1', description: 'routes', tool: 'public' });
    check(Mission, m, 'created mission');
    ownerToken = m.token;
    guid = m.guid;
    const sub = await api.Mission.subscribe(name, { uid: 'NODE-2' });
    memberToken = sub.data.token;
    await api.Mission.attachContents(name, { uids: [contact] }, { token: ownerToken });
    return { guid };
});

await step('role', async () => {
    const role = await api.Mission.role(name, { token: memberToken });
    check(MissionRole, role, 'role');
    if (role.type !== 'MISSION_SUBSCRIBER') throw new Error(JSON.stringify(role));
    const owner = await api.Mission.role(name, { token: ownerToken });
    if (owner.type !== 'MISSION_OWNER' || !owner.permissions.includes('MISSION_SET_ROLE')) throw new Error(JSON.stringify(owner));
});

await step('setRole', async () => {
    // node-tak's SetRoleInput types role as an object, but the query takes
    // the role's name (String() of an object would be "[object Object]",
    // which the server refuses): callers such as CloudTAK pass the name.
    await api.Mission.setRole(name, { clientUid: 'NODE-2', role: 'MISSION_READONLY_SUBSCRIBER' }, { token: ownerToken });
    const role = await api.Mission.role(name, { token: memberToken });
    if (role.type !== 'MISSION_READONLY_SUBSCRIBER') throw new Error(JSON.stringify(role));
    await expectFail('a role set by a read-only subscriber', /owner/i,
        () => api.Mission.setRole(name, { clientUid: 'NODE-1', role: 'MISSION_READONLY_SUBSCRIBER' }, { token: memberToken }));
});

await step('subscription', async () => {
    const sub = await api.Mission.subscription(name, { uid: 'NODE-2' });
    check(MissionSubscriber, sub, 'subscription');
    if (sub.clientUid !== 'NODE-2' || sub.role.type !== 'MISSION_READONLY_SUBSCRIBER' || sub.token !== memberToken) throw new Error(JSON.stringify(sub));
});

await step('contacts', async () => {
    const list = await api.Mission.contacts(name);
    check(Type.Array(Contact), list, 'mission contacts');
    if (!list.some((c) => c.uid === contact)) throw new Error(`${contact} missing: ${JSON.stringify(list)}`);
    return { contacts: list.length };
});

await step('list', async () => {
    const list = await api.Mission.list({ passwordProtected: true, defaultRole: true, tool: 'public' });
    check(TAKList_Mission, list, 'mission list');
    if (!list.data.some((m) => m.name === name)) throw new Error(JSON.stringify(list).slice(0, 400));
});

await step('getGuid', async () => {
    const m = await api.Mission.getGuid(guid, { changes: true, logs: true });
    check(Mission, m, 'mission by guid');
    const same = await api.Mission.get(guid, {});
    check(Mission, same, 'mission by guid through get');
    if (m.name !== name || same.name !== name || m.uids.length !== 1) throw new Error(JSON.stringify(m).slice(0, 400));
});

await step('guidRoutes', async () => {
    const xml = String(await api.Mission.latestCots(guid));
    if (!xml.includes('<events>') || !xml.includes(`uid="${contact}"`)) throw new Error(xml.slice(0, 400));
    const subs = await api.Mission.subscriptions(guid);
    if (!subs.data.includes('NODE-2')) throw new Error(JSON.stringify(subs));
    const roles = await api.Mission.subscriptionRoles(guid);
    check(TAKList_MissionSubscriber, roles, 'subscription roles by guid');
    const changes = await api.Mission.changes(guid, { secago: 3600 });
    check(TAKList_MissionChange, changes, 'changes by guid');
    const role = await api.Mission.role(guid, { token: memberToken });
    check(MissionRole, role, 'role by guid');
    const sub = await api.Mission.subscription(guid, { uid: 'NODE-2' });
    check(MissionSubscriber, sub, 'subscription by guid');
    const contacts = await api.Mission.contacts(guid);
    check(Type.Array(Contact), contacts, 'contacts by guid');
    const detached = await api.Mission.detachContents(guid, { uid: contact }, { token: ownerToken });
    check(TAKList_Mission, detached, 'detach by guid');
    const attached = await api.Mission.attachContents(guid, { uids: [contact] }, { token: ownerToken });
    check(TAKList_Mission, attached, 'attach by guid');
    if (attached.data[0].uids.length !== 1 || detached.data[0].uids.length !== 0) throw new Error('attach/detach by guid');
    return { changes: changes.data.length };
});

await step('access', async () => {
    if (!(await api.Mission.access(name)) || !(await api.Mission.access(guid))) throw new Error('no access to the mission');
    if (await api.Mission.access(`${name}-none`)) throw new Error('access to a mission that does not exist');
});

// logGet is MissionLog.get. node-tak 8.9.0 calls fetch without options
// there, which its certificate client (HTTPS) refuses before sending
// ("method must be a string"); then the same GET goes through
// TAKAPI.fetch with a method, and the step reports the client's limit.
let logGetLimit;
async function logGet(id) {
    try {
        return await api.MissionLog.get(id);
    } catch (err) {
        if (!/method must be a string/.test(errText(err))) throw err;
        logGetLimit = 'node-tak\'s MissionLog.get passes no method, which its certificate client refuses';
        return raw(`/Marti/api/missions/logs/entries/${enc(id)}`);
    }
}

await step('logs', async () => {
    const made = await api.MissionLog.create(name, { content: 'by id', creatorUid: 'NODE-1', keywords: ['k'] }, { token: ownerToken });
    check(TAKItem_MissionLog, made, 'log entry');
    const got = await logGet(made.data.id);
    check(TAKItem_MissionLog, got, 'log entry by id');
    if (got.data.id !== made.data.id || got.data.content !== 'by id') throw new Error(JSON.stringify(got));
    const viaGuid = await api.MissionLog.create(guid, { content: 'by guid', creatorUid: 'NODE-1' }, { token: ownerToken });
    if (viaGuid.data.missionNames[0] !== name) throw new Error(JSON.stringify(viaGuid));
    await api.MissionLog.delete(made.data.id, { token: ownerToken });
    await expectFail('a deleted entry', /no log entry|not found/i, () => logGet(made.data.id));
    await expectFail('an unknown entry', /no log entry|not found/i, () => logGet('no-such-entry'));
    return { id: made.data.id, clientLimit: logGetLimit };
});

await step('logUpdate', async () => {
    const before = await raw(`/Marti/api/missions/${enc(name)}/log`);
    const msg = await expectFail('an update without an id', /400|id/i,
        () => api.MissionLog.update(name, { id: 'ignored-by-node-tak', content: 'changed', creatorUid: 'NODE-1' }, { token: ownerToken }));
    const after = await raw(`/Marti/api/missions/${enc(name)}/log`);
    if (JSON.stringify(before.data) !== JSON.stringify(after.data)) throw new Error('a refused update changed the log');
    return { refused: msg };
});

await step('keywords', async () => {
    const res = await raw(`/Marti/api/missions/${enc(name)}/keywords?creatorUid=NODE-1`, 'PUT', ['bridge', 'recon']);
    check(TAKList_Mission, res, 'keywords answer');
    if (JSON.stringify(res.data[0].keywords) !== '["bridge","recon"]') throw new Error(JSON.stringify(res.data[0].keywords));
    const one = await raw(`/Marti/api/missions/${enc(name)}/keywords/bridge?creatorUid=NODE-1`, 'DELETE');
    check(TAKList_Mission, one, 'keyword delete answer');
    if (JSON.stringify(one.data[0].keywords) !== '["recon"]') throw new Error(JSON.stringify(one.data[0].keywords));
});

// The official server answers the password and expiration routes with an
// empty 200 (node-tak has no schema for them): the mission read back is
// what is checked.
await step('password', async () => {
    await raw(`/Marti/api/missions/${enc(name)}/password?password=s3cret-pass&creatorUid=NODE-1`, 'PUT');
    const m = await api.Mission.get(name, {}, { token: ownerToken });
    check(Mission, m, 'protected mission');
    if (!m.passwordProtected) throw new Error('not password protected');
    const member = await api.Mission.get(name, {}, { token: memberToken });
    check(Mission, member, 'protected mission, to a subscriber');
    await raw(`/Marti/api/missions/${enc(name)}/password?creatorUid=NODE-1`, 'DELETE');
    const open = await api.Mission.get(name, {});
    check(Mission, open, 'mission without a password');
    if (open.passwordProtected) throw new Error('still password protected');
});

await step('expiration', async () => {
    const when = Math.floor(Date.now() / 1000) + 86400;
    await raw(`/Marti/api/missions/${enc(name)}/expiration?expiration=${when}&creatorUid=NODE-1`, 'PUT');
    const m = await api.Mission.get(name, {});
    check(Mission, m, 'mission with an expiration');
    if (m.expiration !== when) throw new Error(JSON.stringify(m).slice(0, 300));
    return { expiration: when };
});

await step('invitations', async () => {
    await raw(`/Marti/api/missions/${enc(name)}/invite/clientUid/NODE-3?creatorUid=NODE-1&role=MISSION_SUBSCRIBER`, 'PUT');
    const invs = await raw(`/Marti/api/missions/${enc(name)}/invitations`);
    check(TAKList(Type.Object({ missionName: Type.String(), invitee: Type.String(), type: Type.String() })), invs, 'invitations');
    if (!invs.data.some((i) => i.invitee === 'NODE-3')) throw new Error(JSON.stringify(invs));
    const mine = await raw('/Marti/api/missions/all/invitations?clientUid=NODE-3');
    check(TAKList(Type.String()), mine, 'the invitee\'s missions');
    if (!mine.data.includes(name)) throw new Error(JSON.stringify(mine));
});

await step('upload', async () => {
    const zip = Buffer.from('PK not really a zip, but bytes to store');
    const res = await api.Mission.upload(name, 'NODE-1', Readable.from([zip]), { token: ownerToken });
    check(TAKList_Mission, res, 'mission package answer');
    if (!res.data[0].contents.length) throw new Error(JSON.stringify(res.data[0]).slice(0, 300));
});

await step('archive', async () => {
    let body = await api.Mission.getArchive(name, { token: ownerToken });
    if (body && typeof body.getReader === 'function') body = Readable.fromWeb(body);
    const chunks = [];
    for await (const c of body) chunks.push(Buffer.from(c));
    const zip = Buffer.concat(chunks);
    if (zip.subarray(0, 2).toString() !== 'PK' || !zip.includes('MANIFEST/manifest.xml') || !zip.includes(`cot/${contact}.cot`)) {
        throw new Error(`not the mission package: ${zip.subarray(0, 200).toString('hex')}`);
    }
    return { bytes: zip.length };
});

await step('delete', async () => {
    const gone = await api.Mission.delete(name, { creatorUid: 'NODE-1' }, { token: ownerToken });
    check(TAKList_Mission, gone, 'delete answer');
    const second = await api.Mission.create(`${name}-2`, { creatorUid: 'NODE-1' });
    const byGuid = await api.Mission.delete(second.guid, { creatorUid: 'NODE-1' }, { token: second.token });
    check(TAKList_Mission, byGuid, 'delete by guid answer');
    if (gone.data[0].name !== name || byGuid.data[0].name !== `${name}-2`) throw new Error('deleted the wrong missions');
    await expectFail('a deleted mission', /404|no mission/i, () => api.Mission.get(name, {}));
    await expectFail('a mission deleted by guid', /404|no mission/i, () => api.Mission.getGuid(second.guid, {}));
});

out('done', true);

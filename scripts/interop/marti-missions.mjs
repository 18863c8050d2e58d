// Interoperability check of Outpost's missions (DataSync) with a real
// third-party client: @tak-ps/node-tak's Mission and MissionLog APIs, whose
// TypeBox schemas (the JSON CloudTAK expects from a TAK Server) every
// answer is checked against with Value.Check.
//
// Steps, each printed as one JSON line {"step": ..., "ok": true|false, ...}:
//   create        Mission.create(): POST /Marti/api/missions/{name}?creatorUid=...
//   list          Mission.list(): the mission in the list
//   subscribe     Mission.subscribe(): PUT .../subscription?uid=
//   roles         Mission.subscriptionRoles()
//   subscriptions Mission.subscriptions(): the subscribed client uids
//   log           MissionLog.create(): POST /Marti/api/missions/logs/entries
//   attach        Mission.attachContents(): PUT .../contents {hashes, uids}
//   get           Mission.get(name, {logs, changes}): the file, the uid, the log
//   changes       Mission.changes(): the change history
//   cot           Mission.latestCots(): the <events> list
//   detach        Mission.detachContents(): DELETE .../contents?uid=
//   unsubscribe   Mission.unsubscribe()
//
// Environment: OUTPOST_URL (http://host:port or https://host:port), CERT,
// KEY (PEM files; HTTPS only), MISSION (the name to create), HASH (a file
// already uploaded), CONTACT_UID (a uid with a stored event).
import { out, step, check, connect } from './takapi.mjs';
import { Mission, TAKList_Mission, TAKList_MissionChange, TAKList_MissionSubscriber, TAKItem_MissionSubscriber } from '@tak-ps/node-tak/lib/api/mission';
import { TAKItem_MissionLog } from '@tak-ps/node-tak/lib/api/mission-log';

const name = process.env.MISSION;
const hash = process.env.HASH;
const contact = process.env.CONTACT_UID;

const api = await connect();

await step('create', async () => {
    const m = await api.Mission.create(name, { creatorUid: 'NODE-1', description: 'made by node-tak', tool: 'public' });
    check(Mission, m, 'created mission');
    if (m.name !== name || !m.token || m.creatorUid !== 'NODE-1') throw new Error(`unexpected mission: ${JSON.stringify(m)}`);
    return { guid: m.guid };
});

await step('list', async () => {
    const list = await api.Mission.list({});
    check(TAKList_Mission, list, 'mission list');
    if (list.version !== '3' || !list.data.some((m) => m.name === name)) throw new Error(`mission missing: ${JSON.stringify(list).slice(0, 400)}`);
    return { missions: list.data.length };
});

await step('subscribe', async () => {
    const sub = await api.Mission.subscribe(name, { uid: 'NODE-2' });
    check(TAKItem_MissionSubscriber, sub, 'subscription');
    if (!sub.data.token || sub.data.clientUid !== 'NODE-2' || sub.data.role.type !== 'MISSION_SUBSCRIBER') throw new Error(JSON.stringify(sub));
    return { token: sub.data.token.length > 0 };
});

await step('roles', async () => {
    const roles = await api.Mission.subscriptionRoles(name);
    check(TAKList_MissionSubscriber, roles, 'subscription roles');
    const uids = roles.data.map((r) => r.clientUid).sort().join(',');
    if (uids !== 'NODE-1,NODE-2') throw new Error(`roles: ${uids}`);
});

await step('subscriptions', async () => {
    const subs = await api.Mission.subscriptions(name);
    if (!Array.isArray(subs.data) || !subs.data.includes('NODE-2')) throw new Error(JSON.stringify(subs));
});

let logID = '';
await step('log', async () => {
    const log = await api.MissionLog.create(name, { content: 'node-tak was here', creatorUid: 'NODE-2', keywords: ['interop'] });
    check(TAKItem_MissionLog, log, 'log entry');
    logID = log.data.id;
    if (!logID || log.data.missionNames[0] !== name) throw new Error(JSON.stringify(log));
    return { id: logID };
});

await step('attach', async () => {
    const res = await api.Mission.attachContents(name, { hashes: [hash], uids: [contact] });
    check(TAKList_Mission, res, 'attach answer');
    const m = res.data[0];
    if (m.contents.length !== 1 || m.contents[0].data.hash !== hash || m.uids.length !== 1) throw new Error(JSON.stringify(m));
});

await step('get', async () => {
    const m = await api.Mission.get(name, { logs: true, changes: true });
    check(Mission, m, 'mission');
    if (m.contents[0].data.hash !== hash || m.uids[0].data !== contact || !m.logs || m.logs[0].id !== logID || !m.missionChanges.length) {
        throw new Error(JSON.stringify(m).slice(0, 800));
    }
    return { contents: m.contents.length, uids: m.uids.length };
});

await step('changes', async () => {
    const changes = await api.Mission.changes(name, {});
    check(TAKList_MissionChange, changes, 'changes');
    const types = changes.data.map((c) => c.type);
    if (types[0] !== 'CREATE_MISSION' || !changes.data.some((c) => c.contentResource && c.contentResource.hash === hash) ||
        !changes.data.some((c) => c.contentUid === contact)) {
        throw new Error(JSON.stringify(changes).slice(0, 800));
    }
    return { types };
});

await step('cot', async () => {
    const xml = await api.Mission.latestCots(name);
    if (!String(xml).includes('<events>') || !String(xml).includes(`uid="${contact}"`)) throw new Error(String(xml).slice(0, 400));
    const feats = await api.Mission.latestFeats(name);
    if (feats.length !== 1 || feats[0].id !== contact) throw new Error(JSON.stringify(feats).slice(0, 400));
    return { features: feats.length };
});

await step('detach', async () => {
    const res = await api.Mission.detachContents(name, { uid: contact });
    check(TAKList_Mission, res, 'detach answer');
    if (res.data[0].uids.length !== 0) throw new Error(JSON.stringify(res.data[0].uids));
});

await step('unsubscribe', async () => {
    await api.Mission.unsubscribe(name, { uid: 'NODE-2' });
    const subs = await api.Mission.subscriptions(name);
    if (subs.data.includes('NODE-2')) throw new Error(JSON.stringify(subs));
});

out('done', true);

// Interoperability check of Outpost's mission layers with @tak-ps/node-tak's
// MissionLayer API, every answer checked against its TypeBox schemas with
// Value.Check.
//
// Steps, each printed as one JSON line {"step": ..., "ok": true|false, ...}:
//   create   Mission.create() and Mission.attachContents() of CONTACT_UID
//   layer    MissionLayer.create(): a UID layer (PUT .../layers)
//   item     MissionLayer.create(): an ITEM for CONTACT_UID under it
//   list     MissionLayer.list(): the layer holds the uid
//   get      MissionLayer.get() and latestFeats(): the layer, its feature
//   rename   MissionLayer.rename(): PUT .../layers/{uid}/name
//   delete   MissionLayer.delete(): DELETE .../layers?uid=; the uid leaves the mission
//
// Environment: OUTPOST_URL, CERT and KEY (HTTPS only), MISSION (the name to
// create), CONTACT_UID (a uid with a stored event).
import { out, step, check, connect } from './takapi.mjs';
import { Mission } from '@tak-ps/node-tak/lib/api/mission';
import { TAKList_MissionLayer, TAKItem_MissionLayer, MissionLayerType } from '@tak-ps/node-tak/lib/api/mission-layer';

const name = process.env.MISSION;
const contact = process.env.CONTACT_UID;
const api = await connect();
let layerUid = '';

await step('create', async () => {
    const m = await api.Mission.create(name, { creatorUid: 'NODE-1', tool: 'public' });
    check(Mission, m, 'created mission');
    await api.Mission.attachContents(name, { uids: [contact] });
});

await step('layer', async () => {
    const l = await api.MissionLayer.create(name, { name: 'Team', type: MissionLayerType.UID, creatorUid: 'NODE-1' });
    check(TAKItem_MissionLayer, l, 'created layer');
    if (l.data.name !== 'Team' || !l.data.uid) throw new Error(JSON.stringify(l));
    layerUid = l.data.uid;
});

await step('item', async () => {
    const l = await api.MissionLayer.create(name, { name: contact, type: MissionLayerType.ITEM, uid: contact, parentUid: layerUid, creatorUid: 'NODE-1' });
    check(TAKItem_MissionLayer, l, 'created item');
});

await step('list', async () => {
    const list = await api.MissionLayer.list(name);
    check(TAKList_MissionLayer, list, 'layer list');
    const team = list.data.find((l) => l.uid === layerUid);
    if (!team || !team.uids || team.uids.length !== 1 || team.uids[0].data !== contact) throw new Error(JSON.stringify(list));
    return { layers: list.data.length };
});

await step('get', async () => {
    const l = await api.MissionLayer.get(name, layerUid);
    check(TAKItem_MissionLayer, l, 'layer');
    const feats = await api.MissionLayer.latestFeats(name, layerUid);
    if (feats.length !== 1 || feats[0].id !== contact) throw new Error(`features: ${JSON.stringify(feats).slice(0, 400)}`);
});

await step('rename', async () => {
    await api.MissionLayer.rename(name, layerUid, { name: 'Team 2', creatorUid: 'NODE-1' });
    const l = await api.MissionLayer.get(name, layerUid);
    if (l.data.name !== 'Team 2') throw new Error(JSON.stringify(l));
});

await step('delete', async () => {
    await api.MissionLayer.delete(name, { uid: [layerUid], creatorUid: 'NODE-1' });
    const list = await api.MissionLayer.list(name);
    check(TAKList_MissionLayer, list, 'layer list');
    const m = await api.Mission.get(name, {});
    if (list.data.length !== 0 || m.uids.length !== 0) throw new Error(`left: ${JSON.stringify(list)} ${JSON.stringify(m.uids)}`);
});

out('done', true);

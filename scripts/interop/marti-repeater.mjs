// Interoperability check of Outpost's repeater API (the official server's
// RepeaterApi: the emergencies re-broadcast until cancelled) with
// @tak-ps/node-tak 8.9.0's Repeater class, every answer checked against
// its TypeBox schemas with Value.Check.
//
// Steps, each printed as one JSON line {"step": ..., "ok": true|false, ...}:
//   list       Repeater.list(): TAKList_Repeater, ALERT_UID in it
//   period     Repeater.period(): the period in ms, TAKItem(integer)
//   setPeriod  Repeater.period(5000): refused (the period is Outpost's
//              configuration), the error naming it; the period unchanged
//   delete     Repeater.delete(ALERT_UID): the alert cancelled, no longer
//              listed
//
// Environment: OUTPOST_URL, CERT and KEY (HTTPS only), ALERT_UID (an
// emergency a client raised over CoT).
import { Type } from '@sinclair/typebox';
import { TAKList_Repeater } from '@tak-ps/node-tak/lib/api/repeater';
import { TAKItem } from '@tak-ps/node-tak/lib/api/types';
import { url, out, step, check, errText, connect } from './takapi.mjs';

const alert = process.env.ALERT_UID;
const api = await connect();

await step('list', async () => {
    const list = await api.Repeater.list();
    check(TAKList_Repeater, list, 'repeater list');
    const r = list.data.find((x) => x.uid === alert);
    if (!r || r.repeatType !== '911' || r.cotType !== 'b-a-o-tbl') throw new Error(JSON.stringify(list).slice(0, 600));
    return { uids: list.data.map((x) => x.uid) };
});

let period = 0;
await step('period', async () => {
    const res = await api.Repeater.period();
    check(TAKItem(Type.Integer()), res, 'period');
    period = res.data;
    return { period };
});

// node-tak passes the number itself as the body, which its certificate
// client (HTTPS) refuses before sending ("body must be a string..."); then
// the same POST goes through TAKAPI.fetch with the number as text, and the
// step reports the client's limit.
await step('setPeriod', async () => {
    let clientLimit;
    try {
        try {
            await api.Repeater.period(5000);
        } catch (err) {
            if (!/body must be a string/.test(errText(err))) throw err;
            clientLimit = 'node-tak sends the period as a bare number, which its certificate client refuses';
            await api.fetch(new URL('/Marti/api/repeater/period', url), { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '5000' });
        }
    } catch (err) {
        if (!/emergencyRepeatInterval/.test(errText(err))) throw err;
        const res = await api.Repeater.period();
        if (res.data !== period) throw new Error(`period changed to ${res.data}`);
        return { refused: errText(err), clientLimit };
    }
    throw new Error('setting the period was accepted');
});

await step('delete', async () => {
    await api.Repeater.delete(alert);
    const list = await api.Repeater.list();
    check(TAKList_Repeater, list, 'repeater list after delete');
    if (list.data.some((x) => x.uid === alert)) throw new Error(`${alert} still listed`);
});

out('done', true);

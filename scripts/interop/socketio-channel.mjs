// Interoperability check of the management port's socket.io channel with
// the real socket.io-client: the websocket transport, and long polling.
//
// Socket A authenticates with the right key, then requests users, logs,
// serviceInfo, serverHealth and systemStatus, printing each answer; then it
// prints "ready-for-push" and waits for a pushed users event naming
// PUSH_UID. Socket B sends a wrong key and a request, and must get
// {"successful":"False"}, no data, and a server disconnect. Socket C uses
// the polling transport alone (no upgrade), authenticates and asks for
// users.
//
// Prints one JSON line per step ({"step": ..., ...}); exits 0 when every
// step completed, 1 otherwise. Environment: OUTPOST_URL (http://host:port),
// WS_KEY, WRONG_KEY, PUSH_UID, TIMEOUT_MS (default 20000).
import { io } from 'socket.io-client';
import { env, fail, once, step, timeoutMs } from './steps.mjs';

const url = env('OUTPOST_URL');

const connectOpts = { transports: ['websocket'], reconnection: false, forceNew: true, timeout: timeoutMs };

async function authenticated() {
    const a = io(url, connectOpts);
    const hello = once(a, 'connectUpdate');
    await once(a, 'connect');
    const [connectUpdate] = await hello;
    step('connectUpdate', { payload: JSON.parse(connectUpdate) });

    const auth = once(a, 'authentication');
    a.emit('authenticate', JSON.stringify({ Authenticate: env('WS_KEY') }));
    const [answer] = await auth;
    step('authentication', { payload: JSON.parse(answer) });

    const requests = [
        ['users', undefined],
        ['logs', JSON.stringify({ time: '2000-01-01T00:00:00Z' })],
        ['serviceInfo', undefined],
        ['serverHealth', undefined],
        ['systemStatus', undefined],
    ];
    for (const [name, arg] of requests) {
        const got = once(a, name);
        if (arg === undefined) { a.emit(name); } else { a.emit(name, arg); }
        const [payload] = await got;
        if (typeof payload !== 'string') { fail(`${name} payload is not a string: ${typeof payload}`); }
        step(name, { payload: JSON.parse(payload) });
    }

    const pushUid = env('PUSH_UID');
    const pushed = once(a, 'users', (p) => typeof p === 'string' &&
        JSON.parse(p).Users.some((u) => u.uid === pushUid));
    step('ready-for-push');
    const [push] = await pushed;
    step('users-push', { payload: JSON.parse(push) });
    a.disconnect();
}

async function wrongKey() {
    const b = io(url, connectOpts);
    const seen = [];
    b.onAny((name, payload) => { if (name !== 'connectUpdate') seen.push({ name, payload }); });
    await once(b, 'connect');
    const gone = once(b, 'disconnect');
    b.emit('authenticate', JSON.stringify({ Authenticate: env('WRONG_KEY') }));
    b.emit('users');
    b.emit('serverHealth');
    const [reason] = await gone;
    const answers = seen.filter((e) => e.name === 'authentication').map((e) => JSON.parse(e.payload));
    const data = seen.filter((e) => e.name !== 'authentication').map((e) => e.name);
    step('wrong-key', { authentication: answers, other_events: data, disconnect_reason: reason });
}

async function pollingOnly() {
    const c = io(url, { transports: ['polling'], reconnection: false, forceNew: true, timeout: timeoutMs });
    await once(c, 'connect');
    const auth = once(c, 'authentication');
    c.emit('authenticate', JSON.stringify({ Authenticate: env('WS_KEY') }));
    const [answer] = await auth;
    const got = once(c, 'users');
    c.emit('users');
    const [users] = await got;
    step('polling-only', { authentication: JSON.parse(answer), users: JSON.parse(users), transport: c.io.engine.transport.name });
    c.close();
}

try {
    await authenticated();
    await wrongKey();
    await pollingOnly();
    step('done');
    process.exit(0);
} catch (e) {
    fail(String(e && e.stack || e));
}

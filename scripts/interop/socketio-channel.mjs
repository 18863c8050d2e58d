// Interoperability check of the management port's socket.io channel with
// the real socket.io-client (websocket transport only).
//
// Socket A authenticates with the right key, then requests users, logs,
// serviceInfo, serverHealth and systemStatus, printing each answer; then it
// prints "ready-for-push" and waits for a pushed users event naming
// PUSH_UID. Socket B sends a wrong key and a request, and must get
// {"successful":"False"}, no data, and a server disconnect. Socket C tries
// the polling transport, which must fail to connect.
//
// Prints one JSON line per step ({"step": ..., ...}); exits 0 when every
// step completed, 1 otherwise. Environment: OUTPOST_URL (http://host:port),
// WS_KEY, WRONG_KEY, PUSH_UID, TIMEOUT_MS (default 20000).
import { io } from 'socket.io-client';

const env = (k) => {
    const v = process.env[k];
    if (!v) { fail(`missing environment variable ${k}`); }
    return v;
};
const timeoutMs = parseInt(process.env.TIMEOUT_MS || '20000', 10);
const step = (name, extra = {}) => console.log(JSON.stringify({ step: name, ...extra }));
function fail(msg) {
    console.log(JSON.stringify({ step: 'fail', message: msg }));
    process.exit(1);
}
const url = env('OUTPOST_URL');

// once resolves with the first event named name whose payload passes match.
const once = (socket, name, match = () => true) => new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no ${name} within ${timeoutMs} ms`)), timeoutMs);
    const on = (...args) => {
        if (!match(...args)) return;
        clearTimeout(timer);
        socket.off(name, on);
        resolve(args);
    };
    socket.on(name, on);
});

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

async function pollingRefused() {
    const c = io(url, { transports: ['polling'], reconnection: false, forceNew: true, timeout: timeoutMs });
    const [err] = await once(c, 'connect_error');
    step('polling-refused', { message: String(err && err.message), connected: c.connected });
    c.close();
}

try {
    await authenticated();
    await wrongKey();
    await pollingRefused();
    step('done');
    process.exit(0);
} catch (e) {
    fail(String(e && e.stack || e));
}

// Replays what FreeTAKServer's web UI (FreeTAKServer-UI) does on the
// management port's socket.io channel, with the real socket.io-client and
// its default options (long polling first, then the websocket upgrade), as
// the UI's pages call io.connect(url):
//
//   dashboard  connectUpdate; authenticate; users, logs (with FTS's time
//              format), serviceInfo, serverHealth, systemStatus, events,
//              read under the names the UI listens for (userUpdate, ...);
//   users      systemUsers -> systemUsersUpdate;
//   add user   a new connection authenticates and emits addSystemUser with
//              the UI's body (Certs and DeviceType as the form sends them);
//   update     a new connection authenticates and emits updateSystemUser
//              with the body of the UI's user page ({systemUsers: [{Password,
//              Token, Group, uid}]}, every field of its form);
//   remove     a new connection authenticates and emits removeSystemUser
//              with {systemUsers: [{uid}]} (the uid from the users list);
//   refused    a connection that never authenticates emits addSystemUser
//              and removeSystemUser: no answer at all;
//   bad input  an authenticated connection sends broken bodies and gets
//              {status, message} answers (as acknowledgements).
//
// Every payload is parsed the way the UI parses it (JSON.parse, except
// eventsUpdate, which the UI reads as an object) and printed as one JSON
// line ({"step": ..., ...}); the Go test checks them and the server's
// state. Between steps it waits for "go <step>" on stdin, so the Go side
// can check the state in between. Exit 0 when every step completed.
// Environment: OUTPOST_URL, WS_KEY, NEW_USER (name of the user to add),
// TIMEOUT_MS (default 20000).
import { io } from 'socket.io-client';
import readline from 'node:readline';
import { env, fail, once, step, timeoutMs } from './steps.mjs';

const url = env('OUTPOST_URL');

const lines = readline.createInterface({ input: process.stdin })[Symbol.asyncIterator]();
async function waitFor(name) {
    step('waiting', { for: name });
    const { value, done } = await lines.next();
    if (done || value.trim() !== `go ${name}`) { fail(`expected "go ${name}", got ${JSON.stringify(value)}`); }
}

// connect is the UI's io.connect(url): default transports (polling, then
// websocket), with the test's timeout and no reconnection.
function connect() {
    return io(url, { forceNew: true, reconnection: false, timeout: timeoutMs });
}

// authenticate is the UI's authenticate(socket).
async function authenticate(socket) {
    const answer = once(socket, 'authentication');
    socket.emit('authenticate', JSON.stringify({ Authenticate: env('WS_KEY') }));
    const [data] = await answer;
    return JSON.parse(data).successful;
}

// ask emits a request the way the UI does and returns the answer under the
// UI's name, parsed as the UI parses it.
async function ask(socket, request, answerName, arg) {
    const got = once(socket, answerName);
    if (arg === undefined) { socket.emit(request); } else { socket.emit(request, arg); }
    const [data] = await got;
    return answerName === 'eventsUpdate' ? data : JSON.parse(data);
}

async function dashboard() {
    const socket = connect();
    const hello = once(socket, 'connectUpdate');
    await once(socket, 'connect');
    const [connectUpdate] = await hello;
    step('connectUpdate', { payload: JSON.parse(connectUpdate) });
    const auth = await authenticate(socket);
    step('authentication', { successful: auth, transport: socket.io.engine.transport.name });
    if (auth !== 'True') { fail('not authenticated'); }
    const logdate = new Date().toISOString().replace('T', ' ').replace('Z', '').replace('.', ',');
    const asks = [
        ['users', 'userUpdate'],
        ['logs', 'logUpdate', JSON.stringify({ time: '2000-01-01 00:00:00,000' })],
        ['serviceInfo', 'serviceInfoUpdate'],
        ['serverHealth', 'serverHealthUpdate'],
        ['systemStatus', 'systemStatusUpdate'],
        ['events', 'eventsUpdate'],
    ];
    for (const [request, answer, arg] of asks) {
        step(answer, { payload: await ask(socket, request, answer, arg) });
    }
    // The UI's own logs request (the current time): no older records.
    step('logUpdate-now', { payload: await ask(socket, 'logs', 'logUpdate', JSON.stringify({ time: logdate })) });
    step('transport', { name: socket.io.engine.transport.name });
    socket.disconnect();
}

async function usersPage() {
    const socket = connect();
    if (await authenticate(socket) !== 'True') { fail('users page not authenticated'); }
    const list = await ask(socket, 'systemUsers', 'systemUsersUpdate');
    socket.disconnect();
    return list;
}

// change is the UI's addUser/removeUsers: a new connection, authenticate,
// emit. The UI waits for nothing; this waits for the acknowledgement.
async function change(event, body) {
    const socket = connect();
    if (await authenticate(socket) !== 'True') { fail(`${event}: not authenticated`); }
    const answer = await socket.timeout(timeoutMs).emitWithAck(event, JSON.stringify(body));
    socket.disconnect();
    return JSON.parse(answer);
}

async function refused() {
    const socket = connect();
    const seen = [];
    socket.onAny((name) => { if (name !== 'connectUpdate') seen.push(name); });
    await once(socket, 'connect');
    socket.emit('addSystemUser', JSON.stringify({ systemUsers: [{ Name: 'intruder', Group: 'x', Token: 'intruder-token-0123456789', Password: 'pw', Certs: 'false', DeviceType: 'mobile' }] }));
    socket.emit('removeSystemUser', JSON.stringify({ systemUsers: [{ uid: 'anything' }] }));
    socket.emit('updateSystemUser', JSON.stringify({ systemUsers: [{ uid: 'anything', Password: 'taken-over' }] }));
    socket.emit('systemUsers');
    await new Promise((r) => setTimeout(r, 500));
    step('refused', { events: seen, connected: socket.connected });
    socket.disconnect();
}

async function badInput() {
    const socket = connect();
    if (await authenticate(socket) !== 'True') { fail('bad input: not authenticated'); }
    const cases = [
        ['addSystemUser', 'not json'],
        ['addSystemUser', JSON.stringify({ systemUsers: [] })],
        ['addSystemUser', JSON.stringify({ systemUsers: [{ Name: 'x' }] })],
        ['addSystemUser', JSON.stringify({ systemUsers: [{ Name: 'bad-device', Password: 'pw', DeviceType: 'toaster' }] })],
        ['addSystemUser', JSON.stringify({ systemUsers: [{ Name: 'bad-certs', Password: 'pw', Certs: 'maybe' }] })],
        ['removeSystemUser', JSON.stringify({ systemUsers: [{ uid: 'no-such-uid' }] })],
        ['removeSystemUser', JSON.stringify({ systemUsers: [{ uid: 42 }] })],
        ['removeSystemUser', JSON.stringify({})],
        ['updateSystemUser', 'not json'],
        ['updateSystemUser', JSON.stringify({ systemUsers: [] })],
        ['updateSystemUser', JSON.stringify({ systemUsers: [{ Password: 'pw' }] })],
        ['updateSystemUser', JSON.stringify({ systemUsers: [{ uid: 'no-such-uid', Password: 'pw' }] })],
        ['updateSystemUser', JSON.stringify({ systemUsers: [{ uid: 'no-such-uid', Password: '', Token: '' }] })],
        ['updateSystemUser', JSON.stringify({ systemUsers: [{ uid: 'no-such-uid', Token: 'short' }] })],
        ['updateSystemUser', JSON.stringify({ systemUsers: [{ uid: 'no-such-uid', Group: 'bad\u0001group' }] })],
    ];
    const answers = [];
    for (const [event, arg] of cases) {
        answers.push({ event, arg, answer: JSON.parse(await socket.timeout(timeoutMs).emitWithAck(event, arg)) });
    }
    step('bad-input', { answers });
    socket.disconnect();
}

try {
    await dashboard();
    const before = await usersPage();
    step('systemUsersUpdate', { payload: before });
    await waitFor('add');
    const name = env('NEW_USER');
    const added = await change('addSystemUser', { systemUsers: [{ Name: name, Group: 'Blue', Token: `${name}-token-0123456789`, Password: 'pass-word-1', Certs: 'true', DeviceType: 'mobile' }] });
    step('addSystemUser', { answer: added });
    const after = await usersPage();
    step('systemUsersUpdate-after-add', { payload: after });
    const row = after.SystemUsers.find((u) => u.Name === name);
    if (!row) { fail(`${name} is not in the users list`); }
    await waitFor('update');
    const updated = await change('updateSystemUser', { systemUsers: [{ Password: 'pass-word-2', Token: `${name}-token2-0123456789`, Group: 'Green', uid: row.Uid }] });
    step('updateSystemUser', { answer: updated });
    await waitFor('remove');
    const removed = await change('removeSystemUser', { systemUsers: [{ uid: row.Uid }] });
    step('removeSystemUser', { answer: removed });
    await refused();
    await badInput();
    step('done');
    process.exit(0);
} catch (e) {
    fail(String(e && e.stack || e));
}

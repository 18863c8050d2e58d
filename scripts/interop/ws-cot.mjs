// Interoperability check of CoT over websocket (/takproto/1 on the HTTPS
// port) with a third-party stack: the `ws` client with a client
// certificate, and @tak-ps/node-cot's protobuf encoder and decoder.
//
// Each websocket message carries TAK protocol v1: the server sends one
// stream frame (0xBF, varint length, TakMessage) per message, as the
// official server does; this client sends its position report once framed
// that way and once as the bare TakMessage node-cot encodes.
//
// Steps (one JSON line each): connected, replay (the SA of OUTPOST_PEER_UID,
// a TCP client already connected), sent (our SA, framed and bare), pong (an
// answer to node-cot's ping), chat (OUTPOST_PEER_CHAT_UID from the TCP
// client), done. Exits 1 on the first failure.
//
// Environment: OUTPOST_WS_URL (wss://host:port/takproto/1), CERT, KEY, CA
// (PEM files), OUTPOST_PEER_UID, OUTPOST_PEER_CHAT_UID, TIMEOUT_MS.
import fs from 'node:fs';
import WebSocket from 'ws';
import CoT from '@tak-ps/node-cot';

const env = (k) => {
    const v = process.env[k];
    if (!v) fail(`missing environment variable ${k}`);
    return v;
};
const timeoutMs = parseInt(process.env.TIMEOUT_MS || '20000', 10);
const step = (name, extra = {}) => console.log(JSON.stringify({ step: name, ...extra }));
function fail(msg) {
    console.log(JSON.stringify({ step: 'fail', message: msg }));
    process.exit(1);
}

// A TAK protocol v1 stream frame: 0xBF, the length as a varint, the message.
function frame(msg) {
    const len = [];
    let n = msg.length;
    do {
        let b = n & 0x7f;
        n >>>= 7;
        if (n > 0) b |= 0x80;
        len.push(b);
    } while (n > 0);
    return Buffer.concat([Buffer.from([0xbf, ...len]), Buffer.from(msg)]);
}

// unframe checks that a message is exactly one stream frame and returns its
// TakMessage.
function unframe(buf) {
    if (buf[0] !== 0xbf) fail(`message does not start with 0xBF: ${buf.subarray(0, 8).toString('hex')}`);
    let n = 0, shift = 0, i = 1;
    for (; i < buf.length; i++) {
        n += (buf[i] & 0x7f) * 2 ** shift;
        shift += 7;
        if ((buf[i] & 0x80) === 0) { i++; break; }
    }
    if (n !== buf.length - i) fail(`frame length ${n}, ${buf.length - i} bytes follow`);
    return buf.subarray(i);
}

const received = [];
const waiters = [];
function waitFor(what, match) {
    const hit = received.find(match);
    if (hit) return Promise.resolve(hit);
    return new Promise((resolve) => {
        const timer = setTimeout(() => fail(`no ${what} within ${timeoutMs} ms`), timeoutMs);
        waiters.push({ match, resolve: (c) => { clearTimeout(timer); resolve(c); } });
    });
}

const sa = (uid, callsign, lat, lon) => {
    const now = new Date();
    const stale = new Date(now.getTime() + 5 * 60 * 1000);
    return new CoT(`<event version="2.0" uid="${uid}" type="a-f-G-U-C" how="m-g" ` +
        `time="${now.toISOString()}" start="${now.toISOString()}" stale="${stale.toISOString()}">` +
        `<point lat="${lat}" lon="${lon}" hae="12.5" ce="9.9" le="9999999"/>` +
        `<detail><contact callsign="${callsign}" endpoint="*:-1:stcp"/>` +
        `<__group name="Cyan" role="Team Member"/></detail></event>`);
};

const ws = new WebSocket(env('OUTPOST_WS_URL'), {
    cert: fs.readFileSync(env('CERT')), key: fs.readFileSync(env('KEY')), ca: fs.readFileSync(env('CA')),
    servername: '127.0.0.1',
});
ws.on('error', (err) => fail(`websocket: ${err.message}`));
ws.on('unexpected-response', (req, res) => fail(`upgrade refused: ${res.statusCode}`));
ws.on('message', (data, isBinary) => {
    if (!isBinary) fail('the server sent a text message');
    let cot;
    try {
        cot = CoT.from_proto(unframe(Buffer.from(data)));
    } catch (err) {
        fail(`node-cot cannot decode a message: ${err.message}`);
    }
    received.push(cot);
    for (let i = waiters.length - 1; i >= 0; i--) {
        if (waiters[i].match(cot)) {
            waiters[i].resolve(cot);
            waiters.splice(i, 1);
        }
    }
});
await new Promise((resolve) => ws.once('open', resolve));
step('connected');

const peer = env('OUTPOST_PEER_UID');
const replay = await waitFor('replay of the peer', (c) => c.raw.event._attributes.uid === peer);
step('replay', { uid: peer, callsign: replay.raw.event.detail.contact._attributes.callsign });

ws.send(frame(sa('NODE-WS', 'NODE-WS-CALL', 52.52, 13.40).to_proto()));
ws.send(sa('NODE-WS', 'NODE-WS-CALL', 52.53, 13.41).to_proto()); // bare, as node-cot encodes it
step('sent', { uid: 'NODE-WS' });

ws.send(frame(CoT.ping().to_proto()));
await waitFor('pong', (c) => c.raw.event._attributes.type === 't-x-c-t-r');
step('pong');

const chatUID = env('OUTPOST_PEER_CHAT_UID');
await waitFor('chat from the TCP client', (c) => c.raw.event._attributes.uid === chatUID);
step('chat', { uid: chatUID });

ws.close(1000, 'done');
await new Promise((resolve) => ws.once('close', resolve));
step('done');
process.exit(0);

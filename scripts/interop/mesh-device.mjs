// A TAK device on the field mesh, for the end-to-end test of the mesh
// bridge (appliance/mesh_e2e_test.go): what ATAK does with no server
// configured, built from a third-party CoT library, @tak-ps/node-cot, and
// Node's dgram. (pytak would be the obvious third-party client, but no
// Python package index is reachable where the tests run; node-cot is
// already installed for the other interop tests and encodes and decodes
// both XML and TAK protocol v1.)
//
// It joins the SA group and the GeoChat group on its mesh address, listens
// for unicast CoT on the direct port (ATAK's default input), and sends from
// one socket bound to its mesh address, so the server sees one device.
//
// Commands, one JSON object a line on stdin:
//   {"cmd":"sa","format":"xml"|"v1","lat":59.1}   its position report
//   {"cmd":"chat","format":"xml"|"v1","text":"…"} a GeoChat to All Chat Rooms
//   {"cmd":"exit"}
// A v1 datagram is 0xBF 0x01 0xBF and the TakMessage node-cot encodes (the
// mesh header is built here: node-cot knows only the message).
//
// Output, one JSON object a line on stdout:
//   {"ready":true,"addr":"10.248.1.3:40123","uid":…,"callsign":…}
//   {"sent":"sa"|"chat","format":…,"uid":…,"bytes":n}
//   {"recv":{"uid","type","format":"xml"|"v1","from":"ip:port","via":"sa"|"chat"|"direct",
//            "callsign","text","lat","bytes"}}   one per datagram received
//   {"bad":{"from","via","bytes","error"}}     a datagram node-cot could not decode
//   {"fail":"…"}                                then exit 1
// It exits 0 on "exit", at the end of stdin, or after TIMEOUT_MS.
//
// Environment: MESH_ADDR (its address on the mesh interface), DEVICE_UID,
// DEVICE_CALLSIGN, SA_GROUP (239.2.3.1:6969), CHAT_GROUP (224.10.10.1:17012),
// DIRECT_PORT (4242), TIMEOUT_MS (30000).
import dgram from 'node:dgram';
import readline from 'node:readline';
import CoT, { DirectChat } from '@tak-ps/node-cot';

const out = (o) => process.stdout.write(JSON.stringify(o) + '\n');
function fail(msg) {
    out({ fail: String(msg) });
    process.exit(1);
}
const env = (k, def) => {
    const v = process.env[k] || def;
    if (!v) fail(`missing environment variable ${k}`);
    return v;
};
const hostPort = (s) => {
    const i = s.lastIndexOf(':');
    return { host: s.slice(0, i), port: parseInt(s.slice(i + 1), 10) };
};

const meshAddr = env('MESH_ADDR');
const uid = env('DEVICE_UID');
const callsign = env('DEVICE_CALLSIGN');
const saGroup = hostPort(env('SA_GROUP', '239.2.3.1:6969'));
const chatGroup = hostPort(env('CHAT_GROUP', '224.10.10.1:17012'));
const directPort = parseInt(env('DIRECT_PORT', '4242'), 10);
const timeoutMs = parseInt(env('TIMEOUT_MS', '30000'), 10);

setTimeout(() => process.exit(0), timeoutMs).unref();

// decode reads one datagram as a mesh client does: a mesh header means
// TAK protocol v1, anything else is an XML event.
function decode(buf) {
    if (buf[0] === 0xbf) {
        if (buf.length < 4 || buf[1] !== 0x01 || buf[2] !== 0xbf) throw new Error('bad mesh header');
        return { cot: CoT.from_proto(buf.subarray(3)), format: 'v1' };
    }
    return { cot: new CoT(buf.toString('utf8')), format: 'xml' };
}

function report(via, buf, rinfo) {
    const from = `${rinfo.address}:${rinfo.port}`;
    let d;
    try {
        d = decode(buf);
    } catch (err) {
        out({ bad: { from, via, bytes: buf.length, error: String(err && err.message || err) } });
        return;
    }
    const ev = d.cot.raw.event;
    const detail = ev.detail || {};
    const remarks = detail.remarks;
    out({
        recv: {
            uid: ev._attributes.uid, type: ev._attributes.type, format: d.format, from, via, bytes: buf.length,
            callsign: detail.contact?._attributes?.callsign || '',
            text: (remarks && typeof remarks._text === 'string') ? remarks._text : '',
            lat: Number(ev.point?._attributes?.lat ?? 0),
        },
    });
}

function bindSocket(port, via, group) {
    return new Promise((resolve, reject) => {
        const s = dgram.createSocket({ type: 'udp4', reuseAddr: true });
        s.on('error', reject);
        s.on('message', (buf, rinfo) => report(via, buf, rinfo));
        s.bind(port, '0.0.0.0', () => {
            try {
                if (group) s.addMembership(group, meshAddr);
            } catch (err) {
                reject(err);
                return;
            }
            resolve(s);
        });
    });
}

let sender;
try {
    await bindSocket(saGroup.port, 'sa', saGroup.host);
    await bindSocket(chatGroup.port, 'chat', chatGroup.host);
    if (directPort > 0) await bindSocket(directPort, 'direct', null);
    sender = dgram.createSocket({ type: 'udp4' });
    await new Promise((resolve, reject) => {
        sender.on('error', reject);
        sender.bind(0, meshAddr, resolve);
    });
    sender.setMulticastInterface(meshAddr);
    sender.setMulticastTTL(1);
    sender.setMulticastLoopback(false); // a device does not read itself
} catch (err) {
    fail(err && err.message || err);
}

function encode(cot, format) {
    if (format === 'v1') return Buffer.concat([Buffer.from([0xbf, 0x01, 0xbf]), Buffer.from(cot.to_proto(1))]);
    return Buffer.from(cot.to_xml(), 'utf8');
}

function send(what, cot, format, to) {
    const buf = encode(cot, format);
    sender.send(buf, to.port, to.host, (err) => {
        if (err) fail(`sending ${what}: ${err.message}`);
        out({ sent: what, format, uid: cot.raw.event._attributes.uid, bytes: buf.length });
    });
}

function sa(lat) {
    const now = new Date();
    const cot = CoT.from_geojson({
        type: 'Feature', id: uid,
        properties: {
            type: 'a-f-G-U-C', how: 'm-g', callsign,
            time: now.toISOString(), start: now.toISOString(),
            stale: new Date(now.getTime() + 5 * 60 * 1000).toISOString(),
        },
        geometry: { type: 'Point', coordinates: [18.07, lat, 12] },
    });
    cot.raw.event.detail.__group = { _attributes: { name: 'Cyan', role: 'Team Member' } };
    return cot;
}

const rl = readline.createInterface({ input: process.stdin });
rl.on('line', (line) => {
    if (!line.trim()) return;
    let c;
    try {
        c = JSON.parse(line);
    } catch {
        fail(`not a command: ${line}`);
    }
    const format = c.format === 'v1' ? 'v1' : 'xml';
    switch (c.cmd) {
    case 'sa':
        send('sa', sa(Number(c.lat ?? 59.33)), format, saGroup);
        break;
    case 'chat':
        send('chat', new DirectChat({
            from: { uid, callsign },
            to: { uid: 'All Chat Rooms', callsign: 'All Chat Rooms' },
            message: String(c.text ?? ''),
        }), format, chatGroup);
        break;
    case 'exit':
        process.exit(0);
        break;
    default:
        fail(`unknown command ${c.cmd}`);
    }
});
rl.on('close', () => process.exit(0));

const a = sender.address();
out({ ready: true, addr: `${a.address}:${a.port}`, uid, callsign });

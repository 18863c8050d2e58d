#!/usr/bin/env python3
"""A TAK federation v1 peer written in Python, for Outpost's
interoperability test (appliance/federation_python_test.go). It shares
nothing with Outpost but the wire facts: its message classes are generated
at test time from appliance/federation/fedproto/fig.proto, and it frames
them as the official server's v1 federation does (docs/federation.md
"Federation v1"): over mutual TLS, each FederatedEvent preceded by its
length as a 4-byte big-endian integer, nothing else on the stream.

  fedpeer_v1.py client ADDR ...   connects to Outpost's v1 listener
  fedpeer_v1.py server PORT ...   is the v1 server Outpost connects to

Either way it sends one position report (--send-uid, callsign PYV1) and
reads until Outpost sends the event with --expect-uid. Everything it sees
is printed as one JSON object per line. It exits 0 once the expected event
came, 1 at --timeout.
"""
import argparse
import json
import socket
import ssl
import struct
import sys
import time

import fig_pb2 as pb

LIMIT = 4 << 20  # the largest frame this peer reads


def say(**kw):
    print(json.dumps(kw), flush=True)


def frame(fe):
    body = fe.SerializeToString()
    return struct.pack(">i", len(body)) + body


def read_exact(sock, n):
    out = b""
    while len(out) < n:
        chunk = sock.recv(n - len(out))
        if not chunk:
            raise EOFError("stream ended")
        out += chunk
    return out


def position(uid):
    now = int(time.time() * 1000)
    other = ('<detail><contact callsign="PYV1" endpoint="*:-1:stcp"/>'
             '<__group name="Cyan" role="Team Member"/></detail>')
    # No provenance or hops: the official server's v1 sends none.
    return pb.FederatedEvent(
        event=pb.GeoEvent(uid=uid, type="a-f-G-U-C", coordSource="m-g", sendTime=now, startTime=now,
                          staleTime=now + 300000, lat=21.5, lon=-7.25, hae=10, ce=5, le=9999999,
                          other=other, speed=2.5, course=45))


def converse(sock, a):
    """Sends our position, then reads frames until the expected event."""
    sock.sendall(frame(position(a.send_uid)))
    deadline = time.time() + a.timeout
    while time.time() < deadline:
        sock.settimeout(max(0.1, deadline - time.time()))
        (length,) = struct.unpack(">i", read_exact(sock, 4))
        if length < 0 or length > LIMIT:
            say(error="frame of %d bytes" % length)
            return False
        if length == 0:
            say(keepalive=True)
            continue
        fe = pb.FederatedEvent()
        fe.ParseFromString(read_exact(sock, length))
        if fe.HasField("contact"):
            say(contact=fe.contact.uid, callsign=fe.contact.callsign)
        if fe.HasField("event"):
            ev = fe.event
            say(event=ev.uid, type=ev.type, lat=ev.lat, other=ev.other,
                provenance=[p.federationServerId for p in fe.federateProvenance])
            if ev.uid == a.expect_uid:
                return True
    return False


def context(a, server):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER if server else ssl.PROTOCOL_TLS_CLIENT)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    ctx.load_cert_chain(a.cert, a.key)
    ctx.load_verify_locations(a.ca)
    # Federates are known by certificate, not host name (as on the official server).
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_REQUIRED
    return ctx


def run_client(a):
    host, port = a.target.rsplit(":", 1)
    raw = socket.create_connection((host, int(port)), timeout=a.timeout)
    with context(a, False).wrap_socket(raw) as sock:
        say(connected=sock.getpeercert()["subject"][0][0][1])
        return converse(sock, a)


def run_server(a):
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.bind(("127.0.0.1", int(a.target)))
    ls.listen(1)
    ls.settimeout(a.timeout)
    say(listening=ls.getsockname()[1])
    raw, _ = ls.accept()
    with context(a, True).wrap_socket(raw, server_side=True) as sock:
        say(accepted=sock.getpeercert()["subject"][0][0][1])
        ok = converse(sock, a)
        time.sleep(0.5)  # let Outpost read our position before the stream ends
        return ok


def main():
    p = argparse.ArgumentParser()
    p.add_argument("mode", choices=["client", "server"])
    p.add_argument("target", help="host:port (client) or port (server; 0: any free one)")
    p.add_argument("--cert", required=True)
    p.add_argument("--key", required=True)
    p.add_argument("--ca", required=True)
    p.add_argument("--send-uid", required=True)
    p.add_argument("--expect-uid", required=True)
    p.add_argument("--timeout", type=float, default=60)
    a = p.parse_args()
    try:
        ok = run_client(a) if a.mode == "client" else run_server(a)
    except (OSError, EOFError) as e:
        say(error=str(e))
        ok = False
    say(done=ok)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()

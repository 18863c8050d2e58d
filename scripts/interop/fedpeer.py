#!/usr/bin/env python3
"""A TAK federation v2 peer written with Python's grpcio, for Outpost's
interoperability test (appliance/federation_python_test.go). It shares
nothing with Outpost but the wire facts: its code is generated at test time
from appliance/federation/fedproto/*.proto by grpc_tools.

  fedpeer.py client ADDR ...   connects to Outpost's federation listener
  fedpeer.py server PORT ...   is the federation server Outpost connects to

Either way it exchanges identity and groups (--groups, comma-separated:
the federate groups it announces and tags its event with; default
__ANON__), sends one position report (--send-uid, callsign PY) and waits
until Outpost sends the event with --expect-uid. As a client it can also
send one ROL program creating a mission (--send-mission) and wait for
Outpost's ROL naming another (--expect-mission). Everything it sees is
printed as one JSON object per line. It exits 0 once what it expects came,
1 at --timeout.
"""
import argparse
import json
import sys
import threading
import time
from concurrent import futures

import grpc

import fig_pb2 as pb
import fig_pb2_grpc as rpc

done = threading.Event()
rol_done = threading.Event()  # the ROL naming --expect-mission came (or none is expected)
finish = threading.Event()  # the client's streams stay open until it is set


say_lock = threading.Lock()  # one whole line at a time from every thread


def say(**kw):
    line = json.dumps(kw)
    with say_lock:
        print(line, flush=True)


GROUPS = ["__ANON__"]  # --groups


def position(uid):
    now = int(time.time() * 1000)
    other = ('<detail><contact callsign="PY" endpoint="*:-1:stcp"/>'
             '<__group name="Cyan" role="Team Member"/></detail>')
    return pb.FederatedEvent(
        event=pb.GeoEvent(uid=uid, type="a-f-G-U-C", coordSource="m-g", sendTime=now, startTime=now,
                          staleTime=now + 300000, lat=12.5, lon=-3.25, hae=10, ce=5, le=9999999,
                          other=other, speed=1.5, course=90),
        federateGroups=GROUPS,
        federateProvenance=[pb.FederateProvenance(federationServerId="python-peer", federationServerName="python")],
        federateHops=pb.FederateHops(maxHops=-1, currentHops=1))


def seen(fe, expect):
    if fe.HasField("contact"):
        c = fe.contact
        say(contact=c.uid, callsign=c.callsign, operation=pb.CRUD.Name(c.operation))
        return
    ev = fe.event
    say(event=ev.uid, type=ev.type, lat=ev.lat, other=ev.other, eventGroups=list(fe.federateGroups),
        provenance=[p.federationServerId for p in fe.federateProvenance], hops=fe.federateHops.currentHops)
    if ev.uid == expect:
        done.set()


def identity(name, kind):
    return pb.Identity(name=name, uid="python-peer", serverId="python-peer", type=kind)


def read(path):
    with open(path, "rb") as f:
        return f.read()


def run_client(a):
    creds = grpc.ssl_channel_credentials(root_certificates=read(a.ca), private_key=read(a.key),
                                         certificate_chain=read(a.cert))
    ch = grpc.secure_channel(a.addr, creds, options=[("grpc.ssl_target_name_override", a.server_name)])
    stub = rpc.FederatedChannelStub(ch)
    ident = stub.getIdentity(pb.Empty(), timeout=30)
    say(identity=ident.name, serverId=ident.serverId, kind=pb.Identity.ConnectionType.Name(ident.type))
    sub = pb.Subscription(identity=identity(a.name, pb.Identity.FEDERATION_TAK_CLIENT))
    groups = stub.ServerFederateGroupsStream(sub)
    first = next(groups)
    say(groups=list(first.federateGroups), ready=pb.ServerHealth.ServingStatus.Name(first.streamUpdate.status))
    # Calls are kept referenced: grpc cancels a call whose object is collected.
    mine = stub.ClientFederateGroupsStream.future(iter([pb.FederateGroups(federateGroups=GROUPS)]))
    events = stub.ClientEventStream(sub)

    def receive():
        try:
            for fe in events:
                seen(fe, a.expect_uid)
        except grpc.RpcError as e:
            say(receive_error=str(e.code()))

    threading.Thread(target=receive, daemon=True).start()

    def outgoing():
        yield position(a.send_uid)
        finish.wait(a.timeout)

    sending = stub.ServerEventStream.future(outgoing())

    # Missions over ROL: the program form the official server writes
    # (docs/federation.md "Missions over ROL").
    rols = stub.ClientROLStream(sub)

    def receive_rol():
        try:
            for r in rols:
                say(rol=r.program, payloads=len(r.payload),
                    rol_provenance=[p.federationServerId for p in r.federateProvenance])
                if a.expect_mission and ('"name":"%s"' % a.expect_mission) in r.program:
                    rol_done.set()
        except grpc.RpcError as e:
            say(rol_error=str(e.code()))

    threading.Thread(target=receive_rol, daemon=True).start()

    def rol_out():
        if a.send_mission:
            meta = {"type": "MissionMetadata", "name": a.send_mission, "creatorUid": "PY-CREATOR",
                    "description": "from python", "tool": "public"}
            yield pb.ROL(program="create mission\n" + json.dumps(meta) + ";", federateGroups=["__ANON__"],
                         federateProvenance=[pb.FederateProvenance(federationServerId="python-peer")],
                         federateHops=pb.FederateHops(maxHops=-1, currentHops=1))
        finish.wait(a.timeout)

    rol_sending = stub.ServerROLStream.future(rol_out())
    ok = done.wait(a.timeout) and rol_done.wait(a.timeout)
    # The official client checks health an interval after its streams are
    # open; by then the link exists.
    health = stub.HealthCheck(pb.ClientHealth(status=pb.ClientHealth.SERVING), timeout=30)
    say(health=pb.ServerHealth.ServingStatus.Name(health.status))
    finish.set()
    events.cancel()
    groups.cancel()
    sending.cancel()
    rols.cancel()
    rol_sending.cancel()
    mine.cancel()
    return ok


class Servicer(rpc.FederatedChannelServicer):
    def __init__(self, a):
        self.a = a

    def getIdentity(self, request, context):
        return identity(self.a.name, pb.Identity.FEDERATION_TAK_SERVER)

    def ServerFederateGroupsStream(self, request, context):
        say(subscriber=request.identity.name, serverId=request.identity.serverId)
        yield pb.FederateGroups(streamUpdate=pb.ServerHealth(status=pb.ServerHealth.SERVING),
                                federateGroups=GROUPS)
        done.wait(self.a.timeout)

    def ClientFederateGroupsStream(self, request_iterator, context):
        for g in request_iterator:
            say(groups=list(g.federateGroups))
        return pb.Subscription()

    def ClientEventStream(self, request, context):
        yield position(self.a.send_uid)
        done.wait(self.a.timeout)

    def ServerEventStream(self, request_iterator, context):
        for fe in request_iterator:
            seen(fe, self.a.expect_uid)
        return pb.Subscription()

    def HealthCheck(self, request, context):
        return pb.ServerHealth(status=pb.ServerHealth.SERVING)


def run_server(a):
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=16))
    rpc.add_FederatedChannelServicer_to_server(Servicer(a), server)
    creds = grpc.ssl_server_credentials([(read(a.key), read(a.cert))], root_certificates=read(a.ca),
                                        require_client_auth=True)
    port = server.add_secure_port("127.0.0.1:%d" % a.port, creds)
    server.start()
    say(listening=port)
    ok = done.wait(a.timeout)
    time.sleep(0.5)  # let the last answers go
    server.stop(1)
    return ok


def main():
    p = argparse.ArgumentParser()
    p.add_argument("mode", choices=["client", "server"])
    p.add_argument("target", help="host:port (client) or port (server; 0: any free one)")
    p.add_argument("--cert", required=True)
    p.add_argument("--key", required=True)
    p.add_argument("--ca", required=True)
    p.add_argument("--name", default="python-peer")
    p.add_argument("--server-name", default="", help="the server certificate's name (client)")
    p.add_argument("--send-uid", required=True)
    p.add_argument("--expect-uid", required=True)
    p.add_argument("--send-mission", default="", help="a mission to create with ROL (client)")
    p.add_argument("--expect-mission", default="", help="a mission whose ROL to wait for (client)")
    p.add_argument("--timeout", type=float, default=60)
    p.add_argument("--groups", default="__ANON__", help="federate groups, comma-separated")
    a = p.parse_args()
    GROUPS[:] = [g for g in a.groups.split(",") if g]
    if not a.expect_mission:
        rol_done.set()
    if a.mode == "client":
        a.addr = a.target
        ok = run_client(a)
    else:
        a.port = int(a.target)
        ok = run_server(a)
    say(done=ok)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()

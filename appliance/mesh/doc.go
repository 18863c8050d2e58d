// Package mesh carries CoT between the broker and the field mesh, over UDP:
//
//   - Bridge joins ATAK's multicast groups (SA on 239.2.3.1:6969, GeoChat
//     on 224.10.10.1:17012, and any others configured) on the chosen
//     interfaces. What devices send there is published as coming from one
//     anonymous client per device address (listener "mesh"); what the
//     server's clients of the bridge's groups send is sent to the groups,
//     as XML or TAK protocol v1 mesh datagrams.
//   - Input reads CoT sent by unicast UDP to one port (4242 by default,
//     listener "udp"): the same devices, no way back.
//
// Both read each datagram whole (never a fragment of a stream), decode it
// with package cot, and hand it to the CoT session driver (package
// cotsession) like any other transport. What differs from a stream is
// that a device cannot be pushed back: a source over its budget loses
// datagrams instead of being paced, and every drop is counted by kind
// (size, loop, duplicate, budget, malformed). docs/mesh.md says how the
// bridge avoids loops and storms.
//
// Imports (of this module): broker, config (FromConfig), cot, cotsession, logx, rate.
package mesh

// Package fedproto holds the Go code generated from fig.proto and
// binarypayload.proto, the messages and the FederatedChannel service of TAK
// federation v2 (docs/federation.md "Messages"). It is generated, never
// edited by hand; package federation converts between these messages and
// CoT events.
//
// It imports only google.golang.org/protobuf and google.golang.org/grpc.
package fedproto

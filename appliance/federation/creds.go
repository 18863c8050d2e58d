package federation

import (
	"context"
	"crypto/tls"
	"errors"
	"net"

	"google.golang.org/grpc/credentials"
)

// handshaken is the listener's transport credentials when its connections
// come with their TLS handshake done (Config.Listen: the appliance's
// connection intake bounds handshakes per source and in time): it only
// reports the connection's TLS state, which the calls read the federate's
// certificate from.
type handshaken struct{}

func (handshaken) ServerHandshake(c net.Conn) (net.Conn, credentials.AuthInfo, error) {
	tc, ok := c.(interface{ ConnectionState() tls.ConnectionState })
	if !ok {
		return nil, nil, errors.New("federation: connection without TLS")
	}
	st := tc.ConnectionState()
	if !st.HandshakeComplete || len(st.PeerCertificates) == 0 {
		return nil, nil, errors.New("federation: no verified federate certificate")
	}
	return c, credentials.TLSInfo{State: st, CommonAuthInfo: credentials.CommonAuthInfo{SecurityLevel: credentials.PrivacyAndIntegrity}}, nil
}

func (handshaken) ClientHandshake(context.Context, string, net.Conn) (net.Conn, credentials.AuthInfo, error) {
	return nil, nil, errors.New("federation: server credentials only")
}

func (handshaken) Info() credentials.ProtocolInfo {
	return credentials.ProtocolInfo{SecurityProtocol: "tls"}
}

func (h handshaken) Clone() credentials.TransportCredentials { return h }

func (handshaken) OverrideServerName(string) error { return nil }

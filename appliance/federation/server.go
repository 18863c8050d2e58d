package federation

import (
	"context"
	"crypto/x509"
	"errors"
	"io"
	"slices"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"outpost/appliance/federation/fedproto"
	"outpost/appliance/logx"
)

// service is the FederatedChannel a connecting federate calls
// (docs/federation.md "The calls"). The calls of one connection make one
// link: the first of its two event streams makes it, the end of either
// ends it (the federate connects again). What is not implemented answers
// Unimplemented.
type service struct {
	fedproto.UnimplementedFederatedChannelServer
	f *Federation
}

// caller is who called: the federate's name (the managed federate's whose
// CA its certificate chains to, or its certificate's common name) and its
// connection's address.
func (s *service) caller(ctx context.Context) (name, addr string, err error) {
	p, ok := peer.FromContext(ctx)
	if !ok {
		return "", "", status.Error(codes.Unauthenticated, "no peer")
	}
	ti, ok := p.AuthInfo.(credentials.TLSInfo)
	if !ok || len(ti.State.PeerCertificates) == 0 {
		return "", "", status.Error(codes.Unauthenticated, "no federate certificate")
	}
	certs := ti.State.PeerCertificates
	if rv := s.f.cfg.Revoked; rv != nil && rv(certs[0]) { // revoked since its handshake (revoked.go)
		return "", "", status.Error(codes.PermissionDenied, "federate certificate revoked")
	}
	return s.f.federateName(certs), p.Addr.String(), nil
}

// certName is the name a federate is known by: its certificate's common
// name, or its fingerprint when it has none.
func certName(c *x509.Certificate) string {
	if n := c.Subject.CommonName; n != "" && len(n) <= 128 {
		return n
	}
	return Fingerprint(c.Raw)
}

// linkFor returns the link of the caller's connection, made when it is the
// first event stream of that connection.
func (s *service) linkFor(ctx context.Context, peerID string) (*link, error) {
	name, addr, err := s.caller(ctx)
	if err != nil {
		return nil, err
	}
	s.f.attachMu.Lock() // the two event streams of a connection arrive together: one makes the link
	defer s.f.attachMu.Unlock()
	l := s.f.linkOf(name)
	if l != nil && l.addr == addr {
		select {
		case <-l.done:
		default:
			l.setPeer(peerID)
			return l, nil
		}
	}
	l, err = s.f.attach(name, peerID, addr, nil, peerLeaf(ctx))
	if err != nil {
		return nil, status.Error(codes.Unavailable, err.Error())
	}
	return l, nil
}

// GetIdentity answers this server's identity.
func (s *service) GetIdentity(context.Context, *fedproto.Empty) (*fedproto.Identity, error) {
	return s.f.identity(fedproto.Identity_FEDERATION_TAK_SERVER), nil
}

// ClientEventStream sends the federate what this server's clients send,
// starting with the latest position of each.
func (s *service) ClientEventStream(sub *fedproto.Subscription, stream fedproto.FederatedChannel_ClientEventStreamServer) error {
	if sub.GetIdentity().GetName() == "" {
		return status.Error(codes.InvalidArgument, "subscription without an identity name")
	}
	l, err := s.linkFor(stream.Context(), sub.GetIdentity().GetServerId())
	if err != nil {
		return err
	}
	l.sending.Store(true)
	err = l.sendLoop(stream.Context(), stream.Send)
	s.f.detach(l, err)
	return nil
}

// ServerEventStream receives the federate's events. The federate closing
// its side (EOF) ends only this stream, as on the official server, while
// the link still sends on ClientEventStream; any other end ends the link.
func (s *service) ServerEventStream(stream fedproto.FederatedChannel_ServerEventStreamServer) error {
	l, err := s.linkFor(stream.Context(), "")
	if err != nil {
		return err
	}
	res := make(chan error, 1)
	go func() { res <- l.recvLoop(stream.Recv) }()
	select {
	case err = <-res:
	case <-l.done:
		err = errors.New("link closed") // returning ends the stream; recvLoop's Recv returns then
	}
	if errors.Is(err, io.EOF) {
		if !l.sending.Load() {
			s.f.detach(l, err)
		}
		return stream.SendAndClose(&fedproto.Subscription{Identity: s.f.identity(fedproto.Identity_FEDERATION_TAK_SERVER)})
	}
	s.f.detach(l, err)
	return nil
}

// ServerFederateGroupsStream tells the federate the stream is ready and
// the federate groups this server sends it (its outbound mapping,
// groups.go), then stays open, announcing them again when they change.
func (s *service) ServerFederateGroupsStream(_ *fedproto.Subscription, stream fedproto.FederatedChannel_ServerFederateGroupsStreamServer) error {
	name, _, err := s.caller(stream.Context())
	if err != nil {
		return err
	}
	changed := s.f.groupsChanged()
	names := s.f.groupsOf(name).names
	err = stream.Send(&fedproto.FederateGroups{
		StreamUpdate:   &fedproto.ServerHealth{Status: fedproto.ServerHealth_SERVING},
		FederateGroups: names,
	})
	if err != nil {
		return err
	}
	return s.f.announceChanges(stream.Context(), name, names, changed, stream.Send)
}

// announceChanges sends the federate name's groups again each time they
// change from sent, until ctx ends or federation shuts down.
func (f *Federation) announceChanges(ctx context.Context, name string, sent []string, changed <-chan struct{}, send func(*fedproto.FederateGroups) error) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-f.stop:
			return nil
		case <-changed:
		}
		changed = f.groupsChanged()
		if names := f.groupsOf(name).names; !slices.Equal(names, sent) {
			if err := send(&fedproto.FederateGroups{FederateGroups: names}); err != nil {
				return err
			}
			sent = names
		}
	}
}

// ClientFederateGroupsStream takes the federate's groups (kept, shown to
// the administrator who maps them: AnnouncedGroups).
func (s *service) ClientFederateGroupsStream(stream fedproto.FederatedChannel_ClientFederateGroupsStreamServer) error {
	name, _, err := s.caller(stream.Context())
	if err != nil {
		return err
	}
	for {
		g, err := stream.Recv()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return stream.SendAndClose(&fedproto.Subscription{Identity: s.f.identity(fedproto.Identity_FEDERATION_TAK_SERVER)})
			}
			return nil
		}
		s.f.noteAnnounced(name, g.GetFederateGroups())
		s.f.log.Debug("federate groups", "federate", logx.Clip(name), "groups", len(g.GetFederateGroups()))
	}
}

// HealthCheck answers SERVING while the caller has a link.
func (s *service) HealthCheck(ctx context.Context, _ *fedproto.ClientHealth) (*fedproto.ServerHealth, error) {
	name, _, err := s.caller(ctx)
	if err != nil {
		return nil, err
	}
	st := fedproto.ServerHealth_NOT_CONNECTED
	if s.f.linkOf(name) != nil {
		st = fedproto.ServerHealth_SERVING
	}
	return &fedproto.ServerHealth{Status: st}, nil
}

// ClientROLStream sends the federate the mission changes made here and
// those of other federates (rol_send.go). The connection ending ends the
// link (the event streams end with it).
func (s *service) ClientROLStream(sub *fedproto.Subscription, stream fedproto.FederatedChannel_ClientROLStreamServer) error {
	l, err := s.linkFor(stream.Context(), sub.GetIdentity().GetServerId())
	if err != nil {
		return err
	}
	err = l.sendROLLoop(stream.Context(), stream.Send)
	if stream.Context().Err() != nil {
		s.f.detach(l, err)
	}
	return nil
}

// ServerROLStream applies the federate's mission changes (rol_receive.go). The
// federate closing its side ends only this stream; the connection ending
// ends the link.
func (s *service) ServerROLStream(stream fedproto.FederatedChannel_ServerROLStreamServer) error {
	l, err := s.linkFor(stream.Context(), "")
	if err != nil {
		return err
	}
	res := make(chan error, 1)
	go func() { res <- l.recvROLLoop(stream.Recv) }()
	select {
	case err = <-res:
	case <-l.done:
		return nil
	}
	if errors.Is(err, io.EOF) {
		return stream.SendAndClose(&fedproto.Subscription{Identity: s.f.identity(fedproto.Identity_FEDERATION_TAK_SERVER)})
	}
	if stream.Context().Err() != nil {
		s.f.detach(l, err)
	}
	return nil
}

// sendLoop sends what the link queues until the link or ctx ends.
func (l *link) sendLoop(ctx context.Context, send func(*fedproto.FederatedEvent) error) error {
	if l.sp != nil {
		if err := l.sendQueued(send); err != nil { // the persistent queue first (spool.go)
			return err
		}
	}
	for {
		select {
		case fe := <-l.out:
			l.remember(fe) // first: one whose send fails is queued again too
			if err := send(fe); err != nil {
				return err
			}
			l.stats.out.Add(1)
		case <-l.done:
			return errors.New("link closed")
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// recvLoop handles what the federate sends until its stream ends.
func (l *link) recvLoop(recv func() (*fedproto.FederatedEvent, error)) error {
	for {
		fe, err := recv()
		if err != nil {
			return err
		}
		l.stats.lastContact.Store(l.f.cfg.Now().Unix())
		l.receive(fe, proto.Size(fe))
	}
}

// peerLeaf is the certificate of the call's federate (nil: none).
func peerLeaf(ctx context.Context) *x509.Certificate {
	p, ok := peer.FromContext(ctx)
	if !ok || p == nil {
		return nil
	}
	return leafOf(p)
}

// leafOf is the certificate a connection's peer presented (nil: none).
func leafOf(p *peer.Peer) *x509.Certificate {
	ti, ok := p.AuthInfo.(credentials.TLSInfo)
	if !ok || len(ti.State.PeerCertificates) == 0 {
		return nil
	}
	return ti.State.PeerCertificates[0]
}

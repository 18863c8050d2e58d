package federation

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	"outpost/appliance/federation/fedproto"
	"outpost/appliance/logx"
)

// stableAfter is how long an outbound link must have lasted for the next
// reconnect to start again from the shortest back-off.
const stableAfter = 30 * time.Second

// dialLoop keeps one outbound link to o, connecting again after each end
// with a back-off that doubles from its BackoffMin up to its BackoffMax
// (Config's when not set), until stop is closed (a
// managed federate removed; nil: never) or federation shuts down.
func (f *Federation) dialLoop(o Outbound, stop <-chan struct{}) {
	st := f.statsOf(o.Name)
	lo, hi := f.backoff(o)
	wait := lo
	for first := true; ; first = false {
		if !first {
			st.reconnects.Add(1)
		}
		began := time.Now()
		err := f.runOutbound(o, stop)
		select {
		case <-f.stop:
			return
		case <-stop:
			return
		default:
		}
		if err != nil {
			st.setError(err)
		}
		if time.Since(began) > stableAfter {
			wait = lo
		}
		f.warn.Warn("federation link to federate ended; connecting again", "federate", logx.Clip(o.Name),
			"address", logx.Clip(o.Address), "err", errString(err), "in", wait.String())
		t := time.NewTimer(wait)
		select {
		case <-f.stop:
			t.Stop()
			return
		case <-stop:
			t.Stop()
			return
		case <-t.C:
		}
		wait = min(2*wait, hi)
	}
}

// backoff is o's reconnect back-off: its own bounds, Config's where it
// has none; the longest never below the first.
func (f *Federation) backoff(o Outbound) (first, longest time.Duration) {
	first, longest = f.cfg.BackoffMin, f.cfg.BackoffMax
	if o.BackoffMin > 0 {
		first = o.BackoffMin
	}
	if o.BackoffMax > 0 {
		longest = o.BackoffMax
	}
	return first, max(longest, first)
}

// setupTimeout bounds the calls that set a link up.
const setupTimeout = 30 * time.Second

// runOutbound connects to o and serves the link until it ends, as the
// official server's client does (docs/federation.md "The calls"): the
// server's groups stream first (its first message says it is ready), our
// groups, then the two event streams, and health checks.
func (f *Federation) runOutbound(o Outbound, stop <-chan struct{}) error {
	if o.V1 {
		return f.runOutboundV1(o, stop)
	}
	cc, err := grpc.NewClient(o.Address,
		grpc.WithTransportCredentials(credentials.NewTLS(f.clientTLS(o))),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(f.cfg.MaxMessage)),
		grpc.WithKeepaliveParams(keepalive.ClientParameters{Time: 30 * time.Second, Timeout: 20 * time.Second}))
	if err != nil {
		return err
	}
	defer cc.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-f.stop:
			cancel()
		case <-stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	cli := fedproto.NewFederatedChannelClient(cc)
	sub := &fedproto.Subscription{Identity: f.identity(fedproto.Identity_FEDERATION_TAK_CLIENT)}

	setup, done := context.WithTimeout(ctx, setupTimeout)
	defer done()
	var peerID string
	var remote peer.Peer // its certificate (revoked.go)
	if id, err := cli.GetIdentity(setup, &fedproto.Empty{}, grpc.Peer(&remote)); err == nil {
		peerID = id.GetServerId()
	} else if status.Code(err) != codes.Unimplemented {
		return fmt.Errorf("getIdentity: %w", err)
	}
	groups, err := cli.ServerFederateGroupsStream(ctx, sub)
	if err != nil {
		return fmt.Errorf("groups stream: %w", err)
	}
	groupsOpen, err := firstGroups(setup, groups, func(g *fedproto.FederateGroups) { f.noteAnnounced(o.Name, g.GetFederateGroups()) })
	if err != nil {
		return err
	}
	mine, err := cli.ClientFederateGroupsStream(ctx)
	if err != nil {
		return fmt.Errorf("our groups: %w", err)
	}
	changed := f.groupsChanged()
	ourGroups := f.groupsOf(o.Name).names
	if err := mine.Send(&fedproto.FederateGroups{FederateGroups: ourGroups}); err != nil {
		return fmt.Errorf("our groups: %w", err)
	}
	in, err := cli.ClientEventStream(ctx, sub)
	if err != nil {
		return fmt.Errorf("event stream in: %w", err)
	}
	out, err := cli.ServerEventStream(ctx)
	if err != nil {
		return fmt.Errorf("event stream out: %w", err)
	}
	done()

	sp := f.spoolerOf(o.Name)
	l, err := f.attach(o.Name, peerID, o.Address, sp, leafOf(&remote))
	if err != nil {
		return err
	}
	if sp != nil {
		sp.setPeer(peerID)
		sp.stop() // the link's session reads from here on (spool.go)
	}
	errc := make(chan error, 4)
	var wg sync.WaitGroup
	f.rolStreams(ctx, cli, sub, l, &wg) // missions (rol_send.go)
	wg.Add(3)
	go func() { defer wg.Done(); errc <- l.recvLoop(in.Recv) }()
	go func() { defer wg.Done(); errc <- l.sendLoop(ctx, out.Send) }()
	go func() { defer wg.Done(); errc <- f.healthLoop(ctx, cli, l.sent.ack) }()
	wg.Add(1)
	go func() { // our groups again when the mapping changes them
		defer wg.Done()
		// A server may answer this stream and close it at once: then our
		// changes are not announced, and the link goes on (announcements
		// route nothing: each event carries its groups).
		if err := f.announceChanges(ctx, o.Name, ourGroups, changed, mine.Send); err != nil {
			f.log.Debug("federate groups stream closed: changes not announced", "federate", logx.Clip(o.Name), "err", errString(err))
		}
	}()
	if groupsOpen {
		wg.Add(1)
		go func() { // the server's group updates: kept for its administrator
			defer wg.Done()
			for {
				g, err := groups.Recv()
				if err != nil {
					errc <- err
					return
				}
				f.noteAnnounced(o.Name, g.GetFederateGroups())
			}
		}()
	}
	select {
	case err = <-errc:
	case <-l.done:
		err = errors.New("link closed")
	}
	if sp != nil {
		sp.open() // before the link's session closes
	}
	cancel()
	f.detach(l, err)
	wg.Wait()
	if sp != nil {
		sp.requeue(l)
		sp.drain()
	}
	return err
}

// firstGroups waits for the server's first groups message, which says its
// side is ready (a server without the groups stream is ready at once).
func firstGroups(ctx context.Context, groups fedproto.FederatedChannel_ServerFederateGroupsStreamClient, note func(*fedproto.FederateGroups)) (open bool, err error) {
	res := make(chan error, 1)
	var g *fedproto.FederateGroups
	go func() {
		var err error
		g, err = groups.Recv()
		res <- err
	}()
	select {
	case err := <-res:
		if err == nil {
			note(g)
			return true, nil
		}
		if status.Code(err) == codes.Unimplemented {
			return false, nil
		}
		return false, fmt.Errorf("groups stream: %w", err)
	case <-ctx.Done():
		return false, fmt.Errorf("groups stream: %w", ctx.Err())
	}
}

// healthLoop checks the server's health every HealthInterval: an answer
// other than SERVING ends the link; SERVING acknowledges what was sent
// before the check (unacked.go), given to acked with the check's time.
func (f *Federation) healthLoop(ctx context.Context, cli fedproto.FederatedChannelClient, acked func(sentAt time.Time)) error {
	t := time.NewTicker(f.cfg.HealthInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
		hctx, cancel := context.WithTimeout(ctx, setupTimeout)
		sentAt := time.Now()
		h, err := cli.HealthCheck(hctx, &fedproto.ClientHealth{Status: fedproto.ClientHealth_SERVING})
		cancel()
		if err != nil {
			return fmt.Errorf("health check: %w", err)
		}
		if h.GetStatus() != fedproto.ServerHealth_SERVING {
			return fmt.Errorf("health check: server says %s", h.GetStatus())
		}
		acked(sentAt)
	}
}

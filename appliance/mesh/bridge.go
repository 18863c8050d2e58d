package mesh

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/ipv4"

	"outpost/appliance/broker"
	"outpost/appliance/cot"
)

// Bridge is the multicast mesh bridge (package doc). It implements the
// appliance's listener: Listen binds, Serve starts, Shutdown stops.
type Bridge struct {
	cfg BridgeConfig
	src *sources

	receivers []*receiver
	groups    []netip.AddrPort // every group joined
	saAddr    *net.UDPAddr
	chatAddr  *net.UDPAddr

	mu     sync.Mutex // guards ifaces and their senders
	ifaces []*iface

	outlet *broker.Session // the bridge's own session: broadcasts to the mesh (writer goroutine only)
	spare  []*broker.Envelope
	buf    []byte

	stop chan struct{}
	wg   sync.WaitGroup
}

// receiver is one socket bound to a port that groups are joined on.
type receiver struct {
	conn   *net.UDPConn
	pc     *ipv4.PacketConn
	groups []netip.AddrPort
}

// iface is one interface the bridge is configured for, attached once it
// exists: the groups joined on it, and its sending socket.
type iface struct {
	name   string // "" for the system's default
	ifi    *net.Interface
	joined map[joinKey]bool
	sender *ipv4.PacketConn
	logged bool // its absence was logged
}

type joinKey struct {
	r *receiver
	g netip.AddrPort
}

// ListenerName is the bridge's listener in /Clients, the console and the
// logs.
const ListenerName = "mesh"

// sendTimeout bounds one datagram's send: a congested interface costs the
// writer at most this per datagram, never the relay.
const sendTimeout = 200 * time.Millisecond

// attachInterval is how often interfaces not yet found, or groups not yet
// joined, are tried again (a mesh interface may come up after the server).
const attachInterval = 10 * time.Second

// NewBridge returns a bridge; nothing is bound until Listen.
func NewBridge(cfg BridgeConfig) *Bridge {
	if !cfg.SA.IsValid() {
		cfg.SA = DefaultSA
	}
	if !cfg.Chat.IsValid() {
		cfg.Chat = DefaultChat
	}
	if cfg.TTL <= 0 {
		cfg.TTL = DefaultTTL
	}
	if cfg.Protocol != cot.ProtocolV1 {
		cfg.Protocol = cot.ProtocolXML
	}
	b := &Bridge{cfg: cfg, src: newSources(cfg.Sources, ListenerName, ListenerName), stop: make(chan struct{}),
		saAddr: net.UDPAddrFromAddrPort(cfg.SA), chatAddr: net.UDPAddrFromAddrPort(cfg.Chat)}
	b.src.sent = newSeenSet(sentWindow, seenMax)
	b.cfg.Sources = b.src.cfg
	names := cfg.Interfaces
	if len(names) == 0 {
		names = []string{""}
	}
	for _, n := range names {
		b.ifaces = append(b.ifaces, &iface{name: n, joined: map[joinKey]bool{}})
	}
	return b
}

// Listen binds one socket per port of the groups and joins them on the
// interfaces that exist now; the others are tried again while it runs.
func (b *Bridge) Listen() error {
	all := append([]netip.AddrPort{b.cfg.SA, b.cfg.Chat}, b.cfg.Listen...)
	byPort := map[uint16]*receiver{}
	for _, g := range all {
		if !g.Addr().Is4() || !g.Addr().IsMulticast() || g.Port() == 0 {
			return fmt.Errorf("mesh: %s is not an IPv4 multicast group with a port", g) // config checks it first
		}
		if seen(b.groups, g) {
			continue
		}
		b.groups = append(b.groups, g)
		r := byPort[g.Port()]
		if r == nil {
			lc := net.ListenConfig{Control: reuseAddr}
			pc, err := lc.ListenPacket(context.Background(), "udp4", net.JoinHostPort("0.0.0.0", strconv.Itoa(int(g.Port()))))
			if err != nil {
				b.closeSockets()
				return fmt.Errorf("mesh: listen on UDP port %d: %w", g.Port(), err)
			}
			conn := pc.(*net.UDPConn)
			r = &receiver{conn: conn, pc: ipv4.NewPacketConn(conn)}
			byPort[g.Port()] = r
			b.receivers = append(b.receivers, r)
		}
		r.groups = append(r.groups, g)
	}
	b.attach()
	return nil
}

func seen(list []netip.AddrPort, g netip.AddrPort) bool {
	for _, x := range list {
		if x == g {
			return true
		}
	}
	return false
}

// attach finds the configured interfaces, joins the groups on them and
// opens their sending sockets, for what is not done yet. Failures are
// logged once per interface and tried again later.
func (b *Bridge) attach() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, f := range b.ifaces {
		if err := b.attachOne(f); err != nil && !f.logged {
			f.logged = true
			b.src.warn.Warn("mesh interface not ready; tried again every 10 s", "interface", f.name, "err", err)
		}
	}
}

func (b *Bridge) attachOne(f *iface) error {
	if f.name != "" && f.ifi == nil {
		ifi, err := net.InterfaceByName(f.name)
		if err != nil {
			return err
		}
		if ifi.Flags&net.FlagMulticast == 0 {
			return fmt.Errorf("interface %s does not support multicast", f.name)
		}
		f.ifi = ifi
	}
	var errs []error
	for _, r := range b.receivers {
		for _, g := range r.groups {
			k := joinKey{r, g}
			if f.joined[k] {
				continue
			}
			if err := r.pc.JoinGroup(f.ifi, &net.UDPAddr{IP: g.Addr().AsSlice()}); err != nil {
				errs = append(errs, fmt.Errorf("join %s: %w", g.Addr(), err))
				continue
			}
			f.joined[k] = true
		}
	}
	if f.sender == nil {
		p, err := b.openSender(f.ifi)
		if err != nil {
			errs = append(errs, err)
		} else {
			f.sender = p
		}
	}
	if len(errs) == 0 && f.logged {
		f.logged = false
		b.src.cfg.Logger.Info("mesh interface attached", "listener", ListenerName, "interface", f.name)
	}
	return errors.Join(errs...)
}

// openSender opens the socket that sends to the groups on ifi (nil: the
// system's choice).
func (b *Bridge) openSender(ifi *net.Interface) (*ipv4.PacketConn, error) {
	c, err := net.ListenPacket("udp4", "0.0.0.0:0")
	if err != nil {
		return nil, fmt.Errorf("sending socket: %w", err)
	}
	p := ipv4.NewPacketConn(c)
	fail := func(what string, err error) (*ipv4.PacketConn, error) {
		c.Close()
		return nil, fmt.Errorf("sending socket: %s: %w", what, err)
	}
	if ifi != nil {
		if err := p.SetMulticastInterface(ifi); err != nil {
			return fail("interface", err)
		}
	}
	if err := p.SetMulticastTTL(b.cfg.TTL); err != nil {
		return fail("TTL", err)
	}
	// Loopback on: a TAK client on this machine (WinTAK beside the server)
	// hears the bridge; the bridge recognises its own datagrams (sent).
	if err := p.SetMulticastLoopback(true); err != nil {
		return fail("loopback", err)
	}
	return p, nil
}

// Serve starts reading the groups and the writer.
func (b *Bridge) Serve() {
	b.join()
	for _, r := range b.receivers {
		b.wg.Add(1)
		go func() { defer b.wg.Done(); readLoop(r.conn, b.src) }()
	}
	b.wg.Add(2)
	go func() { defer b.wg.Done(); b.src.run(b.stop, b.sendDirected, b.drainOutlet) }()
	go func() { defer b.wg.Done(); b.keepAttached() }()
}

// join joins the broker as the bridge's own session: in the mesh groups,
// reading every broadcast but the mesh's own (Link).
func (b *Bridge) join() {
	b.outlet = b.src.cfg.Broker.Join(broker.SessionInfo{Listener: ListenerName, Addr: b.cfg.SA.String(), Link: ListenerName,
		In: b.src.cfg.In, Out: b.src.cfg.Out, Grouped: true, Wake: b.src.kickWriter})
	b.src.kickWriter() // its replay: the latest position of every client it can see
}

func (b *Bridge) keepAttached() {
	t := time.NewTicker(attachInterval)
	defer t.Stop()
	for {
		select {
		case <-b.stop:
			return
		case <-t.C:
			b.attach()
		}
	}
}

// drainOutlet sends what the server's clients broadcast to the mesh. A
// bridge session the broker closed (a mesh so congested that it fell
// behind the relay) is replaced.
func (b *Bridge) drainOutlet() {
	for {
		b.spare = b.outlet.Take(b.spare)
		if len(b.spare) == 0 {
			break
		}
		for _, env := range b.spare {
			to := b.saAddr
			if strings.HasPrefix(env.Event.Type, "b-t-f") {
				to = b.chatAddr
			}
			b.send(env, to, false)
		}
		clear(b.spare)
	}
	if sessionClosed(b.outlet) {
		select {
		case <-b.stop:
			return
		default:
		}
		b.outlet.Release()
		b.src.stats.rejoined.Add(1)
		b.src.warn.Warn("the mesh bridge fell behind the relay and joined again", "reason", b.outlet.Reason().String())
		b.join()
	}
}

// sendDirected sends what a server client addressed to a mesh device (a
// chat to it) by unicast to the device's address on DirectPort. Anything
// else queued for a device (a pong) is let go.
func (b *Bridge) sendDirected(d *device, env *broker.Envelope) {
	if !env.Directed || b.cfg.DirectPort <= 0 {
		return
	}
	b.send(env, net.UDPAddrFromAddrPort(netip.AddrPortFrom(d.addr.Addr(), uint16(b.cfg.DirectPort))), true)
}

// send encodes env in the bridge's protocol and sends it to to: on every
// interface, or once (unicast) by the system's route.
func (b *Bridge) send(env *broker.Envelope, to *net.UDPAddr, unicast bool) {
	data, err := b.encode(env)
	if err != nil {
		return // the relay logs events that cannot be encoded
	}
	if len(data) > b.src.cfg.MaxDatagram {
		b.src.stats.dropOutSize.Add(1)
		b.src.warn.Debug("event larger than a mesh datagram not sent", "bytes", len(data), "limit", b.src.cfg.MaxDatagram)
		return
	}
	now := b.src.cfg.Now()
	b.src.sent.add(datagramHash(data), now)
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, f := range b.ifaces {
		if f.sender == nil {
			continue
		}
		f.sender.SetWriteDeadline(now.Add(sendTimeout))
		if _, err := f.sender.WriteTo(data, nil, to); err != nil {
			b.src.stats.sendErrors.Add(1)
			b.src.warn.Warn("mesh send failed", "interface", f.name, "to", to.String(), "err", err)
		} else {
			b.src.stats.out.Add(1)
		}
		if unicast {
			return
		}
	}
}

// encode returns env as one datagram: the XML event, or 0xBF 0x01 0xBF
// and the TakMessage (protocol.md "Mesh").
func (b *Bridge) encode(env *broker.Envelope) ([]byte, error) {
	if b.cfg.Protocol != cot.ProtocolV1 {
		return env.XML(), nil
	}
	frame, err := env.ProtoFrame() // shared with the protobuf stream clients
	if err != nil {
		return nil, err
	}
	_, n := binary.Uvarint(frame[1:])
	b.buf = cot.AppendMeshFrame(b.buf[:0], frame[1+n:])
	return b.buf, nil
}

// Addr is the SA group (the first the bridge joined).
func (b *Bridge) Addr() net.Addr { return b.saAddr }

// Stats returns the bridge's counters.
func (b *Bridge) Stats() Stats { return b.src.snapshot() }

// Shutdown stops reading and sending and forgets every device (the broker
// drains first, so no departure is announced).
func (b *Bridge) Shutdown(ctx context.Context) error {
	select {
	case <-b.stop:
		return nil
	default:
	}
	close(b.stop)
	b.closeSockets()
	b.wg.Wait()
	b.src.drv.Shutdown(ctx)
	if b.outlet != nil {
		b.outlet.Close(broker.ReasonShutdown)
		b.outlet.Release()
	}
	return nil
}

func (b *Bridge) closeSockets() {
	for _, r := range b.receivers {
		r.conn.Close()
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, f := range b.ifaces {
		if f.sender != nil {
			f.sender.Close()
			f.sender = nil
		}
	}
}

// readLoop reads datagrams until conn is closed. A buffer one byte larger
// than the limit tells a datagram over it (the system cuts it silently).
func readLoop(conn *net.UDPConn, src *sources) {
	buf := make([]byte, src.cfg.MaxDatagram+1)
	for {
		n, from, err := conn.ReadFromUDPAddrPort(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			src.warn.Warn("mesh read failed", "err", err)
			time.Sleep(10 * time.Millisecond)
			continue
		}
		src.handle(buf[:n], netip.AddrPortFrom(from.Addr().Unmap(), from.Port()))
	}
}

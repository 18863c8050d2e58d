package mesh

import (
	"context"
	"fmt"
	"net"
	"sync"
)

// Input reads CoT that devices send by unicast UDP to one port (listener
// "udp"): each source address is an anonymous client that only sends.
type Input struct {
	cfg  InputConfig
	src  *sources
	conn *net.UDPConn
	stop chan struct{}
	wg   sync.WaitGroup
}

// InputListenerName is the input's listener in /Clients and the logs.
const InputListenerName = "udp"

// NewInput returns an input; nothing is bound until Listen.
func NewInput(cfg InputConfig) *Input {
	return &Input{cfg: cfg, src: newSources(cfg.Sources, InputListenerName, ""), stop: make(chan struct{})}
}

// Listen binds the port.
func (in *Input) Listen() error {
	pc, err := net.ListenPacket("udp", in.cfg.Addr)
	if err != nil {
		return fmt.Errorf("udp input: %w", err)
	}
	in.conn = pc.(*net.UDPConn)
	return nil
}

// Serve starts reading. What is queued for the input's devices (nothing
// but pongs and events addressed to them: they cannot receive) is let go.
func (in *Input) Serve() {
	in.wg.Add(2)
	go func() { defer in.wg.Done(); readLoop(in.conn, in.src) }()
	go func() { defer in.wg.Done(); in.src.run(in.stop, nil, nil) }()
}

// Addr is the bound address.
func (in *Input) Addr() net.Addr {
	if in.conn == nil {
		return nil
	}
	return in.conn.LocalAddr()
}

// Stats returns the input's counters.
func (in *Input) Stats() Stats { return in.src.snapshot() }

// Shutdown stops reading and forgets every source.
func (in *Input) Shutdown(ctx context.Context) error {
	select {
	case <-in.stop:
		return nil
	default:
	}
	close(in.stop)
	if in.conn != nil {
		in.conn.Close()
	}
	in.wg.Wait()
	in.src.drv.Shutdown(ctx)
	return nil
}

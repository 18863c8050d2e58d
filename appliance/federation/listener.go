package federation

import (
	"errors"
	"net"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/keepalive"

	"outpost/appliance/federation/fedproto"
	"outpost/appliance/logx"
)

// The listener federates connect to. Bound at start when the
// configuration trusts CAs (federationTrust); otherwise (Config.OnDemand)
// only while a managed federate is enabled with a CA, since nothing else
// could get in: it opens when the first such federate appears and closes
// when the last goes (docs/federation.md "Federation without
// federationTrust").

// bind binds the listener and makes its gRPC server (not yet serving).
// The caller holds no lock.
func (f *Federation) bind() error {
	var creds credentials.TransportCredentials = handshaken{}
	var ln net.Listener
	var err error
	if f.cfg.Listen != nil {
		ln, err = f.cfg.Listen(f.cfg.Addr, f.serverTLS())
	} else {
		creds = credentials.NewTLS(f.serverTLS())
		ln, err = net.Listen("tcp", f.cfg.Addr)
	}
	if err != nil {
		return err
	}
	srv := grpc.NewServer(grpc.Creds(creds), grpc.MaxRecvMsgSize(f.cfg.MaxMessage), grpc.MaxConcurrentStreams(maxStreams),
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: 10 * time.Second, PermitWithoutStream: true}),
		grpc.ConnectionTimeout(10*time.Second))
	fedproto.RegisterFederatedChannelServer(srv, &service{f: f})
	f.lnMu.Lock()
	f.ln, f.srv = ln, srv
	f.lnMu.Unlock()
	return nil
}

// serveListener serves the bound listener (none: nothing).
func (f *Federation) serveListener() {
	f.lnMu.Lock()
	ln, srv := f.ln, f.srv
	f.lnMu.Unlock()
	if srv == nil {
		return
	}
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		if err := srv.Serve(ln); err != nil && !errors.Is(err, grpc.ErrServerStopped) {
			f.log.Error("federation listener stopped", "err", err)
		}
	}()
}

// onDemand opens the on-demand listener when want and it is not open,
// and closes it when not want (SetManaged, under manMu). A bind that
// fails (the port is taken) is logged, shown by Listening, and tried
// again at the next SetManaged.
func (f *Federation) onDemand(want bool) {
	if !f.cfg.OnDemand || f.cfg.Addr == "" {
		return
	}
	f.lnMu.Lock()
	srv := f.srv
	f.lnMu.Unlock()
	switch {
	case want && srv == nil:
		if err := f.bind(); err != nil {
			f.lnMu.Lock()
			f.listenErr = logx.Clip(err.Error())
			f.lnMu.Unlock()
			f.warn.Warn("federation listener could not be bound", "addr", f.cfg.Addr, "err", err)
			return
		}
		f.lnMu.Lock()
		f.listenErr = ""
		f.lnMu.Unlock()
		f.serveListener()
		f.log.Info("federation listener opened: a managed federate is trusted", "addr", f.Addr().String())
	case !want && srv != nil:
		f.lnMu.Lock()
		f.ln, f.srv = nil, nil
		f.lnMu.Unlock()
		srv.Stop()
		f.log.Info("federation listener closed: no managed federate is trusted")
	}
}

// Addr is the listener's address (nil while there is none: outbound links
// only, or an on-demand listener closed).
func (f *Federation) Addr() net.Addr {
	f.lnMu.Lock()
	defer f.lnMu.Unlock()
	if f.ln == nil {
		return nil
	}
	return f.ln.Addr()
}

// Listening reports the listener's address ("" none) and why an
// on-demand listener could not be bound ("" no failure).
func (f *Federation) Listening() (addr, err string) {
	f.lnMu.Lock()
	defer f.lnMu.Unlock()
	if f.ln != nil {
		addr = f.ln.Addr().String()
	}
	return addr, f.listenErr
}

package diskspace

import (
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"outpost/appliance/fault"
	"outpost/appliance/logx"
)

// The errors of a refusal. ErrNoSpace is a 507 at the HTTP edge,
// ErrWouldCross a 413.
var (
	// ErrNoSpace: free space is below the reserve (an upload) or below the
	// hard floor (any write); nothing was stored.
	ErrNoSpace error = fault.New(fault.NoSpace, "diskspace: insufficient storage")
	// ErrWouldCross: the declared size alone would take free space below
	// the reserve; nothing was stored.
	ErrWouldCross error = fault.New(fault.TooLarge, "diskspace: larger than the free space")
)

// Usage is what a stat of the filesystem says.
type Usage struct {
	Free  int64 // bytes an unprivileged process may still write
	Total int64 // the filesystem's size
}

// Status is what a Gauge knows now.
type Status struct {
	Known        bool  // false: free space could not be measured; nothing is refused
	Free         int64 // bytes free (estimate: the last stat less what was written since)
	Total        int64
	Reserve      int64 // below it uploads are refused and the CoT history pauses
	Floor        int64 // below it every write that grows the database is refused
	BelowReserve bool
	BelowFloor   bool
}

// Options configure New. The zero value is the default reserve and floor.
type Options struct {
	Reserve, Floor Amount
	// MaxAge is how old a stat may be before it is taken again (default
	// 1 s); RestatBytes how many bytes noted as written force a new one
	// sooner (default 1 MiB).
	MaxAge      time.Duration
	RestatBytes int64
	Logger      *slog.Logger
	// Stat measures the filesystem holding dir (default: statfs, or
	// GetDiskFreeSpaceEx on Windows). Tests give their own.
	Stat func(dir string) (Usage, error)
}

// Gauge measures the free space of one directory's filesystem against a
// reserve and a hard floor. It is safe for concurrent use; a nil *Gauge
// knows nothing and refuses nothing.
type Gauge struct {
	dir  string
	opts Options
	log  *logx.Limiter // the reserve reached and recovered lines

	mu    sync.Mutex // mu guards everything below
	at    time.Time  // of the last stat
	usage Usage      // as of at
	known bool       // the last stat succeeded
	spent int64      // bytes noted as written since at
	low   bool       // below the reserve at the last stat
	under bool       // below the floor at the last stat
	err   error      // of the last failed stat, logged once
}

// New is a Gauge of dir's filesystem, measured at once. Where it cannot be
// measured (an unsupported system, a stat error) the gauge knows nothing and
// refuses nothing, and says so in the log once.
func New(dir string, opts Options) *Gauge {
	if opts.MaxAge <= 0 {
		opts.MaxAge = time.Second
	}
	if opts.RestatBytes <= 0 {
		opts.RestatBytes = 1 << 20
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Stat == nil {
		opts.Stat = stat
	}
	log := opts.Logger.With("component", "diskspace")
	opts.Logger = log
	g := &Gauge{dir: dir, opts: opts, log: logx.NewLimiter(log, 4, time.Minute)}
	g.mu.Lock()
	g.refresh(time.Now())
	g.mu.Unlock()
	return g
}

// Status is the free space now, from a stat at most MaxAge old.
func (g *Gauge) Status() Status {
	if g == nil {
		return Status{}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	now := time.Now()
	if now.Sub(g.at) >= g.opts.MaxAge || g.spent >= g.opts.RestatBytes {
		g.refresh(now)
	}
	return g.statusLocked()
}

// Note records n bytes written (or about to be) since the last stat, so the
// estimate stays close until the next one.
func (g *Gauge) Note(n int64) {
	if g == nil || n <= 0 {
		return
	}
	g.mu.Lock()
	g.spent += n
	g.mu.Unlock()
}

// BelowReserve reports whether free space is below the reserve (the CoT
// history pauses).
func (g *Gauge) BelowReserve() bool { return g.Status().BelowReserve }

// CheckUpload refuses an upload: ErrNoSpace below the reserve, ErrWouldCross
// when declared bytes (the announced length; < 0: unknown) would take free
// space below it. Without a reserve (diskReserve 0) it refuses nothing: the
// filesystem's own limit answers, as store.ErrNoSpace.
func (g *Gauge) CheckUpload(declared int64) error {
	st := g.Status()
	switch {
	case st.BelowReserve:
		return fmt.Errorf("%w: %s", ErrNoSpace, st.reserveText("free disk space is below the server's reserve"))
	case st.Known && st.Reserve > 0 && declared > 0 && st.Free-declared < st.Reserve:
		return fmt.Errorf("%w: %d bytes would leave less than the server's disk reserve free (%d bytes free, %d kept in reserve); nothing was stored",
			ErrWouldCross, declared, st.Free, st.Reserve)
	}
	return nil
}

// CheckWrite refuses any write that grows the database below the hard
// floor with ErrNoSpace.
func (g *Gauge) CheckWrite() error {
	st := g.Status()
	if st.BelowFloor {
		return fmt.Errorf("%w: free disk space is below the server's hard floor (%d bytes free, floor %d); nothing was stored",
			ErrNoSpace, st.Free, st.Floor)
	}
	return nil
}

// Body is r read through the gauge: every byte read is noted, and once free
// space falls below the reserve the next read fails with ErrNoSpace, so an
// upload crossing it is cut (the caller removes what it stored).
func (g *Gauge) Body(r io.ReadCloser) io.ReadCloser {
	if g == nil {
		return r
	}
	return &body{ReadCloser: r, g: g}
}

type body struct {
	io.ReadCloser
	g *Gauge
}

func (b *body) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.g.Note(int64(n))
	if st := b.g.Status(); st.BelowReserve {
		return n, fmt.Errorf("%w: %s", ErrNoSpace, st.reserveText("the upload was cut: free disk space fell below the server's reserve"))
	}
	return n, err
}

func (st Status) reserveText(what string) string {
	return fmt.Sprintf("%s (%d bytes free, %d kept in reserve); nothing was stored", what, st.Free, st.Reserve)
}

// statusLocked is the status from the last stat and what was noted since.
func (g *Gauge) statusLocked() Status {
	if !g.known {
		return Status{}
	}
	free := max(g.usage.Free-g.spent, 0)
	r, f := Limits(g.opts.Reserve, g.opts.Floor, g.usage.Total)
	return Status{Known: true, Free: free, Total: g.usage.Total, Reserve: r, Floor: f,
		BelowReserve: free < r, BelowFloor: free < f}
}

// refresh takes a new stat and logs a change of state (rate limited).
func (g *Gauge) refresh(now time.Time) {
	u, err := g.opts.Stat(g.dir)
	g.at, g.spent = now, 0
	if err != nil {
		if g.err == nil {
			g.opts.Logger.Warn("could not measure free disk space; no disk reserve is kept until it can be", "dir", g.dir, "err", err)
		}
		g.err, g.known = err, false
		return
	}
	g.err, g.known, g.usage = nil, true, u
	st := g.statusLocked()
	switch {
	case st.BelowFloor && !g.under:
		g.log.Log(slog.LevelError, "free disk space is below the hard floor: every write that grows the database is refused",
			"free_bytes", st.Free, "floor_bytes", st.Floor, "reserve_bytes", st.Reserve)
	case st.BelowReserve && !g.low:
		g.log.Warn("free disk space reached the reserve: uploads are refused and the CoT history is paused",
			"free_bytes", st.Free, "reserve_bytes", st.Reserve, "floor_bytes", st.Floor)
	case !st.BelowReserve && g.low:
		g.log.Info("free disk space is above the reserve again: uploads and the CoT history resume",
			"free_bytes", st.Free, "reserve_bytes", st.Reserve)
	}
	g.low, g.under = st.BelowReserve, st.BelowFloor
}

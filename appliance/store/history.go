package store

// The CoT history writer. The relay hands every routed event to Add, which
// charges it to the sending client's budget (history_budget.go) and only
// tries a non-blocking send on a bounded channel: no SQL, never a wait on the
// caller's path (architecture.md "The relay": the observer persists
// asynchronously, after routing). One goroutine drains the channel into
// batches, one transaction per batch: each event is inserted into cot_events,
// upserted into cot_latest and added to its uid's usage (cot_usage). An event
// identical to the one stored last for its uid (only its times differ: a
// stationary client repeating its position) refreshes cot_latest and is not
// stored twice. A latest row also says whether the event is a client's report
// of its own position or a marker (geo object queries want only markers), and
// a delete (t-x-d-d) makes the rows of the uids it links stale at once, so a
// deleted marker is no longer found. When the channel is full or the budget
// spent, Add drops the event and counts it; persistence is best effort by
// design, routing is not.
//
// Pruning runs in the same goroutine, a bounded number of rows per
// transaction, and only while the queue is less than half full, so neither
// the single writer connection nor the event queue is held up by it:
// retention (events received longer ago than Retention) and the size cap
// (history_size.go: above MaxBytes, the oldest events of the uid holding the
// most bytes go first).

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"outpost/appliance/cot"
	"outpost/appliance/logx"
)

// Defaults of HistoryOptions.
const (
	DefaultHistoryBuffer        = 8192
	DefaultHistoryBatchSize     = 1024
	DefaultHistoryFlushInterval = time.Second
	DefaultHistoryRetention     = 7 * 24 * time.Hour
	DefaultHistoryPruneInterval = time.Hour
)

// pruneBatch is how many rows one pruning transaction deletes.
const pruneBatch = 1000

// HistoryOptions configure StartHistory. Zero fields take the defaults
// above, except Retention, MaxBytes and the rates, where 0 means no limit;
// use DefaultHistoryOptions for the full set of defaults.
type HistoryOptions struct {
	Buffer        int           // queued events before Add drops (8192)
	BatchSize     int           // events per transaction (1024)
	FlushInterval time.Duration // longest wait before a partial batch is written (1s)
	Retention     time.Duration // delete events received longer ago; 0 keeps forever (7 days in DefaultHistoryOptions)
	PruneInterval time.Duration // how often to prune by age (1h)

	// MaxBytes caps the stored events' XML in total; above it the oldest
	// events of the uid holding the most bytes are pruned first. 0: no cap.
	MaxBytes int64
	// Per client (one connection) and for all clients together: events per
	// second and bytes per second that may be stored, with bursts of
	// 5 seconds' worth. 0: no limit.
	ClientRate, TotalRate   float64
	ClientBytes, TotalBytes int64

	// Paused, when set and true, keeps events out of the history: the
	// disk's free space is below its reserve (diskspace). It is asked on
	// every Add, so it must be cheap; such events are relayed, not stored,
	// and counted as DroppedDisk.
	Paused func() bool
}

// Defaults of the history budget (HistoryOptions).
const (
	DefaultHistoryMaxBytes    = 1 << 30  // 1 GiB of stored events
	DefaultHistoryClientRate  = 10       // events per second per client
	DefaultHistoryClientBytes = 64 << 10 // bytes per second per client
	DefaultHistoryTotalRate   = 1000     // events per second, all clients
	DefaultHistoryTotalBytes  = 4 << 20  // bytes per second, all clients
)

// DefaultHistoryOptions returns every default, including a 7-day retention
// and the budget.
func DefaultHistoryOptions() HistoryOptions {
	return HistoryOptions{
		Buffer:        DefaultHistoryBuffer,
		BatchSize:     DefaultHistoryBatchSize,
		FlushInterval: DefaultHistoryFlushInterval,
		Retention:     DefaultHistoryRetention,
		PruneInterval: DefaultHistoryPruneInterval,
		MaxBytes:      DefaultHistoryMaxBytes,
		ClientRate:    DefaultHistoryClientRate,
		ClientBytes:   DefaultHistoryClientBytes,
		TotalRate:     DefaultHistoryTotalRate,
		TotalBytes:    DefaultHistoryTotalBytes,
	}
}

// HistoryStats are cumulative counters of a History.
type HistoryStats struct {
	Added         uint64 // accepted by Add
	Written       uint64 // committed to the database
	Repeats       uint64 // identical to the uid's previous event: cot_latest refreshed, not stored again
	Dropped       uint64 // not persisted: queue full, history closed, or their batch failed
	DroppedBudget uint64 // not persisted: the client's or the total budget was spent
	DroppedDisk   uint64 // not persisted: free disk space was below the reserve (Paused)
	Batches       uint64 // committed batches
	Pruned        uint64 // events deleted by retention
	PrunedSize    uint64 // events deleted by the size cap
	Backlog       int    // events queued now
	Bytes         int64  // stored events' XML bytes now (as of the last batch)
}

// History is the asynchronous CoT history writer of a Store.
type History struct {
	s    *db
	opts HistoryOptions
	log  *slog.Logger
	// failLog logs failed batches: on a full disk every batch fails, one a
	// second, and the count of the others is enough.
	failLog *logx.Limiter
	ch      chan histItem
	stop    chan struct{} // closed by Close: drain, write, exit
	done    chan struct{} // closed when the writer goroutine has exited

	// mu guards closed. Add holds it shared around its non-blocking send and
	// Close exclusively to set closed, so once Close has set it no Add can
	// still be putting an event into ch behind the final drain.
	mu     sync.RWMutex
	closed bool

	closeOnce sync.Once

	budget *budget

	added, written, repeats, dropped, droppedBudget, droppedDisk, batches, pruned, prunedSize atomic.Uint64
	bytes                                                                                     atomic.Int64

	// Owned by the writer goroutine only.
	batch   []histItem
	xmlBuf  []byte
	failErr error             // first write error since the last flush marker
	last    map[string]uint64 // uid -> content hash of its last stored event
}

// histItem is a queued event, or a flush marker when reply is non-nil.
type histItem struct {
	ev     *cot.Event
	xml    []byte // the event's XML encoding when the caller has it; nil: encoded here
	recv   time.Time
	source string
	groups uint64 // the groups the event was sent to (its sender's IN groups)
	reply  chan error
}

// StartHistory starts the history writer. Stop it with Close (Store.Close
// also closes it).
func (s *Store) StartHistory(opts HistoryOptions) *History {
	if opts.Buffer <= 0 {
		opts.Buffer = DefaultHistoryBuffer
	}
	if opts.BatchSize <= 0 {
		opts.BatchSize = DefaultHistoryBatchSize
	}
	if opts.FlushInterval <= 0 {
		opts.FlushInterval = DefaultHistoryFlushInterval
	}
	if opts.PruneInterval <= 0 {
		opts.PruneInterval = DefaultHistoryPruneInterval
	}
	if opts.Retention < 0 {
		opts.Retention = 0
	}
	h := &History{
		s:      s.db,
		opts:   opts,
		log:    s.log.With("part", "cot-history"),
		ch:     make(chan histItem, opts.Buffer),
		stop:   make(chan struct{}),
		done:   make(chan struct{}),
		batch:  make([]histItem, 0, opts.BatchSize),
		budget: newBudget(opts),
		last:   map[string]uint64{},
	}
	h.failLog = logx.NewLimiter(h.log, 3, time.Minute)
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		h.closed = true
		close(h.stop)
		close(h.done)
		return h
	}
	s.histories[h] = struct{}{}
	s.mu.Unlock()
	go h.run()
	return h
}

// Add queues ev for persistence and returns at once. xml is ev's XML
// encoding when the caller already has it (nil: encoded by the writer);
// client identifies the connection it came from (0: the server itself),
// whose budget it is charged to; groups are the groups it was sent to (a
// mask: the latest event of its uid is shown to readers of those groups
// only, access.md "Groups"). It returns false (and counts a drop) when
// the history is paused (the disk's reserve), the budget is spent, the
// queue is full or the history is closed. ev and xml must not be modified
// afterwards (cot.Event is read-only once shared).
func (h *History) Add(ev *cot.Event, xml []byte, receivedAt time.Time, source string, client, groups uint64) bool {
	if ev == nil {
		return false
	}
	size := len(xml)
	if size == 0 {
		size = 300 + len(ev.Detail.XML) // the encoding's size, near enough
	}
	if h.opts.Paused != nil && h.opts.Paused() {
		h.droppedDisk.Add(1)
		return false
	}
	if !h.budget.admit(client, size, receivedAt) {
		h.droppedBudget.Add(1)
		return false
	}
	h.mu.RLock()
	if h.closed {
		h.mu.RUnlock()
		h.dropped.Add(1)
		return false
	}
	select {
	case h.ch <- histItem{ev: ev, xml: xml, recv: receivedAt, source: source, groups: groups}:
		h.mu.RUnlock()
		h.added.Add(1)
		return true
	default:
		h.mu.RUnlock()
		h.dropped.Add(1)
		return false
	}
}

// Flush returns once every event added before the call is committed (or
// has failed to commit: the error of such a batch is returned).
func (h *History) Flush(ctx context.Context) error {
	// A context that is already done starts nothing: without this check the
	// selects below could pick the send and the reply over ctx.Done().
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("store: history flush: %w", err)
	}
	m := histItem{reply: make(chan error, 1)}
	select {
	case <-h.stop:
		return fmt.Errorf("store: history flush: %w", ErrClosed)
	default:
	}
	select {
	case h.ch <- m:
	case <-h.stop:
		return fmt.Errorf("store: history flush: %w", ErrClosed)
	case <-ctx.Done():
		return fmt.Errorf("store: history flush: %w", ctx.Err())
	}
	select {
	case err := <-m.reply:
		return err
	case <-h.done:
		select {
		case err := <-m.reply:
			return err
		default:
			return fmt.Errorf("store: history flush: %w", ErrClosed)
		}
	case <-ctx.Done():
		return fmt.Errorf("store: history flush: %w", ctx.Err())
	}
}

// Close stops accepting events, writes everything queued and stops the
// writer. It is idempotent; when ctx ends first it returns ctx's error and
// the writer still finishes in the background.
func (h *History) Close(ctx context.Context) error {
	h.closeOnce.Do(func() {
		h.mu.Lock()
		h.closed = true
		h.mu.Unlock()
		close(h.stop)
	})
	select {
	case <-h.done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("store: history close: %w", ctx.Err())
	}
}

// Stats returns the counters.
func (h *History) Stats() HistoryStats {
	return HistoryStats{
		Added:         h.added.Load(),
		Written:       h.written.Load(),
		Repeats:       h.repeats.Load(),
		Dropped:       h.dropped.Load(),
		DroppedBudget: h.droppedBudget.Load(),
		DroppedDisk:   h.droppedDisk.Load(),
		Batches:       h.batches.Load(),
		Pruned:        h.pruned.Load(),
		PrunedSize:    h.prunedSize.Load(),
		Backlog:       len(h.ch),
		Bytes:         h.bytes.Load(),
	}
}

// run is the writer goroutine.
func (h *History) run() {
	defer func() {
		h.s.mu.Lock()
		delete(h.s.histories, h)
		h.s.mu.Unlock()
		close(h.done)
	}()
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	h.loadUsage()
	var pruneC <-chan time.Time
	var p pruner
	if h.opts.Retention > 0 {
		t := time.NewTicker(h.opts.PruneInterval)
		defer t.Stop()
		pruneC = t.C
		p.start(time.Now().Add(-h.opts.Retention)) // prune once at start
	}
	for {
		if (p.active || h.overCap()) && len(h.ch) <= cap(h.ch)/2 {
			if p.active {
				h.pruneStep(&p)
			} else {
				h.pruneSizeStep()
			}
			// Between two prune steps, take what queued meanwhile (up to
			// one batch) and honour the flush timer and Close.
		queued:
			for range h.opts.BatchSize {
				select {
				case it := <-h.ch:
					h.take(it, timer)
				default:
					break queued
				}
			}
			select {
			case <-timer.C:
				h.writeBatch()
			case <-h.stop:
				h.drain(timer)
				return
			default:
			}
			continue
		}
		select {
		case it := <-h.ch:
			h.take(it, timer)
		case <-timer.C:
			h.writeBatch()
		case <-pruneC:
			if !p.active {
				p.start(time.Now().Add(-h.opts.Retention))
			}
		case <-h.stop:
			h.drain(timer)
			return
		}
	}
}

// take handles one queued item.
func (h *History) take(it histItem, timer *time.Timer) {
	if it.reply != nil {
		h.writeBatch()
		timer.Stop()
		it.reply <- h.failErr
		h.failErr = nil
		return
	}
	h.batch = append(h.batch, it)
	if len(h.batch) == 1 {
		timer.Reset(h.opts.FlushInterval)
	}
	if len(h.batch) >= h.opts.BatchSize {
		timer.Stop()
		h.writeBatch()
	}
}

// drain takes everything still queued (Close has set closed, so nothing
// new arrives), writes it and answers flush markers.
func (h *History) drain(timer *time.Timer) {
	for {
		select {
		case it := <-h.ch:
			h.take(it, timer)
		default:
			h.writeBatch()
			timer.Stop()
			return
		}
	}
}

const insertEventSQL = `INSERT INTO cot_events(uid, type, how, callsign, time, start, stale, lat, lon, hae,
	received_at, source, xml, groups) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

// The newest event by receive time wins; an older event arriving late does
// not replace it.
const upsertLatestSQL = `INSERT INTO cot_latest(uid, type, callsign, lat, lon, stale, received_at, event_id, position, groups)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
	ON CONFLICT(uid) DO UPDATE SET type = excluded.type, callsign = excluded.callsign, lat = excluded.lat,
		lon = excluded.lon, stale = excluded.stale, received_at = excluded.received_at, event_id = excluded.event_id,
		position = excluded.position, groups = excluded.groups
	WHERE excluded.received_at >= cot_latest.received_at`

// A delete (t-x-d-d) ends the linked uids' latest rows: they are stale from
// the moment it was received, unless something newer arrived since.
const expireLinkedSQL = `UPDATE cot_latest SET stale = ?
	WHERE uid = ? AND stale > ? AND received_at <= ?`

// writeBatch commits the pending batch in one transaction. On failure the
// batch is dropped (counted and logged) and the error kept for Flush.
func (h *History) writeBatch() {
	if len(h.batch) == 0 {
		return
	}
	n := len(h.batch)
	err := h.insertBatch(h.batch)
	clear(h.batch) // drop event references for the GC
	h.batch = h.batch[:0]
	if err != nil {
		h.dropped.Add(uint64(n))
		if h.failErr == nil {
			h.failErr = err
		}
		h.failLog.Warn("could not store a batch of CoT events; they are lost", "events", n, "err", err)
		return
	}
	h.written.Add(uint64(n))
	h.batches.Add(1)
}

func (h *History) insertBatch(items []histItem) error {
	ctx := context.Background()
	if h.s.closed.Load() {
		return fmt.Errorf("store: history: %w", ErrClosed)
	}
	type seen struct {
		uid  string
		hash uint64
	}
	var remembered []seen
	var added int64
	repeats := 0
	err := h.s.inTx(ctx, "history batch", func(tx *sql.Tx) error {
		remembered, added, repeats = remembered[:0], 0, 0
		ins, err := tx.PrepareContext(ctx, insertEventSQL)
		if err != nil {
			return err
		}
		defer ins.Close()
		up, err := tx.PrepareContext(ctx, upsertLatestSQL)
		if err != nil {
			return err
		}
		defer up.Close()
		usage, err := tx.PrepareContext(ctx, upsertUsageSQL)
		if err != nil {
			return err
		}
		defer usage.Close()
		rows := newBatchRows(up, usage) // cot_latest and cot_usage, merged per uid (history_merge.go)
		last := map[string]uint64{}     // this batch's own repeats
		for _, it := range items {
			ev := it.ev
			recv := unixMilli(it.recv)
			stale := unixMilli(ev.Stale)
			hash := contentHash(ev)
			prev, ok := last[ev.UID]
			if !ok {
				prev, ok = h.last[ev.UID]
			}
			if ok && prev == hash {
				// Nothing a receiver would see changed: refresh the latest
				// row, store nothing new.
				if err := rows.flushLatest(ctx, ev.UID); err != nil {
					return err
				}
				if _, err := tx.ExecContext(ctx, `UPDATE cot_latest SET stale = ?, received_at = ?, groups = ?
					WHERE uid = ? AND received_at <= ?`, stale, recv, maskToDB(it.groups), ev.UID, recv); err != nil {
					return err
				}
				repeats++
				continue
			}
			callsign := ""
			if ev.Detail.Contact != nil {
				callsign = ev.Detail.Contact.Callsign
			}
			xml := it.xml
			if xml == nil {
				h.xmlBuf = encodeEventXML(h.xmlBuf[:0], ev)
				xml = h.xmlBuf
			}
			lat, lon, hae := finite(ev.Point.Lat, 0), finite(ev.Point.Lon, 0), finite(ev.Point.Hae, cot.Unknown)
			res, err := ins.ExecContext(ctx, ev.UID, ev.Type, ev.How, callsign, unixMilli(ev.Time), unixMilli(ev.Start),
				stale, lat, lon, hae, recv, it.source, xml, maskToDB(it.groups))
			if err != nil {
				return err
			}
			id, err := res.LastInsertId()
			if err != nil {
				return err
			}
			rows.add(ev.UID, latestRow{typ: ev.Type, callsign: callsign, lat: lat, lon: lon,
				stale: stale, recv: recv, event: id, position: isOwnPosition(ev), groups: it.groups}, len(xml))
			if ev.Type == cot.TypeDelete {
				for _, l := range ev.Detail.Links {
					if err := rows.flushLatest(ctx, l.UID); err != nil {
						return err
					}
					if _, err := tx.ExecContext(ctx, expireLinkedSQL, recv, l.UID, recv, recv); err != nil {
						return err
					}
				}
			}
			added += int64(len(xml))
			last[ev.UID] = hash
			remembered = append(remembered, seen{ev.UID, hash})
		}
		return rows.flush(ctx)
	})
	if err != nil {
		return err
	}
	if len(h.last)+len(remembered) > maxRemembered {
		h.last = map[string]uint64{}
	}
	for _, r := range remembered {
		h.last[r.uid] = r.hash
	}
	h.bytes.Add(added)
	h.repeats.Add(uint64(repeats))
	return nil
}

// finite replaces NaN and infinities (which SQLite would store as NULL)
// with def.
func finite(v, def float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return def
	}
	return v
}

// pruner is the state of one pruning pass, pruneBatch rows per
// transaction: cot_latest rows past the cutoff, then cot_events, then
// cot_latest again (events that were inserted with an old receive time
// while the pass ran). A latest row whose event is already gone is never
// returned: the queries join the two tables.
type pruner struct {
	active bool
	cutoff int64 // unix ms; rows received before it go
	phase  int   // pruneLatest, pruneEvents, pruneLatestAgain
	n      uint64
}

const (
	pruneLatest = iota
	pruneEvents
	pruneLatestAgain
)

func (p *pruner) start(cutoff time.Time) {
	*p = pruner{active: true, cutoff: unixMilli(cutoff)}
}

// pruneStep deletes one bounded batch.
func (h *History) pruneStep(p *pruner) {
	if h.s.closed.Load() {
		p.active = false
		return
	}
	ctx := context.Background()
	var n int64
	var err error
	if p.phase == pruneEvents {
		var freed int64
		err = h.s.inTxAnySpace(ctx, "history prune", func(tx *sql.Tx) error {
			var err error
			n, freed, _, err = deleteEvents(ctx, tx, `DELETE FROM cot_events WHERE id IN
				(SELECT id FROM cot_events WHERE received_at < ? LIMIT ?) RETURNING uid, length(xml)`, p.cutoff, pruneBatch)
			return err
		})
		if err == nil {
			h.bytes.Add(-freed)
		}
	} else {
		var res sql.Result
		res, err = h.s.w.ExecContext(ctx, `DELETE FROM cot_latest WHERE uid IN
			(SELECT uid FROM cot_latest WHERE received_at < ? LIMIT ?)`, p.cutoff, pruneBatch)
		if err == nil {
			n, err = res.RowsAffected()
		}
	}
	if err != nil {
		h.log.Warn("could not prune old CoT events; will retry at the next prune interval", "err", err)
		p.active = false
		return
	}
	if p.phase == pruneEvents && n > 0 {
		h.pruned.Add(uint64(n))
		p.n += uint64(n)
		// The last stored content of those uids may be gone.
		h.last = map[string]uint64{}
	}
	if n == pruneBatch {
		return // more of this phase
	}
	if p.phase < pruneLatestAgain {
		p.phase++
		return
	}
	p.active = false
	if p.n > 0 {
		h.log.Info("pruned CoT events past retention", "events", p.n, "retention", h.opts.Retention)
	}
}

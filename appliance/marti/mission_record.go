package marti

// CoT into missions (api.md §4.4): an event a client addresses to a
// mission with <marti><dest mission="NAME"/> reaches the mission's
// subscribers through the broker, and its uid joins the mission.
//
// Recording the uid must not slow the relay: RecordMissionEvent, called
// by the broker's observer on the publisher's goroutine, only offers a
// small record to a bounded queue and never blocks (a full queue drops the
// record, counted and logged at a limited rate); one goroutine writes what
// is queued in batches, one transaction per batch. It is not done at
// history-write time because the history writer drops events when a
// client's storage budget is spent, and a mission's membership must not
// depend on that; nor synchronously, because a SQLite write per event
// would stall every publisher behind the single writer connection.

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"outpost/appliance/cot"
	"outpost/appliance/logx"
	"outpost/appliance/store"
)

// Queue and batch sizes of the recorder.
const (
	missionRecordQueue = 4096
	missionRecordBatch = 512
)

type missionRecorder struct {
	missions uidRecords
	ch       chan store.UIDRecord
	stop     chan struct{}
	done     chan struct{}
	once     sync.Once
	dropped  atomic.Uint64
	written  atomic.Uint64
	warn     *logx.Limiter
}

func newMissionRecorder(missions uidRecords, h *Handler) *missionRecorder {
	rec := &missionRecorder{missions: missions, ch: make(chan store.UIDRecord, missionRecordQueue), stop: make(chan struct{}),
		done: make(chan struct{}), warn: logx.NewLimiter(h.log, 5, 10*time.Second)}
	go rec.run()
	return rec
}

// RecordMissionEvent records the uid of an event a client sent to the
// missions named (broker.Envelope.Missions), asynchronously. It never
// blocks.
func (h *Handler) RecordMissionEvent(missions []string, ev *cot.Event) {
	if h.rec == nil || ev == nil || ev.UID == "" {
		return
	}
	for _, m := range missions {
		select {
		case <-h.rec.stop:
			return
		case h.rec.ch <- store.UIDRecord{Mission: m, UID: ev.UID, CreatorUID: ev.UID}:
		default:
			h.rec.dropped.Add(1)
			h.rec.warn.Warn("mission uid not recorded: the recorder's queue is full", "mission", logx.Clip(m), "uid", logx.Clip(ev.UID))
		}
	}
}

func (rec *missionRecorder) run() {
	defer close(rec.done)
	batch := make([]store.UIDRecord, 0, missionRecordBatch)
	for {
		select {
		case r := <-rec.ch:
			batch = append(batch[:0], r)
		case <-rec.stop:
			rec.drain(batch[:0])
			return
		}
		for len(batch) < missionRecordBatch {
			select {
			case r := <-rec.ch:
				batch = append(batch, r)
				continue
			default:
			}
			break
		}
		rec.write(batch)
	}
}

// drain writes what is still queued when the recorder stops.
func (rec *missionRecorder) drain(batch []store.UIDRecord) {
	for {
		select {
		case r := <-rec.ch:
			batch = append(batch, r)
			if len(batch) == missionRecordBatch {
				rec.write(batch)
				batch = batch[:0]
			}
		default:
			if len(batch) > 0 {
				rec.write(batch)
			}
			return
		}
	}
}

func (rec *missionRecorder) write(batch []store.UIDRecord) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	n, err := rec.missions.RecordMissionUIDs(ctx, batch)
	if err != nil {
		rec.warn.Warn("mission uids not recorded", "records", len(batch), "err", err)
		return
	}
	rec.written.Add(uint64(n))
}

// close stops the recorder after writing what is queued (until ctx ends).
func (rec *missionRecorder) close(ctx context.Context) {
	rec.once.Do(func() { close(rec.stop) })
	select {
	case <-rec.done:
	case <-ctx.Done():
	}
}

package store

// The history size cap and the per-uid usage it is built on (migration
// 0007: cot_usage). Every transaction that inserts or deletes cot_events
// rows adjusts cot_usage in the same transaction, so the total is always a
// cheap sum. Above HistoryOptions.MaxBytes the writer prunes, a bounded batch
// per transaction, the oldest events of the uid that holds the most bytes,
// until the total is back under 90 % of the cap: a client that floods the
// history loses its own oldest events first, not everyone else's.

import (
	"context"
	"database/sql"
	"encoding/binary"
	"hash/fnv"
	"math"

	"outpost/appliance/cot"
)

const upsertUsageSQL = `INSERT INTO cot_usage(uid, bytes, events, groups) VALUES (?, ?, ?, ?)
	ON CONFLICT(uid) DO UPDATE SET bytes = bytes + excluded.bytes, events = events + excluded.events,
		groups = groups | excluded.groups`

// usageDelta is a change to one uid's usage: what a deletion took, or what
// a history batch adds (history_merge.go), with the groups its events were
// sent to (a batch's; a deletion leaves the union as it was).
type usageDelta struct {
	bytes, events int64
	groups        uint64
}

// subtractUsage applies deletions to cot_usage inside tx.
func subtractUsage(ctx context.Context, tx *sql.Tx, deltas map[string]usageDelta) error {
	for uid, d := range deltas {
		if _, err := tx.ExecContext(ctx, `UPDATE cot_usage SET bytes = bytes - ?, events = events - ? WHERE uid = ?`,
			d.bytes, d.events, uid); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM cot_usage WHERE uid = ? AND events <= 0`, uid); err != nil {
			return err
		}
	}
	return nil
}

// deleteEvents runs a DELETE ... RETURNING uid, length(xml) inside tx and
// keeps cot_usage in step. It returns the rows deleted and their bytes.
func deleteEvents(ctx context.Context, tx *sql.Tx, query string, args ...any) (n, bytes int64, uids map[string]usageDelta, err error) {
	rows, err := tx.QueryContext(ctx, query, args...)
	if err != nil {
		return 0, 0, nil, err
	}
	uids = map[string]usageDelta{}
	for rows.Next() {
		var uid string
		var size int64
		if err := rows.Scan(&uid, &size); err != nil {
			rows.Close()
			return 0, 0, nil, err
		}
		d := uids[uid]
		d.bytes += size
		d.events++
		uids[uid] = d
		n++
		bytes += size
	}
	if err := rows.Close(); err != nil {
		return 0, 0, nil, err
	}
	if err := rows.Err(); err != nil {
		return 0, 0, nil, err
	}
	return n, bytes, uids, subtractUsage(ctx, tx, uids)
}

// loadUsage reads the stored total.
func (h *History) loadUsage() {
	var total sql.NullInt64
	if err := h.s.r.QueryRowContext(context.Background(), `SELECT SUM(bytes) FROM cot_usage`).Scan(&total); err != nil {
		h.log.Warn("could not read the CoT history size; the size cap counts from zero", "err", err)
		return
	}
	h.bytes.Store(total.Int64)
}

// overCap reports whether the size cap asks for pruning now.
func (h *History) overCap() bool {
	return h.opts.MaxBytes > 0 && h.bytes.Load() > h.opts.MaxBytes
}

// pruneSizeStep deletes one bounded batch of the heaviest uid's oldest
// events. It reports whether more pruning is needed.
func (h *History) pruneSizeStep() bool {
	if h.s.closed.Load() {
		return false
	}
	ctx := context.Background()
	var uid string
	var n, freed int64
	err := h.s.inTxAnySpace(ctx, "history size prune", func(tx *sql.Tx) error {
		if err := tx.QueryRowContext(ctx, `SELECT uid FROM cot_usage ORDER BY bytes DESC LIMIT 1`).Scan(&uid); err != nil {
			return err
		}
		var err error
		n, freed, _, err = deleteEvents(ctx, tx, `DELETE FROM cot_events WHERE id IN
			(SELECT id FROM cot_events WHERE uid = ? ORDER BY id LIMIT ?) RETURNING uid, length(xml)`, uid, pruneBatch)
		return err
	})
	if err != nil {
		h.log.Warn("could not prune the CoT history to its size cap; retrying later", "err", err)
		return false
	}
	delete(h.last, uid)
	h.prunedSize.Add(uint64(n))
	total := h.bytes.Add(-freed)
	if n == 0 {
		// cot_usage disagrees with cot_events: recount from the table.
		h.loadUsage()
		return false
	}
	if target := h.opts.MaxBytes / 10 * 9; total > target {
		return true
	}
	h.log.Info("pruned CoT history to its size cap", "max_bytes", h.opts.MaxBytes, "bytes", total)
	return false
}

// maxRemembered bounds the writer's map of last stored content per uid.
const maxRemembered = 1 << 16

// contentHash identifies what a receiver would see of an event, its times
// aside: type, how, point and detail.
func contentHash(ev *cot.Event) uint64 {
	f := fnv.New64a()
	f.Write([]byte(ev.Type))
	f.Write([]byte{0})
	f.Write([]byte(ev.How))
	f.Write([]byte{0})
	var b [8]byte
	for _, v := range [...]float64{ev.Point.Lat, ev.Point.Lon, ev.Point.Hae, ev.Point.Ce, ev.Point.Le} {
		binary.LittleEndian.PutUint64(b[:], math.Float64bits(v))
		f.Write(b[:])
	}
	f.Write(ev.Detail.XML)
	return f.Sum64()
}

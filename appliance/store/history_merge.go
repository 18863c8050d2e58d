package store

import (
	"context"
	"database/sql"
)

// A batch's writes to cot_latest and cot_usage, merged per uid. A client
// reporting its position five times in one batch costs five cot_events rows
// but one cot_latest upsert and one cot_usage upsert: the writer keeps the
// pending rows here and writes them before the transaction commits.
//
// Merging gives the same rows as writing one by one. A latest row is
// replaced only by a row received at the same time or later (upsertLatestSQL),
// so the row that ends up stored is the newest of the database's and the
// batch's, the later one on a tie: keeping the newest of the batch's and
// upserting it once gives that same row. The statements that do not merge —
// a repeat refreshing a uid's row, a delete making other uids' rows stale —
// first write the pending row of the uid they touch (flushLatest), so they
// see what writing one by one would have shown them. Usage is a sum.

// latestRow is a pending cot_latest row.
type latestRow struct {
	typ, callsign      string
	lat, lon           float64
	stale, recv, event int64
	position           bool
	groups             uint64
}

type batchRows struct {
	latest  map[string]latestRow
	usage   map[string]usageDelta
	order   []string  // uids in the order their first event came; written in this order
	up, use *sql.Stmt // the transaction's upsertLatestSQL and upsertUsageSQL
}

func newBatchRows(up, use *sql.Stmt) *batchRows {
	return &batchRows{latest: map[string]latestRow{}, usage: map[string]usageDelta{}, up: up, use: use}
}

// add records a stored event of uid: its bytes go to the uid's usage, and
// r becomes its latest row unless the batch already holds a newer one.
func (b *batchRows) add(uid string, r latestRow, bytes int) {
	u, ok := b.usage[uid]
	if !ok {
		b.order = append(b.order, uid)
	}
	u.bytes += int64(bytes)
	u.events++
	u.groups |= r.groups
	b.usage[uid] = u
	if p, ok := b.latest[uid]; !ok || p.recv <= r.recv {
		b.latest[uid] = r
	}
}

// flushLatest writes uid's pending latest row, if any.
func (b *batchRows) flushLatest(ctx context.Context, uid string) error {
	r, ok := b.latest[uid]
	if !ok {
		return nil
	}
	delete(b.latest, uid)
	_, err := b.up.ExecContext(ctx, uid, r.typ, r.callsign, r.lat, r.lon, r.stale, r.recv, r.event, r.position, maskToDB(r.groups))
	return err
}

// flush writes every pending row.
func (b *batchRows) flush(ctx context.Context) error {
	for _, uid := range b.order {
		if err := b.flushLatest(ctx, uid); err != nil {
			return err
		}
		u := b.usage[uid]
		if _, err := b.use.ExecContext(ctx, uid, u.bytes, u.events, maskToDB(u.groups)); err != nil {
			return err
		}
	}
	return nil
}

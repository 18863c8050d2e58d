package store

// The persistent outbound queue of outbound federates (docs/federation.md
// "Disruption tolerance"): federation appends what it could not send while
// a link was down and sends it, oldest first, when the link returns. Each
// append keeps the federate's queue within its bounds, dropping the oldest
// first and counting them.

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// maxQueueItem bounds one queued item (an encoded event).
const maxQueueItem = 1 << 20

// QueueBounds bound one federate's queue: items older than MaxAge and, over
// MaxBytes in all, the oldest, are dropped.
type QueueBounds struct {
	MaxAge   time.Duration
	MaxBytes int64
}

// QueueItem is one queued item.
type QueueItem struct {
	ID   int64
	Body []byte
}

// QueueAppend appends items to federate's queue and trims it to b; dropped
// is how many items the trim removed.
func (s *Federates) QueueAppend(ctx context.Context, federate string, items [][]byte, now time.Time, b QueueBounds) (dropped int64, err error) {
	if err := s.check(ctx); err != nil {
		return 0, fmt.Errorf("store: queue append: %w", err)
	}
	err = s.inTx(ctx, "queue append", func(tx *sql.Tx) error {
		dropped = 0
		for _, it := range items {
			if len(it) == 0 || len(it) > maxQueueItem {
				dropped++
				continue
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO federate_queue(federate, at, size, body) VALUES (?, ?, ?, ?)`,
				federate, unixMilli(now), len(it), it); err != nil {
				return err
			}
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM federate_queue WHERE federate = ? AND at < ?`, federate, unixMilli(now.Add(-b.MaxAge)))
		if err != nil {
			return err
		}
		n, _ := res.RowsAffected()
		dropped += n
		var total int64
		if err := tx.QueryRowContext(ctx, `SELECT COALESCE(SUM(size), 0) FROM federate_queue WHERE federate = ?`, federate).Scan(&total); err != nil {
			return err
		}
		if total <= b.MaxBytes {
			return nil
		}
		// The oldest rows whose sizes add up to the excess go.
		var cut int64
		if err := tx.QueryRowContext(ctx, `SELECT id FROM (SELECT id, SUM(size) OVER (ORDER BY id) AS run
			FROM federate_queue WHERE federate = ?) WHERE run >= ? ORDER BY id LIMIT 1`, federate, total-b.MaxBytes).Scan(&cut); err != nil {
			return err
		}
		res, err = tx.ExecContext(ctx, `DELETE FROM federate_queue WHERE federate = ? AND id <= ?`, federate, cut)
		if err != nil {
			return err
		}
		n, _ = res.RowsAffected()
		dropped += n
		return nil
	})
	return dropped, err
}

// QueueTake returns the oldest items of federate's queue, at most max
// (they stay queued until QueueDelete).
func (s *Federates) QueueTake(ctx context.Context, federate string, max int) ([]QueueItem, error) {
	if err := s.check(ctx); err != nil {
		return nil, fmt.Errorf("store: queue take: %w", err)
	}
	rows, err := s.r.QueryContext(ctx, `SELECT id, body FROM federate_queue WHERE federate = ? ORDER BY id LIMIT ?`, federate, max)
	if err != nil {
		return nil, s.wrapErr("queue take", err)
	}
	defer rows.Close()
	var out []QueueItem
	for rows.Next() {
		var it QueueItem
		if err := rows.Scan(&it.ID, &it.Body); err != nil {
			return nil, s.wrapErr("queue take", err)
		}
		out = append(out, it)
	}
	return out, s.wrapErr("queue take", rows.Err())
}

// QueueDelete removes federate's items up to id (sent).
func (s *Federates) QueueDelete(ctx context.Context, federate string, upTo int64) error {
	if err := s.check(ctx); err != nil {
		return fmt.Errorf("store: queue delete: %w", err)
	}
	return s.inTxAnySpace(ctx, "queue delete", func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM federate_queue WHERE federate = ? AND id <= ?`, federate, upTo)
		return err
	})
}

// QueueSize is federate's queue's length and bytes.
func (s *Federates) QueueSize(ctx context.Context, federate string) (n, bytes int64, err error) {
	if err := s.check(ctx); err != nil {
		return 0, 0, fmt.Errorf("store: queue size: %w", err)
	}
	err = s.r.QueryRowContext(ctx, `SELECT COUNT(*), COALESCE(SUM(size), 0) FROM federate_queue WHERE federate = ?`, federate).Scan(&n, &bytes)
	return n, bytes, s.wrapErr("queue size", err)
}

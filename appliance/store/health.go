package store

import (
	"context"
	"fmt"
)

// Ping checks that the database answers: one read of the schema version
// through the read pool (it touches the file, unlike SELECT 1). It is the
// store's part of the appliance's health check; the caller bounds it with
// a short deadline.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.check(ctx); err != nil {
		return fmt.Errorf("store: ping: %w", err)
	}
	if _, err := schemaVersion(ctx, s.r); err != nil {
		return s.wrapErr("ping", err)
	}
	return nil
}

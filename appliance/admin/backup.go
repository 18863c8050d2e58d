package admin

import (
	"context"
	"fmt"
	"os"

	"outpost/appliance/config"
	"outpost/appliance/store"
)

// Backup writes a consistent copy of the appliance's database to dest
// (VACUUM INTO). It works while a server process has the database open and
// refuses to overwrite dest.
func Backup(ctx context.Context, cfg config.Config, dest string) error {
	if _, err := os.Stat(cfg.DBPath()); err != nil {
		return fmt.Errorf("no database at %s: %w", cfg.DBPath(), err)
	}
	return store.BackupFile(ctx, cfg.DBPath(), dest)
}

// ErrDatabaseInUse is returned by Restore while a server has the database
// open.
var ErrDatabaseInUse = store.ErrInUse

// Restore replaces the appliance's database with a checked copy of src
// (`outpost restore`). It refuses while a server runs on the data
// directory (store.ErrInUse), checks the copy's integrity and schema
// before anything is replaced, and keeps the previous database aside.
func Restore(ctx context.Context, cfg config.Config, src string) (store.RestoreInfo, error) {
	return store.RestoreFile(ctx, cfg.DBPath(), src)
}

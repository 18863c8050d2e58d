package appliance

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

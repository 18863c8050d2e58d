package appliance

import (
	"context"

	"outpost/appliance/config"
	"outpost/appliance/store"
)

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

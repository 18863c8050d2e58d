package admin

// Managed federates on the command line (`outpost federate
// add|remove|trust`, docs/federation.md "Managing federates"): the
// command writes the database; a server running on the same data picks
// the change up within seconds (it reads the federates table again).

import (
	"context"
	"log/slog"

	"outpost/appliance/config"
	"outpost/appliance/store"
)

// Federate is a managed federate (the command line's name for it).
type Federate = store.Federate

// FederatePatch is a change to a managed federate (FederateUpdate).
type FederatePatch = store.FederatePatch

// FederateV1 is the protocol of a managed federate whose outbound link
// speaks federation v1.
const FederateV1 = store.FederateV1

// FederateAdd stores a new managed federate; caFile, when not empty, is
// the PEM file of the CA certificates its certificate must chain to.
func FederateAdd(ctx context.Context, cfg config.Config, log *slog.Logger, f Federate, caFile string) error {
	if caFile != "" {
		b, err := readInput(caFile)
		if err != nil {
			return err
		}
		f.CAPEM = string(b)
	}
	return withStore(ctx, &cfg, log, func(st *store.Store) error { return st.Federates().Add(ctx, f) })
}

// FederateTrust sets the CA certificates (the PEM file caFile) a managed
// federate's certificate must chain to.
func FederateTrust(ctx context.Context, cfg config.Config, log *slog.Logger, name, caFile string) error {
	b, err := readInput(caFile)
	if err != nil {
		return err
	}
	return withStore(ctx, &cfg, log, func(st *store.Store) error { return st.Federates().Trust(ctx, name, string(b)) })
}

// FederateUpdate changes a managed federate in place (enable, disable,
// address, pin, back-off, protocol: the fields p sets).
func FederateUpdate(ctx context.Context, cfg config.Config, log *slog.Logger, name string, p FederatePatch) error {
	return withStore(ctx, &cfg, log, func(st *store.Store) error {
		_, err := st.Federates().Update(ctx, name, p)
		return err
	})
}

// FederateRemove deletes a managed federate.
func FederateRemove(ctx context.Context, cfg config.Config, log *slog.Logger, name string) error {
	return withStore(ctx, &cfg, log, func(st *store.Store) error { return st.Federates().Delete(ctx, name) })
}

// Federates lists the managed federates.
func Federates(ctx context.Context, cfg config.Config, log *slog.Logger) (list []Federate, err error) {
	err = withStore(ctx, &cfg, log, func(st *store.Store) error {
		list, err = st.Federates().List(ctx)
		return err
	})
	return list, err
}

// GroupMapping and GroupPair are a federate's group mapping (the command
// line reaches the store through this package).
type (
	GroupMapping = store.GroupMapping
	GroupPair    = store.GroupPair
)

// FederateGroups returns the group mapping stored for the federate name
// (docs/federation.md "Groups").
func FederateGroups(ctx context.Context, cfg config.Config, log *slog.Logger, name string) (m store.GroupMapping, err error) {
	if err := store.CheckFederateRef(name); err != nil {
		return m, err
	}
	err = withStore(ctx, &cfg, log, func(st *store.Store) error {
		m, err = st.Federates().Groups(ctx, name)
		return err
	})
	return m, err
}

// SetFederateGroups replaces the group mapping of the federate name (an
// empty mapping removes it); its local groups must exist.
func SetFederateGroups(ctx context.Context, cfg config.Config, log *slog.Logger, name string, m store.GroupMapping) error {
	return withStore(ctx, &cfg, log, func(st *store.Store) error { return st.Federates().SetGroups(ctx, name, m) })
}

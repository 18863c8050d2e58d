package store

// Mission changes a federate made (docs/federation.md "Missions over
// ROL"): the appliance applies them through the same methods as a client's
// change, under a context that names the federate. The roles are not
// checked then (the federate's server checked its client's), and every
// change recorded in the mission's history says which federate it came
// from (MissionChange.Federate; its JSON says isFederatedChange).

import "context"

type federateKey struct{}

// FederatedChange returns ctx under which mission changes are federate's.
func FederatedChange(ctx context.Context, federate string) context.Context {
	return context.WithValue(ctx, federateKey{}, federate)
}

// federateOf is the federate whose change ctx carries ("" a local one).
func federateOf(ctx context.Context) string {
	f, _ := ctx.Value(federateKey{}).(string)
	return f
}

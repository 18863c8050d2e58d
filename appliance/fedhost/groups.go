package fedhost

// Group mapping per federate (docs/federation.md "Groups"): the store's
// federate_groups table, written by the management API and `outpost
// federate groups`, resolved to the groups' masks and handed to federation
// with the managed federates (after each change the API makes and every
// federatesPollInterval). A pair whose local group no longer exists stays
// in the mapping with no group: it carries nothing, and the direction does
// not fall back to __ANON__.

import (
	"context"

	"outpost/appliance/federation"
	"outpost/appliance/store"
)

// syncFederateGroups gives federation the store's group mappings.
func (h *Host) syncFederateGroups(ctx context.Context) {
	maps, err := h.st.Federates().GroupMappings(ctx)
	if err != nil {
		h.log.Warn("reading the federates' group mappings", "err", err)
		return
	}
	groups, err := h.st.Accounts().Groups(ctx)
	if err != nil {
		h.log.Warn("reading the groups for the federates' group mappings", "err", err)
		return
	}
	h.fed.SetGroupMaps(resolveGroupMaps(maps, groups))
}

// resolveGroupMaps turns the stored mappings' group names into masks.
func resolveGroupMaps(maps map[string]store.GroupMapping, groups []store.Group) map[string]federation.GroupMap {
	mask := make(map[string]uint64, len(groups))
	for _, g := range groups {
		mask[g.Name] = g.Mask()
	}
	out := make(map[string]federation.GroupMap, len(maps))
	for name, m := range maps {
		var gm federation.GroupMap
		for _, p := range m.Outbound {
			gm.Out = append(gm.Out, federation.OutGroup{Local: mask[p.Local], Federate: p.Federate})
		}
		for _, p := range m.Inbound {
			gm.In = append(gm.In, federation.InGroup{Federate: p.Federate, Local: mask[p.Local]})
		}
		out[name] = gm
	}
	return out
}

// Announced is the federate groups a federate announced (nil when
// federation is off or it announced none).
func (h *Host) Announced(name string) []string {
	if h == nil {
		return nil
	}
	return h.fed.AnnouncedGroups(name)
}

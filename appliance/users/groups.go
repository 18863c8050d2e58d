package users

import (
	"context"

	"outpost/appliance/logx"
	"outpost/appliance/store"
)

// Groups lists every group.
func (s *Service) Groups(ctx context.Context) ([]store.Group, error) {
	return s.opts.Accounts.Groups(ctx)
}

// CreateGroup makes a group on the lowest free bit (access.md "Groups").
func (s *Service) CreateGroup(ctx context.Context, name, description string) (store.Group, error) {
	g, err := s.opts.Accounts.CreateGroup(ctx, name, description)
	if err != nil {
		return store.Group{}, err
	}
	s.log.Info("group created", "group", logx.Clip(name), "bit", g.Bit)
	return g, nil
}

// DeleteGroup removes a group, its memberships, and its bit from every
// stored record; the connections of its members follow at once.
func (s *Service) DeleteGroup(ctx context.Context, name string) error {
	members, err := s.membersOf(ctx, name)
	if err != nil {
		return err
	}
	if err := s.opts.Accounts.DeleteGroup(ctx, name); err != nil {
		return err
	}
	s.log.Info("group deleted", "group", logx.Clip(name), "members", len(members))
	for _, m := range members {
		s.changed(m)
	}
	return nil
}

// membersOf lists the names of the users in group name.
func (s *Service) membersOf(ctx context.Context, name string) ([]string, error) {
	list, err := s.List(ctx)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, u := range list {
		for _, m := range u.Groups {
			if m.Group == name {
				out = append(out, u.Name)
				break
			}
		}
	}
	return out, nil
}

package store

// Group mapping per federate (docs/federation.md "Groups"): which local
// groups' events go to a federate and under which federate group names
// (outbound), and which local groups the events a federate tags with a
// federate group are published to (inbound). A federate is named as
// federation knows it (configured, managed, or by its certificate's common
// name), so the mapping is not tied to the federates table. The table is
// small: at most MaxGroupPairs pairs per direction and federate.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// Limits of the group mapping.
const (
	// MaxGroupPairs bounds the pairs of one direction of one federate.
	MaxGroupPairs = 64
	// MaxFederateGroupName bounds a federate group's name, in bytes (the
	// other server's group, which follows its own rules).
	MaxFederateGroupName = 255
	// maxFederateRef bounds the name a mapping is stored under: a
	// federate's name, or a certificate's common name (federation.certName).
	maxFederateRef = 128
	// maxMappedFederates bounds the federates that have a mapping.
	maxMappedFederates = 256
)

// GroupPair maps one local group to one federate group.
type GroupPair struct {
	Local    string
	Federate string
}

// GroupMapping is one federate's mapping; a direction without pairs is
// __ANON__ that way.
type GroupMapping struct {
	Outbound []GroupPair // a local group's events go out tagged with the federate group
	Inbound  []GroupPair // events tagged with the federate group are published to the local group
}

// Empty reports whether the mapping has no pair at all.
func (m GroupMapping) Empty() bool { return len(m.Outbound) == 0 && len(m.Inbound) == 0 }

// check validates the names and the limits, and drops repeated pairs.
func (m *GroupMapping) check() error {
	for _, d := range []struct {
		name  string
		pairs *[]GroupPair
	}{{"outbound", &m.Outbound}, {"inbound", &m.Inbound}} {
		if len(*d.pairs) > MaxGroupPairs {
			return fmt.Errorf("%w: %s: at most %d pairs", ErrInvalid, d.name, MaxGroupPairs)
		}
		seen := map[GroupPair]bool{}
		out := (*d.pairs)[:0:0]
		for _, p := range *d.pairs {
			if err := checkText(d.name+" local", p.Local, 1, MaxGroupName); err != nil {
				return err
			}
			if err := checkText(d.name+" federate", p.Federate, 1, MaxFederateGroupName); err != nil {
				return err
			}
			if !seen[p] {
				seen[p] = true
				out = append(out, p)
			}
		}
		*d.pairs = out
	}
	return nil
}

// CheckFederateRef checks the name a mapping is stored under (ErrInvalid).
func CheckFederateRef(name string) error { return checkText("federate", name, 1, maxFederateRef) }

// SetGroups replaces the group mapping of the federate name (an empty
// mapping removes it). Errors: ErrInvalid (a bad name, too many pairs, a
// local group that does not exist), ErrConflict (too many federates
// mapped); nothing is changed then.
func (s *Federates) SetGroups(ctx context.Context, name string, m GroupMapping) error {
	if err := s.check(ctx); err != nil {
		return fmt.Errorf("store: set federate groups: %w", err)
	}
	if err := CheckFederateRef(name); err != nil {
		return fmt.Errorf("store: set federate groups: %w", err)
	}
	if err := m.check(); err != nil {
		return fmt.Errorf("store: set federate groups: %w", err)
	}
	run := s.inTx
	if m.Empty() {
		run = s.inTxAnySpace // removing frees space: always allowed
	}
	return run(ctx, "set federate groups", func(tx *sql.Tx) error {
		for _, p := range append(append([]GroupPair{}, m.Outbound...), m.Inbound...) {
			var one int
			err := tx.QueryRowContext(ctx, `SELECT 1 FROM groups WHERE name = ?`, p.Local).Scan(&one)
			if errors.Is(err, sql.ErrNoRows) {
				return fmt.Errorf("%w: no local group %q", ErrInvalid, p.Local)
			}
			if err != nil {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM federate_groups WHERE federate = ?`, name); err != nil {
			return err
		}
		if m.Empty() {
			return nil
		}
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(DISTINCT federate) FROM federate_groups`).Scan(&n); err != nil {
			return err
		}
		if n >= maxMappedFederates {
			return fmt.Errorf("%w: at most %d federates have a group mapping", ErrConflict, maxMappedFederates)
		}
		for _, d := range []struct {
			dir   string
			pairs []GroupPair
		}{{"out", m.Outbound}, {"in", m.Inbound}} {
			for _, p := range d.pairs {
				if _, err := tx.ExecContext(ctx, `INSERT INTO federate_groups(federate, direction, local_group, federate_group) VALUES (?, ?, ?, ?)`,
					name, d.dir, p.Local, p.Federate); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// Groups returns the group mapping of the federate name (empty: none).
func (s *Federates) Groups(ctx context.Context, name string) (GroupMapping, error) {
	all, err := s.groupMappings(ctx, name)
	return all[name], err
}

// GroupMappings returns every federate's group mapping, by name.
func (s *Federates) GroupMappings(ctx context.Context) (map[string]GroupMapping, error) {
	return s.groupMappings(ctx, "")
}

func (s *Federates) groupMappings(ctx context.Context, only string) (map[string]GroupMapping, error) {
	if err := s.check(ctx); err != nil {
		return nil, fmt.Errorf("store: federate groups: %w", err)
	}
	q, args := `SELECT federate, direction, local_group, federate_group FROM federate_groups`, []any{}
	if only != "" {
		q += ` WHERE federate = ?`
		args = append(args, only)
	}
	q += ` ORDER BY federate, direction, local_group, federate_group LIMIT ?`
	args = append(args, 2*MaxGroupPairs*maxMappedFederates)
	rows, err := s.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, s.wrapErr("federate groups", err)
	}
	defer rows.Close()
	out := map[string]GroupMapping{}
	for rows.Next() {
		var fed, dir string
		var p GroupPair
		if err := rows.Scan(&fed, &dir, &p.Local, &p.Federate); err != nil {
			return nil, s.wrapErr("federate groups", err)
		}
		m := out[fed]
		if dir == "out" {
			m.Outbound = append(m.Outbound, p)
		} else {
			m.Inbound = append(m.Inbound, p)
		}
		out[fed] = m
	}
	if err := rows.Err(); err != nil {
		return nil, s.wrapErr("federate groups", err)
	}
	return out, nil
}

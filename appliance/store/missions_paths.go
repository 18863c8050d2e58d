package store

// The paths of missions of one tool: what the COP hierarchy of the client
// API is built from (GET /Marti/api/cops/hierarchy, api-marti.md "Groups
// and settings").

import (
	"context"
	"fmt"
)

// MissionPath is the path of one mission and what decides who may see it.
type MissionPath struct {
	Path              string
	Groups            []string // the mission's group names (none: __ANON__)
	PasswordProtected bool
}

// MissionPaths lists the non-empty paths of at most limit missions of the
// tool, by path; more says further missions were left out.
func (s *Missions) MissionPaths(ctx context.Context, tool string, limit int) (list []MissionPath, more bool, err error) {
	const op = "mission paths"
	if limit <= 0 {
		return nil, false, fmt.Errorf("store: %s: %w: limit must be positive", op, ErrInvalid)
	}
	if err := s.check(ctx); err != nil {
		return nil, false, fmt.Errorf("store: %s: %w", op, err)
	}
	rows, err := s.r.QueryContext(ctx, `SELECT path, groups, password_hash <> '' FROM missions
		WHERE tool = ? AND path <> '' ORDER BY path, id LIMIT ?`, tool, limit+1)
	if err != nil {
		return nil, false, s.wrapErr(op, err)
	}
	defer rows.Close()
	list = []MissionPath{}
	for rows.Next() {
		var (
			p      MissionPath
			groups string
		)
		if err := rows.Scan(&p.Path, &groups, &p.PasswordProtected); err != nil {
			return nil, false, s.wrapErr(op, err)
		}
		p.Groups = parseList(groups)
		list = append(list, p)
	}
	if err := rows.Err(); err != nil {
		return nil, false, s.wrapErr(op, err)
	}
	list, more = firstOf(list, limit)
	return list, more, nil
}

package store

// Groups (TAK channels) and their members (access.md "Groups"). A group's
// bit is its place in a group mask: every stored record that carries groups
// (the latest event of a uid, server objects, data packages, ExCheck
// documents) keeps the mask it was sent to, and a reader sees it when the
// mask meets the reader's OUT groups.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/bits"
	"sort"
	"strings"
	"time"

	"outpost/appliance/logx"
)

// Group masks.
const (
	// AnonBit is the bit of __ANON__, the group of everyone without one.
	AnonBit = 2
	// AnonGroup is the mask of __ANON__ alone.
	AnonGroup uint64 = 1 << AnonBit
	// AllGroups is the mask of every group: what the server sends itself
	// and what an administrator shares without naming groups.
	AllGroups = ^uint64(0)
	// AnonGroupName is the name of the group of everyone without one.
	AnonGroupName = "__ANON__"
	// MaxGroups is how many groups exist at most (__ANON__ included): one
	// per bit of a mask.
	MaxGroups = 64
	// MaxGroupName bounds a group's name, in bytes.
	MaxGroupName = 64
	maxGroupDesc = 255
)

// maskToDB and maskFromDB carry a mask through SQLite's signed integers.
func maskToDB(m uint64) int64   { return int64(m) }
func maskFromDB(v int64) uint64 { return uint64(v) }

// Seen reports whether a reader whose mask is sees sees a record shared
// with groups: a shared bit, or a reader of every group (seenBy in SQL).
func Seen(groups, sees uint64) bool { return sees == AllGroups || groups&sees != 0 }

// seenBy is the SQL condition "a caller of mask groups sees the row whose
// mask column is col" and its argument: a shared bit, or any row at all for
// a caller of every group (an administrator also sees rows no group shares,
// such as certificate packages or those of deleted groups).
func seenBy(col string, groups uint64) (string, []any) {
	if groups == AllGroups {
		return "1", nil
	}
	return col + " & ? != 0", []any{maskToDB(groups)}
}

// Group is a group as stored.
type Group struct {
	Name        string
	Bit         int
	Description string
	Created     time.Time
}

// Mask is the group's bit as a mask.
func (g Group) Mask() uint64 { return 1 << uint(g.Bit) }

// Membership is a user's place in a group.
type Membership struct {
	Group     string
	In, Out   bool // the directions the user is a member in
	ActiveIn  bool // the directions switched on by the user's client
	ActiveOut bool
}

// Direction names the membership's directions: "IN", "OUT" or "BOTH".
func (m Membership) Direction() string {
	switch {
	case m.In && !m.Out:
		return "IN"
	case m.Out && !m.In:
		return "OUT"
	}
	return "BOTH"
}

// SetDirection reads a direction (IN, OUT, BOTH, any case; empty is BOTH)
// into m's In and Out, reporting whether it is one.
func (m *Membership) SetDirection(d string) bool {
	switch strings.ToUpper(d) {
	case "IN":
		m.In, m.Out = true, false
	case "OUT":
		m.In, m.Out = false, true
	case "BOTH", "":
		m.In, m.Out = true, true
	default:
		return false
	}
	return true
}

// CheckGroupName enforces the rules of a group name: 1 to 64 bytes of
// printable UTF-8 without commas (the seed's group field lists names
// separated by commas) or surrounding spaces.
func CheckGroupName(name string) error {
	if err := checkText("group name", name, 1, MaxGroupName); err != nil {
		return err
	}
	if strings.ContainsRune(name, ',') {
		return fmt.Errorf("%w: group name %q contains a comma", ErrInvalid, logx.Cut(name, 64))
	}
	if strings.TrimSpace(name) != name {
		return fmt.Errorf("%w: group name %q has leading or trailing spaces", ErrInvalid, logx.Cut(name, 64))
	}
	return nil
}

// Groups lists every group by name.
func (s *Accounts) Groups(ctx context.Context) ([]Group, error) {
	if err := s.check(ctx); err != nil {
		return nil, fmt.Errorf("store: groups: %w", err)
	}
	rows, err := s.r.QueryContext(ctx, `SELECT name, bit, description, created_at FROM groups ORDER BY name`)
	if err != nil {
		return nil, s.wrapErr("groups", err)
	}
	defer rows.Close()
	out := []Group{}
	for rows.Next() {
		var (
			g       Group
			created int64
		)
		if err := rows.Scan(&g.Name, &g.Bit, &g.Description, &created); err != nil {
			return nil, s.wrapErr("groups", err)
		}
		g.Created = fromMilli(created)
		out = append(out, g)
	}
	return out, s.wrapErr("groups", rows.Err())
}

// CreateGroup makes a group on the lowest free bit. Errors: ErrInvalid (the
// name, the description, or every bit taken), ErrConflict (it exists).
func (s *Accounts) CreateGroup(ctx context.Context, name, description string) (Group, error) {
	if err := s.check(ctx); err != nil {
		return Group{}, fmt.Errorf("store: create group: %w", err)
	}
	if err := CheckGroupName(name); err != nil {
		return Group{}, fmt.Errorf("store: create group: %w", err)
	}
	if err := checkText("description", description, 0, maxGroupDesc); err != nil {
		return Group{}, fmt.Errorf("store: create group: %w", err)
	}
	g := Group{Name: name, Description: description, Created: time.Now().UTC().Truncate(time.Millisecond)}
	err := s.inTx(ctx, "create group", func(tx *sql.Tx) error {
		var err error
		g.Bit, err = createGroupTx(ctx, tx, name, description, g.Created)
		return err
	})
	return g, err
}

// createGroupTx inserts a group on the lowest free bit and returns the bit.
func createGroupTx(ctx context.Context, tx *sql.Tx, name, description string, now time.Time) (int, error) {
	var taken uint64
	rows, err := tx.QueryContext(ctx, `SELECT name, bit FROM groups`)
	if err != nil {
		return 0, err
	}
	for rows.Next() {
		var (
			n string
			b int
		)
		if err := rows.Scan(&n, &b); err != nil {
			rows.Close()
			return 0, err
		}
		if n == name {
			rows.Close()
			return 0, fmt.Errorf("%w: group %q exists", ErrConflict, logx.Cut(name, 64))
		}
		taken |= 1 << uint(b)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}
	if taken == AllGroups {
		return 0, fmt.Errorf("%w: every one of the %d groups exists; delete one first", ErrInvalid, MaxGroups)
	}
	bit := bits.TrailingZeros64(^taken)
	_, err = tx.ExecContext(ctx, `INSERT INTO groups(name, bit, description, created_at) VALUES (?, ?, ?, ?)`,
		name, bit, description, unixMilli(now))
	return bit, err
}

// stampedTables are the tables whose rows carry a group mask.
var stampedTables = []string{"cot_latest", "cot_events", "cot_usage", "server_objects", "data_packages", "excheck_templates", "excheck_checklists"}

// DeleteGroup removes a group and its memberships, and clears its bit from
// every stored record in the same transaction, so a group made later on the
// same bit sees none of this one's data (access.md "Groups"). __ANON__
// cannot be deleted. Errors: ErrNotFound, ErrInvalid.
func (s *Accounts) DeleteGroup(ctx context.Context, name string) error {
	if err := s.check(ctx); err != nil {
		return fmt.Errorf("store: delete group: %w", err)
	}
	if name == AnonGroupName {
		return fmt.Errorf("store: delete group: %w: %s is everyone without a group and cannot be deleted", ErrInvalid, AnonGroupName)
	}
	return s.inTxAnySpace(ctx, "delete group", func(tx *sql.Tx) error {
		var bit int
		err := tx.QueryRowContext(ctx, `SELECT bit FROM groups WHERE name = ?`, name).Scan(&bit)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("%w: no group %q", ErrNotFound, logx.Cut(name, 64))
		}
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM groups WHERE name = ?`, name); err != nil {
			return err
		}
		// A record for every group (AllGroups) keeps every bit: it is for
		// the groups made later too, whatever bit they take.
		keep := maskToDB(^(uint64(1) << uint(bit)))
		for _, t := range stampedTables {
			if _, err := tx.ExecContext(ctx, `UPDATE `+t+` SET groups = groups & ? WHERE groups & ? != 0 AND groups != ?`,
				keep, maskToDB(1<<uint(bit)), maskToDB(AllGroups)); err != nil {
				return err
			}
		}
		return bumpAccessTx(ctx, tx)
	})
}

// Memberships lists the groups of the user uid, by group name.
func (s *Accounts) Memberships(ctx context.Context, uid string) ([]Membership, error) {
	all, err := s.MembershipsOf(ctx, uid)
	if err != nil {
		return nil, err
	}
	return all[uid], nil
}

// MembershipsOf lists the groups of the users uids (every user when none is
// given), by user uid.
func (s *Accounts) MembershipsOf(ctx context.Context, uids ...string) (map[string][]Membership, error) {
	if err := s.check(ctx); err != nil {
		return nil, fmt.Errorf("store: memberships: %w", err)
	}
	q := `SELECT user_uid, group_name, dir_in, dir_out, active_in, active_out FROM group_members`
	var args []any
	if len(uids) > 0 {
		q += ` WHERE user_uid IN (` + strings.TrimSuffix(strings.Repeat("?,", len(uids)), ",") + `)`
		for _, u := range uids {
			args = append(args, u)
		}
	}
	rows, err := s.r.QueryContext(ctx, q+` ORDER BY user_uid, group_name`, args...)
	if err != nil {
		return nil, s.wrapErr("memberships", err)
	}
	defer rows.Close()
	out := map[string][]Membership{}
	for rows.Next() {
		var (
			uid string
			m   Membership
		)
		if err := rows.Scan(&uid, &m.Group, &m.In, &m.Out, &m.ActiveIn, &m.ActiveOut); err != nil {
			return nil, s.wrapErr("memberships", err)
		}
		out[uid] = append(out[uid], m)
	}
	return out, s.wrapErr("memberships", rows.Err())
}

// SetMemberships replaces the groups of the user uid with ms (both
// directions active unless ms says otherwise for a group the user was
// already in, whose switches are kept). Every group must exist. Errors:
// ErrNotFound (the user or a group), ErrInvalid.
func (s *Accounts) SetMemberships(ctx context.Context, uid string, ms []Membership) error {
	if err := s.check(ctx); err != nil {
		return fmt.Errorf("store: set memberships: %w", err)
	}
	if err := checkMemberships(ms); err != nil {
		return fmt.Errorf("store: set memberships: %w", err)
	}
	return s.inTx(ctx, "set memberships", func(tx *sql.Tx) error {
		return setMembershipsTx(ctx, tx, uid, ms)
	})
}

func checkMemberships(ms []Membership) error {
	seen := map[string]bool{}
	for _, m := range ms {
		if err := CheckGroupName(m.Group); err != nil {
			return err
		}
		if !m.In && !m.Out {
			return fmt.Errorf("%w: group %q: a membership is IN, OUT or both", ErrInvalid, logx.Cut(m.Group, 64))
		}
		if seen[m.Group] {
			return fmt.Errorf("%w: group %q named twice", ErrInvalid, logx.Cut(m.Group, 64))
		}
		seen[m.Group] = true
	}
	if len(ms) > MaxGroups {
		return fmt.Errorf("%w: at most %d groups", ErrInvalid, MaxGroups)
	}
	return nil
}

func setMembershipsTx(ctx context.Context, tx *sql.Tx, uid string, ms []Membership) error {
	var one int
	if err := tx.QueryRowContext(ctx, `SELECT 1 FROM system_users WHERE uid = ?`, uid).Scan(&one); errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("%w: no system user with uid %q", ErrNotFound, logx.Cut(uid, 64))
	} else if err != nil {
		return err
	}
	keep := map[string]Membership{}
	rows, err := tx.QueryContext(ctx, `SELECT group_name, active_in, active_out FROM group_members WHERE user_uid = ?`, uid)
	if err != nil {
		return err
	}
	for rows.Next() {
		var m Membership
		if err := rows.Scan(&m.Group, &m.ActiveIn, &m.ActiveOut); err != nil {
			rows.Close()
			return err
		}
		keep[m.Group] = m
	}
	rows.Close()
	if _, err := tx.ExecContext(ctx, `DELETE FROM group_members WHERE user_uid = ?`, uid); err != nil {
		return err
	}
	for _, m := range ms {
		ai, ao := true, true
		if old, ok := keep[m.Group]; ok {
			ai, ao = old.ActiveIn, old.ActiveOut
		}
		var exists int
		if err := tx.QueryRowContext(ctx, `SELECT 1 FROM groups WHERE name = ?`, m.Group).Scan(&exists); errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("%w: no group %q", ErrNotFound, logx.Cut(m.Group, 64))
		} else if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO group_members(user_uid, group_name, dir_in, dir_out, active_in, active_out)
			VALUES (?, ?, ?, ?, ?, ?)`, uid, m.Group, m.In, m.Out, ai, ao); err != nil {
			return err
		}
	}
	return bumpAccessTx(ctx, tx)
}

// SetActive switches directions of the user's memberships on or off (a
// client's channel toggles): each item names a group and the directions it
// sets (In/Out say which directions the item is about, ActiveIn/ActiveOut
// their new state). Groups the user is not a member of, and directions it
// is not a member in, are ignored. It returns the memberships as stored.
func (s *Accounts) SetActive(ctx context.Context, uid string, changes []Membership) ([]Membership, error) {
	if err := s.check(ctx); err != nil {
		return nil, fmt.Errorf("store: set active groups: %w", err)
	}
	if len(changes) > 2*MaxGroups {
		return nil, fmt.Errorf("store: set active groups: %w: at most %d items", ErrInvalid, 2*MaxGroups)
	}
	err := s.inTx(ctx, "set active groups", func(tx *sql.Tx) error {
		for _, c := range changes {
			if c.In {
				if _, err := tx.ExecContext(ctx, `UPDATE group_members SET active_in = ? WHERE user_uid = ? AND group_name = ? AND dir_in = 1`, c.ActiveIn, uid, c.Group); err != nil {
					return err
				}
			}
			if c.Out {
				if _, err := tx.ExecContext(ctx, `UPDATE group_members SET active_out = ? WHERE user_uid = ? AND group_name = ? AND dir_out = 1`, c.ActiveOut, uid, c.Group); err != nil {
					return err
				}
			}
		}
		return bumpAccessTx(ctx, tx)
	})
	if err != nil {
		return nil, err
	}
	return s.Memberships(ctx, uid)
}

// ParseGroupField reads the seed's system user group field: group names
// separated by commas (access.md "Groups"); blanks are skipped, duplicates
// merged.
func ParseGroupField(v string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	for _, part := range strings.Split(v, ",") {
		name := strings.TrimSpace(part)
		if name == "" || seen[name] {
			continue
		}
		if err := CheckGroupName(name); err != nil {
			return nil, err
		}
		seen[name] = true
		out = append(out, name)
	}
	sort.Strings(out)
	return out, nil
}

// ensureGroupsTx creates the groups of names that do not exist yet.
func ensureGroupsTx(ctx context.Context, tx *sql.Tx, names []string, now time.Time) error {
	for _, n := range names {
		var one int
		err := tx.QueryRowContext(ctx, `SELECT 1 FROM groups WHERE name = ?`, n).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			if _, err := createGroupTx(ctx, tx, n, "", now); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// JoinGroups makes the user uid a member, both ways, of the groups named
// (creating those that do not exist), keeping its other memberships.
func (s *Accounts) JoinGroups(ctx context.Context, uid string, names []string) error {
	if len(names) == 0 {
		return nil
	}
	if err := s.check(ctx); err != nil {
		return fmt.Errorf("store: join groups: %w", err)
	}
	return s.inTx(ctx, "join groups", func(tx *sql.Tx) error {
		if err := ensureGroupsTx(ctx, tx, names, time.Now()); err != nil {
			return err
		}
		for _, n := range names {
			if _, err := tx.ExecContext(ctx, `INSERT INTO group_members(user_uid, group_name, dir_in, dir_out) VALUES (?, ?, 1, 1)
				ON CONFLICT(user_uid, group_name) DO UPDATE SET dir_in = 1, dir_out = 1`, uid, n); err != nil {
				if isForeignKeyViolation(err) {
					return fmt.Errorf("%w: no system user with uid %q", ErrNotFound, logx.Cut(uid, 64))
				}
				return err
			}
		}
		return bumpAccessTx(ctx, tx)
	})
}

// AdoptGroupFields turns the group field of users stored before groups
// existed into memberships (access.md "Groups": the field lists group
// names), once: the field is cleared as it is adopted. It returns how many
// users it changed.
func (s *Accounts) AdoptGroupFields(ctx context.Context) (int, error) {
	if err := s.check(ctx); err != nil {
		return 0, fmt.Errorf("store: adopt group fields: %w", err)
	}
	n := 0
	err := s.inTxAnySpace(ctx, "adopt group fields", func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT uid, grp FROM system_users WHERE grp != ''`)
		if err != nil {
			return err
		}
		type field struct{ uid, grp string }
		var fields []field
		for rows.Next() {
			var f field
			if err := rows.Scan(&f.uid, &f.grp); err != nil {
				rows.Close()
				return err
			}
			fields = append(fields, f)
		}
		rows.Close()
		now := time.Now()
		for _, f := range fields {
			names, err := ParseGroupField(f.grp)
			if err != nil {
				s.log.Warn("a user's group field names no valid group; left without groups", "user_uid", f.uid, "group", logx.Clip(f.grp), "err", err)
				names = nil
			}
			if err := ensureGroupsTx(ctx, tx, names, now); err != nil {
				return err
			}
			for _, name := range names {
				if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO group_members(user_uid, group_name, dir_in, dir_out) VALUES (?, ?, 1, 1)`, f.uid, name); err != nil {
					return err
				}
			}
			if _, err := tx.ExecContext(ctx, `UPDATE system_users SET grp = '' WHERE uid = ?`, f.uid); err != nil {
				return err
			}
			n++
		}
		if n == 0 {
			return nil // nothing to adopt: nobody's access changed
		}
		return bumpAccessTx(ctx, tx)
	})
	return n, err
}

// bumpAccessTx marks a change of who may see what (AccessGeneration).
func bumpAccessTx(ctx context.Context, tx *sql.Tx) error {
	_, err := tx.ExecContext(ctx, `UPDATE access_generation SET n = n + 1 WHERE id = 1`)
	return err
}

// AccessGeneration counts the changes of roles, memberships, their
// switches, groups and deleted users, in any process: a running server that
// sees it move re-resolves its open connections (access.md "Groups").
func (s *Accounts) AccessGeneration(ctx context.Context) (int64, error) {
	if err := s.check(ctx); err != nil {
		return 0, fmt.Errorf("store: access generation: %w", err)
	}
	var n int64
	err := s.r.QueryRowContext(ctx, `SELECT n FROM access_generation WHERE id = 1`).Scan(&n)
	return n, s.wrapErr("access generation", err)
}

package store

// Mission layers (docs/api-marti.md "Mission layers"): a tree of named
// layers a mission's uids and files are sorted into, as the official TAK
// server keeps it. A layer of type ITEM stands for one content (a CoT uid
// or a file's hash, its uid) placed in its parent layer, so moving a
// content between layers is moving its ITEM layer. Siblings keep an order
// (position); a layer placed after none goes first, as on the official
// server. Only a caller who may change the mission's contents may change
// its layers (mayWrite). Deleting a layer deletes the layers under it and
// removes from the mission the uids and files its ITEM layers hold, each
// recorded as a REMOVE_CONTENT change. Layer changes themselves are not
// change records, as on the official server (their notification is the
// client's news of them).

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"outpost/appliance/logx"
)

// Layer types (the official server's names).
const (
	LayerGroup    = "GROUP"
	LayerUID      = "UID"
	LayerContents = "CONTENTS"
	LayerMapLayer = "MAPLAYER"
	LayerItem     = "ITEM"
)

// MaxMissionLayers bounds the layers of one mission, ITEM layers included.
const MaxMissionLayers = 2000

// ValidLayerType reports whether t is one of the layer types.
func ValidLayerType(t string) bool {
	switch t {
	case LayerGroup, LayerUID, LayerContents, LayerMapLayer, LayerItem:
		return true
	}
	return false
}

// MissionLayer is one stored layer.
type MissionLayer struct {
	UID       string
	Name      string
	Type      string
	ParentUID string // "": top level
	Position  int64
}

// LayerInput creates a layer: UID "" makes a new random one; AfterUID ""
// puts it first among its siblings.
type LayerInput struct {
	UID, Name, Type, ParentUID, AfterUID string
}

// layerTree is a mission's layers as read in a transaction.
type layerTree struct {
	m     Mission
	byUID map[string]MissionLayer
}

func loadLayers(ctx context.Context, q querier, m Mission) (*layerTree, error) {
	rows, err := q.QueryContext(ctx, `SELECT uid, name, type, COALESCE(parent_uid, ''), position FROM mission_layers
		WHERE mission_id = ? ORDER BY parent_uid, position, uid`, m.ID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	t := &layerTree{m: m, byUID: map[string]MissionLayer{}}
	for rows.Next() {
		var l MissionLayer
		if err := rows.Scan(&l.UID, &l.Name, &l.Type, &l.ParentUID, &l.Position); err != nil {
			return nil, err
		}
		t.byUID[l.UID] = l
	}
	return t, rows.Err()
}

// find returns layer uid, or ErrNotFound naming field.
func (t *layerTree) find(field, uid string) (MissionLayer, error) {
	l, ok := t.byUID[uid]
	if !ok {
		return l, fmt.Errorf("%w: %s: mission %q has no layer %q", ErrNotFound, field, logx.Cut(t.m.Name, 64), logx.Cut(uid, 64))
	}
	return l, nil
}

// siblings are the layers under parent in order, without skip.
func (t *layerTree) siblings(parent, skip string) []MissionLayer {
	var out []MissionLayer
	for _, l := range t.byUID {
		if l.ParentUID == parent && l.UID != skip {
			out = append(out, l)
		}
	}
	sortLayers(out)
	return out
}

func sortLayers(l []MissionLayer) {
	for i := 1; i < len(l); i++ { // insertion sort: siblings are few and mostly in order
		for j := i; j > 0 && (l[j].Position < l[j-1].Position || l[j].Position == l[j-1].Position && l[j].UID < l[j-1].UID); j-- {
			l[j], l[j-1] = l[j-1], l[j]
		}
	}
}

// place puts layer uid under parent right after after ("" first) and
// renumbers the siblings.
func (t *layerTree) place(ctx context.Context, tx *sql.Tx, uid, parent, after string) error {
	if parent != "" {
		p, err := t.find("parentUid", parent)
		if err != nil {
			return err
		}
		if p.Type == LayerItem {
			return fmt.Errorf("%w: parentUid: layer %q is an ITEM and holds no layers", ErrInvalid, logx.Cut(parent, 64))
		}
		for a, n := parent, 0; a != "" && n <= len(t.byUID); a, n = t.byUID[a].ParentUID, n+1 {
			if a == uid {
				return fmt.Errorf("%w: parentUid: layer %q is under layer %q", ErrInvalid, logx.Cut(parent, 64), logx.Cut(uid, 64))
			}
		}
	}
	sibs := t.siblings(parent, uid)
	at := 0
	if after != "" {
		at = -1
		for i, s := range sibs {
			if s.UID == after {
				at = i + 1
			}
		}
		if at < 0 {
			return fmt.Errorf("%w: afterUid: no layer %q beside it", ErrNotFound, logx.Cut(after, 64))
		}
	}
	l := t.byUID[uid]
	l.ParentUID = parent
	order := append(append(append([]MissionLayer{}, sibs[:at]...), l), sibs[at:]...)
	for i, s := range order {
		if s.Position == int64(i) && s.UID != uid {
			continue
		}
		s.Position = int64(i)
		t.byUID[s.UID] = s
		if _, err := tx.ExecContext(ctx, `UPDATE mission_layers SET parent_uid = ?, position = ? WHERE mission_id = ? AND uid = ?`,
			nullable(s.ParentUID), s.Position, t.m.ID, s.UID); err != nil {
			return err
		}
	}
	return nil
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func checkLayerRef(field, v string) error {
	if v == "" {
		return nil
	}
	return checkText(field, v, 1, maxPackageField)
}

// MissionLayers returns the layers of a mission, ordered by parent and
// position.
func (s *Missions) MissionLayers(ctx context.Context, m Mission) ([]MissionLayer, error) {
	if err := s.check(ctx); err != nil {
		return nil, fmt.Errorf("store: mission layers: %w", err)
	}
	t, err := loadLayers(ctx, s.r, m)
	if err != nil {
		return nil, s.wrapErr("mission layers", err)
	}
	out := make([]MissionLayer, 0, len(t.byUID))
	for _, l := range t.byUID {
		out = append(out, l)
	}
	return out, nil
}

// layerTx opens mission name for a layer change by creator in a writer
// transaction and runs fn with its layers.
func (s *Missions) layerTx(ctx context.Context, op, name, creator string, fn func(tx *sql.Tx, t *layerTree) error) error {
	if err := s.check(ctx); err != nil {
		return fmt.Errorf("store: %s: %w", op, err)
	}
	return s.inTx(ctx, op, func(tx *sql.Tx) error {
		m, err := missionByName(ctx, tx, name)
		if err != nil {
			return err
		}
		if err := mayWrite(ctx, tx, m, creator); err != nil {
			return err
		}
		t, err := loadLayers(ctx, tx, m)
		if err != nil {
			return err
		}
		return fn(tx, t)
	})
}

// PutMissionLayer creates a layer; a layer uid the mission has already is
// moved under in.ParentUID after in.AfterUID instead (created false), as
// on the official server. Errors: ErrNotFound (the mission, the parent,
// the layer after), ErrInvalid, ErrForbidden, ErrOverBudget past
// MaxMissionLayers.
func (s *Missions) PutMissionLayer(ctx context.Context, name string, in LayerInput, creator string) (l MissionLayer, created bool, err error) {
	const op = "put mission layer"
	if in.UID == "" {
		in.UID = uuid.NewString()
	}
	for _, c := range []struct{ field, v string }{{"uid", in.UID}, {"parentUid", in.ParentUID}, {"afterUid", in.AfterUID}} {
		if err := checkLayerRef(c.field, c.v); err != nil {
			return l, false, fmt.Errorf("store: %s: %w", op, err)
		}
	}
	if err := checkText("name", in.Name, 1, maxMissionField); err != nil {
		return l, false, fmt.Errorf("store: %s: %w", op, err)
	}
	if !ValidLayerType(in.Type) {
		return l, false, fmt.Errorf("store: %s: %w: type must be GROUP, UID, CONTENTS, MAPLAYER or ITEM", op, ErrInvalid)
	}
	err = s.layerTx(ctx, op, name, creator, func(tx *sql.Tx, t *layerTree) error {
		if _, ok := t.byUID[in.UID]; !ok {
			if len(t.byUID) >= MaxMissionLayers {
				return fmt.Errorf("%w: mission %q may hold at most %d layers; delete some first", ErrOverBudget, logx.Cut(name, 64), MaxMissionLayers)
			}
			created = true
			if _, err := tx.ExecContext(ctx, `INSERT INTO mission_layers(mission_id, uid, name, type, parent_uid, position) VALUES (?,?,?,?,?,?)`,
				t.m.ID, in.UID, in.Name, in.Type, nil, -1); err != nil {
				return err
			}
			t.byUID[in.UID] = MissionLayer{UID: in.UID, Name: in.Name, Type: in.Type, Position: -1}
		}
		if err := t.place(ctx, tx, in.UID, in.ParentUID, in.AfterUID); err != nil {
			return err
		}
		l = t.byUID[in.UID]
		return nil
	})
	return l, created, err
}

// RenameMissionLayer renames layer uid of mission name.
func (s *Missions) RenameMissionLayer(ctx context.Context, name, uid, newName, creator string) (MissionLayer, error) {
	const op = "rename mission layer"
	var l MissionLayer
	if err := checkText("name", newName, 1, maxMissionField); err != nil {
		return l, fmt.Errorf("store: %s: %w", op, err)
	}
	err := s.layerTx(ctx, op, name, creator, func(tx *sql.Tx, t *layerTree) error {
		var err error
		if l, err = t.find("layerUid", uid); err != nil {
			return err
		}
		l.Name = newName
		_, err = tx.ExecContext(ctx, `UPDATE mission_layers SET name = ? WHERE mission_id = ? AND uid = ?`, newName, t.m.ID, uid)
		return err
	})
	return l, err
}

// MoveMissionLayers moves the layers uids, in their order, under parentUID
// ("" top level), the first after afterUID ("" first) and each next after
// the one before it: all of them or, on an error, none.
func (s *Missions) MoveMissionLayers(ctx context.Context, name string, uids []string, parentUID, afterUID, creator string) ([]MissionLayer, error) {
	const op = "move mission layers"
	if len(uids) == 0 || len(uids) > MaxMissionBatch {
		return nil, fmt.Errorf("store: %s: %w: layerUid: give 1 to %d layers", op, ErrInvalid, MaxMissionBatch)
	}
	for _, c := range []struct{ field, v string }{{"parentUid", parentUID}, {"afterUid", afterUID}} {
		if err := checkLayerRef(c.field, c.v); err != nil {
			return nil, fmt.Errorf("store: %s: %w", op, err)
		}
	}
	var out []MissionLayer
	err := s.layerTx(ctx, op, name, creator, func(tx *sql.Tx, t *layerTree) error {
		after := afterUID
		for _, uid := range uids {
			if _, err := t.find("layerUid", uid); err != nil {
				return err
			}
			if err := t.place(ctx, tx, uid, parentUID, after); err != nil {
				return err
			}
			after = uid
		}
		for _, uid := range uids {
			out = append(out, t.byUID[uid])
		}
		return nil
	})
	return out, err
}

// DeleteMissionLayers deletes the layers uids with every layer under them,
// and removes from the mission the uids and files their ITEM layers hold
// (a REMOVE_CONTENT change each). It returns the layers named and the
// contents removed; an unknown layer is ErrNotFound and deletes nothing.
func (s *Missions) DeleteMissionLayers(ctx context.Context, name string, uids []string, creator string) ([]MissionLayer, []ContentChange, error) {
	const op = "delete mission layers"
	if len(uids) == 0 || len(uids) > MaxMissionBatch {
		return nil, nil, fmt.Errorf("store: %s: %w: uid: give 1 to %d layers", op, ErrInvalid, MaxMissionBatch)
	}
	var (
		named   []MissionLayer
		removed []ContentChange
	)
	now := time.Now()
	err := s.layerTx(ctx, op, name, creator, func(tx *sql.Tx, t *layerTree) error {
		gone := map[string]bool{}
		var walk func(uid string) error
		walk = func(uid string) error {
			if gone[uid] {
				return nil
			}
			gone[uid] = true
			l := t.byUID[uid]
			if l.Type == LayerItem {
				if err := removeItemContent(ctx, tx, t, l, creator, now, &removed); err != nil {
					return err
				}
			}
			for _, c := range t.siblings(uid, "") {
				if err := walk(c.UID); err != nil {
					return err
				}
			}
			_, err := tx.ExecContext(ctx, `DELETE FROM mission_layers WHERE mission_id = ? AND uid = ?`, t.m.ID, uid)
			return err
		}
		for _, uid := range uids {
			l, err := t.find("uid", uid)
			if err != nil {
				return err
			}
			named = append(named, l)
			if err := walk(uid); err != nil {
				return err
			}
		}
		for uid := range gone {
			delete(t.byUID, uid)
		}
		for _, p := range named {
			if !gone[p.ParentUID] {
				if err := t.renumber(ctx, tx, p.ParentUID); err != nil {
					return err
				}
			}
		}
		return s.budgets.Missions.pruneChanges(ctx, tx, t.m.ID)
	})
	return named, removed, err
}

// removeItemContent removes the content an ITEM layer stands for from the
// mission: a uid under a UID layer, a file under a CONTENTS layer; one the
// mission no longer holds is passed over.
func removeItemContent(ctx context.Context, tx *sql.Tx, t *layerTree, l MissionLayer, creator string, now time.Time, removed *[]ContentChange) error {
	var hash, uid string
	switch t.byUID[l.ParentUID].Type {
	case LayerUID:
		uid = l.UID
	case LayerContents:
		hash = l.UID
	default:
		return nil
	}
	c, err := removeContentTx(ctx, tx, t.m, hash, uid, creator, now)
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	if err == nil {
		*removed = append(*removed, c)
	}
	return err
}

// renumber closes the gaps in the positions of the layers under parent.
func (t *layerTree) renumber(ctx context.Context, tx *sql.Tx, parent string) error {
	for i, s := range t.siblings(parent, "") {
		if s.Position == int64(i) {
			continue
		}
		s.Position = int64(i)
		t.byUID[s.UID] = s
		if _, err := tx.ExecContext(ctx, `UPDATE mission_layers SET position = ? WHERE mission_id = ? AND uid = ?`, s.Position, t.m.ID, s.UID); err != nil {
			return err
		}
	}
	return nil
}

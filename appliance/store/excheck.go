package store

// ExCheck templates and checklists (api.md §4.3): the XML documents as
// clients sent them (appliance/excheck reads and edits them; the store
// keeps the bytes). A checklist has a mission of the same name (tool
// ExCheck) that clients subscribe to for its changes; both are created in
// one transaction. Edits are read-modify-write inside one transaction, so
// two clients completing tasks at once never lose either change.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// ExCheckDoc is a stored template or checklist.
type ExCheckDoc struct {
	UID         string
	Name        string
	TemplateUID string // checklists only
	CreatorUID  string
	Created     time.Time
	Updated     time.Time
	XML         []byte
}

// MaxExCheckDocuments bounds the templates and the checklists kept (each).
const MaxExCheckDocuments = 10000

func excheckTable(checklist bool) string {
	if checklist {
		return "excheck_checklists"
	}
	return "excheck_templates"
}

// PutTemplate stores a template, replacing the one with the same uid.
func (s *Store) PutTemplate(ctx context.Context, d ExCheckDoc) error {
	const op = "put excheck template"
	if err := s.check(ctx); err != nil {
		return fmt.Errorf("store: %s: %w", op, err)
	}
	now := unixMilli(time.Now())
	return s.inTx(ctx, op, func(tx *sql.Tx) error {
		if err := roomFor(ctx, tx, "excheck_templates", d.UID); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO excheck_templates(uid, name, creator_uid, created_at, updated_at, xml)
			VALUES (?,?,?,?,?,?) ON CONFLICT(uid) DO UPDATE SET name = excluded.name, creator_uid = excluded.creator_uid,
			updated_at = excluded.updated_at, xml = excluded.xml`, d.UID, d.Name, d.CreatorUID, now, now, d.XML)
		return err
	})
}

func roomFor(ctx context.Context, tx *sql.Tx, table, uid string) error {
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM `+table+` WHERE uid <> ?`, uid).Scan(&n); err != nil {
		return err
	}
	if n >= MaxExCheckDocuments {
		return fmt.Errorf("%w: %d documents are stored, the most this server keeps", ErrConflict, n)
	}
	return nil
}

// Template returns a stored template.
func (s *Store) Template(ctx context.Context, uid string) (ExCheckDoc, error) {
	return s.excheckDoc(ctx, false, uid)
}

// Checklist returns a stored checklist.
func (s *Store) Checklist(ctx context.Context, uid string) (ExCheckDoc, error) {
	return s.excheckDoc(ctx, true, uid)
}

func (s *Store) excheckDoc(ctx context.Context, checklist bool, uid string) (ExCheckDoc, error) {
	op := "excheck " + excheckTable(checklist)
	if err := s.check(ctx); err != nil {
		return ExCheckDoc{}, fmt.Errorf("store: %s: %w", op, err)
	}
	d, err := scanExCheck(s.r.QueryRowContext(ctx, excheckSelect(checklist)+` WHERE uid = ?`, uid))
	if errors.Is(err, sql.ErrNoRows) {
		what := "template"
		if checklist {
			what = "checklist"
		}
		return ExCheckDoc{}, fmt.Errorf("store: %s: %w: no %s %q", op, ErrNotFound, what, clipName(uid))
	}
	if err != nil {
		return ExCheckDoc{}, s.wrapErr(op, err)
	}
	return d, nil
}

func excheckSelect(checklist bool) string {
	tpl := "''"
	if checklist {
		tpl = "template_uid"
	}
	return `SELECT uid, name, ` + tpl + `, creator_uid, created_at, updated_at, xml FROM ` + excheckTable(checklist)
}

func scanExCheck(sc interface{ Scan(...any) error }) (ExCheckDoc, error) {
	var (
		d                ExCheckDoc
		created, updated int64
	)
	if err := sc.Scan(&d.UID, &d.Name, &d.TemplateUID, &d.CreatorUID, &created, &updated, &d.XML); err != nil {
		return ExCheckDoc{}, err
	}
	d.Created, d.Updated = fromMilli(created), fromMilli(updated)
	return d, nil
}

// UpdateTemplate replaces a template's XML with what edit returns for the
// stored XML, in one transaction (an error from edit changes nothing).
func (s *Store) UpdateTemplate(ctx context.Context, uid string, edit func([]byte) ([]byte, error)) error {
	return s.updateExCheck(ctx, false, uid, edit)
}

// UpdateChecklist is UpdateTemplate for a checklist.
func (s *Store) UpdateChecklist(ctx context.Context, uid string, edit func([]byte) ([]byte, error)) error {
	return s.updateExCheck(ctx, true, uid, edit)
}

func (s *Store) updateExCheck(ctx context.Context, checklist bool, uid string, edit func([]byte) ([]byte, error)) error {
	op := "update " + excheckTable(checklist)
	if err := s.check(ctx); err != nil {
		return fmt.Errorf("store: %s: %w", op, err)
	}
	return s.inTx(ctx, op, func(tx *sql.Tx) error {
		var xml []byte
		err := tx.QueryRowContext(ctx, `SELECT xml FROM `+excheckTable(checklist)+` WHERE uid = ?`, uid).Scan(&xml)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("%w: no such document %q", ErrNotFound, clipName(uid))
		}
		if err != nil {
			return err
		}
		out, err := edit(xml)
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE `+excheckTable(checklist)+` SET xml = ?, updated_at = ? WHERE uid = ?`,
			out, unixMilli(time.Now()), uid)
		return err
	})
}

// CreateChecklist stores a checklist started from a template and creates
// its mission (named after the checklist's uid, tool ExCheck, the creator
// its owner), in one transaction. ErrConflict when the uid is taken.
func (s *Store) CreateChecklist(ctx context.Context, d ExCheckDoc, description string) (Mission, error) {
	const op = "create checklist"
	if err := s.check(ctx); err != nil {
		return Mission{}, fmt.Errorf("store: %s: %w", op, err)
	}
	var m Mission
	err := s.inTx(ctx, op, func(tx *sql.Tx) error {
		if err := roomFor(ctx, tx, "excheck_checklists", d.UID); err != nil {
			return err
		}
		now := time.Now()
		_, err := tx.ExecContext(ctx, `INSERT INTO excheck_checklists(uid, name, template_uid, creator_uid, created_at, updated_at, xml)
			VALUES (?,?,?,?,?,?,?)`, d.UID, d.Name, d.TemplateUID, d.CreatorUID, unixMilli(now), unixMilli(now), d.XML)
		if isUniqueViolation(err) {
			return fmt.Errorf("%w: checklist %q exists", ErrConflict, clipName(d.UID))
		}
		if err != nil {
			return err
		}
		tool, desc := ToolExCheck, description
		m, _, err = createMissionTx(ctx, tx, d.UID, MissionInput{CreatorUID: d.CreatorUID, Tool: &tool, Description: &desc}, nil, now)
		return err
	})
	if err != nil {
		return Mission{}, err
	}
	s.refreshSubscribers(ctx, d.UID)
	return m, nil
}

// Checklists lists every checklist, oldest first.
func (s *Store) Checklists(ctx context.Context) ([]ExCheckDoc, error) {
	if err := s.check(ctx); err != nil {
		return nil, fmt.Errorf("store: checklists: %w", err)
	}
	rows, err := s.r.QueryContext(ctx, excheckSelect(true)+` ORDER BY created_at, uid`)
	if err != nil {
		return nil, s.wrapErr("checklists", err)
	}
	defer rows.Close()
	out := []ExCheckDoc{}
	for rows.Next() {
		d, err := scanExCheck(rows)
		if err != nil {
			return nil, s.wrapErr("checklists", err)
		}
		out = append(out, d)
	}
	return out, s.wrapErr("checklists", rows.Err())
}

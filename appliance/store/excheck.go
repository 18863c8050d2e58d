package store

// ExCheck templates and checklists (api.md §4.3): the XML documents as
// clients sent them (appliance/excheck reads and edits them; the store
// keeps the bytes). A checklist has a mission of the same name (tool
// ExCheck) that clients subscribe to for its changes; both are created in
// one transaction. Edits are read-modify-write inside one transaction, so
// two clients completing tasks at once never lose either change.

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"outpost/appliance/cot"
	"outpost/appliance/logx"
)

// ExCheckDoc is a stored template or checklist.
type ExCheckDoc struct {
	UID         string
	Name        string
	Description string // templates only
	Hash        string // templates only: SHA-256 of XML, set by the store
	TemplateUID string // checklists only
	CreatorUID  string
	Created     time.Time
	Updated     time.Time
	XML         []byte
	Groups      uint64 // the groups it is shared with (a mask; access.md "Groups")
}

// DocKind says which of the two ExCheck documents a call is about.
type DocKind uint8

// The ExCheck documents.
const (
	TemplateDoc DocKind = iota
	ChecklistDoc
)

func (k DocKind) String() string {
	if k == ChecklistDoc {
		return "checklist"
	}
	return "template"
}

// table is where documents of the kind are kept.
func (k DocKind) table() string {
	if k == ChecklistDoc {
		return "excheck_checklists"
	}
	return "excheck_templates"
}

// TemplatesMission is the mission whose contents are the templates: ATAK
// lists and subscribes to it (the official server's name).
const TemplatesMission = "exchecktemplates"

// PutTemplate stores a template, replacing the one with the same uid, and
// records it as content of TemplatesMission (made by the migration, and
// again here if it was removed), in one transaction. It returns the template as that mission
// shows it.
func (s *Checklists) PutTemplate(ctx context.Context, d ExCheckDoc) (Mission, ContentResource, error) {
	const op = "put excheck template"
	if err := s.check(ctx); err != nil {
		return Mission{}, ContentResource{}, fmt.Errorf("store: %s: %w", op, err)
	}
	now := time.Now()
	d.Hash = hexSHA256(d.XML)
	var (
		m  Mission
		cr ContentResource
	)
	created := false
	err := s.inTx(ctx, op, func(tx *sql.Tx) error {
		if err := s.roomFor(ctx, tx, TemplateDoc, d.UID, len(d.XML)); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO excheck_templates(uid, name, description, creator_uid, created_at,
			updated_at, hash, xml, groups) VALUES (?,?,?,?,?,?,?,?,?) ON CONFLICT(uid) DO UPDATE SET name = excluded.name,
			description = excluded.description, creator_uid = excluded.creator_uid, updated_at = excluded.updated_at,
			hash = excluded.hash, xml = excluded.xml, groups = excluded.groups`, d.UID, d.Name, d.Description, d.CreatorUID, unixMilli(now),
			unixMilli(now), d.Hash, d.XML, maskToDB(d.Groups)); err != nil {
			return err
		}
		var err error
		if m, err = missionByName(ctx, tx, TemplatesMission); errors.Is(err, ErrNotFound) {
			tool, creator := ToolExCheck, ToolExCheck
			created = true
			m, _, err = createMissionTx(ctx, tx, TemplatesMission, MissionInput{CreatorUID: creator, Tool: &tool}, nil, now)
		}
		if err != nil {
			return err
		}
		t, err := scanExCheck(tx.QueryRowContext(ctx, excheckSelect(TemplateDoc)+` WHERE uid = ?`, d.UID))
		if err != nil {
			return err
		}
		cr = TemplateContent(t)
		if err := recordChange(ctx, tx, m.ID, ChangeAddContent, d.CreatorUID, now, changeBody{ContentResource: &cr}); err != nil {
			return err
		}
		return s.budgets.Missions.pruneChanges(ctx, tx, m.ID)
	})
	if err != nil {
		return Mission{}, ContentResource{}, err
	}
	if created {
		s.refreshSubscribers(ctx, TemplatesMission)
	}
	return m, cr, nil
}

// TemplateContent is a template as a content of TemplatesMission: its
// XML downloadable by hash, keywords its name, description and creator.
func TemplateContent(t ExCheckDoc) ContentResource {
	kw := []string{t.Name}
	for _, k := range []string{t.Description, t.CreatorUID} {
		if k != "" {
			kw = append(kw, k)
		}
	}
	return ContentResource{UID: t.UID, Name: t.Name, Filename: logx.FileName(t.UID+".xml", "template.xml"), Keywords: kw, MIMEType: "application/xml",
		Hash: t.Hash, Size: int64(len(t.XML)), SubmissionTime: cot.FormatTime(t.Updated), Submitter: t.CreatorUID,
		CreatorUID: t.CreatorUID, Tool: ToolExCheck, Expiration: -1}
}

// EachTemplate calls fn with every template, oldest first, as they are
// read.
func (s *Checklists) EachTemplate(ctx context.Context, fn func(ExCheckDoc) error) error {
	return s.eachExCheck(ctx, TemplateDoc, fn)
}

// TemplateByHash returns the template whose XML has this SHA-256.
func (s *Checklists) TemplateByHash(ctx context.Context, hash string) (ExCheckDoc, error) {
	if err := s.check(ctx); err != nil {
		return ExCheckDoc{}, fmt.Errorf("store: template by hash: %w", err)
	}
	d, err := scanExCheck(s.r.QueryRowContext(ctx, excheckSelect(TemplateDoc)+` WHERE hash = ? ORDER BY updated_at DESC LIMIT 1`, hash))
	if errors.Is(err, sql.ErrNoRows) {
		return ExCheckDoc{}, fmt.Errorf("store: template by hash: %w: no template with hash %q", ErrNotFound, logx.Cut(hash, 64))
	}
	if err != nil {
		return ExCheckDoc{}, s.wrapErr("template by hash", err)
	}
	return d, nil
}

// roomFor refuses (ErrConflict) to store size bytes of XML as the
// document uid of kind when that would take the documents of the kind past
// Budgets.ExCheckDocuments or every document's XML past
// Budgets.ExCheckBytes; the document it replaces does not count.
func (s *db) roomFor(ctx context.Context, tx *sql.Tx, kind DocKind, uid string, size int) error {
	n, err := countWhere(ctx, tx, kind.table(), `uid <> ?`, uid)
	if err != nil {
		return err
	}
	if n >= int64(s.budgets.ExCheckDocuments) {
		return overBudget(kind.String()+"s", int64(s.budgets.ExCheckDocuments), "maxExCheckDocuments", "no more can be stored")
	}
	return s.roomForBytes(ctx, tx, kind, uid, size)
}

// roomForBytes is roomFor's second half: the bytes of every document's XML
// (an edit that makes a document larger checks only this).
func (s *db) roomForBytes(ctx context.Context, tx *sql.Tx, kind DocKind, uid string, size int) error {
	var bytes int64
	err := tx.QueryRowContext(ctx, `SELECT (SELECT COALESCE(SUM(length(xml)), 0) FROM excheck_templates WHERE NOT (?1 = 0 AND uid = ?2))
		+ (SELECT COALESCE(SUM(length(xml)), 0) FROM excheck_checklists WHERE NOT (?1 = 1 AND uid = ?2))`, int(kind), uid).Scan(&bytes)
	if err != nil {
		return err
	}
	if bytes+int64(size) > s.budgets.ExCheckBytes {
		return fmt.Errorf("%w: ExCheck templates and checklists hold %d bytes; %d more would pass the %d bytes kept (maxExCheckBytes)",
			ErrConflict, bytes, size, s.budgets.ExCheckBytes)
	}
	return nil
}

// Template returns a stored template.
func (s *Checklists) Template(ctx context.Context, uid string) (ExCheckDoc, error) {
	return s.excheckDoc(ctx, TemplateDoc, uid)
}

// Checklist returns a stored checklist.
func (s *Checklists) Checklist(ctx context.Context, uid string) (ExCheckDoc, error) {
	return s.excheckDoc(ctx, ChecklistDoc, uid)
}

func (s *db) excheckDoc(ctx context.Context, kind DocKind, uid string) (ExCheckDoc, error) {
	op := "excheck " + kind.table()
	if err := s.check(ctx); err != nil {
		return ExCheckDoc{}, fmt.Errorf("store: %s: %w", op, err)
	}
	d, err := scanExCheck(s.r.QueryRowContext(ctx, excheckSelect(kind)+` WHERE uid = ?`, uid))
	if errors.Is(err, sql.ErrNoRows) {
		return ExCheckDoc{}, fmt.Errorf("store: %s: %w: no %s %q", op, ErrNotFound, kind, logx.Cut(uid, 64))
	}
	if err != nil {
		return ExCheckDoc{}, s.wrapErr(op, err)
	}
	return d, nil
}

func excheckSelect(kind DocKind) string {
	if kind == ChecklistDoc {
		return `SELECT uid, name, '', '', template_uid, creator_uid, created_at, updated_at, xml, groups FROM excheck_checklists`
	}
	return `SELECT uid, name, description, hash, '', creator_uid, created_at, updated_at, xml, groups FROM excheck_templates`
}

func scanExCheck(sc interface{ Scan(...any) error }) (ExCheckDoc, error) {
	var (
		d                        ExCheckDoc
		created, updated, groups int64
	)
	if err := sc.Scan(&d.UID, &d.Name, &d.Description, &d.Hash, &d.TemplateUID, &d.CreatorUID, &created, &updated, &d.XML, &groups); err != nil {
		return ExCheckDoc{}, err
	}
	d.Created, d.Updated, d.Groups = fromMilli(created), fromMilli(updated), maskFromDB(groups)
	return d, nil
}

// UpdateTemplate replaces a template's XML with what edit returns for the
// stored XML, in one transaction (an error from edit changes nothing).
func (s *Checklists) UpdateTemplate(ctx context.Context, uid string, edit func([]byte) ([]byte, error)) error {
	return s.updateExCheck(ctx, TemplateDoc, uid, func(_ *sql.Tx, b []byte) ([]byte, error) { return edit(b) })
}

// UpdateChecklist is UpdateTemplate for a checklist, changed by actor: a
// read-only member of the checklist's mission may not (ErrForbidden).
func (s *Checklists) UpdateChecklist(ctx context.Context, uid, actor string, edit func([]byte) ([]byte, error)) error {
	return s.updateExCheck(ctx, ChecklistDoc, uid, func(tx *sql.Tx, b []byte) ([]byte, error) {
		m, err := missionByName(ctx, tx, uid)
		if err == nil {
			err = mayWrite(ctx, tx, m, actor)
		} else if errors.Is(err, ErrNotFound) {
			err = nil // a checklist whose mission was removed
		}
		if err != nil {
			return nil, err
		}
		return edit(b)
	})
}

func (s *db) updateExCheck(ctx context.Context, kind DocKind, uid string, edit func(*sql.Tx, []byte) ([]byte, error)) error {
	op := "update " + kind.table()
	if err := s.check(ctx); err != nil {
		return fmt.Errorf("store: %s: %w", op, err)
	}
	return s.inTx(ctx, op, func(tx *sql.Tx) error {
		var xml []byte
		err := tx.QueryRowContext(ctx, `SELECT xml FROM `+kind.table()+` WHERE uid = ?`, uid).Scan(&xml)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("%w: no such document %q", ErrNotFound, logx.Cut(uid, 64))
		}
		if err != nil {
			return err
		}
		out, err := edit(tx, xml)
		if err != nil {
			return err
		}
		if len(out) > len(xml) {
			if err := s.roomForBytes(ctx, tx, kind, uid, len(out)); err != nil {
				return err
			}
		}
		if kind == ChecklistDoc {
			_, err = tx.ExecContext(ctx, `UPDATE excheck_checklists SET xml = ?, updated_at = ? WHERE uid = ?`,
				out, unixMilli(time.Now()), uid)
		} else {
			_, err = tx.ExecContext(ctx, `UPDATE excheck_templates SET xml = ?, hash = ?, updated_at = ? WHERE uid = ?`,
				out, hexSHA256(out), unixMilli(time.Now()), uid)
		}
		return err
	})
}

// CreateChecklist stores a checklist started from a template and creates
// its mission (named after the checklist's uid, tool ExCheck, the creator
// its owner, in the groups named), in one transaction. ErrConflict when the
// uid is taken.
func (s *Checklists) CreateChecklist(ctx context.Context, d ExCheckDoc, description string, groups []string) (Mission, error) {
	const op = "create checklist"
	if err := s.check(ctx); err != nil {
		return Mission{}, fmt.Errorf("store: %s: %w", op, err)
	}
	var m Mission
	err := s.inTx(ctx, op, func(tx *sql.Tx) error {
		if err := s.roomFor(ctx, tx, ChecklistDoc, d.UID, len(d.XML)); err != nil {
			return err
		}
		now := time.Now()
		_, err := tx.ExecContext(ctx, `INSERT INTO excheck_checklists(uid, name, template_uid, creator_uid, created_at, updated_at, xml, groups)
			VALUES (?,?,?,?,?,?,?,?)`, d.UID, d.Name, d.TemplateUID, d.CreatorUID, unixMilli(now), unixMilli(now), d.XML, maskToDB(d.Groups))
		if isUniqueViolation(err) {
			return fmt.Errorf("%w: checklist %q exists", ErrConflict, logx.Cut(d.UID, 64))
		}
		if err != nil {
			return err
		}
		tool, desc := ToolExCheck, description
		m, _, err = createMissionTx(ctx, tx, d.UID, MissionInput{CreatorUID: d.CreatorUID, Tool: &tool, Description: &desc, Groups: &groups}, nil, now)
		return err
	})
	if err != nil {
		return Mission{}, err
	}
	s.refreshSubscribers(ctx, d.UID)
	return m, nil
}

// EachChecklist calls fn with every checklist, oldest first, as they are
// read.
func (s *Checklists) EachChecklist(ctx context.Context, fn func(ExCheckDoc) error) error {
	return s.eachExCheck(ctx, ChecklistDoc, fn)
}

func (s *db) eachExCheck(ctx context.Context, kind DocKind, fn func(ExCheckDoc) error) error {
	op := "list " + kind.String() + "s"
	// A document holds up to 1 MiB of XML: a few at a time.
	return eachRow(s, ctx, op, excheckSelect(kind)+` ORDER BY created_at, uid`, nil, 8, scanExCheck, fn)
}

func hexSHA256(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

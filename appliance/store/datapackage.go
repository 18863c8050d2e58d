package store

// Data packages (api.md §2.8 metadata, api.md §2.9 enterprise sync record).
//
// Content is streamed into a chunked blob and the metadata row commits in
// the same transaction as the last chunk (architecture.md "Storage"), so a
// package is either fully there or not at all.
//
// One package per content hash: uploading content whose SHA-256 is already
// stored keeps ONE blob and ONE row. The existing row keeps its PrimaryKey,
// UID and blob; its other metadata (name, submitter, creator, keywords, MIME
// type, privacy, submission time) is replaced by the new submission's, and
// the freshly written duplicate blob is discarded. Every hash-keyed
// operation of the API (download, metadata/{hash}/tool, delete) therefore
// names exactly one package.
//
// The store keeps keywords as given; the spec's automatic keywords
// ("missionpackage", file name, submitter, api.md §2.8/2.9) follow the rules
// in keywords.go, which both APIs use. An empty MIME type is detected from
// the content (mime.go). A file name is kept as a base name (logx.FileName),
// whoever gives it and whenever it was stored.

import (
	"context"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/google/uuid"

	"outpost/appliance/logx"
)

// Tool values (api.md §2.9): "private" exactly when Privacy is 1.
const (
	ToolPublic  = "public"
	ToolPrivate = "private"
)

// Input limits for data packages.
const (
	maxPackageNameLen = logx.MaxFileName // bytes
	maxPackageField   = 255              // bytes: uid, submitter, creator, MIME type
	maxKeywords       = 128
	maxKeywordLen     = 256 // bytes
)

// DataPackageInput is what an upload supplies besides the content.
type DataPackageInput struct {
	UID            string // empty: a new random UUID
	Name           string // file name, required
	SubmissionUser string
	CreatorUID     string
	Keywords       []string
	MIMEType       string    // empty: detected from the content (DetectMIME)
	Private        bool      // api.md §2.8 Privacy 1 / api.md §2.9 Tool "private"
	ExpectedHash   string    // optional: the SHA-256 (hex) the content must have
	SubmittedAt    time.Time // zero: now
	// Groups are the groups the package is shared with (a mask;
	// access.md "Groups"); Owner the user who may change or remove it
	// besides administrators ("" for an anonymous upload).
	Groups uint64
	Owner  string

	// unbudgeted: the server's own package (a user's connection package),
	// which the data package budget never refuses.
	unbudgeted bool
}

// DataPackage is a stored package's metadata.
type DataPackage struct {
	PrimaryKey     int64 // api.md §2.8/2.9 PrimaryKey
	UID            string
	Name           string
	Hash           string // SHA-256, lower-case hex
	BlobID         int64  // content: OpenBlob(ctx, BlobID)
	SubmissionUser string
	CreatorUID     string
	Keywords       []string
	MIMEType       string
	Size           int64
	Privacy        int    // 0 public, 1 private
	Tool           string // ToolPublic or ToolPrivate
	SubmittedAt    time.Time
	Groups         uint64 // the groups it is shared with (a mask)
	Owner          string // the user who uploaded it ("" when anonymous)
}

// PutDataPackage stores content read from r (to EOF) with in's metadata.
// See the file comment for what happens when the content already exists.
// Errors: ErrInvalid (input limits), ErrTooLarge, ErrHashMismatch,
// ErrConflict (UID taken by another package, or Budgets.DataPackages
// packages are kept: checked before the content is read, and again when a
// new row commits); nothing is stored then.
func (s *Files) PutDataPackage(ctx context.Context, in DataPackageInput, r io.Reader) (DataPackage, error) {
	return s.putDataPackage(ctx, in, r, nil)
}

// putDataPackage is PutDataPackage, calling then (when not nil) in the
// transaction that commits the package, with the package as stored: what
// then writes commits with it, and an error of then stores nothing.
func (s *Files) putDataPackage(ctx context.Context, in DataPackageInput, r io.Reader, then func(tx *sql.Tx, p DataPackage) error) (DataPackage, error) {
	if err := validatePackageInput(&in); err != nil {
		return DataPackage{}, fmt.Errorf("store: put data package: %w", err)
	}
	if !in.unbudgeted {
		// Before a byte is read: a full table costs no upload. (So even
		// content already kept, which would only replace its row, is
		// refused then: its hash is known only once it is read.)
		var n int64
		if err := s.r.QueryRowContext(ctx, `SELECT COUNT(*) FROM data_packages`).Scan(&n); err != nil {
			return DataPackage{}, s.wrapErr("put data package", err)
		}
		if err := s.packageRoom(n); err != nil {
			return DataPackage{}, fmt.Errorf("store: put data package: %w", err)
		}
	}
	kw, err := json.Marshal(in.Keywords)
	if err != nil {
		return DataPackage{}, fmt.Errorf("store: put data package: keywords: %w", err)
	}
	if in.MIMEType == "" {
		// Detected from the first bytes while streaming (mime.go).
		if in.MIMEType, r, err = sniffMIME(r); err != nil {
			return DataPackage{}, fmt.Errorf("store: put data package: read content: %w", err)
		}
	}
	w, err := s.CreateBlob(ctx)
	if err != nil {
		return DataPackage{}, fmt.Errorf("store: put data package: %w", err)
	}
	defer w.Abort()
	if _, err := w.ReadFrom(r); err != nil {
		return DataPackage{}, fmt.Errorf("store: put data package: %w", err)
	}
	p := DataPackage{
		UID:            in.UID,
		Name:           in.Name,
		SubmissionUser: in.SubmissionUser,
		CreatorUID:     in.CreatorUID,
		Keywords:       in.Keywords,
		MIMEType:       in.MIMEType,
		Tool:           ToolPublic,
		SubmittedAt:    in.SubmittedAt.UTC().Truncate(time.Millisecond),
		Groups:         in.Groups,
		Owner:          in.Owner,
	}
	if in.Private {
		p.Privacy, p.Tool = 1, ToolPrivate
	}
	duplicate := false
	info, err := w.commitWith(ctx, func(tx *sql.Tx, info BlobInfo) error {
		if in.ExpectedHash != "" && in.ExpectedHash != info.SHA256 {
			return fmt.Errorf("%w: announced %s, content has %s", ErrHashMismatch, in.ExpectedHash, info.SHA256)
		}
		p.Hash, p.Size, p.BlobID = info.SHA256, info.Size, info.ID
		var groups int64
		err := tx.QueryRowContext(ctx, `SELECT id, uid, blob_id, groups, owner FROM data_packages WHERE hash = ?`, info.SHA256).
			Scan(&p.PrimaryKey, &p.UID, &p.BlobID, &groups, &p.Owner)
		switch {
		case err == nil:
			// The same content again: whoever uploads it shares it with
			// their groups too; the first owner keeps it.
			duplicate = true
			p.Groups |= maskFromDB(groups)
			if _, err := tx.ExecContext(ctx, `UPDATE data_packages SET name = ?, submission_user = ?, creator_uid = ?,
				keywords = ?, mime_type = ?, privacy = ?, tool = ?, submitted_at = ?, groups = ? WHERE id = ?`,
				p.Name, p.SubmissionUser, p.CreatorUID, string(kw), p.MIMEType, p.Privacy, p.Tool,
				unixMilli(p.SubmittedAt), maskToDB(p.Groups), p.PrimaryKey); err != nil {
				return err
			}
			// Discard the new copy: invisible now, chunks removed after commit.
			if _, err := tx.ExecContext(ctx, `UPDATE blobs SET state = ? WHERE id = ?`, blobDeleting, info.ID); err != nil {
				return err
			}
			return thenIn(tx, p, then)
		case !errors.Is(err, sql.ErrNoRows):
			return err
		}
		if !in.unbudgeted {
			n, err := countWhere(ctx, tx, "data_packages", "")
			if err != nil {
				return err
			}
			if err := s.packageRoom(n); err != nil {
				return err
			}
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO data_packages(uid, name, hash, blob_id, submission_user,
			creator_uid, keywords, mime_type, size, privacy, tool, submitted_at, groups, owner) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
			p.UID, p.Name, p.Hash, p.BlobID, p.SubmissionUser, p.CreatorUID, string(kw), p.MIMEType, p.Size,
			p.Privacy, p.Tool, unixMilli(p.SubmittedAt), maskToDB(p.Groups), p.Owner)
		if isUniqueViolation(err) {
			return fmt.Errorf("%w: a data package with uid %q exists", ErrConflict, p.UID)
		}
		if err != nil {
			return err
		}
		if p.PrimaryKey, err = res.LastInsertId(); err != nil {
			return err
		}
		return thenIn(tx, p, then)
	})
	if err != nil {
		if isSentinel(err) {
			return DataPackage{}, fmt.Errorf("store: put data package: %w", err)
		}
		return DataPackage{}, s.wrapErr("put data package", err)
	}
	if duplicate {
		if err := s.purgeBlob(context.WithoutCancel(ctx), info.ID); err != nil {
			s.log.Warn("could not remove a duplicate upload's blob; it will be removed at next start", "blob", info.ID, "err", err)
		}
	}
	return p, nil
}

// thenIn calls then, when there is one, with p in tx.
func thenIn(tx *sql.Tx, p DataPackage, then func(tx *sql.Tx, p DataPackage) error) error {
	if then == nil {
		return nil
	}
	return then(tx, p)
}

// packageRoom refuses a new package when n are kept and that is the
// budget.
func (s *db) packageRoom(n int64) error {
	if limit := s.budgets.DataPackages; n >= int64(limit) {
		return overBudget("data packages", int64(limit), "maxDataPackages", "delete some first")
	}
	return nil
}

func validatePackageInput(in *DataPackageInput) error {
	if in.UID == "" {
		in.UID = uuid.NewString()
	}
	if in.SubmittedAt.IsZero() {
		in.SubmittedAt = time.Now()
	}
	if in.Keywords == nil {
		in.Keywords = []string{}
	}
	if err := checkText("file name", in.Name, 1, maxPackageNameLen); err != nil {
		return err
	}
	in.Name = logx.FileName(in.Name, "") // whatever the caller did
	for _, f := range []struct{ name, v string }{
		{"uid", in.UID}, {"submission user", in.SubmissionUser}, {"creator uid", in.CreatorUID}, {"MIME type", in.MIMEType},
	} {
		if err := checkText(f.name, f.v, 0, maxPackageField); err != nil {
			return err
		}
	}
	if len(in.Keywords) > maxKeywords {
		return fmt.Errorf("%w: %d keywords, at most %d", ErrInvalid, len(in.Keywords), maxKeywords)
	}
	for _, k := range in.Keywords {
		if err := checkText("keyword", k, 1, maxKeywordLen); err != nil {
			return err
		}
	}
	if in.ExpectedHash != "" {
		in.ExpectedHash = strings.ToLower(in.ExpectedHash)
		if b, err := hex.DecodeString(in.ExpectedHash); err != nil || len(b) != 32 {
			return fmt.Errorf("%w: hash %q is not a SHA-256 in hex", ErrInvalid, in.ExpectedHash)
		}
	}
	return nil
}

const packageColumns = `id, uid, name, hash, blob_id, submission_user, creator_uid, keywords, mime_type, size, privacy, tool, submitted_at, groups, owner`

// scanPackage reads packageColumns, then any extra columns into extra.
func scanPackage(sc interface{ Scan(...any) error }, extra ...any) (DataPackage, error) {
	var (
		p         DataPackage
		kw        string
		submitted int64
		groups    int64
	)
	dest := append([]any{&p.PrimaryKey, &p.UID, &p.Name, &p.Hash, &p.BlobID, &p.SubmissionUser, &p.CreatorUID,
		&kw, &p.MIMEType, &p.Size, &p.Privacy, &p.Tool, &submitted, &groups, &p.Owner}, extra...)
	if err := sc.Scan(dest...); err != nil {
		return DataPackage{}, err
	}
	p.Groups = maskFromDB(groups)
	// Rows stored before names were reduced may hold a path; none is
	// ever listed or served (architecture.md "File names").
	p.Name = logx.FileName(p.Name, "")
	if err := json.Unmarshal([]byte(kw), &p.Keywords); err != nil {
		return DataPackage{}, fmt.Errorf("data package %d: keywords: %w", p.PrimaryKey, err)
	}
	p.SubmittedAt = fromMilli(submitted)
	return p, nil
}

func (s *db) packageWhere(ctx context.Context, op, where string, arg any) (DataPackage, error) {
	if err := s.check(ctx); err != nil {
		return DataPackage{}, fmt.Errorf("store: %s: %w", op, err)
	}
	p, err := scanPackage(s.r.QueryRowContext(ctx, `SELECT `+packageColumns+` FROM data_packages WHERE `+where, arg))
	if errors.Is(err, sql.ErrNoRows) {
		return DataPackage{}, fmt.Errorf("store: %s: %w", op, ErrNotFound)
	}
	if err != nil {
		return DataPackage{}, s.wrapErr(op, err)
	}
	return p, nil
}

// DataPackageByHash returns the package whose content has this SHA-256
// (hex, any case).
func (s *Files) DataPackageByHash(ctx context.Context, hash string) (DataPackage, error) {
	return s.packageWhere(ctx, "data package by hash", `hash = ?`, strings.ToLower(hash))
}

// DataPackageByUID returns the package with this UID.
func (s *Files) DataPackageByUID(ctx context.Context, uid string) (DataPackage, error) {
	return s.packageWhere(ctx, "data package by uid", `uid = ?`, uid)
}

// DataPackages lists every package, newest submission first (for tests and
// short lists; listings use EachDataPackage).
func (s *Files) DataPackages(ctx context.Context) ([]DataPackage, error) {
	return collect(func(fn func(DataPackage) error) error { return s.EachDataPackage(ctx, fn) })
}

// EachDataPackage calls fn with every package, newest submission first, as
// they are read.
func (s *Files) EachDataPackage(ctx context.Context, fn func(DataPackage) error) error {
	return s.eachPackage(ctx, "list data packages", `SELECT `+packageColumns+` FROM data_packages ORDER BY submitted_at DESC, id DESC`, nil, fn)
}

func (s *db) eachPackage(ctx context.Context, op, q string, args []any, fn func(DataPackage) error) error {
	return eachRow(s, ctx, op, q, args, listChunk, func(sc scanner) (DataPackage, error) { return scanPackage(sc) }, fn)
}

// DeleteDataPackageByHash removes the package and its blob: the metadata
// row goes and the blob becomes invisible in one transaction, then the
// blob's chunks are removed in bounded batches.
func (s *Files) DeleteDataPackageByHash(ctx context.Context, hash string) error {
	if err := s.check(ctx); err != nil {
		return fmt.Errorf("store: delete data package: %w", err)
	}
	var blobID int64
	err := s.inTxAnySpace(ctx, "delete data package", func(tx *sql.Tx) error {
		var id int64
		err := tx.QueryRowContext(ctx, `SELECT id, blob_id FROM data_packages WHERE hash = ?`, strings.ToLower(hash)).Scan(&id, &blobID)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("%w: no data package with hash %q", ErrNotFound, hash)
		}
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM data_packages WHERE id = ?`, id); err != nil {
			return err
		}
		return markBlobDeleting(ctx, tx, blobID)
	})
	if err != nil {
		return err
	}
	return s.purgeBlob(context.WithoutCancel(ctx), blobID)
}

// ConnectionPackageKeyword tags connection packages made for users.
const ConnectionPackageKeyword = "connection"

// PutPackage stores a client connection package (api.md §5.10) as a private
// data package and returns its hash. It is the store's side of
// pki.PackageSink: the package holds a private key, so it is never public
// (search lists public packages only); the user fetches it by hash.
func (s *Files) PutPackage(ctx context.Context, filename, submitter, owner string, r io.Reader) (string, error) {
	// It holds the user's private key: no group sees it, the user
	// (its owner) and administrators do (access.md "Groups").
	p, err := s.PutDataPackage(ctx, DataPackageInput{
		Name:           filename,
		SubmissionUser: submitter,
		CreatorUID:     submitter,
		Keywords:       []string{ConnectionPackageKeyword, filename},
		MIMEType:       "application/zip",
		Private:        true,
		Owner:          owner,
		unbudgeted:     true,
	}, r)
	if err != nil {
		return "", err
	}
	return p.Hash, nil
}

package store

// Federates managed through the management API and the command line
// (docs/federation.md "Managing federates"). The table is small: at most
// MaxFederates rows, each field bounded; the CA certificates are checked to
// be PEM certificates when stored.

import (
	"context"
	"crypto/x509"
	"database/sql"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"
)

// Limits of the federates table.
const (
	MaxFederates    = 64
	maxFederateName = 64
	maxFederateAddr = 255
	maxFederateCA   = 64 << 10 // bytes of PEM
)

// Federate is one managed federate.
type Federate struct {
	Name    string
	Address string // host:port of its federation listener; "" when only it connects here
	CAPEM   string // PEM certificates its certificate must chain to; "" until trusted
	Enabled bool
	Created time.Time // set by the store
}

// Validate checks f against the table's limits (ErrInvalid naming the field).
func (f *Federate) Validate() error {
	if err := checkText("name", f.Name, 1, maxFederateName); err != nil {
		return err
	}
	if strings.ContainsAny(f.Name, " =,/") {
		return fmt.Errorf("%w: name must not contain spaces, '=', ',' or '/'", ErrInvalid)
	}
	if err := checkText("address", f.Address, 0, maxFederateAddr); err != nil {
		return err
	}
	if f.Address != "" {
		host, port, err := net.SplitHostPort(f.Address)
		p, perr := strconv.Atoi(port)
		if err != nil || host == "" || perr != nil || p < 1 || p > 65535 {
			return fmt.Errorf("%w: address must be host:port, not %q", ErrInvalid, f.Address)
		}
	}
	if f.CAPEM != "" {
		if _, err := ParseCAs(f.CAPEM); err != nil {
			return err
		}
	}
	return nil
}

// ParseCAs reads PEM CA certificates (at most 64 KiB): ErrInvalid when
// there is none, or a block is not a CA certificate.
func ParseCAs(pemText string) ([]*x509.Certificate, error) {
	if len(pemText) > maxFederateCA {
		return nil, fmt.Errorf("%w: ca must be at most %d bytes", ErrInvalid, maxFederateCA)
	}
	var out []*x509.Certificate
	rest := []byte(pemText)
	for {
		var blk *pem.Block
		blk, rest = pem.Decode(rest)
		if blk == nil {
			break
		}
		if blk.Type != "CERTIFICATE" {
			return nil, fmt.Errorf("%w: ca holds a %s, not a certificate", ErrInvalid, blk.Type)
		}
		c, err := x509.ParseCertificate(blk.Bytes)
		if err != nil {
			return nil, fmt.Errorf("%w: ca: %v", ErrInvalid, err)
		}
		if !c.IsCA {
			return nil, fmt.Errorf("%w: ca: %q is not a CA certificate", ErrInvalid, c.Subject.CommonName)
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: ca holds no PEM certificate", ErrInvalid)
	}
	return out, nil
}

// Add stores a new federate. Errors: ErrInvalid, ErrConflict (the name is
// taken, or MaxFederates are stored).
func (s *Federates) Add(ctx context.Context, f Federate) error {
	if err := s.check(ctx); err != nil {
		return fmt.Errorf("store: add federate: %w", err)
	}
	if err := f.Validate(); err != nil {
		return fmt.Errorf("store: add federate: %w", err)
	}
	return s.inTx(ctx, "add federate", func(tx *sql.Tx) error {
		n, err := countWhere(ctx, tx, "federates", "")
		if err != nil {
			return err
		}
		if n >= MaxFederates {
			return fmt.Errorf("%w: at most %d federates", ErrConflict, MaxFederates)
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO federates(name, address, ca_pem, enabled, created_at) VALUES (?, ?, ?, ?, ?)
			ON CONFLICT(name) DO NOTHING`, f.Name, f.Address, f.CAPEM, f.Enabled, unixMilli(time.Now()))
		if err != nil {
			return err
		}
		var got int
		if err := tx.QueryRowContext(ctx, `SELECT changes()`).Scan(&got); err != nil {
			return err
		}
		if got == 0 {
			return fmt.Errorf("%w: a federate named %q exists", ErrConflict, f.Name)
		}
		return nil
	})
}

// Trust sets the CA certificates of a federate (ErrNotFound, ErrInvalid).
func (s *Federates) Trust(ctx context.Context, name, caPEM string) error {
	if err := s.check(ctx); err != nil {
		return fmt.Errorf("store: trust federate: %w", err)
	}
	if _, err := ParseCAs(caPEM); err != nil {
		return fmt.Errorf("store: trust federate: %w", err)
	}
	return s.inTx(ctx, "trust federate", func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE federates SET ca_pem = ? WHERE name = ?`, caPEM, name)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return fmt.Errorf("%w: no federate named %q", ErrNotFound, name)
		}
		return nil
	})
}

// Delete removes a federate (ErrNotFound).
func (s *Federates) Delete(ctx context.Context, name string) error {
	if err := s.check(ctx); err != nil {
		return fmt.Errorf("store: delete federate: %w", err)
	}
	return s.inTxAnySpace(ctx, "delete federate", func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM federates WHERE name = ?`, name)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return fmt.Errorf("%w: no federate named %q", ErrNotFound, name)
		}
		return nil
	})
}

// List returns every federate, by name.
func (s *Federates) List(ctx context.Context) ([]Federate, error) {
	if err := s.check(ctx); err != nil {
		return nil, fmt.Errorf("store: list federates: %w", err)
	}
	rows, err := s.r.QueryContext(ctx, `SELECT name, address, ca_pem, enabled, created_at FROM federates ORDER BY name LIMIT ?`, MaxFederates)
	if err != nil {
		return nil, s.wrapErr("list federates", err)
	}
	defer rows.Close()
	var out []Federate
	for rows.Next() {
		var (
			f       Federate
			created int64
		)
		if err := rows.Scan(&f.Name, &f.Address, &f.CAPEM, &f.Enabled, &created); err != nil {
			return nil, s.wrapErr("list federates", err)
		}
		f.Created = fromMilli(created)
		out = append(out, f)
	}
	if err := rows.Err(); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, s.wrapErr("list federates", err)
	}
	return out, nil
}

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
	// Pin, when set, is the SHA-256 fingerprint the federate's certificate
	// must have besides chaining to its CA (colon-separated upper hex, as
	// NormalizePin makes it).
	Pin string
	// BackoffMin and BackoffMax bound the delay before its outbound link
	// connects again (0: the defaults, 1 s and 60 s).
	BackoffMin, BackoffMax time.Duration
	// Protocol is the federation protocol its outbound link speaks:
	// FederateV2 (also when "") or FederateV1.
	Protocol string
	Created  time.Time // set by the store
}

// The protocols of a managed federate's outbound link.
const (
	FederateV2 = "v2"
	FederateV1 = "v1"
)

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
	if f.Pin != "" {
		pin, err := NormalizePin(f.Pin)
		if err != nil {
			return err
		}
		f.Pin = pin
	}
	switch f.Protocol {
	case "":
		f.Protocol = FederateV2
	case FederateV2, FederateV1:
	default:
		return fmt.Errorf("%w: protocol must be %q or %q", ErrInvalid, FederateV2, FederateV1)
	}
	return checkBackoff(f.BackoffMin, f.BackoffMax)
}

// Bounds of a managed federate's reconnect back-off.
const (
	MinFederateBackoff = 100 * time.Millisecond
	MaxFederateBackoff = 24 * time.Hour
)

func checkBackoff(lo, hi time.Duration) error {
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"backoffMin", lo}, {"backoffMax", hi}} {
		if d.v != 0 && (d.v < MinFederateBackoff || d.v > MaxFederateBackoff) {
			return fmt.Errorf("%w: %s must be 0 (the default) or between %s and %s", ErrInvalid, d.name, MinFederateBackoff, MaxFederateBackoff)
		}
	}
	if lo != 0 && hi != 0 && hi < lo {
		return fmt.Errorf("%w: backoffMax must not be less than backoffMin", ErrInvalid)
	}
	return nil
}

// NormalizePin reads a SHA-256 fingerprint (64 hex digits, either case,
// colons optional) as colon-separated upper hex; ErrInvalid otherwise.
func NormalizePin(pin string) (string, error) {
	h := strings.ToUpper(strings.ReplaceAll(pin, ":", ""))
	if len(h) != 64 || strings.Trim(h, "0123456789ABCDEF") != "" {
		return "", fmt.Errorf("%w: pin must be a SHA-256 fingerprint (64 hex digits, colons optional)", ErrInvalid)
	}
	var b strings.Builder
	for i := 0; i < len(h); i += 2 {
		if i > 0 {
			b.WriteByte(':')
		}
		b.WriteString(h[i : i+2])
	}
	return b.String(), nil
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
		_, err = tx.ExecContext(ctx, `INSERT INTO federates(name, address, ca_pem, enabled, created_at, pin, backoff_min_ms, backoff_max_ms, protocol)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(name) DO NOTHING`, f.Name, f.Address, f.CAPEM, f.Enabled, unixMilli(time.Now()),
			f.Pin, f.BackoffMin.Milliseconds(), f.BackoffMax.Milliseconds(), f.Protocol)
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

// FederatePatch is a change to a stored federate: each field set replaces
// the stored one (Pin "" removes the pin).
type FederatePatch struct {
	Address                *string
	Enabled                *bool
	Pin                    *string
	BackoffMin, BackoffMax *time.Duration
	Protocol               *string
}

// Update changes a stored federate (ErrNotFound, ErrInvalid: nothing is
// changed) and returns it as now stored.
func (s *Federates) Update(ctx context.Context, name string, p FederatePatch) (Federate, error) {
	var out Federate
	if err := s.check(ctx); err != nil {
		return out, fmt.Errorf("store: update federate: %w", err)
	}
	err := s.inTx(ctx, "update federate", func(tx *sql.Tx) error {
		var (
			f          Federate
			bmin, bmax int64
		)
		err := tx.QueryRowContext(ctx, `SELECT name, address, ca_pem, enabled, pin, backoff_min_ms, backoff_max_ms, protocol FROM federates WHERE name = ?`, name).
			Scan(&f.Name, &f.Address, &f.CAPEM, &f.Enabled, &f.Pin, &bmin, &bmax, &f.Protocol)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("%w: no federate named %q", ErrNotFound, name)
		}
		if err != nil {
			return err
		}
		f.BackoffMin, f.BackoffMax = time.Duration(bmin)*time.Millisecond, time.Duration(bmax)*time.Millisecond
		if p.Address != nil {
			f.Address = *p.Address
		}
		if p.Enabled != nil {
			f.Enabled = *p.Enabled
		}
		if p.Pin != nil {
			f.Pin = *p.Pin
		}
		if p.BackoffMin != nil {
			f.BackoffMin = *p.BackoffMin
		}
		if p.BackoffMax != nil {
			f.BackoffMax = *p.BackoffMax
		}
		if p.Protocol != nil {
			f.Protocol = *p.Protocol
		}
		if err := f.Validate(); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE federates SET address = ?, enabled = ?, pin = ?, backoff_min_ms = ?, backoff_max_ms = ?, protocol = ? WHERE name = ?`,
			f.Address, f.Enabled, f.Pin, f.BackoffMin.Milliseconds(), f.BackoffMax.Milliseconds(), f.Protocol, name)
		out = f
		return err
	})
	if err != nil {
		return Federate{}, fmt.Errorf("store: update federate: %w", err)
	}
	return out, nil
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
	rows, err := s.r.QueryContext(ctx, `SELECT name, address, ca_pem, enabled, created_at, pin, backoff_min_ms, backoff_max_ms, protocol
		FROM federates ORDER BY name LIMIT ?`, MaxFederates)
	if err != nil {
		return nil, s.wrapErr("list federates", err)
	}
	defer rows.Close()
	var out []Federate
	for rows.Next() {
		var (
			f          Federate
			created    int64
			bmin, bmax int64
		)
		if err := rows.Scan(&f.Name, &f.Address, &f.CAPEM, &f.Enabled, &created, &f.Pin, &bmin, &bmax, &f.Protocol); err != nil {
			return nil, s.wrapErr("list federates", err)
		}
		f.Created = fromMilli(created)
		f.BackoffMin, f.BackoffMax = time.Duration(bmin)*time.Millisecond, time.Duration(bmax)*time.Millisecond
		out = append(out, f)
	}
	if err := rows.Err(); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, s.wrapErr("list federates", err)
	}
	return out, nil
}

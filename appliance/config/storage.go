package config

import (
	"fmt"
	"time"

	"outpost/appliance/diskspace"
)

// Storage is what the server keeps on disk and how much: the CoT history
// (how long, how large, and how fast clients may add to it), uploads, the
// budgets of the tables clients can grow (RELIABILITY.md "Budgets"), the
// audit records, and the free space kept on the data directory's
// filesystem. 0 means no limit where noted.
type Storage struct {
	HistoryRetention   time.Duration // historyRetention: how long relayed CoT is kept (0 keeps it forever)
	HistoryMaxBytes    int           // historyMaxBytes: cap of stored CoT history; the heaviest uid's oldest events go first (0: none)
	HistoryClientRate  int           // historyClientRate: events per second one connection may add to history (0: none)
	HistoryClientBytes int           // historyClientBytes: bytes per second one connection may add to history (0: none)
	HistoryTotalRate   int           // historyTotalRate: events per second all connections may add (0: none)
	HistoryTotalBytes  int           // historyTotalBytes: bytes per second all connections may add (0: none)

	MaxUploadBytes      int64         // maxUploadBytes: largest data package upload (413 above it)
	MaxDataPackages     int           // maxDataPackages: data packages kept (409 beyond)
	MaxExCheckDocuments int           // maxExCheckDocuments: ExCheck templates kept, and checklists kept (409 beyond)
	MaxExCheckBytes     int           // maxExCheckBytes: XML of every ExCheck template and checklist together (409 beyond)
	MaxVideoConnections int           // maxVideoConnections: video connections kept (409 beyond)
	MaxServerObjects    int           // maxServerObjects: geo objects and emergencies made through the management API (409 beyond)
	MaxAuditRecords     int           // maxAuditRecords: audit records kept; beyond, the oldest are pruned
	AuditRetention      time.Duration // auditRetention: how long audit records are kept (0 keeps them forever)

	// diskReserve: free space kept on the data directory's filesystem; below it uploads are
	// refused (507) and the CoT history pauses. Auto: the larger of 5 % and 256 MiB, at most 10 %.
	DiskReserve diskspace.Amount
	// diskFloor: below it every write that grows the database is refused (507). Auto: 16 MiB,
	// at most half the reserve; never above the reserve.
	DiskFloor diskspace.Amount
}

func defaultStorage() Storage {
	return Storage{
		HistoryRetention:   7 * 24 * time.Hour,
		HistoryMaxBytes:    1 << 30,
		HistoryClientRate:  10,
		HistoryClientBytes: 64 << 10,
		HistoryTotalRate:   1000,
		HistoryTotalBytes:  4 << 20,

		MaxUploadBytes:      2 << 30,
		MaxDataPackages:     10_000,
		MaxExCheckDocuments: 10_000,
		MaxExCheckBytes:     256 << 20,
		MaxVideoConnections: 256,
		MaxServerObjects:    1_000,
		MaxAuditRecords:     100_000,
		AuditRetention:      90 * 24 * time.Hour,
	}
}

// Validate checks the history's retention and budgets, maxUploadBytes,
// that every table has a budget, the audit retention, and that the disk
// floor is not above the reserve.
func (s Storage) Validate() error {
	if s.HistoryRetention < 0 {
		return keyErr("historyRetention", "must not be negative (0 keeps history forever)")
	}
	if err := checkLimits(
		limitKey{"historyMaxBytes", s.HistoryMaxBytes, 0},
		limitKey{"historyClientRate", s.HistoryClientRate, 0}, limitKey{"historyClientBytes", s.HistoryClientBytes, 0},
		limitKey{"historyTotalRate", s.HistoryTotalRate, 0}, limitKey{"historyTotalBytes", s.HistoryTotalBytes, 0},
	); err != nil {
		return err
	}
	if s.MaxUploadBytes < 1024 || s.MaxUploadBytes > 1<<40 {
		return keyErr("maxUploadBytes", "must be between 1 KiB and 1024 GiB")
	}
	if err := s.checkBudgets(); err != nil {
		return err
	}
	if s.AuditRetention < 0 {
		return keyErr("auditRetention", "must not be negative (0 keeps audit records forever)")
	}
	if r, f := s.DiskReserve, s.DiskFloor; r.Set && f.Set && r.Percent == 0 && f.Percent == 0 && f.Bytes > r.Bytes {
		return keyErr("diskFloor", fmt.Sprintf("%s is above diskReserve (%s): the floor is the last line under the reserve", f, r))
	}
	return nil
}

// checkBudgets checks that every table clients grow has a budget.
func (s Storage) checkBudgets() error {
	for _, b := range []limitKey{
		{"maxDataPackages", s.MaxDataPackages, 1}, {"maxExCheckDocuments", s.MaxExCheckDocuments, 1},
		{"maxExCheckBytes", s.MaxExCheckBytes, 64 << 10}, {"maxVideoConnections", s.MaxVideoConnections, 1},
		{"maxServerObjects", s.MaxServerObjects, 1}, {"maxAuditRecords", s.MaxAuditRecords, 100},
	} {
		if b.v < b.least {
			return keyErr(b.key, fmt.Sprintf("must be at least %d (a budget; there is no unlimited)", b.least))
		}
	}
	return nil
}

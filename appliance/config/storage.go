package config

import (
	"fmt"

	"outpost/appliance/diskspace"
)

// Storage is what clients may store: the largest upload, the budgets of the
// tables clients can grow (RELIABILITY.md "Budgets"), and the free space
// kept on the data directory's filesystem.
type Storage struct {
	MaxUploadBytes      int64 // maxUploadBytes: largest data package upload (413 above it)
	MaxAuditRecords     int   // maxAuditRecords: audit records kept; beyond, the oldest are pruned
	MaxExCheckDocuments int   // maxExCheckDocuments: ExCheck templates kept, and checklists kept (409 beyond)
	MaxExCheckBytes     int   // maxExCheckBytes: XML of every ExCheck template and checklist together (409 beyond)
	MaxVideoConnections int   // maxVideoConnections: video connections kept (409 beyond)
	MaxServerObjects    int   // maxServerObjects: geo objects and emergencies made through the management API (409 beyond)
	MaxDataPackages     int   // maxDataPackages: data packages kept (409 beyond)
	// diskReserve: free space kept on the data directory's filesystem; below it uploads are
	// refused (507) and the CoT history pauses. Auto: the larger of 5 % and 256 MiB, at most 10 %.
	DiskReserve diskspace.Amount
	// diskFloor: below it every write that grows the database is refused (507). Auto: 16 MiB,
	// at most half the reserve; never above the reserve.
	DiskFloor diskspace.Amount
}

func defaultStorage() Storage {
	return Storage{
		MaxUploadBytes:      2 << 30,
		MaxAuditRecords:     100_000,
		MaxExCheckDocuments: 10_000,
		MaxExCheckBytes:     256 << 20,
		MaxVideoConnections: 256,
		MaxServerObjects:    1_000,
		MaxDataPackages:     10_000,
	}
}

// Validate checks maxUploadBytes, that every table has a budget, and that
// the disk floor is not above the reserve.
func (s Storage) Validate() error {
	if s.MaxUploadBytes < 1024 || s.MaxUploadBytes > 1<<40 {
		return keyErr("maxUploadBytes", "must be between 1 KiB and 1024 GiB")
	}
	for _, b := range []struct {
		key      string
		v, least int
	}{
		{"maxAuditRecords", s.MaxAuditRecords, 100}, {"maxExCheckDocuments", s.MaxExCheckDocuments, 1},
		{"maxExCheckBytes", s.MaxExCheckBytes, 64 << 10}, {"maxVideoConnections", s.MaxVideoConnections, 1},
		{"maxServerObjects", s.MaxServerObjects, 1}, {"maxDataPackages", s.MaxDataPackages, 1},
	} {
		if b.v < b.least {
			return keyErr(b.key, fmt.Sprintf("must be at least %d (a budget; there is no unlimited)", b.least))
		}
	}
	if r, f := s.DiskReserve, s.DiskFloor; r.Set && f.Set && r.Percent == 0 && f.Percent == 0 && f.Bytes > r.Bytes {
		return keyErr("diskFloor", fmt.Sprintf("%s is above diskReserve (%s): the floor is the last line under the reserve", f, r))
	}
	return nil
}

// Package diskspace guards the free space of the data filesystem
// (architecture.md "Storage": the disk reserve). A Gauge answers how much an
// unprivileged process may still write there, from a stat at most a second
// old or corrected by the bytes noted as written since, so asking costs
// nothing on a hot path. Below the reserve, uploads are refused and the CoT
// history pauses; below the hard floor, every write that grows the database
// is refused with ErrNoSpace (a fault.NoSpace: 507) rather than failing in
// SQLite. The relay never asks.
//
// It imports nothing of this module but the leaves (fault, logx).
package diskspace

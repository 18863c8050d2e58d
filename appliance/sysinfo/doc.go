// Package sysinfo measures the machine for the management channel's
// server health (api.md §6.1): CPU use, memory use and the use of the
// filesystem holding a path, as percentages, without cgo; and, for the
// load tool and benchmarks, a process's CPU time (Linux only). Linux reads
// /proc and statfs; Windows calls kernel32; other systems report
// ErrNotSupported.
//
// Imports: no package of ours.
package sysinfo

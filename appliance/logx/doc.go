// Package logx holds the two rules every log line of Outpost follows when it
// carries something a client sent: the value is clipped (Clip), and a
// warning that a client can trigger at will is rate-limited with a
// "suppressed N" summary (Limiter), so an attacker on the mesh cannot inflate
// the log (docs/architecture.md "Logs"). It also holds the one rule for a
// file name a client gives (FileName: a base name, never a path), here
// because every package that stores, lists or serves one may import it.
//
// Imports: no other package of ours; every package may import it.
package logx

// Package qr owns the QR codes a device scans to join the server
// (protocol.md §8 "Enrolling with an invitation"): the texts ATAK and iTAK
// read from a code, and their rendering as a PNG image or as lines of
// Unicode half blocks for a terminal. The encoding itself is
// github.com/skip2/go-qrcode's; this package only decides what goes in and
// how it is drawn.
//
// Allowed dependencies: nothing of this module but the leaves.
package qr

//go:build !linux

package netx

import "errors"

// Waiter is Linux-only (waiter_linux.go): elsewhere a connection's reader
// waits inside Read.
type Waiter struct{}

// NewWaiter reports that there is no waiter on this system.
func NewWaiter() (*Waiter, error) { return nil, errors.ErrUnsupported }

// Len is always 0.
func (*Waiter) Len() int { return 0 }

// Close does nothing.
func (*Waiter) Close() {}

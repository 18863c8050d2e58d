// Package fault names what a failure means to whoever asked, so that the
// edges (the HTTP handlers, the command line) answer it without knowing which
// package failed: a package declares its sentinel errors with New and a Kind,
// wraps them with %w and a reason, and httpapi.Fail turns the kind into a
// status and the reason into the message (architecture.md "Conventions").
//
// It is a leaf: it imports nothing of this module.
package fault

import (
	"errors"
	"strings"
)

// Kind is the meaning of a failure for its caller.
type Kind uint8

// The kinds. Internal is every error without a sentinel: a fault of ours,
// never the caller's.
const (
	Internal       Kind = iota
	Invalid             // the input breaks a documented rule; nothing changed
	Unauthorized        // no credentials, or unknown ones
	Forbidden           // the caller is known but may not do this
	BadCredentials      // a wrong password (or an unknown user)
	NotFound            // no such thing (or not visible to this caller)
	Conflict            // a unique value is taken, or the thing is in use
	TooLarge            // more than a documented size limit
	Busy                // too much of this right now; the caller may retry shortly
	NoSpace             // the disk (or a budget) cannot take it
)

var kindNames = [...]string{"internal", "invalid", "unauthorized", "forbidden", "bad credentials", "not found",
	"conflict", "too large", "busy", "no space"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "unknown"
}

// Sentinel is an error value of a kind. Compare with errors.Is.
type Sentinel struct {
	kind Kind
	text string
}

// New declares a sentinel: text is its own words ("store: not found"), kind
// what it means.
func New(kind Kind, text string) *Sentinel { return &Sentinel{kind: kind, text: text} }

func (s *Sentinel) Error() string { return s.text }

// Kind is what the sentinel means.
func (s *Sentinel) Kind() Kind { return s.kind }

// sentinelOf is the outermost sentinel in err's chain.
func sentinelOf(err error) *Sentinel {
	var s *Sentinel
	if errors.As(err, &s) {
		return s
	}
	return nil
}

// KindOf is the kind of err's sentinel; Internal when it has none.
func KindOf(err error) Kind {
	if s := sentinelOf(err); s != nil {
		return s.kind
	}
	return Internal
}

// Detail is what a caller may be told of err: the reason written after its
// sentinel ("store: create user: store: invalid input: password must be 1 to
// 256 bytes" gives "password must be 1 to 256 bytes"), never the internal
// context before it. Without a reason, the sentinel's own words without the
// package prefix ("not found"); without a sentinel, "".
func Detail(err error) string {
	s := sentinelOf(err)
	if s == nil {
		return ""
	}
	msg := err.Error()
	if i := strings.LastIndex(msg, s.text+": "); i >= 0 {
		return msg[i+len(s.text)+2:]
	}
	if _, words, ok := strings.Cut(s.text, ": "); ok {
		return words
	}
	return s.text
}

package fault

import (
	"errors"
	"fmt"
	"testing"
)

func TestKindAndDetail(t *testing.T) {
	errNotFound := New(NotFound, "store: not found")
	errInvalid := New(Invalid, "store: invalid input")
	tests := []struct {
		err    error
		kind   Kind
		detail string
	}{
		{fmt.Errorf("store: user by uid: %w", errNotFound), NotFound, "not found"},
		{fmt.Errorf("store: create user: %w", fmt.Errorf("%w: password must be 1 to 256 bytes", errInvalid)), Invalid, "password must be 1 to 256 bytes"},
		{fmt.Errorf("mission %q: %w: no such mission", "a", errNotFound), NotFound, "no such mission"},
		{errors.New("disk I/O error"), Internal, ""},
		{nil, Internal, ""},
		{errors.Join(errors.New("x"), fmt.Errorf("%w: busy", New(Busy, "gate: busy"))), Busy, "busy"},
	}
	for _, tc := range tests {
		if tc.err == nil {
			if KindOf(nil) != Internal || Detail(nil) != "" {
				t.Error("nil error has a kind or a detail")
			}
			continue
		}
		if got := KindOf(tc.err); got != tc.kind {
			t.Errorf("KindOf(%v) = %v, want %v", tc.err, got, tc.kind)
		}
		if got := Detail(tc.err); got != tc.detail {
			t.Errorf("Detail(%v) = %q, want %q", tc.err, got, tc.detail)
		}
	}
	if !errors.Is(fmt.Errorf("a: %w", errNotFound), errNotFound) || errors.Is(errNotFound, errInvalid) {
		t.Error("sentinels do not compare as values")
	}
}

func TestKindNames(t *testing.T) {
	for k := Internal; k <= NoSpace; k++ {
		if k.String() == "unknown" || k.String() == "" {
			t.Errorf("kind %d has no name", k)
		}
	}
	if Kind(200).String() != "unknown" {
		t.Error("an undeclared kind has a name")
	}
}

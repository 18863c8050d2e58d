package store

import (
	"context"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

func TestFederateGroups(t *testing.T) {
	s := openTest(t, Options{})
	ctx := context.Background()
	fs := s.Federates()
	if _, err := s.Accounts().CreateGroup(ctx, "Blue", ""); err != nil {
		t.Fatal(err)
	}
	if m, err := fs.Groups(ctx, "bravo"); err != nil || !m.Empty() {
		t.Fatalf("no mapping yet: %+v %v", m, err)
	}
	want := GroupMapping{
		Outbound: []GroupPair{{"Blue", "Cyan"}, {"__ANON__", "__ANON__"}},
		Inbound:  []GroupPair{{"Blue", "Cyan"}, {"Blue", "Teal"}},
	}
	in := want
	in.Outbound = append(append([]GroupPair{}, want.Outbound...), GroupPair{"Blue", "Cyan"}) // a repeat is dropped
	if err := fs.SetGroups(ctx, "bravo", in); err != nil {
		t.Fatal(err)
	}
	if err := fs.SetGroups(ctx, "charlie", GroupMapping{Inbound: []GroupPair{{"__ANON__", "x"}}}); err != nil {
		t.Fatal(err)
	}
	got, err := fs.Groups(ctx, "bravo")
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("bravo: %+v %v, want %+v", got, err, want)
	}
	all, err := fs.GroupMappings(ctx)
	if err != nil || len(all) != 2 || len(all["charlie"].Inbound) != 1 || len(all["charlie"].Outbound) != 0 {
		t.Fatalf("all: %+v %v", all, err)
	}
	many := GroupMapping{}
	for i := 0; i <= MaxGroupPairs; i++ {
		many.Inbound = append(many.Inbound, GroupPair{"Blue", strings.Repeat("g", i+1)})
	}
	for name, tc := range map[string]struct {
		fed string
		m   GroupMapping
	}{
		"no federate":       {"", want},
		"long federate":     {strings.Repeat("f", 129), want},
		"no such group":     {"bravo", GroupMapping{Outbound: []GroupPair{{"Red", "Red"}}}},
		"no such group in":  {"bravo", GroupMapping{Inbound: []GroupPair{{"Red", "Red"}}}},
		"empty local":       {"bravo", GroupMapping{Outbound: []GroupPair{{"", "Red"}}}},
		"empty federate":    {"bravo", GroupMapping{Inbound: []GroupPair{{"Blue", ""}}}},
		"control character": {"bravo", GroupMapping{Inbound: []GroupPair{{"Blue", "a\nb"}}}},
		"long federate grp": {"bravo", GroupMapping{Inbound: []GroupPair{{"Blue", strings.Repeat("g", 256)}}}},
		"too many pairs":    {"bravo", many},
	} {
		if err := fs.SetGroups(ctx, tc.fed, tc.m); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if got, _ := fs.Groups(ctx, "bravo"); !reflect.DeepEqual(got, want) {
		t.Fatalf("bad input changed the mapping: %+v", got)
	}
	// At most maxMappedFederates federates have a mapping.
	one := GroupMapping{Inbound: []GroupPair{{"Blue", "Cyan"}}}
	for i := 0; i < maxMappedFederates-2; i++ { // bravo and charlie have one
		if err := fs.SetGroups(ctx, "fed-"+strings.Repeat("x", i%5)+string(rune('a'+i%26))+strconv.Itoa(i), one); err != nil {
			t.Fatal(err)
		}
	}
	if err := fs.SetGroups(ctx, "one-too-many", one); !errors.Is(err, ErrConflict) {
		t.Fatalf("federate %d: %v", maxMappedFederates+1, err)
	}
	if err := fs.SetGroups(ctx, "charlie", one); err != nil { // changing one that has a mapping still works
		t.Fatal(err)
	}
	if err := fs.SetGroups(ctx, "bravo", GroupMapping{}); err != nil {
		t.Fatal(err)
	}
	if m, err := fs.Groups(ctx, "bravo"); err != nil || !m.Empty() {
		t.Fatalf("removed: %+v %v", m, err)
	}
}

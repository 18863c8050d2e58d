package marti_test

import (
	"testing"
)

// TestMissionListIncludeArchived: the official server's mission list has
// no archived missions and no includeArchived parameter (docs/api-marti.md
// "Archived missions"), so Outpost accepts the parameter, whatever its
// value, and answers the same list as without it, on both listeners.
func TestMissionListIncludeArchived(t *testing.T) {
	e := start(t, nil)
	for _, l := range both {
		name := "archived-" + l
		e.call(t, l, "PUT", "/Marti/api/missions/"+name+"?creatorUid=ARCH-1", nil, 201, nil)
		names := func(query string) string {
			var ms []missionOut
			e.call(t, l, "GET", "/Marti/api/missions"+query, nil, 200, &ms)
			s := ""
			for _, m := range ms {
				s += m.Name + ","
			}
			return s
		}
		want := names("")
		if want == "" {
			t.Fatalf("%s: no missions listed", l)
		}
		for _, q := range []string{"?includeArchived=true", "?includeArchived=false", "?includeArchived=maybe", "?includeArchived=true&passwordProtected=true&defaultRole=true"} {
			if got := names(q); got != want {
				t.Errorf("%s %s: %s, want %s", l, q, got, want)
			}
		}
	}
}

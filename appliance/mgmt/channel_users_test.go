package mgmt

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"outpost/appliance/store"
	"outpost/appliance/users"
	"outpost/internal/testkit"
)

// TestChannelAddSystemUserAnswers: addSystemUser answers as
// postSystemUser does: 201 with the users made; when none is, 409 naming
// the conflicts if each failure was one, else 500 with the routes' text
// (the fault is logged, its words never answered).
func TestChannelAddSystemUserAnswers(t *testing.T) {
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "outpost.db"), store.Options{Logger: testkit.Discard()})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	f := newChannelFixture(t, nil)
	New(Options{Accounts: st.Accounts(), Files: st.Files(), Channel: f.ch, Logger: f.log,
		Users: users.New(users.Options{Accounts: st.Accounts(), Files: st.Files(), Logger: testkit.Discard()})})
	cc, _ := f.dial(t)
	if ok := cc.authenticate(testKey); ok != "True" {
		t.Fatalf("authentication %q", ok)
	}
	add := func(name string) channelAnswer {
		t.Helper()
		cc.emit("addSystemUser", map[string]any{"systemUsers": []map[string]any{{"Name": name, "Password": "pw", "Certs": "false"}}})
		var ans channelAnswer
		cc.nextEvent("addSystemUser", &ans)
		return ans
	}
	if ans := add("kim"); ans.Status != 201 || ans.Message != "user(s) created" || len(ans.SystemUsers) != 1 {
		t.Fatalf("first kim: %+v", ans)
	}
	if ans := add("kim"); ans.Status != 409 || !strings.HasPrefix(ans.Message, `no user created: systemUsers[0].Name "kim": `) || ans.SystemUsers != nil {
		t.Fatalf("second kim: %+v", ans)
	}
	start := time.Now()
	st.Close() // every creation now fails: a fault of ours
	if ans := add("lee"); ans.Status != 500 || ans.Message != usersError {
		t.Fatalf("lee on a closed store: %+v", ans)
	}
	logged := false
	for _, e := range f.tap.Recent(start) {
		logged = logged || strings.Contains(e.Text, "socket.io user operation failed")
	}
	if !logged {
		t.Error("the failure was not logged")
	}
}

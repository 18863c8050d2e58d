package e2e

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/url"
	"strings"
	"testing"
	"time"

	"outpost/appliance/apptest"
	"outpost/appliance/cot"
	"outpost/appliance/federation/fedproto"
	"outpost/appliance/netx"
	"outpost/appliance/takclient"
	"outpost/internal/testkit"
)

// marti calls a's client API (8080).
func marti(t *testing.T, a *apptest.App, method, path string, body any) testkit.Response {
	t.Helper()
	return testkit.Do(t, nil, method, a.URL(t, netx.ListenerHTTP, path), body)
}

// uploadFile stores data on a through the Marti API and returns its hash.
func uploadFile(t *testing.T, a *apptest.App, name string, data []byte) string {
	t.Helper()
	res := testkit.Do(t, nil, "POST", a.URL(t, netx.ListenerHTTP, "/Marti/sync/upload?name="+name+"&creatorUid=ANDROID-A"),
		data, "Content-Type", "application/zip")
	if res.Status != 200 {
		t.Fatalf("upload: %d %s", res.Status, res.Body)
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// missionHas reports whether a holds the mission name with the file hash
// (want) or without it (!want).
func missionHas(t *testing.T, a *apptest.App, name, hash string, want bool) func() bool {
	return func() bool {
		res := marti(t, a, "GET", "/Marti/api/missions/"+name, nil)
		return res.Status == 200 && strings.Contains(string(res.Body), hash) == want
	}
}

// contactListed reports whether a's /Marti/api/contacts/all lists uid
// with callsign.
func contactListed(t *testing.T, a *apptest.App, uid, callsign string) bool {
	var list []struct {
		UID          string   `json:"uid"`
		Callsign     string   `json:"callsign"`
		FilterGroups []string `json:"filterGroups"`
	}
	res := marti(t, a, "GET", "/Marti/api/contacts/all", nil)
	res.JSON(t, &list)
	for _, c := range list {
		if c.UID == uid {
			return c.Callsign == callsign && c.FilterGroups != nil
		}
	}
	return false
}

// TestFederationMissionsAndContacts: A connects to B. A client on A is a
// contact in B's /Marti/api/contacts/all (a ContactListEntry and its
// position); a mission made on A with a data package uploaded to A
// appears on B with its contents, the file fetched by hash from B's API
// with the same bytes; a second mission with the same file stores nothing
// again; removing the file and deleting the mission cross; the contact
// leaves B's list when the link ends.
func TestFederationMissionsAndContacts(t *testing.T) {
	ca := newFedCA(t, "Federation CA")
	b := startFederated(t, ca, "bravo-server", "")
	a := startFederated(t, ca, "alpha-server", "", "B="+fedListener(t, b))
	testkit.WaitForWithin(t, fedWait, "the link", func() bool { return fedStats(a, "B").Connected && fedStats(b, "alpha-server").Connected })

	cl := a.DialTCP(t)
	if err := cl.Send(takclient.SA("FED-CONTACT-1", "FEDCALL", 1, 2)); err != nil {
		t.Fatal(err)
	}
	testkit.WaitForWithin(t, fedWait, "A's client in B's contacts", func() bool { return contactListed(t, b, "FED-CONTACT-1", "FEDCALL") })
	if st := fedStats(a, "B"); st.ContactsOut == 0 {
		t.Fatalf("A sent no contact entry: %+v", st)
	}
	if st := fedStats(b, "alpha-server"); st.ContactsIn == 0 {
		t.Fatalf("B took no contact entry: %+v", st)
	}

	bc := b.DialTCP(t) // hears of the federated mission as of a local one
	if err := bc.Send(takclient.SA("B-LISTENER", "BLISTEN", 3, 4)); err != nil {
		t.Fatal(err)
	}
	data := bytes.Repeat([]byte("outpost federated package "), 4096)
	hash := uploadFile(t, a, "plan.zip", data)
	if res := marti(t, a, "PUT", "/Marti/api/missions/fedops?creatorUid=ANDROID-A&description=ops", nil); res.Status != 201 {
		t.Fatalf("create mission: %d %s", res.Status, res.Body)
	}
	if res := marti(t, a, "PUT", "/Marti/api/missions/fedops/contents?creatorUid=ANDROID-A", map[string]any{"hashes": []string{hash}}); res.Status != 200 {
		t.Fatalf("add contents: %d %s", res.Status, res.Body)
	}
	testkit.WaitForWithin(t, fedWait, "the mission on B with its file", missionHas(t, b, "fedops", hash, true))
	if _, err := bc.WaitFor(func(e *cot.Event) bool {
		return e.Type == "t-x-m-n" && strings.Contains(string(e.Detail.XML), `name="fedops"`)
	}, fedWait); err != nil {
		t.Fatalf("B's client did not hear of the federated mission: %v", err)
	}
	res := marti(t, b, "GET", "/Marti/sync/content?hash="+hash, nil)
	if res.Status != 200 || !bytes.Equal(res.Body, data) {
		t.Fatalf("the file on B: %d, %d bytes (want %d)", res.Status, len(res.Body), len(data))
	}
	res = marti(t, b, "GET", "/Marti/api/missions/fedops/changes", nil)
	if res.Status != 200 || !strings.Contains(string(res.Body), `"isFederatedChange":true`) {
		t.Fatalf("B's changes of the mission: %d %s", res.Status, res.Body)
	}
	if !strings.Contains(string(marti(t, b, "GET", "/Marti/api/missions/fedops", nil).Body), "ops") {
		t.Fatal("the mission's description did not cross")
	}

	// The same file in a second mission: it crosses again and is not stored again.
	if res := marti(t, a, "PUT", "/Marti/api/missions/fedops2?creatorUid=ANDROID-A", nil); res.Status != 201 {
		t.Fatalf("create mission 2: %d %s", res.Status, res.Body)
	}
	if res := marti(t, a, "PUT", "/Marti/api/missions/fedops2/contents?creatorUid=ANDROID-A", map[string]any{"hashes": []string{hash}}); res.Status != 200 {
		t.Fatalf("add contents 2: %d %s", res.Status, res.Body)
	}
	testkit.WaitForWithin(t, fedWait, "mission 2 on B with the file", missionHas(t, b, "fedops2", hash, true))
	if st := fedStats(b, "alpha-server"); st.FilesStored != 1 || st.FilesKnown != 1 || st.ROLFailed != 0 || st.ROLDroppedMalformed != 0 {
		t.Fatalf("B's ROL counters: %+v", st)
	}

	// An update (the file removed) and a delete cross.
	if res := marti(t, a, "DELETE", "/Marti/api/missions/fedops/contents?creatorUid=ANDROID-A&hash="+hash, nil); res.Status != 200 {
		t.Fatalf("remove content: %d %s", res.Status, res.Body)
	}
	testkit.WaitForWithin(t, fedWait, "the file removed from the mission on B", missionHas(t, b, "fedops", hash, false))
	if res := marti(t, a, "DELETE", "/Marti/api/missions/fedops2?creatorUid=ANDROID-A", nil); res.Status != 200 {
		t.Fatalf("delete mission: %d %s", res.Status, res.Body)
	}
	testkit.WaitForWithin(t, fedWait, "mission 2 deleted on B", func() bool {
		return marti(t, b, "GET", "/Marti/api/missions/fedops2", nil).Status == 404
	})
	// Nothing went back to A as a change of B's.
	if st := fedStats(a, "B"); st.ROLApplied != 0 || st.ROLOut == 0 {
		t.Fatalf("A's ROL counters: %+v", st)
	}

	// A mission made on B crosses to A too.
	if res := marti(t, b, "PUT", "/Marti/api/missions/from-bravo?creatorUid=ANDROID-B", nil); res.Status != 201 {
		t.Fatalf("create mission on B: %d %s", res.Status, res.Body)
	}
	testkit.WaitForWithin(t, fedWait, "B's mission on A", func() bool {
		return marti(t, a, "GET", "/Marti/api/missions/from-bravo", nil).Status == 200
	})

	// The link ends: A's contact leaves B's list.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := a.Close(ctx); err != nil {
		t.Fatal(err)
	}
	testkit.WaitForWithin(t, fedWait, "A's client gone from B's contacts", func() bool { return !contactListed(t, b, "FED-CONTACT-1", "FEDCALL") })
}

// TestFederationMissionsLoopOfThree: A connects to B, B to C, C to A. A
// mission with a file made on A reaches B and C once each (one creation
// and one content change in their histories), and its deletion crosses
// and stays.
func TestFederationMissionsLoopOfThree(t *testing.T) {
	ca := newFedCA(t, "Federation CA")
	pA := fedHome(t)
	c := startFederated(t, ca, "charlie", "", "A="+pA)
	b := startFederated(t, ca, "bravo", "", "C="+fedListener(t, c))
	a := startFederated(t, ca, "alpha", pA, "B="+fedListener(t, b))
	for _, x := range []struct {
		app  *apptest.App
		peer string
	}{{a, "B"}, {b, "C"}, {c, "A"}} {
		testkit.WaitForWithin(t, fedWait, "link to "+x.peer, func() bool { return fedStats(x.app, x.peer).Connected })
	}
	data := []byte("loop file contents")
	hash := uploadFile(t, a, "loop.txt", data)
	if res := marti(t, a, "PUT", "/Marti/api/missions/loopm?creatorUid=ANDROID-A", nil); res.Status != 201 {
		t.Fatalf("create mission: %d %s", res.Status, res.Body)
	}
	if res := marti(t, a, "PUT", "/Marti/api/missions/loopm/contents?creatorUid=ANDROID-A", map[string]any{"hashes": []string{hash}}); res.Status != 200 {
		t.Fatalf("add contents: %d %s", res.Status, res.Body)
	}
	for name, x := range map[string]*apptest.App{"B": b, "C": c} {
		if !waitUntil(fedWait, missionHas(t, x, "loopm", hash, true)) {
			t.Fatalf("the mission did not reach %s: A %+v\nB %+v\nC %+v", name, a.FederationStats(), b.FederationStats(), c.FederationStats())
		}
	}
	time.Sleep(fedQuiet) // copies over the other path arrive within it
	for name, x := range map[string]*apptest.App{"B": b, "C": c} {
		var changes struct {
			Data []struct {
				Type string `json:"type"`
			} `json:"data"`
		}
		res := marti(t, x, "GET", "/Marti/api/missions/loopm/changes", nil)
		res.JSON(t, &changes)
		n := map[string]int{}
		for _, ch := range changes.Data {
			n[ch.Type]++
		}
		if n["CREATE_MISSION"] != 1 || n["ADD_CONTENT"] != 1 || n["REMOVE_CONTENT"] != 0 {
			t.Fatalf("%s's changes of the mission: %v (%s)", name, n, res.Body)
		}
	}
	var dropped, failed uint64
	for _, s := range append(append(a.FederationStats(), b.FederationStats()...), c.FederationStats()...) {
		dropped += s.ROLDroppedDuplicate + s.ROLDroppedLoop
		failed += s.ROLFailed + s.ROLDroppedMalformed
	}
	if dropped == 0 || failed != 0 {
		t.Fatalf("ROL copies dropped %d, failures %d", dropped, failed)
	}
	if res := marti(t, a, "DELETE", "/Marti/api/missions/loopm?creatorUid=ANDROID-A", nil); res.Status != 200 {
		t.Fatalf("delete: %d %s", res.Status, res.Body)
	}
	for name, x := range map[string]*apptest.App{"A": a, "B": b, "C": c} {
		testkit.WaitForWithin(t, fedWait, "the mission gone from "+name, func() bool {
			return marti(t, x, "GET", "/Marti/api/missions/loopm", nil).Status == 404
		})
	}
	time.Sleep(fedQuiet) // a late copy of the creation must not bring it back
	for name, x := range map[string]*apptest.App{"A": a, "B": b, "C": c} {
		if res := marti(t, x, "GET", "/Marti/api/missions/loopm", nil); res.Status != 404 {
			t.Fatalf("the mission came back on %s: %d", name, res.Status)
		}
	}
}

// TestFederationROLBadInput: a federate sends malformed, oversized and
// looping ROL between good ones: each bad one is dropped and counted, the
// link stays up and the good ones are applied.
func TestFederationROLBadInput(t *testing.T) {
	ca := newFedCA(t, "Federation CA")
	b := startFederated(t, ca, "bravo", "")
	_, _, pair := ca.issue(t, "tester")
	cli, closeCli := fedClient(t, fedListener(t, b), pair)
	defer closeCli()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	id, err := cli.GetIdentity(ctx, &fedproto.Empty{})
	if err != nil {
		t.Fatal(err)
	}
	sub := &fedproto.Subscription{Identity: &fedproto.Identity{Name: "tester", ServerId: "tester-id"}}
	if _, err := cli.ClientEventStream(ctx, sub); err != nil {
		t.Fatal(err)
	}
	rin, err := cli.ClientROLStream(ctx, sub)
	if err != nil {
		t.Fatal(err)
	}
	out, err := cli.ServerROLStream(ctx)
	if err != nil {
		t.Fatal(err)
	}
	send := func(r *fedproto.ROL) {
		t.Helper()
		if err := out.Send(r); err != nil {
			t.Fatal(err)
		}
	}
	good := func(name string) *fedproto.ROL {
		return &fedproto.ROL{Program: "create mission\n" + `{"type":"MissionMetadata","name":"` + name + `","creatorUid":"T-1","tool":"public"}` + ";"}
	}
	data := []byte("a file")
	sum := sha256.Sum256(data)
	wrongHash := strings.Repeat("0", 64)
	for _, p := range []string{
		"", "create", "create mission", "create mission\n{not json};", "create mission\n{\"name\":\"x\"}", // no ';'
		"explode mission\n{};", "create mission\n{\"type\":\"MissionMetadata\",\"name\":\"\"};",
		"update mission\n" + `{"content":{"hashes":["nothex"],"uids":[]},"changeType":"ADD_CONTENT","missionName":"m","missionTool":"public"};`,
	} {
		send(&fedproto.ROL{Program: p})
	}
	send(&fedproto.ROL{Program: `create resource` + "\n" + `{"name":"f","hash":"` + wrongHash + `"};`, Payload: []*fedproto.BinaryBlob{{Data: data}}}) // bytes without that hash
	send(&fedproto.ROL{Program: "create mission\n{\"name\":\"" + strings.Repeat("x", 70<<10) + "\"};"})                                                // program too large
	send(&fedproto.ROL{Program: good("many-payloads").Program, Payload: make([]*fedproto.BinaryBlob, 5)})                                              // too many payloads
	loop := good("looped")
	loop.FederateProvenance = []*fedproto.FederateProvenance{{FederationServerId: id.GetServerId()}}
	send(loop)
	hops := good("hopped")
	hops.FederateHops = &fedproto.FederateHops{MaxHops: 1, CurrentHops: 2}
	send(hops)
	send(good("fine-one"))
	send(good("fine-one"))                                                          // a copy
	send(&fedproto.ROL{Program: "assign mission\n{\"missionName\":\"fine-one\"};"}) // valid, not applied here
	send(&fedproto.ROL{Program: "create resource\n" + `{"name":"f.txt","hash":"` + hex.EncodeToString(sum[:]) + `","uid":"F-1"};`,
		Payload: []*fedproto.BinaryBlob{{Data: data}}})
	// A file whose metadata is hostile or over this server's limits is kept
	// under a safe name, without the rest.
	odd := []byte("odd file")
	oddSum := sha256.Sum256(odd)
	oddHash := hex.EncodeToString(oddSum[:])
	send(&fedproto.ROL{Program: "create resource\n" + `{"name":"../../etc/pass\u0000wd","hash":"` + oddHash + `","uid":"` + strings.Repeat("u", 300) + `"};`,
		Payload: []*fedproto.BinaryBlob{{Data: odd}}})
	send(good("fine-two"))
	testkit.WaitForWithin(t, fedWait, "the good missions on B", func() bool {
		return marti(t, b, "GET", "/Marti/api/missions/fine-two", nil).Status == 200
	})
	if res := marti(t, b, "GET", "/Marti/api/missions/fine-one", nil); res.Status != 200 {
		t.Fatalf("fine-one: %d", res.Status)
	}
	if res := marti(t, b, "GET", "/Marti/sync/content?hash="+hex.EncodeToString(sum[:]), nil); res.Status != 200 || !bytes.Equal(res.Body, data) {
		t.Fatalf("the federated file: %d %q", res.Status, res.Body)
	}
	p, err := b.Store().Files().DataPackageByHash(ctx, oddHash)
	if err != nil || strings.ContainsAny(p.Name, "/\x00") || p.Name == "" || len(p.UID) > 255 {
		t.Fatalf("the odd file: %+v %v", p, err)
	}
	for _, name := range []string{"looped", "hopped", "many-payloads"} {
		if res := marti(t, b, "GET", "/Marti/api/missions/"+name, nil); res.Status != 404 {
			t.Fatalf("%s was applied: %d", name, res.Status)
		}
	}
	st := fedStats(b, "tester")
	if st.ROLDroppedMalformed != 9 || st.ROLDroppedSize != 2 || st.ROLDroppedLoop != 2 || st.ROLDroppedDuplicate != 1 ||
		st.ROLIgnored != 1 || st.ROLApplied != 4 || st.FilesStored != 2 || !st.Connected {
		t.Fatalf("counters %+v", st)
	}
	// The link still carries B's changes to the tester.
	if res := marti(t, b, "PUT", "/Marti/api/missions/"+url.PathEscape("from-b")+"?creatorUid=B-1", nil); res.Status != 201 {
		t.Fatalf("create on B: %d %s", res.Status, res.Body)
	}
	for {
		r, err := rin.Recv()
		if err != nil {
			t.Fatalf("ROL stream from B: %v", err)
		}
		if strings.HasPrefix(r.GetProgram(), "create mission\n") && strings.Contains(r.GetProgram(), `"name":"from-b"`) {
			if len(r.GetFederateProvenance()) != 1 || r.GetFederateProvenance()[0].GetFederationServerId() != id.GetServerId() ||
				r.GetFederateHops().GetCurrentHops() != 1 || !strings.HasSuffix(r.GetProgram(), ";") {
				t.Fatalf("B sent %v", r)
			}
			break
		}
	}
}

// TestFederationMissionsReplay: a mission made on A while its federate B
// is not there yet reaches B, with its file, when the link comes up (the
// changes of the last federationQueueAge are replayed to a federate's first
// link); B does not replay it back to A, whose changes they are.
func TestFederationMissionsReplay(t *testing.T) {
	ca := newFedCA(t, "Federation CA")
	pB := fedHome(t)
	a := startFederated(t, ca, "alpha", "", "B="+pB)
	data := []byte("made before the link")
	hash := uploadFile(t, a, "early.txt", data)
	if res := marti(t, a, "PUT", "/Marti/api/missions/early?creatorUid=ANDROID-A", nil); res.Status != 201 {
		t.Fatalf("create mission: %d %s", res.Status, res.Body)
	}
	if res := marti(t, a, "PUT", "/Marti/api/missions/early/contents?creatorUid=ANDROID-A", map[string]any{"hashes": []string{hash}}); res.Status != 200 {
		t.Fatalf("add contents: %d %s", res.Status, res.Body)
	}
	if res := marti(t, a, "DELETE", "/Marti/api/missions/early/contents?creatorUid=ANDROID-A&hash="+hash, nil); res.Status != 200 {
		t.Fatalf("remove content: %d %s", res.Status, res.Body)
	}
	if res := marti(t, a, "PUT", "/Marti/api/missions/early/contents?creatorUid=ANDROID-A", map[string]any{"hashes": []string{hash}}); res.Status != 200 {
		t.Fatalf("add contents again: %d %s", res.Status, res.Body)
	}
	b := startFederated(t, ca, "bravo", pB)
	testkit.WaitForWithin(t, fedWait, "the mission on B with its file", missionHas(t, b, "early", hash, true))
	if res := marti(t, b, "GET", "/Marti/sync/content?hash="+hash, nil); res.Status != 200 || !bytes.Equal(res.Body, data) {
		t.Fatalf("the file on B: %d %q", res.Status, res.Body)
	}
	time.Sleep(fedQuiet)
	if st := fedStats(a, "B"); st.ROLApplied != 0 || st.ROLDroppedLoop != 0 {
		t.Fatalf("B sent A's changes back: %+v", st)
	}
	if st := fedStats(b, "alpha"); st.FilesStored != 1 || st.ROLFailed != 0 {
		t.Fatalf("B's counters: %+v", st)
	}
}

// waitUntil polls cond until it holds (true) or d passes (false).
func waitUntil(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
	return true
}

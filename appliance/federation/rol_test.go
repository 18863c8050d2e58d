package federation

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// The program forms the official server writes (MissionActionROLConverter.java)
// parse into their statements; what is not one of them is malformed.
func TestParseProgram(t *testing.T) {
	good := map[string][]string{
		"create mission\n{\"type\":\"MissionMetadata\",\"name\":\"m\"};":                                 {"create mission"},
		"delete mission\n{\"name\":\"m\",\"creatorUid\":\"u\"};":                                         {"delete mission"},
		"update mission\n{\"content\":{\"hashes\":[],\"uids\":[\"x\"]},\"changeType\":\"ADD_CONTENT\"};": {"update mission"},
		"  create resource {\"hash\":\"h\"} ;\n":                                                         {"create resource"},
		"create data_feed\n{};update mission\n{\"a\":[1,{\"b\":\";\"}]};":                                {"create data_feed", "update mission"},
	}
	for p, want := range good {
		sts, err := parseProgram(p)
		if err != nil {
			t.Errorf("%q: %v", p, err)
			continue
		}
		var got []string
		for _, st := range sts {
			got = append(got, st.op+" "+st.resource)
		}
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("%q: got %v, want %v", p, got, want)
		}
	}
	bad := []string{"", " \n", "create", "create mission", "create mission;", "create mission\n{};junk",
		"create mission\n{}", "create mission\n[1];", "create mission\nname;", "blow mission\n{};", "create moon\n{};",
		"create mission\n{\"a\":};", "CREATE mission\n{};", "create mission\n" + `{"name":"` + strings.Repeat("x", MaxProgram) + `"};`,
		strings.Repeat("create mission {};", maxStatements+1)}
	for _, p := range bad {
		if _, err := parseProgram(p); !errors.Is(err, errMalformed) {
			t.Errorf("%.40q: want malformed, got %v", p, err)
		}
	}
}

// What Outpost writes reads back the same.
func TestProgramRoundTrip(t *testing.T) {
	up := missionUpdate{Content: missionContent{Hashes: []string{strings.Repeat("a", 64)}, UIDs: []string{}}, CreatorUID: "u",
		ChangeType: changeAddContent, MissionName: "m; \"quoted\"", MissionTool: "public", Date: []byte("5")}
	p, err := program("update", "mission", up)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(p, "update mission\n{") || !strings.HasSuffix(p, "};") {
		t.Fatalf("program %q", p)
	}
	sts, err := parseProgram(p)
	if err != nil || len(sts) != 1 {
		t.Fatalf("%v %v", sts, err)
	}
	var back missionUpdate
	if err := decodeParams(sts[0].params, &back); err != nil || back.MissionName != up.MissionName || back.Content.Hashes[0] != up.Content.Hashes[0] || string(back.Date) != "5" {
		t.Fatalf("%+v %v", back, err)
	}
	// The official server's form, its date as a string or a number.
	for _, date := range []string{`1732000000000`, `"2024-11-19T07:06:40.000Z"`, `null`} {
		var got missionUpdate
		if err := decodeParams([]byte(`{"content":{"hashes":[],"uids":["u"],"paths":{},"after":null},"creatorUid":"c","changeType":"ADD_CONTENT","missionName":"m","missionCreatorUid":"c","missionChatRoom":"","missionTool":"public","missionDescription":"","date":`+date+`,"xmlContentForNotification":"<x/>"}`), &got); err != nil || got.Content.UIDs[0] != "u" {
			t.Fatalf("date %s: %+v %v", date, got, err)
		}
	}
	if err := decodeParams([]byte(`{"name":1}`), &missionMetadata{}); !errors.Is(err, errMalformed) {
		t.Fatalf("a number for a name: %v", err)
	}
}

func TestIsHash(t *testing.T) {
	if !isHash(strings.Repeat("aB", 32)) || isHash(strings.Repeat("g", 64)) || isHash("abc") {
		t.Fatal("isHash")
	}
}

// A received program is whatever a federate sends: parsing never panics,
// and what parses holds at most maxStatements statements, each with
// parameters that are one JSON object.
func FuzzROLProgram(f *testing.F) {
	up, _ := program("update", "mission", missionUpdate{MissionName: "m", ChangeType: changeAddContent})
	for _, s := range []string{up, "create mission\n{\"name\":\"x\"};", "delete mission {};\ncreate resource {};", "create", "create mission", "create mission {", "create mission {};;", "update mission \"x\";"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		sts, err := parseProgram(p)
		if err != nil {
			if !errors.Is(err, errMalformed) || sts != nil {
				t.Fatalf("%q: %v, %d statements", p, err, len(sts))
			}
			return
		}
		if len(sts) == 0 || len(sts) > maxStatements {
			t.Fatalf("%q: %d statements", p, len(sts))
		}
		for _, st := range sts {
			if !rolOperations[st.op] || !rolResources[st.resource] {
				t.Fatalf("%q: statement %q %q", p, st.op, st.resource)
			}
			var obj map[string]json.RawMessage
			if err := json.Unmarshal(st.params, &obj); err != nil {
				t.Fatalf("%q: parameters %q are not an object: %v", p, st.params, err)
			}
		}
	})
}

package httpapi

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestMuxJSONFallbacks(t *testing.T) {
	m := NewMux(nil)
	m.HandleFunc("GET /thing", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })
	m.HandleFunc("PUT /thing", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })
	m.HandleFunc("GET /dir/", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "dir") })
	srv := httptest.NewServer(m)
	defer srv.Close()
	cases := []struct {
		method, path string
		status       int
		body, allow  string
	}{
		{"GET", "/thing", 200, "ok", ""},
		{"DELETE", "/thing", 405, `"message":"method DELETE not allowed on /thing"`, "GET, HEAD, PUT"},
		{"GET", "/nothing", 404, `"message":"no such endpoint: GET /nothing"`, ""},
		{"POST", "/nothing", 404, `no such endpoint`, ""},
		{"GET", "/dir/x", 200, "dir", ""},
	}
	for _, tc := range cases {
		req, _ := http.NewRequest(tc.method, srv.URL+tc.path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.status || !strings.Contains(string(b), tc.body) {
			t.Errorf("%s %s = %d %s, want %d with %s", tc.method, tc.path, resp.StatusCode, b, tc.status, tc.body)
		}
		if tc.status >= 400 && resp.Header.Get("Content-Type") != "application/json" {
			t.Errorf("%s %s: content type %q", tc.method, tc.path, resp.Header.Get("Content-Type"))
		}
		if tc.allow != "" && resp.Header.Get("Allow") != tc.allow {
			t.Errorf("%s %s: Allow %q, want %q", tc.method, tc.path, resp.Header.Get("Allow"), tc.allow)
		}
	}
}

func TestDecodeJSON(t *testing.T) {
	type body struct {
		Name  string  `json:"name"`
		Count int     `json:"count"`
		Lat   float64 `json:"lat"`
		Inner struct {
			On bool `json:"on"`
		} `json:"inner"`
	}
	cases := []struct {
		in     string
		status int
		msg    string
	}{
		{`{"name":"a","count":2,"extra":1}`, 0, ""},
		{``, 400, "request body is empty"},
		{`{"name":`, 400, "ends too early"},
		{`{"name" 1}`, 400, "malformed JSON at byte"},
		{`{"count":"x"}`, 400, "count: must be a whole number, not string"},
		{`{"count":1.5}`, 400, "count: must be a whole number, not number 1.5"},
		{`{"lat":"north"}`, 400, "lat: must be a number, not string"},
		{`{"inner":{"on":"yes"}}`, 400, "inner.on: must be true or false"},
		{`[1,2]`, 400, "the body must be an object, not array"},
		{`{} {}`, 400, "more than one value"},
		{`{"name":"` + strings.Repeat("x", 200) + `"}`, 413, "larger than 100 bytes"},
	}
	for _, tc := range cases {
		r := httptest.NewRequest("POST", "/", strings.NewReader(tc.in))
		var b body
		err := DecodeJSON(r, 100, &b)
		if tc.status == 0 {
			if err != nil {
				t.Errorf("%q: %v", tc.in, err)
			}
			continue
		}
		e, ok := err.(*Error)
		if !ok || e.Status != tc.status || !strings.Contains(e.Msg, tc.msg) {
			t.Errorf("%q: got %v (%T), want %d %q", tc.in, err, err, tc.status, tc.msg)
		}
	}
}

func TestDecodeValue(t *testing.T) {
	var item struct {
		Name  string `json:"Name"`
		Inner struct {
			N int `json:"n"`
		} `json:"inner"`
	}
	if err := DecodeValue([]byte(`{"Name":"a","inner":{"n":2}}`), &item, "systemUsers[0]"); err != nil || item.Name != "a" || item.Inner.N != 2 {
		t.Fatalf("%+v %v", item, err)
	}
	for in, want := range map[string]string{
		`{"Name":5}`:          "systemUsers[3].Name: must be a string, not number",
		`{"inner":{"n":"x"}}`: "systemUsers[3].inner.n: must be a whole number, not string",
		`"just a string"`:     "systemUsers[3]: must be an object, not string",
	} {
		err := DecodeValue([]byte(in), &item, "systemUsers[3]")
		e, ok := err.(*Error)
		if !ok || e.Status != 400 || e.Msg != want {
			t.Errorf("%s: %v, want %q", in, err, want)
		}
	}
}

func TestWriteTextAndBody(t *testing.T) {
	rec := httptest.NewRecorder()
	WriteText(rec, 200, "Okay")
	if rec.Code != 200 || rec.Body.String() != "Okay" || rec.Header().Get("Content-Type") != "text/plain; charset=utf-8" || rec.Header().Get("Content-Length") != "4" {
		t.Fatalf("%d %q %v", rec.Code, rec.Body, rec.Header())
	}
	rec = httptest.NewRecorder()
	WriteJSONAs(rec, 201, JSONText, map[string]int{"a": 1})
	if rec.Code != 201 || rec.Body.String() != `{"a":1}`+"\n" || rec.Header().Get("Content-Type") != JSONText {
		t.Fatalf("%d %q %v", rec.Code, rec.Body, rec.Header())
	}
}

func TestCheckTextAndHash(t *testing.T) {
	for _, tc := range []struct {
		v        string
		required bool
		want     string
	}{
		{"", true, "f: required"},
		{"", false, ""},
		{"ok", true, ""},
		{"toolong", true, "f: longer than 5 bytes"},
		{"a\x01", true, "f: contains a control character"},
		{"\xff", true, "f: not valid UTF-8"},
	} {
		err := CheckText("f", tc.v, tc.required, 5)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("CheckText(%q): %q, want %q", tc.v, got, tc.want)
		}
	}
	h := strings.Repeat("AB", 32)
	if got, err := CheckHash("hash", h); err != nil || got != strings.ToLower(h) {
		t.Fatalf("CheckHash: %q %v", got, err)
	}
	for _, bad := range []string{"", "abc", strings.Repeat("zz", 32), strings.Repeat("ab", 33)} {
		if _, err := CheckHash("hash", bad); err == nil || !strings.HasPrefix(err.Error(), "hash: ") {
			t.Errorf("CheckHash(%q): %v", bad, err)
		}
	}
	if got := ClipValue(strings.Repeat("é", 30)); len(got) > 40+len("…") || !strings.HasSuffix(got, "…") || !utf8.ValidString(got) {
		t.Fatalf("ClipValue cut a character: %q", got)
	}
}

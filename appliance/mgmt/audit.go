package mgmt

// Audit (api.md §5.5): every call authenticated as a system user is recorded
// with the user's uid and name, the time, the client address, the method, the
// endpoint (path and query), the answer's status and the request body. API
// users' calls are not recorded. What is kept of a body:
//   - JSON: re-encoded with the value of every key containing "password",
//     "token" or "secret" (any case, at any depth) replaced by "***", then
//     clipped to auditBodyMax bytes; the query string is masked the same way;
//   - uploads (multipart): a note with the file name and size, never the
//     content (the upload handler writes it, see setAuditNote);
//   - anything else: a note with its size and type.
// The record is written after the handler has answered, before the response
// is complete, so a client that has its answer can read its audit record. A
// call whose client went away before the answer is recorded with status 499.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"

	"outpost/appliance/access"
	"outpost/appliance/httpapi"
	"outpost/appliance/logx"
	"outpost/appliance/store"
)

const (
	auditCaptureMax = 64 << 10 // request bytes kept for the record
	auditBodyMax    = 4 << 10  // recorded body after masking
	masked          = "***"
)

type auditNoteKey struct{}

// auditNote is what a handler says about the body instead of the body.
type auditNote struct{ text string }

// setAuditNote replaces the recorded body of this request (uploads).
func setAuditNote(r *http.Request, format string, args ...any) {
	if n, ok := r.Context().Value(auditNoteKey{}).(*auditNote); ok {
		n.text = fmt.Sprintf(format, args...)
	}
}

// audited runs next and records the call of system user p.
func (a *API) audited(w http.ResponseWriter, r *http.Request, p access.Principal, next http.Handler) {
	start := a.opts.Now()
	capture := &captureBody{rc: r.Body, keep: !isMultipart(r)}
	r.Body = capture
	note := &auditNote{}
	r = r.WithContext(context.WithValue(r.Context(), auditNoteKey{}, note))
	sw := &statusWriter{ResponseWriter: w}
	next.ServeHTTP(sw, r)
	status := sw.code()
	if sw.status == 0 && r.Context().Err() != nil {
		status = statusClientGone
	}
	a.recordAudit(r, p, start, status, capture, note.text)
}

// statusClientGone is the status recorded for a call whose client went away
// before it was answered (the convention of nginx's 499).
const statusClientGone = 499

// recordAudit writes one audit record; a failure is logged, never answered.
func (a *API) recordAudit(r *http.Request, p access.Principal, at time.Time, status int, body *captureBody, note string) {
	e := store.AuditEntry{
		At:       at,
		UserUID:  p.UID,
		UserName: p.Name,
		Remote:   httpapi.ClientAddr(r).String(),
		Method:   r.Method,
		Endpoint: maskedEndpoint(r.URL),
		Status:   status,
		Body:     note,
		BodySize: body.n,
	}
	if note == "" {
		e.Body = recordedBody(r.Header.Get("Content-Type"), body)
	}
	if err := a.opts.Accounts.AddAudit(context.WithoutCancel(r.Context()), e); err != nil {
		a.log.Error("could not record an audit entry", "user", logx.Clip(p.Name), "method", r.Method,
			"path", logx.Clip(r.URL.Path), "err", err)
	}
}

// captureBody counts what the handler reads and keeps the first
// auditCaptureMax bytes when keep is set.
type captureBody struct {
	rc        io.ReadCloser
	keep      bool
	buf       bytes.Buffer
	n         int64
	truncated bool
}

func (c *captureBody) Read(p []byte) (int, error) {
	k, err := c.rc.Read(p)
	c.n += int64(k)
	if c.keep && k > 0 {
		room := auditCaptureMax - c.buf.Len()
		if room < k {
			c.truncated = true
		}
		if room > 0 {
			c.buf.Write(p[:min(k, room)])
		}
	}
	return k, err
}

func (c *captureBody) Close() error { return c.rc.Close() }

func isMultipart(r *http.Request) bool {
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return strings.HasPrefix(mt, "multipart/")
}

// recordedBody is what the audit keeps of a body (see the file comment).
func recordedBody(contentType string, c *captureBody) string {
	if c.n == 0 {
		return ""
	}
	if !c.keep {
		return fmt.Sprintf("<%d bytes of %s, not recorded>", c.n, logx.Clip(contentType))
	}
	if c.truncated {
		return fmt.Sprintf("<%d bytes, too large to record>", c.n)
	}
	dec := json.NewDecoder(bytes.NewReader(c.buf.Bytes()))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || dec.More() {
		mt := contentType
		if mt == "" {
			mt = "an unnamed type"
		}
		return fmt.Sprintf("<%d bytes of %s that are not JSON, not recorded>", c.n, logx.Clip(mt))
	}
	out, err := json.Marshal(maskSecrets(v))
	if err != nil {
		return fmt.Sprintf("<%d bytes of JSON, not recorded>", c.n)
	}
	return logx.ClipN(string(out), auditBodyMax)
}

// isSecretKey reports whether a JSON key or query parameter names a secret.
func isSecretKey(k string) bool {
	k = strings.ToLower(k)
	return strings.Contains(k, "password") || strings.Contains(k, "token") || strings.Contains(k, "secret")
}

// maskSecrets replaces the value of every secret-named key, at any depth.
func maskSecrets(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, val := range t {
			if isSecretKey(k) {
				t[k] = masked
			} else {
				t[k] = maskSecrets(val)
			}
		}
		return t
	case []any:
		for i := range t {
			t[i] = maskSecrets(t[i])
		}
		return t
	default:
		return v
	}
}

// maskedEndpoint is the path and query with secret-named parameters masked.
func maskedEndpoint(u *url.URL) string {
	p := u.EscapedPath() // escaped: a %0A in the path stays three characters
	if u.RawQuery == "" {
		return p
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return p + "?<unparsable query>"
	}
	for k := range q {
		if isSecretKey(k) {
			q[k] = []string{masked}
		}
	}
	return p + "?" + q.Encode()
}

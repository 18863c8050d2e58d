package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"outpost/appliance/cot"
)

// FormatTime formats t as every JSON answer carries times: cot.TimeFormat
// (ISO 8601 UTC with milliseconds, docs/api.md "Conventions"). The zero
// time is "".
func FormatTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return cot.FormatTime(t)
}

// WriteJSON writes v as a JSON response with the status.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	WriteJSONAs(w, status, "application/json", v)
}

// JSONText is the JSON media type with its charset: the answers some
// clients read as text and parse themselves (they take a bare
// "application/json" for an already parsed object).
const JSONText = "application/json; charset=utf-8"

// WriteJSONAs is WriteJSON with another Content-Type (JSONText).
func WriteJSONAs(w http.ResponseWriter, status int, contentType string, v any) {
	w.Header().Set("Content-Type", contentType)
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// WriteText writes a plain-text answer (text/plain; charset=utf-8).
func WriteText(w http.ResponseWriter, status int, text string) {
	WriteBody(w, status, "text/plain; charset=utf-8", []byte(text))
}

// WriteBody writes body with its Content-Type (XML documents, CoT).
func WriteBody(w http.ResponseWriter, status int, contentType string, body []byte) {
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	w.Write(body)
}

// Message is the body of every error answer, and of the answers the
// interface specifies as a message.
type Message struct {
	Message string `json:"message"`
}

// WriteMessage writes {"message": msg} with the status.
func WriteMessage(w http.ResponseWriter, status int, msg string) {
	WriteJSON(w, status, Message{Message: msg})
}

// Error is a client mistake with its HTTP status (400 unless said); a 429
// says when to try again (Wait, Retry-After).
type Error struct {
	Status int
	Msg    string
	Wait   time.Duration
}

func (e *Error) Error() string { return e.Msg }

// RetryAfter is when a 429 may be tried again (Fail's Retry-After).
func (e *Error) RetryAfter() time.Duration { return e.Wait }

// BadRequest returns a 400 error whose message is "<field>: <what>" (or
// just what when field is empty).
func BadRequest(field, format string, args ...any) *Error {
	msg := fmt.Sprintf(format, args...)
	if field != "" {
		msg = field + ": " + msg
	}
	return &Error{Status: http.StatusBadRequest, Msg: msg}
}

// Errorf returns an error with the status and message.
func Errorf(status int, format string, args ...any) *Error {
	return &Error{Status: status, Msg: fmt.Sprintf(format, args...)}
}

// DefaultMaxJSON is the largest JSON request body DecodeJSON reads unless
// told otherwise.
const DefaultMaxJSON = 1 << 20

// DecodeJSON reads one JSON value from r's body (at most limit bytes; 0
// means DefaultMaxJSON) into dst. A body that is too large is a 413; empty,
// malformed or wrongly typed bodies are 400 errors that name the field.
// Unknown fields are accepted (clients send more than we read).
func DecodeJSON(r *http.Request, limit int64, dst any) error {
	if limit <= 0 {
		limit = DefaultMaxJSON
	}
	return decodeBody(http.MaxBytesReader(nil, r.Body, limit), limit, dst)
}

// DecodeJSONBytes is DecodeJSON of a body already read (a socket.io
// event's argument), with the same answers.
func DecodeJSONBytes(data []byte, dst any) error {
	return decodeBody(bytes.NewReader(data), int64(len(data)), dst)
}

func decodeBody(body io.Reader, limit int64, dst any) error {
	dec := json.NewDecoder(body)
	dec.UseNumber()
	if err := dec.Decode(dst); err != nil {
		return decodeError(err, limit)
	}
	// Anything but whitespace after the value is a malformed body.
	if _, err := dec.Token(); err != io.EOF {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return decodeError(err, limit)
		}
		return BadRequest("", "malformed JSON: more than one value in the body")
	}
	return nil
}

// DecodeValue decodes data, one JSON value inside a larger body (an item of
// an array), into dst. Type errors are 400s naming field and the path inside
// the item ("systemUsers[2].Certs: must be ..."); unknown fields are
// accepted.
func DecodeValue(data []byte, dst any, field string) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	err := dec.Decode(dst)
	if err == nil {
		return nil
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		path := field
		if te.Field != "" {
			path += "." + te.Field
		}
		return BadRequest(path, "must be %s, not %s", jsonKind(te.Type.Kind().String()), te.Value)
	}
	return BadRequest(field, "malformed JSON: %s", strings.TrimPrefix(err.Error(), "json: "))
}

func decodeError(err error, limit int64) error {
	var (
		mbe *http.MaxBytesError
		se  *json.SyntaxError
		te  *json.UnmarshalTypeError
	)
	switch {
	case errors.As(err, &mbe):
		return Errorf(http.StatusRequestEntityTooLarge, "request body larger than %d bytes", limit)
	case errors.Is(err, io.EOF):
		return BadRequest("", "request body is empty; a JSON object is required")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return BadRequest("", "malformed JSON: the body ends too early")
	case errors.As(err, &se):
		return BadRequest("", "malformed JSON at byte %d: %s", se.Offset, se.Error())
	case errors.As(err, &te):
		field := te.Field
		if field == "" {
			return BadRequest("", "the body must be %s, not %s", jsonKind(te.Type.Kind().String()), te.Value)
		}
		return BadRequest(field, "must be %s, not %s", jsonKind(te.Type.Kind().String()), te.Value)
	default:
		return BadRequest("", "malformed JSON: %s", strings.TrimPrefix(err.Error(), "json: "))
	}
}

// jsonKind names a Go kind the way a JSON client thinks of it.
func jsonKind(k string) string {
	switch k {
	case "string":
		return "a string"
	case "bool":
		return "true or false"
	case "struct", "map":
		return "an object"
	case "slice", "array":
		return "an array"
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64":
		return "a whole number"
	case "float32", "float64":
		return "a number"
	default:
		return "a " + k
	}
}

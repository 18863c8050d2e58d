package httpapi

// The one handler shape (architecture.md "Conventions"): every route of the
// client API, enrollment and the management API is a HandlerFunc. It writes
// its answer, or returns why it could not; ServeHTTP hands that error to
// Fail, the one edge, so no handler writes a failure of its own.

import (
	"errors"
	"net/http"
)

// HandlerFunc is a route's handler: nil once it answered, or the failure
// Fail answers (a refusal with its status, or a fault of ours with 500).
type HandlerFunc func(w http.ResponseWriter, r *http.Request) error

// ServeHTTP runs f and answers its error through Fail, with the text
// Internal gave it for a fault of ours (the route's text of api.md §7) or
// internalText.
func (f HandlerFunc) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if err := f(w, r); err != nil {
		Fail(w, r, err, InternalText(err))
	}
}

// Serve adapts a handler that never fails (it answers everything itself,
// such as another package's protocol server) to a route.
func Serve(h http.Handler) HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		h.ServeHTTP(w, r)
		return nil
	}
}

// internalText is the answer of a fault of ours that Internal did not name.
const internalText = "internal server error"

// Internal gives err the text a client reads if err is a fault of ours
// (500): the route's text of api.md §7, never the error's own words. A
// refusal (an *Error, or an error of a fault kind) is answered as such
// whatever msg says. Nil stays nil.
func Internal(err error, msg string) error {
	if err == nil {
		return nil
	}
	return &internalError{err: err, msg: msg}
}

// InternalText is the text Internal gave err (the outermost), or the
// default.
func InternalText(err error) string {
	var ie *internalError
	if errors.As(err, &ie) {
		return ie.msg
	}
	return internalText
}

type internalError struct {
	err error
	msg string
}

func (e *internalError) Error() string { return e.err.Error() }
func (e *internalError) Unwrap() error { return e.err }

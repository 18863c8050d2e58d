package httpapi

// The error edge (architecture.md "Conventions"): every HTTP handler of every
// listener answers a failure with Fail, and this file is the one table from
// what a failure means (its fault kind) to the status a client sees.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"outpost/appliance/fault"
	"outpost/appliance/logx"
)

// statusOf is the status of each kind of failure a client can cause.
var statusOf = map[fault.Kind]int{
	fault.Invalid:        http.StatusBadRequest,
	fault.Unauthorized:   http.StatusUnauthorized,
	fault.Forbidden:      http.StatusForbidden,
	fault.BadCredentials: http.StatusForbidden,
	fault.NotFound:       http.StatusNotFound,
	fault.Conflict:       http.StatusConflict,
	fault.TooLarge:       http.StatusRequestEntityTooLarge,
	fault.Busy:           http.StatusTooManyRequests,
	fault.NoSpace:        http.StatusInsufficientStorage,
}

// busyRetry is the Retry-After of a fault.Busy answer without a wait of its
// own.
const busyRetry = time.Second

// Fail answers err, the failure of the request r:
//   - an *Error (a refusal the handler wrote itself): its status and message;
//   - an error of a fault kind (a sentinel of the store or a service): the
//     kind's status and the error's reason (fault.Detail), prefixed with the
//     request field InField named; a Busy one with Retry-After (the
//     error's RetryAfter() when it has one, else a second);
//   - the client went away: nothing to answer (logged at debug level, since a
//     client could otherwise fill the log);
//   - anything else is a fault of ours: logged with the route, answered 500
//     with internalMsg (the route's text of api.md §7), never with the
//     error's own words.
func Fail(w http.ResponseWriter, r *http.Request, err error, internalMsg string) {
	if status, msg, ok := Refusal(err); ok {
		if status == http.StatusTooManyRequests {
			wait := busyRetry
			var ra interface{ RetryAfter() time.Duration }
			if errors.As(err, &ra) && ra.RetryAfter() > 0 {
				wait = ra.RetryAfter()
			}
			WriteTooManyRequests(w, wait, msg)
			return
		}
		WriteMessage(w, status, msg)
		return
	}
	log := loggerOf(r)
	if r.Context().Err() != nil || errors.Is(err, context.Canceled) {
		log.Debug("request abandoned: the client went away", "method", r.Method, "route", route(r), "err", err)
		return
	}
	log.Error("request failed", "method", r.Method, "route", route(r), "err", err)
	WriteMessage(w, http.StatusInternalServerError, internalMsg)
}

// Refusal is the status and message a client is answered for err when err is
// the client's doing (an *Error, or an error of a fault kind); ok is false
// for a fault of ours.
func Refusal(err error) (status int, msg string, ok bool) {
	var e *Error
	if errors.As(err, &e) {
		return e.Status, e.Msg, true
	}
	status, ok = statusOf[fault.KindOf(err)]
	if !ok {
		return 0, "", false
	}
	msg = fault.Detail(err)
	var f *fieldError
	if errors.As(err, &f) && f.field != "" {
		msg = f.field + ": " + msg
	}
	return status, msg, true
}

// InField marks err as being about the request field: a client's answer
// names it ("DataPackages: no package with hash …").
func InField(field string, err error) error {
	if err == nil {
		return nil
	}
	return &fieldError{field: field, err: err}
}

type fieldError struct {
	field string
	err   error
}

func (f *fieldError) Error() string { return fmt.Sprintf("%s: %v", f.field, f.err) }
func (f *fieldError) Unwrap() error { return f.err }

// route is the pattern that answered r (bounded, unlike the path).
func route(r *http.Request) string {
	if r.Pattern != "" {
		return r.Pattern
	}
	return logx.Clip(r.URL.Path)
}

type loggerKey struct{}

// WithLogger returns r carrying log, the logger Fail writes a fault of ours
// to: for middleware that answers before any route (and its Mux) runs. A
// Mux sets its own for its routes.
func WithLogger(r *http.Request, log *slog.Logger) *http.Request {
	return r.WithContext(context.WithValue(r.Context(), loggerKey{}, log))
}

// loggerOf is the logger the request's Mux (or WithLogger) gave it.
func loggerOf(r *http.Request) *slog.Logger {
	if l, ok := r.Context().Value(loggerKey{}).(*slog.Logger); ok {
		return l
	}
	return slog.Default()
}

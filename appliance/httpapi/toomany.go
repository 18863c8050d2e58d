package httpapi

import (
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// RetryAfter is wait in whole seconds, rounded up, at least 1: the value of a
// Retry-After header.
func RetryAfter(wait time.Duration) int {
	return max(int((wait+time.Second-1)/time.Second), 1)
}

// WriteTooManyRequests answers 429 with Retry-After and {"message": msg}.
func WriteTooManyRequests(w http.ResponseWriter, wait time.Duration, msg string) {
	w.Header().Set("Retry-After", strconv.Itoa(RetryAfter(wait)))
	WriteMessage(w, http.StatusTooManyRequests, msg)
}

// TooManyRequests is a 429 refusal a handler returns to Fail: try again
// after wait.
func TooManyRequests(wait time.Duration, format string, args ...any) *Error {
	return &Error{Status: http.StatusTooManyRequests, Msg: fmt.Sprintf(format, args...), Wait: wait}
}

package httpapi

import (
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

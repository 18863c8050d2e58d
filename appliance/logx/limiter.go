package logx

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// Limiter rate-limits one kind of log line that clients can cause (a
// refused connection, a malformed event, a failed accept): at most Burst
// lines per Interval are written; the rest are counted, and the next line
// written says how many were suppressed since the previous one. It is safe
// for concurrent use; the zero value is not usable, use NewLimiter.
type Limiter struct {
	log      *slog.Logger
	interval time.Duration
	burst    int
	now      func() time.Time

	mu          sync.Mutex // mu guards windowStart, inWindow and suppressed
	windowStart time.Time
	inWindow    int
	suppressed  uint64
}

// NewLimiter returns a limiter writing to log at most burst lines per
// interval.
func NewLimiter(log *slog.Logger, burst int, interval time.Duration) *Limiter {
	if burst < 1 {
		burst = 1
	}
	return &Limiter{log: log, interval: interval, burst: burst, now: time.Now}
}

// Log writes the line at level unless the limit is reached, in which case it
// is counted and dropped. It reports whether the line was written.
func (l *Limiter) Log(level slog.Level, msg string, args ...any) bool {
	if !l.log.Enabled(context.Background(), level) {
		return false
	}
	l.mu.Lock()
	now := l.now()
	if now.Sub(l.windowStart) >= l.interval {
		l.windowStart, l.inWindow = now, 0
	}
	if l.inWindow >= l.burst {
		l.suppressed++
		l.mu.Unlock()
		return false
	}
	l.inWindow++
	n := l.suppressed
	l.suppressed = 0
	l.mu.Unlock()
	if n > 0 {
		args = append(args, slog.Uint64("suppressed", n))
	}
	l.log.Log(context.Background(), level, msg, args...)
	return true
}

// Warn is Log at warning level.
func (l *Limiter) Warn(msg string, args ...any) bool { return l.Log(slog.LevelWarn, msg, args...) }

// Info is Log at info level.
func (l *Limiter) Info(msg string, args ...any) bool { return l.Log(slog.LevelInfo, msg, args...) }

// Debug is Log at debug level.
func (l *Limiter) Debug(msg string, args ...any) bool { return l.Log(slog.LevelDebug, msg, args...) }

package service

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"strconv"
	"sync"
)

// LogHandler returns the slog handler the process logs through, writing
// text (or JSON when json is set) to w:
//
//   - under journald (systemd connected stderr to the journal: JOURNAL_STREAM
//     names stderr), each line starts with its syslog priority ("<6>" for
//     info, "<4>" for warnings, ...; journald turns it into the entry's
//     priority, so `journalctl -p warning` works) and carries no timestamp:
//     the journal stamps every entry itself;
//   - under the Windows service manager, records go to the Windows Event
//     Log (source "outpost") and w is not used;
//   - otherwise lines are written unchanged, with their timestamp.
func LogHandler(w io.Writer, json bool, opts *slog.HandlerOptions) slog.Handler {
	if h := platformLogHandler(json, opts); h != nil {
		return h
	}
	if underJournald() {
		return JournaldHandler(w, json, opts)
	}
	if json {
		return slog.NewJSONHandler(w, opts)
	}
	return slog.NewTextHandler(w, opts)
}

// JournaldHandler is the handler LogHandler uses under journald: no
// timestamp, and each line prefixed with its syslog priority (sd-daemon(3)).
func JournaldHandler(w io.Writer, json bool, opts *slog.HandlerOptions) slog.Handler {
	return newLineHandler(json, withoutTime(opts), func(level slog.Level, line []byte) {
		buf := make([]byte, 0, len(line)+3)
		buf = append(buf, '<')
		buf = strconv.AppendInt(buf, int64(syslogPriority(level)), 10)
		buf = append(buf, '>')
		w.Write(append(buf, line...))
	})
}

// syslogPriority maps a slog level to the syslog priority journald reads
// from the line prefix: err 3, warning 4, info 6, debug 7.
func syslogPriority(l slog.Level) int {
	switch {
	case l >= slog.LevelError:
		return 3
	case l >= slog.LevelWarn:
		return 4
	case l >= slog.LevelInfo:
		return 6
	default:
		return 7
	}
}

// withoutTime copies opts and drops the time attribute of every record.
func withoutTime(opts *slog.HandlerOptions) *slog.HandlerOptions {
	o := slog.HandlerOptions{}
	if opts != nil {
		o = *opts
	}
	replace := o.ReplaceAttr
	o.ReplaceAttr = func(groups []string, a slog.Attr) slog.Attr {
		if len(groups) == 0 && a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		if replace != nil {
			return replace(groups, a)
		}
		return a
	}
	return &o
}

// lineHandler formats each record with a standard text or JSON handler into
// a buffer and hands the finished line, with the record's level, to emit.
type lineHandler struct {
	inner slog.Handler
	st    *lineState
}

// lineState is shared by a handler and every handler derived from it
// (WithAttrs, WithGroup). mu guards buf and serialises emit.
type lineState struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	emit func(slog.Level, []byte)
}

func (s *lineState) Write(p []byte) (int, error) { return s.buf.Write(p) }

func newLineHandler(json bool, opts *slog.HandlerOptions, emit func(slog.Level, []byte)) *lineHandler {
	st := &lineState{emit: emit}
	var inner slog.Handler = slog.NewTextHandler(st, opts)
	if json {
		inner = slog.NewJSONHandler(st, opts)
	}
	return &lineHandler{inner: inner, st: st}
}

func (h *lineHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.inner.Enabled(ctx, l)
}

func (h *lineHandler) Handle(ctx context.Context, r slog.Record) error {
	h.st.mu.Lock()
	defer h.st.mu.Unlock()
	h.st.buf.Reset()
	if err := h.inner.Handle(ctx, r); err != nil {
		return err
	}
	h.st.emit(r.Level, h.st.buf.Bytes())
	return nil
}

func (h *lineHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &lineHandler{inner: h.inner.WithAttrs(as), st: h.st}
}

func (h *lineHandler) WithGroup(name string) slog.Handler {
	return &lineHandler{inner: h.inner.WithGroup(name), st: h.st}
}

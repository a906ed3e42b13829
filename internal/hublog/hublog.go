// Package hublog keeps the hub's own log where a person can read it: a bounded in-memory ring
// of the newest records (what the dashboard's Logs view shows and follows) and, optionally, a
// size-rotated text file. It is a log/slog handler, teed beside whatever handler the mode
// already writes to (stderr in serve mode, nothing in the desktop app), so every warning the hub
// logs is kept even when no terminal shows it.
package hublog

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"gopkg.in/natefinch/lumberjack.v2"

	"github.com/switchboard-hub/switchboard/internal/listeners"
)

// Record is one line of the hub's log.
type Record struct {
	// Seq numbers the records of one hub from 1, with no gaps: a follower that saw n has
	// missed nothing when the next one it gets is n+1.
	Seq   uint64    `json:"seq"`
	Time  time.Time `json:"time"`
	Level string    `json:"level" tstype:"'DEBUG' | 'INFO' | 'WARN' | 'ERROR' | string"`
	Msg   string    `json:"msg"`
	// Attrs are the record's attributes in order, groups flattened to dotted keys, values as
	// text.
	Attrs []Attr `json:"attrs,omitempty"`
}

// Attr is one key=value of a record.
type Attr struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// Options configure a Ring.
type Options struct {
	// Size is how many records the ring keeps (default DefaultSize).
	Size int
	// Level is the lowest level kept (default Info: debug chatter would push the warnings out).
	Level slog.Leveler
	// File, when set, also receives every kept record as a slog text line, rotated by size.
	File       string
	MaxSizeMB  int // default 5
	MaxBackups int // default 3
}

// DefaultSize is how many records a Ring keeps by default: hours of a quiet hub, and a bounded
// few hundred KiB however noisy it gets.
const DefaultSize = 1000

// Ring holds the newest records. It is safe for concurrent use.
type Ring struct {
	level slog.Leveler
	file  string
	fileH slog.Handler // nil without a file
	close func() error // closes the file; safe to call more than once

	mu   sync.Mutex
	buf  []Record // ring storage; len <= cap
	next int      // where the next record goes once full
	seq  uint64

	added listeners.Set[Record]
}

// New makes a ring (and opens the file, creating its directory).
func New(o Options) (*Ring, error) {
	size := o.Size
	if size <= 0 {
		size = DefaultSize
	}
	level := o.Level
	if level == nil {
		level = slog.LevelInfo
	}
	r := &Ring{level: level, buf: make([]Record, 0, size), close: func() error { return nil }}
	if o.File != "" {
		if err := os.MkdirAll(filepath.Dir(o.File), 0o700); err != nil {
			return nil, fmt.Errorf("hub log dir: %w", err)
		}
		w := &fileWriter{lj: &lumberjack.Logger{Filename: o.File, MaxSize: orDefault(o.MaxSizeMB, 5), MaxBackups: orDefault(o.MaxBackups, 3)}}
		// Several hubs may share the file (the desktop app and the stdio hubs clients start):
		// the pid tells their lines apart.
		r.fileH = slog.NewTextHandler(w, &slog.HandlerOptions{Level: level}).WithAttrs([]slog.Attr{slog.Int("pid", os.Getpid())})
		r.file = o.File
		r.close = w.Close
	}
	return r, nil
}

func orDefault(v, d int) int {
	if v <= 0 {
		return d
	}
	return v
}

// File is the rotated log file ("" when there is none).
func (r *Ring) File() string { return r.file }

// Close closes the file; records are still kept in memory after it.
func (r *Ring) Close() error {
	return r.close()
}

// Handler is the slog handler that feeds the ring (and the file).
func (r *Ring) Handler() slog.Handler { return &handler{r: r, file: r.fileH} }

// OnRecord registers fn for every record kept from now on; the returned func unregisters it. fn
// runs inside the logging call: it must return quickly and must not log (hand the record to a
// goroutine of your own to do more).
func (r *Ring) OnRecord(fn func(Record)) (cancel func()) { return r.added.Add(fn) }

func (r *Ring) add(rec Record) Record {
	r.mu.Lock()
	r.seq++
	rec.Seq = r.seq
	if len(r.buf) < cap(r.buf) {
		r.buf = append(r.buf, rec)
	} else {
		r.buf[r.next] = rec
		r.next = (r.next + 1) % len(r.buf)
	}
	r.mu.Unlock()
	r.added.Notify(rec)
	return rec
}

// Query selects records.
type Query struct {
	MinLevel slog.Level // records at this level or above
	Limit    int        // the newest Limit (0: all kept)
	After    uint64     // only records with a greater Seq
}

// Records returns the matching records, oldest first.
func (r *Ring) Records(q Query) []Record {
	r.mu.Lock()
	all := make([]Record, 0, len(r.buf))
	all = append(all, r.buf[r.next:]...)
	all = append(all, r.buf[:r.next]...)
	r.mu.Unlock()
	out := all[:0]
	for _, rec := range all {
		if rec.Seq > q.After && levelOf(rec.Level) >= q.MinLevel {
			out = append(out, rec)
		}
	}
	if q.Limit > 0 && len(out) > q.Limit {
		out = out[len(out)-q.Limit:]
	}
	return slices.Clip(out)
}

// ParseLevel reads a level filter: debug, info, warn (warning) or error, any case; "" is info.
func ParseLevel(s string) (slog.Level, error) {
	switch strings.ToLower(s) {
	case "", "info":
		return slog.LevelInfo, nil
	case "debug":
		return slog.LevelDebug, nil
	case "warn", "warning":
		return slog.LevelWarn, nil
	case "error":
		return slog.LevelError, nil
	}
	return 0, fmt.Errorf("level: %q is not a level; use debug, info, warn or error", s)
}

// levelOf is the slog level of a record's level name (slog writes levels between the named
// ones as e.g. "INFO+2").
func levelOf(name string) slog.Level {
	var l slog.Level
	if err := l.UnmarshalText([]byte(name)); err != nil {
		return slog.LevelInfo
	}
	return l
}

// handler is one logger's view of the ring: the attributes and group it was given with
// WithAttrs and WithGroup, already rendered.
type handler struct {
	r      *Ring
	attrs  []Attr
	prefix string // open groups, "a.b."
	file   slog.Handler
}

func (h *handler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.r.level.Level() }

func (h *handler) Handle(ctx context.Context, rec slog.Record) error {
	out := Record{Time: rec.Time, Level: rec.Level.String(), Msg: rec.Message, Attrs: slices.Clone(h.attrs)}
	if out.Time.IsZero() {
		out.Time = time.Now()
	}
	rec.Attrs(func(a slog.Attr) bool {
		out.Attrs = appendAttr(out.Attrs, h.prefix, a)
		return true
	})
	h.r.add(out)
	if h.file != nil {
		return h.file.Handle(ctx, rec)
	}
	return nil
}

func (h *handler) WithAttrs(as []slog.Attr) slog.Handler {
	n := *h
	n.attrs = slices.Clone(h.attrs)
	for _, a := range as {
		n.attrs = appendAttr(n.attrs, h.prefix, a)
	}
	if h.file != nil {
		n.file = h.file.WithAttrs(as)
	}
	return &n
}

func (h *handler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	n := *h
	n.prefix = h.prefix + name + "."
	if h.file != nil {
		n.file = h.file.WithGroup(name)
	}
	return &n
}

// appendAttr renders a as slog's text handler would: groups flattened to dotted keys, empty
// attributes dropped.
func appendAttr(out []Attr, prefix string, a slog.Attr) []Attr {
	a.Value = a.Value.Resolve()
	if a.Equal(slog.Attr{}) {
		return out
	}
	if a.Value.Kind() == slog.KindGroup {
		p := prefix
		if a.Key != "" {
			p += a.Key + "."
		}
		for _, g := range a.Value.Group() {
			out = appendAttr(out, p, g)
		}
		return out
	}
	v := a.Value.String()
	if a.Value.Kind() == slog.KindTime {
		v = a.Value.Time().Format(time.RFC3339Nano)
	}
	return append(out, Attr{Key: prefix + a.Key, Value: v})
}

// fileWriter is the file's writer until Close; later lines (the last words of a shutdown) are
// dropped rather than reopening the file, which lumberjack would do.
type fileWriter struct {
	mu     sync.Mutex
	lj     *lumberjack.Logger
	closed bool
}

func (w *fileWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return len(p), nil
	}
	return w.lj.Write(p)
}

func (w *fileWriter) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil
	}
	w.closed = true
	return w.lj.Close()
}

var _ io.WriteCloser = (*fileWriter)(nil)

// Package audit records every tool call as a structured log line.
//
// Lines are JSON (log/slog) written to a size-rotated file in the data directory and, in serve
// mode, to stderr. stdout is never used: when stdio is an MCP transport, stdout belongs to the
// protocol. Mutating, exec and browser tools are logged at LevelSecurity, above Info, so an
// operator can filter the trail of things that changed the machine.
package audit

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"gopkg.in/natefinch/lumberjack.v2"

	"github.com/switchboard-hub/switchboard/internal/jsonobj"
	"github.com/switchboard-hub/switchboard/internal/listeners"
	"github.com/switchboard-hub/switchboard/internal/redact"
)

// LevelSecurity sits between Info and Warn: not a problem, but an action worth an audit trail.
const LevelSecurity slog.Level = 2

// Options configure a Logger.
type Options struct {
	File       string    // rotated JSON log file; empty disables the file
	MaxSizeMB  int       // rotate after this size, default 10
	MaxBackups int       // rotated files kept, default 5
	Stderr     io.Writer // optional second sink (serve mode)
	// User names the user when the system cannot say who runs the hub ($USER, from config.Env).
	User string
}

// Logger writes audit entries. It is safe for concurrent use.
type Logger struct {
	log    *slog.Logger
	sink   *flushingWriter // nil when there is no sink
	closer io.Closer
	user   string

	listeners listeners.Set[Entry]
}

// New opens the audit sinks.
func New(o Options) (*Logger, error) {
	var writers []io.Writer
	var closer io.Closer
	if o.File != "" {
		if err := os.MkdirAll(filepath.Dir(o.File), 0o700); err != nil {
			return nil, fmt.Errorf("audit log dir: %w", err)
		}
		lj := &lumberjack.Logger{Filename: o.File, MaxSize: orDefault(o.MaxSizeMB, 10), MaxBackups: orDefault(o.MaxBackups, 5)}
		writers = append(writers, lj)
		closer = lj
	}
	if o.Stderr != nil {
		writers = append(writers, o.Stderr)
	}
	w := io.Discard
	var sink *flushingWriter
	if len(writers) > 0 {
		sink = newFlushingWriter(io.MultiWriter(writers...), FlushInterval)
		w = sink
	}
	h := slog.DiscardHandler // no sink: nothing to format (listeners still run)
	if sink != nil {
		h = slog.NewJSONHandler(w, &slog.HandlerOptions{Level: slog.LevelInfo, ReplaceAttr: levelNames})
	}
	return &Logger{log: slog.New(h), sink: sink, closer: closer, user: currentUser(o.User)}, nil
}

// FlushInterval bounds how long an audit line may sit in memory before it reaches the file.
// Writing every line straight through cost two system calls per tool call (file and stderr);
// batching them keeps the trail complete while taking the disk off the request path. Close
// flushes, so a clean shutdown loses nothing; a crash can lose at most this much.
const FlushInterval = 100 * time.Millisecond

// flushingWriter buffers writes and flushes them at most interval after the first unflushed
// write. The timer is armed only when there is something to write, so an idle hub does not wake
// up at all (a permanent ticker cost ~50 wake-ups/s at idle).
type flushingWriter struct {
	mu     sync.Mutex
	buf    *bufio.Writer
	every  time.Duration
	timer  *time.Timer // pending flush; nil when the buffer is empty
	closed bool
}

func newFlushingWriter(w io.Writer, every time.Duration) *flushingWriter {
	return &flushingWriter{buf: bufio.NewWriterSize(w, 64<<10), every: every}
}

func (f *flushingWriter) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed { // after Close (late calls during shutdown): write straight through
		n, err := f.buf.Write(p)
		if err == nil {
			err = f.buf.Flush()
		}
		return n, err
	}
	// Never split a line across two writes to the sink: a line that does not fit behind what is
	// buffered flushes the buffer first, and one larger than the buffer then goes out in a single
	// write (bufio writes it through when empty). Otherwise the head of a line would reach stderr
	// and its tail only at the next flush, with other writers' lines (warnings) in between.
	if f.buf.Buffered() > 0 && len(p) > f.buf.Available() {
		if err := f.buf.Flush(); err != nil {
			return 0, err
		}
	}
	n, err := f.buf.Write(p)
	if f.timer == nil && f.buf.Buffered() > 0 {
		f.timer = time.AfterFunc(f.every, func() { _ = f.Flush() })
	}
	return n, err
}

// Flush writes out everything buffered.
func (f *flushingWriter) Flush() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.timer != nil {
		f.timer.Stop()
		f.timer = nil
	}
	if f.buf.Buffered() == 0 {
		return nil
	}
	return f.buf.Flush()
}

// Close flushes what is left; later writes go straight through.
func (f *flushingWriter) Close() error {
	f.mu.Lock()
	f.closed = true
	f.mu.Unlock()
	return f.Flush()
}

// LineWriter returns w serialised: one Write at a time, each passed on whole in a single call to
// w. Give the same LineWriter to every logger that shares a stream (the audit echo and the
// diagnostics logger on stderr), so that with whole-line writes no line is ever split by another.
// os.File already serialises its writes; a LineWriter also makes any other io.Writer safe to share.
func LineWriter(w io.Writer) io.Writer {
	if lw, ok := w.(*lineWriter); ok {
		return lw
	}
	return &lineWriter{w: w}
}

type lineWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lineWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// Discard returns a Logger that writes nowhere (tests, embedding).
func Discard() *Logger {
	l, _ := New(Options{})
	return l
}

func orDefault(v, d int) int {
	if v <= 0 {
		return d
	}
	return v
}

// levelNames writes every level as a plain string. Left as a slog.Level, the JSON handler
// encodes it through json.Marshal (Level's MarshalJSON) on every line: a reflection pass that
// cost ~5% of a trivial tool call's CPU (docs/benchmarks.md, trivial-call latency).
func levelNames(_ []string, a slog.Attr) slog.Attr {
	if a.Key == slog.LevelKey {
		if lvl, ok := a.Value.Any().(slog.Level); ok {
			switch lvl {
			case LevelSecurity:
				a.Value = slog.StringValue("SECURITY")
			case slog.LevelInfo:
				a.Value = slog.StringValue("INFO")
			default:
				a.Value = slog.StringValue(lvl.String())
			}
		}
	}
	return a
}

func currentUser(fallback string) string {
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return fallback
}

// Slog returns the underlying logger for non-audit diagnostics that share the sinks.
func (l *Logger) Slog() *slog.Logger { return l.log }

// Flush writes out buffered lines now (tests, and before handing the file to someone).
func (l *Logger) Flush() error {
	if l.sink == nil {
		return nil
	}
	return l.sink.Flush()
}

// Close flushes and closes the sinks.
func (l *Logger) Close() error {
	var err error
	if l.sink != nil {
		err = l.sink.Close()
	}
	if l.closer != nil {
		if cerr := l.closer.Close(); err == nil {
			err = cerr
		}
	}
	return err
}

// Entry is one tool call.
type Entry struct {
	Time   time.Time `json:"time"`
	CallID string    `json:"callId,omitempty"` // pairs a call's "started" line with its outcome
	// Parent is the call id of the call this one was made inside (a script run's tool calls),
	// "" for a call a client made.
	Parent  string `json:"parent,omitempty"`
	Actor   string `json:"actor,omitempty"` // "dashboard" or "tray" for actions outside MCP; empty for tool calls
	Tool    string `json:"tool"`
	Session string `json:"session"`
	// Client is the calling MCP client's self-reported name (from initialize; a label, not an
	// identity): what a person filters the trail by, since session ids change at every connect.
	Client string `json:"client,omitempty"`
	// Protocol is the MCP revision the client spoke for the call (e.g. "2025-06-18",
	// "2026-07-28"): which era of client asked, when two eras share one endpoint.
	Protocol   string  `json:"protocol,omitempty"`
	Transport  string  `json:"transport"`
	User       string  `json:"user"`
	Level      string  `json:"level"`   // "INFO" or "SECURITY"
	Outcome    string  `json:"outcome"` // "ok", "error", or "started" (written before a mutating call runs)
	DurationMs float64 `json:"durationMs"`
	Args       string  `json:"args"`
	Error      string  `json:"error,omitempty"`
	// Policy (internal/policy): the decision, the rule that made it, and for "ask" how it
	// ended and who answered; Roots records answers about the client's MCP roots.
	Decision string `json:"decision,omitempty"` // allow | deny | ask
	Rule     string `json:"rule,omitempty"`
	Approval string `json:"approval,omitempty"` // approved | declined | timed out
	By       string `json:"by,omitempty"`       // client | dashboard | tray | timeout
	Roots    string `json:"roots,omitempty"`
	// Ignored names the arguments the call sent that the tool does not take (it ran without them).
	Ignored string `json:"ignored,omitempty"`
}

// Record logs e (filling User) and hands it to listeners.
func (l *Logger) Record(ctx context.Context, e Entry, security bool) Entry {
	e.User = l.user
	lvl := slog.LevelInfo
	e.Level = "INFO"
	if security {
		lvl = LevelSecurity
		e.Level = "SECURITY"
	}
	l.write(ctx, lvl, e)
	l.listeners.Notify(e)
	return e
}

// write logs one entry as a JSON line.
func (l *Logger) write(ctx context.Context, lvl slog.Level, e Entry) {
	if l.sink == nil {
		return // nowhere to write (Discard): listeners still get the entry
	}
	msg := entryMsg(e)
	// The line is stamped with the entry's time — when the call arrived — not when it is
	// written: a call that waited two minutes for approval started when it was asked for.
	t := e.Time
	if t.IsZero() {
		t = time.Now()
	}
	bp := lineBufs.Get().(*[]byte)
	if line, ok := appendLine((*bp)[:0], t, lvl, msg, e); ok {
		_, _ = l.sink.Write(line)
		*bp = line
		lineBufs.Put(bp)
		return
	}
	lineBufs.Put(bp)
	if h := l.log.Handler(); h.Enabled(ctx, lvl) {
		r := slog.NewRecord(t, lvl, msg, 0)
		r.AddAttrs(entryAttrs(e)...)
		_ = h.Handle(ctx, r)
	}
}

func entryMsg(e Entry) string {
	if e.Actor != "" {
		return "action"
	}
	return "tool call"
}

var lineBufs = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

// appendLine writes e as the JSON line slog's JSONHandler writes for entryAttrs(e) at time t,
// byte for byte (TestAppendLineMatchesSlog), without slog's per-record machinery, which cost
// about a tenth of a trivial tool call's CPU: its JSON handler formats every float64 through
// json.Marshal. ok is false for what only slog renders (a duration outside the plain decimal
// range, a time outside years 0-9999); the caller then logs through slog.
func appendLine(b []byte, t time.Time, lvl slog.Level, msg string, e Entry) ([]byte, bool) {
	d := e.DurationMs
	if a := math.Abs(d); math.IsNaN(d) || math.IsInf(d, 0) || (a != 0 && (a < 1e-6 || a >= 1e21)) {
		return b, false
	}
	if y := t.Year(); y < 0 || y >= 10000 {
		return b, false
	}
	level := "INFO"
	switch lvl {
	case slog.LevelInfo:
	case LevelSecurity:
		level = "SECURITY"
	default:
		level = lvl.String()
	}
	b = append(b, `{"time":"`...)
	b = t.AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","level":`...)
	b = appendJSONString(b, level)
	b = append(b, `,"msg":`...)
	b = appendJSONString(b, msg)
	str := func(k, v string) {
		b = append(append(append(b, ',', '"'), k...), '"', ':')
		b = appendJSONString(b, v)
	}
	if e.CallID != "" {
		str("call", e.CallID)
	}
	if e.Parent != "" {
		str("parent", e.Parent)
	}
	if e.Actor != "" {
		str("actor", e.Actor)
	}
	str("tool", e.Tool)
	str("session", e.Session)
	if e.Client != "" {
		str("client", e.Client)
	}
	if e.Protocol != "" {
		str("protocol", e.Protocol)
	}
	str("transport", e.Transport)
	str("user", e.User)
	b = append(b, `,"duration_ms":`...)
	b = strconv.AppendFloat(b, d, 'f', -1, 64)
	str("outcome", e.Outcome)
	str("args", e.Args)
	if e.Error != "" {
		str("error", e.Error)
	}
	if e.Decision != "" {
		str("decision", e.Decision)
		str("rule", e.Rule)
		if e.Approval != "" {
			str("approval", e.Approval)
			str("by", e.By)
		}
	}
	if e.Roots != "" {
		str("roots", e.Roots)
	}
	return append(b, '}', '\n'), true
}

// appendJSONString quotes s as log/slog's JSON handler does: control characters, '"' and '\\'
// escaped, invalid UTF-8 as \ufffd, U+2028 and U+2029 escaped, HTML characters left alone.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(append(b, s[start:i]...), `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(append(b, s[start:i]...), `\u202`...)
			b = append(b, hex[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

func entryAttrs(e Entry) []slog.Attr {
	attrs := make([]slog.Attr, 0, 16) // room for the optional fields: one allocation per line
	if e.CallID != "" {
		attrs = append(attrs, slog.String("call", e.CallID))
	}
	if e.Parent != "" {
		attrs = append(attrs, slog.String("parent", e.Parent))
	}
	if e.Actor != "" {
		attrs = append(attrs, slog.String("actor", e.Actor))
	}
	attrs = append(attrs, slog.String("tool", e.Tool), slog.String("session", e.Session))
	if e.Client != "" {
		attrs = append(attrs, slog.String("client", e.Client))
	}
	if e.Protocol != "" {
		attrs = append(attrs, slog.String("protocol", e.Protocol))
	}
	attrs = append(attrs, slog.String("transport", e.Transport),
		slog.String("user", e.User), slog.Float64("duration_ms", e.DurationMs), slog.String("outcome", e.Outcome),
		slog.String("args", e.Args),
	)
	if e.Error != "" {
		attrs = append(attrs, slog.String("error", e.Error))
	}
	if e.Decision != "" {
		attrs = append(attrs, slog.String("decision", e.Decision), slog.String("rule", e.Rule))
		if e.Approval != "" {
			attrs = append(attrs, slog.String("approval", e.Approval), slog.String("by", e.By))
		}
	}
	if e.Roots != "" {
		attrs = append(attrs, slog.String("roots", e.Roots))
	}
	return attrs
}

// Started writes a Security-level "started" line for a mutating call before it runs and pushes
// it to the sinks at once (no batching), so a call that takes the hub down with it is still on
// record. Listeners are not told: they get the outcome from Record.
func (l *Logger) Started(ctx context.Context, e Entry) {
	e.User, e.Outcome, e.Level = l.user, "started", "SECURITY"
	l.write(ctx, LevelSecurity, e)
	_ = l.Flush()
}

// OnRecord registers fn for every recorded entry; the returned func unregisters it.
func (l *Logger) OnRecord(fn func(Entry)) (cancel func()) { return l.listeners.Add(fn) }

// Caps for SummarizeArgs. A value up to ValueCap bytes is kept whole; a longer one keeps its
// first ValueCap bytes followed by its full size and the sha256 of the whole value, so the tail of
// a long command can still be matched against what ran. Past SummaryCap bytes of summary, the
// remaining values are recorded by size and sha256 only.
const (
	ValueCap   = 4096
	SummaryCap = 32 << 10
)

// SummarizeArgs renders tool arguments as a "k=v" list, keys sorted, hiding what package redact
// says: payload and private fields (file contents, stdin, scripts, messages) are recorded as
// their size and the sha256 of their text, so the trail shows what was touched and can prove what
// was sent without holding it; secrets (api_key, password, token, … at any depth) as
// redact.Marker. Other values are JSON, whole up to ValueCap (see there).
func SummarizeArgs(raw json.RawMessage) string {
	s, _ := summarizeArgs(raw, false)
	return s
}

// DisplayCap is how many bytes of one argument's value SummarizeArgsValues keeps for display,
// before the "…" that marks a cut.
const DisplayCap = 200

// MaxDisplayValues is how many arguments SummarizeArgsValues gives a display value (the first
// ones by name): with DisplayCap, it bounds what each of the activity feed's 500 entries holds.
const MaxDisplayValues = 16

// maxDisplayKey: an argument with a longer name gets no display value (the summary has it).
const maxDisplayKey = 100

// SummarizeArgsValues returns SummarizeArgs(raw) and, for the dashboard's activity feed (held in
// memory, never written to the audit file), the value of each top-level argument as a short
// display string: a string as its text, a number, boolean or null as written, an object or array
// as compact JSON, each cut to DisplayCap bytes ("…" marks the cut). What the summary hides stays
// hidden, shown exactly as the summary shows it: a payload or private value (content, message,
// script, …) as its size and sha256, a secret as redact.Marker, and a secret nested in a shown
// value as the marker (redact.Nested). The summary and the values are made in one pass, so a
// payload is hashed once. values is nil when raw is not a JSON object or has no members.
func SummarizeArgsValues(raw json.RawMessage) (summary string, values map[string]string) {
	return summarizeArgs(raw, true)
}

func summarizeArgs(raw json.RawMessage, withValues bool) (string, map[string]string) {
	if len(raw) == 0 {
		return "", nil
	}
	var vals displayValues
	if withValues {
		vals = displayValues{}
	}
	if s, ok := summarizeSimple(raw, vals); ok {
		return s, vals.orNil()
	}
	return summarize(raw, vals), vals.orNil()
}

// displayValues collects SummarizeArgsValues's values; a nil one collects nothing.
type displayValues map[string]string

func (d displayValues) orNil() map[string]string {
	if len(d) == 0 {
		return nil
	}
	return d
}

// hidden records the value of key as the summary shows it (its size and sha256, or the marker).
func (d displayValues) hidden(key, shown []byte) {
	if d != nil && len(d) < MaxDisplayValues && len(key) <= maxDisplayKey {
		d[string(key)] = string(shown)
	}
}

// shown records the display form of v, the JSON value of a shown argument key.
func (d displayValues) shown(key, v []byte) {
	if d != nil && len(d) < MaxDisplayValues && len(key) <= maxDisplayKey {
		d[string(key)] = displayValue(v)
	}
}

// displayValue is the display form of the JSON value v: a string's text, anything else as
// written (compact), cut to DisplayCap bytes.
func displayValue(v []byte) string {
	if len(v) > 0 && v[0] == '"' {
		if s, ok := jsonobj.PlainBytes(v); ok {
			return cutDisplay(s)
		}
		var s string
		if json.Unmarshal(v, &s) == nil {
			return cutDisplay([]byte(s))
		}
	}
	return cutDisplay(v)
}

// cutDisplay returns b as a string of at most DisplayCap bytes (cut on a character boundary)
// followed by "…" when it was longer.
func cutDisplay(b []byte) string {
	if len(b) <= DisplayCap {
		return string(b)
	}
	cut := DisplayCap
	for cut > 0 && !utf8.RuneStart(b[cut]) {
		cut--
	}
	return string(b[:cut]) + "…"
}

// summarize is SummarizeArgs for any input; vals, when not nil, gets the display values.
func summarize(raw json.RawMessage, vals displayValues) string {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return fmt.Sprintf("<%d bytes, not an object, sha256=%s>", len(raw), digest([]byte(raw)))
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	// For vals, in name order: where each hidden value sits in b (read once b is complete), or
	// the JSON of a shown one.
	type display struct {
		key        string
		start, end int
		shown      []byte
	}
	var disp []display
	note := func(d display) {
		if vals != nil && len(disp) < MaxDisplayValues && len(d.key) <= maxDisplayKey {
			disp = append(disp, d)
		}
	}
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(k)
		b.WriteByte('=')
		v := m[k]
		class := redact.Of(k)
		if class == redact.Secret {
			start := b.Len()
			b.WriteString(redact.Marker)
			note(display{key: k, start: start, end: b.Len()})
			continue
		}
		if class != redact.Shown {
			start := b.Len()
			var str string
			if json.Unmarshal(v, &str) == nil {
				fmt.Fprintf(&b, "<%d bytes sha256=%s>", len(str), digest([]byte(str)))
			} else {
				fmt.Fprintf(&b, "<redacted %d bytes of JSON sha256=%s>", len(v), digest(v))
			}
			note(display{key: k, start: start, end: b.Len()})
			continue
		}
		js := compactJSON(redact.Nested(k, v))
		note(display{key: k, shown: js})
		switch {
		case b.Len() > SummaryCap:
			fmt.Fprintf(&b, "<%d bytes sha256=%s>", len(js), digest(js))
		case len(js) > ValueCap:
			cut := ValueCap
			for cut > 0 && !utf8.RuneStart(js[cut]) {
				cut--
			}
			b.Write(js[:cut])
			fmt.Fprintf(&b, "…<%d bytes in all, sha256=%s>", len(js), digest(js))
		default:
			b.Write(js)
		}
	}
	out := b.String()
	for _, d := range disp {
		if d.shown != nil {
			vals.shown([]byte(d.key), d.shown)
		} else {
			vals.hidden([]byte(d.key), []byte(out[d.start:d.end]))
		}
	}
	return out
}

// summarizeSimple is SummarizeArgs for the common case, every tool call's: a small object
// (jsonobj handles it) of short, already compact scalar values that are shown (redact.Shown),
// plain strings under a payload or private key (content, message, …: shown as their size and
// sha256, hashed in place) and secrets (shown as the marker whatever they hold). It writes the
// same summary in one allocation instead of a map, a key slice and a buffer per value; ok is
// false for anything else.
//
// vals, when not nil, gets the display values (SummarizeArgsValues) once ok is certain.
func summarizeSimple(raw json.RawMessage, vals displayValues) (string, bool) {
	return summarizeSimpleOf(raw, nil, nil, false, vals)
}

// SummarizeSplitValues is SummarizeArgsValues for arguments a caller has already split into
// their members (keys[i] and vals[i] are subslices of raw, in order, as jsonobj.Members gives
// them): the hub splits a call's arguments once for every layer that reads them by name.
func SummarizeSplitValues(raw json.RawMessage, keys, vals [][]byte) (summary string, values map[string]string) {
	if len(raw) == 0 {
		return "", nil
	}
	d := displayValues{}
	if s, ok := summarizeSimpleOf(raw, keys, vals, true, d); ok {
		return s, d.orNil()
	}
	return summarize(raw, d), d.orNil()
}

// summarizeSimpleOf is summarizeSimple over raw's members: keys and vals (subslices of raw)
// when split, else as jsonobj walks them.
func summarizeSimpleOf(raw json.RawMessage, keys, vals [][]byte, split bool, disp displayValues) (string, bool) {
	// Members are kept as offsets into raw (a small frame: this runs deep in the call's stack).
	type member struct {
		ks, ke, vs, ve int32
		how            redact.Class // Shown: the value as sent; Payload: a string's inner bytes, hashed; Secret: the marker
	}
	var buf [16]member
	ms := buf[:0]
	size := 0
	off := func(b []byte) int32 { return int32(cap(raw) - cap(b)) } // b is a subslice of raw
	add := func(k, v []byte) {
		if len(ms) == len(buf) || len(v) == 0 {
			size = -1 << 40
			return
		}
		m := member{ks: off(k), ke: off(k) + int32(len(k)), vs: off(v), ve: off(v) + int32(len(v))}
		switch redact.Of(string(k)) {
		case redact.Secret:
			m.how = redact.Secret
			size += len(k) + len(redact.Marker) + 2
		case redact.Shown:
			if len(v) > ValueCap || v[0] == '{' || v[0] == '[' || !compact(v) {
				size = -1 << 40
				return
			}
			m.how = redact.Shown
			size += len(k) + len(v) + 2
		default: // Payload, Private: a string whose bytes need no unescaping
			if _, ok := jsonobj.PlainBytes(v); !ok {
				size = -1 << 40
				return
			}
			m.how, m.vs, m.ve = redact.Payload, m.vs+1, m.ve-1
			size += len(k) + len("<4294967296 bytes sha256=>") + 2*sha256.Size + 2
		}
		ms = append(ms, m)
	}
	simple := len(raw) < 1<<30
	if simple && split {
		for i := range keys {
			add(keys[i], vals[i])
		}
	} else if simple {
		simple = jsonobj.Members(raw, add)
	}
	if !simple || size < 0 || size > SummaryCap {
		return "", false
	}
	slices.SortFunc(ms, func(a, b member) int { return bytes.Compare(raw[a.ks:a.ke], raw[b.ks:b.ke]) })
	out := make([]byte, 0, size)
	for i, m := range ms {
		if i > 0 {
			out = append(out, ' ')
		}
		out = append(append(out, raw[m.ks:m.ke]...), '=')
		start := len(out)
		switch m.how {
		case redact.Secret:
			out = append(out, redact.Marker...)
			disp.hidden(raw[m.ks:m.ke], out[start:])
		case redact.Payload:
			sum := sha256.Sum256(raw[m.vs:m.ve])
			out = append(strconv.AppendInt(append(out, '<'), int64(m.ve-m.vs), 10), " bytes sha256="...)
			out = append(hex.AppendEncode(out, sum[:]), '>')
			disp.hidden(raw[m.ks:m.ke], out[start:])
		default:
			out = append(out, raw[m.vs:m.ve]...)
			disp.shown(raw[m.ks:m.ke], raw[m.vs:m.ve])
		}
	}
	return string(out), true
}

// compact reports whether v (valid JSON) has no whitespace outside its strings.
func compact(v []byte) bool {
	in := false
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case in && c == '\\':
			i++
		case c == '"':
			in = !in
		case !in && (c == ' ' || c == '\t' || c == '\n' || c == '\r'):
			return false
		}
	}
	return true
}

// compactJSON returns v without insignificant whitespace (what a client sent, normalised).
func compactJSON(v json.RawMessage) []byte {
	var buf bytes.Buffer
	if err := json.Compact(&buf, v); err != nil {
		return v
	}
	return buf.Bytes()
}

func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

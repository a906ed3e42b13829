// Package metrics records agent and tool events to daily JSON Lines files
// (DIR/YYYY-MM-DD.jsonl, one event per line, UTC dates) and aggregates them.
//
// Writes are one write(2) per event on a file opened with O_APPEND, so
// concurrent writers, in this process or in another process with its own
// Store on the same directory, never tear or interleave lines. Reads stream
// each file line by line and skip lines that do not decode, so a file a
// crash cut short, or lines written by a newer version, never fail a query.
package metrics

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// Event is one recorded metric. Timestamp is assigned by Record.
type Event struct {
	Type      string         `json:"type"`
	Timestamp time.Time      `json:"timestamp"`
	AgentID   string         `json:"agent_id,omitempty"`
	Repo      string         `json:"repo,omitempty"`
	Duration  time.Duration  `json:"duration,omitempty"`
	Data      map[string]any `json:"data,omitempty"`
}

// MaxEventBytes caps one encoded event (one line).
const MaxEventBytes = 1 << 20

const (
	dayLayout = "2006-01-02"
	fileExt   = ".jsonl"
)

// Store appends events to, and reads them from, one directory.
type Store struct {
	dir string
	now func() time.Time // the clock; tests replace it to cross midnight

	mu  sync.Mutex // guards day and f
	day string     // date of f
	f   *os.File
}

// Open returns a Store on dir, creating the directory if needed.
func Open(dir string) (*Store, error) {
	if dir == "" {
		return nil, errors.New("metrics: directory is empty; pass the metrics data directory")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("metrics: create directory %q: %w", dir, err)
	}
	return &Store{dir: dir, now: time.Now}, nil
}

// Dir is the directory the store uses.
func (s *Store) Dir() string { return s.dir }

// Close closes the open day file. The Store stays usable: the next Record
// reopens it.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.f == nil {
		return nil
	}
	err := s.f.Close()
	s.f, s.day = nil, ""
	if err != nil {
		return fmt.Errorf("metrics: close %q: %w", s.dir, err)
	}
	return nil
}

// Record stamps ev with the current UTC time (any Timestamp the caller set
// is replaced; a timestamp inside Data is just data) and appends it to the
// day's file. It returns the event as stored.
func (s *Store) Record(ev Event) (Event, error) {
	evs, err := s.RecordBatch([]Event{ev})
	if err != nil {
		return Event{}, err
	}
	return evs[0], nil
}

// RecordBatch records several events with one write per day file, for producers that queue
// events (the hub's own tool_call events): one system call instead of one per event. Every event
// is validated first; on a validation error nothing is written.
func (s *Store) RecordBatch(evs []Event) ([]Event, error) {
	out := make([]Event, len(evs))
	lines := make([][]byte, len(evs))
	now := s.now().UTC()
	for i, ev := range evs {
		if strings.TrimSpace(ev.Type) == "" {
			return nil, errors.New(`type: required; name the kind of event, e.g. "build_completed"`)
		}
		ev.Timestamp = now
		line, err := json.Marshal(ev)
		if err != nil {
			return nil, fmt.Errorf("data: cannot be stored as JSON (%w); use strings, numbers, booleans, lists and objects", err)
		}
		if len(line) >= MaxEventBytes {
			return nil, fmt.Errorf("data: event is %d bytes encoded; the limit is %d, so store large payloads elsewhere and record a reference", len(line), MaxEventBytes)
		}
		out[i], lines[i] = ev, append(line, '\n')
	}
	if len(evs) == 0 {
		return out, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	f, err := s.fileLocked(now.Format(dayLayout))
	if err != nil {
		return nil, err
	}
	// One write of all the lines: with O_APPEND the kernel positions and writes it atomically
	// with respect to other appenders, so lines are never torn or interleaved.
	if _, err := f.Write(bytes.Join(lines, nil)); err != nil {
		return nil, fmt.Errorf("metrics: append to %q: %w", f.Name(), err)
	}
	return out, nil
}

// fileLocked returns the open file for day, switching files at midnight.
func (s *Store) fileLocked(day string) (*os.File, error) {
	if s.f != nil && s.day == day {
		return s.f, nil
	}
	if s.f != nil {
		_ = s.f.Close()
		s.f, s.day = nil, ""
	}
	path := filepath.Join(s.dir, day+fileExt)
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, fmt.Errorf("metrics: open %q: %w", path, err)
	}
	if err := terminateLastLine(f, path); err != nil {
		_ = f.Close()
		return nil, err
	}
	s.f, s.day = f, day
	return f, nil
}

// terminateLastLine appends a newline if a crash left the file ending in a
// partial line; otherwise the next event would be glued onto it and lost
// with it. A blank line (if two stores race here) is skipped on read.
func terminateLastLine(f *os.File, path string) error {
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("metrics: stat %q: %w", path, err)
	}
	if st.Size() == 0 {
		return nil
	}
	r, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("metrics: open %q: %w", path, err)
	}
	defer r.Close()
	last := make([]byte, 1)
	if _, err := r.ReadAt(last, st.Size()-1); err != nil {
		return fmt.Errorf("metrics: read %q: %w", path, err)
	}
	if last[0] == '\n' {
		return nil
	}
	if _, err := f.Write([]byte{'\n'}); err != nil {
		return fmt.Errorf("metrics: repair %q: %w", path, err)
	}
	return nil
}

// dayFiles lists the day files that can hold events at or after since, in
// date order. Other files in the directory are ignored.
func (s *Store) dayFiles(since time.Time) ([]string, error) {
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, fmt.Errorf("metrics: list %q: %w", s.dir, err)
	}
	first := since.UTC().Format(dayLayout)
	var files []string
	for _, e := range entries {
		name := e.Name()
		day, ok := strings.CutSuffix(name, fileExt)
		if !ok || !e.Type().IsRegular() {
			continue
		}
		if _, err := time.Parse(dayLayout, day); err != nil {
			continue
		}
		if !since.IsZero() && day < first { // same-width ISO dates compare as strings
			continue
		}
		files = append(files, filepath.Join(s.dir, name))
	}
	sort.Strings(files)
	return files, nil
}

// Read returns the events recorded at or after since, in file order (which
// is time order up to the interleaving of concurrent writers). Malformed
// lines are skipped; days with no file are simply absent.
func (s *Store) Read(since time.Time) ([]Event, error) {
	files, err := s.dayFiles(since)
	if err != nil {
		return nil, err
	}
	var events []Event
	for _, path := range files {
		err := scanFile(path, func(line []byte) {
			var ev Event
			if json.Unmarshal(line, &ev) != nil || ev.Type == "" {
				return
			}
			if ev.Timestamp.Before(since) {
				return
			}
			events = append(events, ev)
		})
		if err != nil {
			return nil, err
		}
	}
	return events, nil
}

// Query aggregates the events recorded at or after since while streaming
// the files: memory stays at the group counts plus the 10 newest events,
// whatever the number of events.
func (s *Store) Query(since time.Time) (Summary, error) {
	return s.QueryExcluding(since)
}

// QueryExcluding is Query leaving out events whose type is one of exclude; Summary.Excluded
// counts what was left out.
func (s *Store) QueryExcluding(since time.Time, exclude ...string) (Summary, error) {
	files, err := s.dayFiles(since)
	if err != nil {
		return Summary{}, err
	}
	agg := newAggregator()
	excluded := 0
	for _, path := range files {
		err := scanFile(path, func(line []byte) {
			k, ok := decodeKeys(line)
			if !ok || k.Timestamp.Before(since) {
				return
			}
			for _, x := range exclude {
				if string(k.Type) == x {
					excluded++
					return
				}
			}
			agg.addLine(k, line)
		})
		if err != nil {
			return Summary{}, err
		}
	}
	sum := agg.summary()
	sum.Excluded = excluded
	return sum, nil
}

// eventKeys is the part of an Event a summary needs. The byte slices may
// point into the line being scanned: use them before the next line.
type eventKeys struct {
	Type      []byte
	Timestamp time.Time
	AgentID   []byte
	Repo      []byte
}

// decodeKeys extracts the summary keys of one line. It tries fastKeys
// first and falls back to encoding/json for anything fastKeys does not
// recognise, so its result never differs from a full decode.
func decodeKeys(line []byte) (eventKeys, bool) {
	if k, ok := fastKeys(line); ok {
		return k, len(k.Type) > 0
	}
	var k struct {
		Type      string    `json:"type"`
		Timestamp time.Time `json:"timestamp"`
		AgentID   string    `json:"agent_id"`
		Repo      string    `json:"repo"`
	}
	if json.Unmarshal(line, &k) != nil || k.Type == "" {
		return eventKeys{}, false
	}
	return eventKeys{Type: []byte(k.Type), Timestamp: k.Timestamp, AgentID: []byte(k.AgentID), Repo: []byte(k.Repo)}, true
}

// fastKeys parses the exact layout Record writes: {"type":"…","timestamp":"…"
// then optional "agent_id" and "repo", then optional "duration"/"data" or the
// end, with no escapes in the strings. Anything else returns false and the
// caller decodes with encoding/json. A full decode of each line was most of
// the cost of a query over a million events (see BenchmarkQuery1M).
func fastKeys(line []byte) (eventKeys, bool) {
	var k eventKeys
	rest, ok := bytes.CutPrefix(line, []byte(`{"type":"`))
	if !ok {
		return k, false
	}
	var typ, ts []byte
	if typ, rest, ok = plainString(rest); !ok {
		return k, false
	}
	if rest, ok = bytes.CutPrefix(rest, []byte(`,"timestamp":"`)); !ok {
		return k, false
	}
	if ts, rest, ok = plainString(rest); !ok {
		return k, false
	}
	// UnmarshalText is the strict RFC 3339 parser encoding/json uses.
	var t time.Time
	if t.UnmarshalText(ts) != nil {
		return k, false
	}
	var agent, repo []byte
	if after, found := bytes.CutPrefix(rest, []byte(`,"agent_id":"`)); found {
		if agent, rest, ok = plainString(after); !ok {
			return k, false
		}
	}
	if after, found := bytes.CutPrefix(rest, []byte(`,"repo":"`)); found {
		if repo, rest, ok = plainString(after); !ok {
			return k, false
		}
	}
	// What may follow is what Record writes after these: an integer
	// duration, a data object, then the end. Anything else (a duplicate or
	// unknown key, a float) goes to the full decoder, which decides.
	if after, found := bytes.CutPrefix(rest, []byte(`,"duration":`)); found {
		if rest, ok = plainInteger(after); !ok {
			return k, false
		}
	}
	if after, found := bytes.CutPrefix(rest, []byte(`,"data":`)); found {
		// Only the data object needs validating, not the whole line: a torn
		// or corrupted line must not count here when a full decode rejects it.
		n := len(after)
		if n < 3 || after[0] != '{' || after[n-1] != '}' || !json.Valid(after[:n-1]) {
			return k, false
		}
	} else if len(rest) != 1 || rest[0] != '}' {
		return k, false
	}
	k.Type, k.Timestamp, k.AgentID, k.Repo = typ, t, agent, repo
	return k, true
}

// plainString splits b at the closing quote of a JSON string with no
// escapes or control characters, in valid UTF-8 (encoding/json would
// replace invalid bytes, so those lines take the slow path).
func plainString(b []byte) (s, rest []byte, ok bool) {
	for i, c := range b {
		switch {
		case c == '"':
			if !utf8.Valid(b[:i]) {
				return nil, nil, false
			}
			return b[:i], b[i+1:], true
		case c == '\\' || c < 0x20:
			return nil, nil, false
		}
	}
	return nil, nil, false
}

// plainInteger splits b after a JSON integer (no fraction or exponent).
func plainInteger(b []byte) (rest []byte, ok bool) {
	i := 0
	if i < len(b) && b[i] == '-' {
		i++
	}
	start := i
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	switch {
	case i == start, b[start] == '0' && i-start > 1: // no digits; leading zero
		return nil, false
	case i < len(b) && (b[i] == '.' || b[i] == 'e' || b[i] == 'E'):
		return nil, false
	}
	return b[i:], true
}

// scanFile calls fn for each non-blank line of path. A line longer than
// MaxEventBytes is skipped whole. A missing file is not an error.
func scanFile(path string, fn func(line []byte)) error {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return fmt.Errorf("metrics: open %q: %w", path, err)
	}
	defer f.Close()
	if err := scanLines(f, fn); err != nil {
		return fmt.Errorf("metrics: read %q: %w", path, err)
	}
	return nil
}

func scanLines(r io.Reader, fn func(line []byte)) error {
	br := bufio.NewReaderSize(r, 256<<10)
	var long []byte // a line spanning more than one buffer
	skipping := false
	for {
		chunk, err := br.ReadSlice('\n')
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			if !skipping {
				long = append(long, chunk...)
				if len(long) > MaxEventBytes {
					long, skipping = long[:0], true
				}
			}
			continue
		case err != nil && !errors.Is(err, io.EOF):
			return err
		}
		line := chunk
		if len(long) > 0 {
			line = append(long, chunk...)
			long = long[:0]
		}
		if skipping {
			skipping = false
		} else if line = bytes.TrimSpace(line); len(line) > 0 {
			fn(line)
		}
		if err != nil { // io.EOF, after the final unterminated line
			return nil
		}
	}
}

// Count is the number of events for one key.
type Count struct {
	Key   string `json:"key"`
	Count int    `json:"count"`
}

// Summary aggregates events. Counts are sorted by count, highest first,
// then by key; events with no repo or agent are not counted under those.
type Summary struct {
	Total   int     `json:"total"`
	ByType  []Count `json:"by_type"`
	ByRepo  []Count `json:"by_repo"`
	ByAgent []Count `json:"by_agent"`
	Recent  []Event `json:"recent"` // the 10 newest, newest first
	// Excluded counts events left out by QueryExcluding (not part of Total).
	Excluded int `json:"excluded,omitempty"`
}

// RecentLimit is how many events Summary.Recent holds.
const RecentLimit = 10

// Summarize aggregates events; it is pure (no I/O).
func Summarize(events []Event) Summary {
	agg := newAggregator()
	for _, ev := range events {
		if ev.Type == "" {
			continue
		}
		agg.addEvent(ev)
	}
	return agg.summary()
}

// recentEvent is a candidate for Summary.Recent: a decoded event
// (Summarize) or the raw line, decoded only if it survives to the end
// (Query; in a time-ordered stream nearly every line is briefly among the
// newest ten, and decoding each one fully cost more than the rest of the
// query together).
type recentEvent struct {
	ts   time.Time
	seq  int // input order breaks timestamp ties: later counts as newer
	ev   Event
	line []byte
}

// counts maps a key to its count; pointers let a []byte key be looked up
// and bumped without allocating a string for every line.
type counts map[string]*int

func (c counts) bump(key []byte) {
	if len(key) == 0 {
		return
	}
	if n := c[string(key)]; n != nil {
		*n++
		return
	}
	n := 1
	c[string(key)] = &n
}

func (c counts) bumpString(key string) {
	if key == "" {
		return
	}
	if n := c[key]; n != nil {
		*n++
		return
	}
	n := 1
	c[key] = &n
}

// aggregator is the streaming core of Summarize and Query.
type aggregator struct {
	total                   int
	byType, byRepo, byAgent counts
	recent                  []*recentEvent // ascending by (ts, seq); at most RecentLimit
}

func newAggregator() *aggregator {
	return &aggregator{byType: counts{}, byRepo: counts{}, byAgent: counts{}}
}

func (a *aggregator) addEvent(ev Event) {
	a.byType.bumpString(ev.Type)
	a.byRepo.bumpString(ev.Repo)
	a.byAgent.bumpString(ev.AgentID)
	if slot := a.admit(ev.Timestamp); slot != nil {
		slot.ev = ev
	}
}

func (a *aggregator) addLine(k eventKeys, line []byte) {
	a.byType.bump(k.Type)
	a.byRepo.bump(k.Repo)
	a.byAgent.bump(k.AgentID)
	if slot := a.admit(k.Timestamp); slot != nil {
		slot.line = append(slot.line[:0], line...)
	}
}

// admit counts one event and, if it is among the newest RecentLimit so far,
// returns its slot in a.recent (reusing the evicted slot and its line
// buffer). Slots are pointers so keeping the list sorted moves 10 words,
// not 10 events.
func (a *aggregator) admit(ts time.Time) *recentEvent {
	seq := a.total
	a.total++
	var slot *recentEvent
	if len(a.recent) == RecentLimit {
		if !newer(ts, seq, a.recent[0]) {
			return nil
		}
		slot = a.recent[0]
		copy(a.recent, a.recent[1:])
		a.recent = a.recent[:RecentLimit-1]
		*slot = recentEvent{line: slot.line[:0]}
	} else {
		slot = &recentEvent{}
	}
	slot.ts, slot.seq = ts, seq
	// Time-ordered input is the common case: the new event is the newest.
	i := len(a.recent)
	if i > 0 && !newer(ts, seq, a.recent[i-1]) {
		i = sort.Search(len(a.recent), func(i int) bool { return newer(a.recent[i].ts, a.recent[i].seq, slot) })
	}
	a.recent = append(a.recent, nil)
	copy(a.recent[i+1:], a.recent[i:])
	a.recent[i] = slot
	return slot
}

func newer(ts time.Time, seq int, than *recentEvent) bool {
	if !ts.Equal(than.ts) {
		return ts.After(than.ts)
	}
	return seq > than.seq
}

func (a *aggregator) summary() Summary {
	s := Summary{
		Total:   a.total,
		ByType:  a.byType.sorted(),
		ByRepo:  a.byRepo.sorted(),
		ByAgent: a.byAgent.sorted(),
		Recent:  make([]Event, 0, len(a.recent)),
	}
	for i := len(a.recent) - 1; i >= 0; i-- {
		r := a.recent[i]
		if r.line != nil { // a Query slot: decode the line now
			var ev Event
			if json.Unmarshal(r.line, &ev) != nil { // cannot happen: the line was validated
				continue
			}
			r.ev = ev
		}
		s.Recent = append(s.Recent, r.ev)
	}
	return s
}

func (c counts) sorted() []Count {
	out := make([]Count, 0, len(c))
	for k, n := range c {
		out = append(out, Count{Key: k, Count: *n})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Count != out[j].Count {
			return out[i].Count > out[j].Count
		}
		return out[i].Key < out[j].Key
	})
	return out
}

// DefaultSince is the lookback ParseSince uses for "".
const DefaultSince = 7 * 24 * time.Hour

// ParseSince parses a lookback window: a positive whole number followed by
// one unit letter, d (days), h (hours) or m (minutes), e.g. "7d", "24h",
// "30m". "" means 7d.
func ParseSince(v string) (time.Duration, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return DefaultSince, nil
	}
	i := 0
	for i < len(v) && v[i] >= '0' && v[i] <= '9' {
		i++
	}
	num, unit := v[:i], v[i:]
	if num == "" {
		return 0, fmt.Errorf(`since: %q must start with a positive whole number, e.g. "7d", "24h", "30m"`, v)
	}
	var per time.Duration
	switch {
	case unit == "d":
		per = 24 * time.Hour
	case unit == "h":
		per = time.Hour
	case unit == "m":
		per = time.Minute
	case unit == "":
		return 0, fmt.Errorf(`since: %q has no unit; add d, h or m, e.g. "%sd"`, v, num)
	case unit[0] == '.' || unit[0] == ',':
		return 0, fmt.Errorf(`since: %q must be a whole number; use a smaller unit instead, e.g. "90m" for 1.5 hours`, v)
	default:
		return 0, fmt.Errorf(`since: %q has unit %q; use d, h or m, e.g. "7d", "24h", "30m"`, v, unit)
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n > int64(maxSince/per) {
		return 0, fmt.Errorf(`since: %q is too long; the most is %d%s`, v, int64(maxSince/per), unit)
	}
	if n == 0 {
		return 0, fmt.Errorf(`since: %q must be positive, e.g. "1%s"`, v, unit)
	}
	return time.Duration(n) * per, nil
}

// maxSince keeps now-since far from time.Time's limits: 100 years.
const maxSince = 100 * 365 * 24 * time.Hour

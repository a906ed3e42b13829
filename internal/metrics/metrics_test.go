package metrics

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

func openStore(t *testing.T, dir string) *Store {
	t.Helper()
	s, err := Open(dir)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// fixedClock returns a clock that reads *now.
func fixedClock(now *time.Time) func() time.Time { return func() time.Time { return *now } }

func TestRecordAssignsTimestampAndReadsBack(t *testing.T) {
	s := openStore(t, t.TempDir())
	callerTime := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
	before := time.Now().UTC()
	got, err := s.Record(Event{
		Type: "build_completed", Timestamp: callerTime, AgentID: "agent-1", Repo: "core",
		Duration: 1500 * time.Millisecond, Data: map[string]any{"timestamp": "user data", "ok": true},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got.Timestamp.Before(before) || got.Timestamp.After(time.Now().UTC()) || got.Timestamp.Location() != time.UTC {
		t.Fatalf("timestamp %v not assigned by the server in UTC", got.Timestamp)
	}
	events, err := s.Read(before.Add(-time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if len(events) != 1 {
		t.Fatalf("read %d events, want 1", len(events))
	}
	ev := events[0]
	if ev.Type != "build_completed" || ev.AgentID != "agent-1" || ev.Repo != "core" || ev.Duration != 1500*time.Millisecond ||
		!ev.Timestamp.Equal(got.Timestamp) || ev.Data["timestamp"] != "user data" || ev.Data["ok"] != true {
		t.Fatalf("read back %+v, recorded %+v", ev, got)
	}
	if want := filepath.Join(s.Dir(), got.Timestamp.Format("2006-01-02")+".jsonl"); !fileExists(want) {
		t.Fatalf("no day file %s", want)
	}
	if later, _ := s.Read(got.Timestamp.Add(time.Nanosecond)); len(later) != 0 {
		t.Fatalf("since after the event still returned %d events", len(later))
	}
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func TestRecordRejectsBadEvents(t *testing.T) {
	s := openStore(t, t.TempDir())
	tests := []struct {
		name string
		ev   Event
		want string
	}{
		{"empty type", Event{}, "type: required"},
		{"blank type", Event{Type: "  "}, "type: required"},
		{"NaN in data", Event{Type: "x", Data: map[string]any{"v": math.NaN()}}, "data: cannot be stored as JSON"},
		{"func in data", Event{Type: "x", Data: map[string]any{"f": func() {}}}, "data: cannot be stored as JSON"},
		{"oversized", Event{Type: "x", Data: map[string]any{"blob": strings.Repeat("a", MaxEventBytes)}}, "limit is 1048576"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := s.Record(tc.ev); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
	if events, _ := s.Read(time.Time{}); len(events) != 0 {
		t.Fatalf("rejected events were stored: %+v", events)
	}
}

// TestConcurrentWritersLoseNothing: 8 writers x 10k events, split over two
// Store instances on one directory (as two processes would be); every event
// must come back exactly once and every line must be valid JSON.
func TestConcurrentWritersLoseNothing(t *testing.T) {
	dir := t.TempDir()
	stores := []*Store{openStore(t, dir), openStore(t, dir)}
	const writers, perWriter = 8, 10_000
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := stores[w%len(stores)]
			for i := range perWriter {
				// No Data map: under -race, encoding 80k maps dominated the run.
				ev := Event{Type: "tick-with-some-padding-to-lengthen-the-line", AgentID: fmt.Sprintf("w%d", w), Repo: strconv.Itoa(i)}
				if _, err := s.Record(ev); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}

	events, err := stores[0].Read(time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if len(events) != writers*perWriter {
		t.Fatalf("read %d events, want %d", len(events), writers*perWriter)
	}
	seen := make(map[string]bool, len(events))
	for _, ev := range events {
		key := ev.AgentID + "/" + ev.Repo
		if seen[key] {
			t.Fatalf("event %s read twice", key)
		}
		seen[key] = true
	}
	lines := 0
	files, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	for _, path := range files {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if len(sc.Bytes()) == 0 {
				// A store opening the file while another's append is half copied sees no final
				// newline and adds one (terminateLastLine); the blank line is skipped on read.
				continue
			}
			lines++
			if !json.Valid(sc.Bytes()) {
				t.Fatalf("torn line in %s: %q", path, sc.Text())
			}
		}
		f.Close()
	}
	if lines != writers*perWriter {
		t.Fatalf("%d lines on disk, want %d", lines, writers*perWriter)
	}
	sum, err := stores[1].Query(time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Total != writers*perWriter || len(sum.ByAgent) != writers {
		t.Fatalf("query total %d over %d agents, want %d over %d", sum.Total, len(sum.ByAgent), writers*perWriter, writers)
	}
}

func TestTornAndGarbageLinesAreSkipped(t *testing.T) {
	dir := t.TempDir()
	now := time.Date(2025, 3, 4, 10, 0, 0, 0, time.UTC)
	good := func(typ string, offset time.Duration) string {
		b, _ := json.Marshal(Event{Type: typ, Timestamp: now.Add(offset), Repo: "r"})
		return string(b)
	}
	content := strings.Join([]string{
		good("a", 0),
		`this is not json`,
		``,
		`   `,
		`{"type":"b","timestamp":"2025-03-04T10:00:01Z"`, // cut short
		`{"type":"","timestamp":"2025-03-04T10:00:02Z"}`, // no type
		`{"timestamp":"2025-03-04T10:00:02Z"}`,
		`{"type":"c","timestamp":"not a time"}`,
		`{"type":"d","timestamp":"2025-03-04T10:00:03Z","repo":"r","data":{"x":1}} trailing`,
		`{"type":"e","timestamp":"2025-03-04T10:00:03Z","repo":"r","data":{"x":`,
		good("f", 4*time.Second),
		`{"type":"g\u00e9","timestamp":"2025-03-04T10:00:05Z","agent_id":"esc\"aped","future_field":[1,2]}`,
		`{"type":"h","timestamp":"` + strings.Repeat("9", MaxEventBytes+10) + `"}`, // over the line limit
		good("i", 6*time.Second),
		`{"type":"j","timestamp":"2025-03-04T10:00:07Z"`, // torn final line, no newline
	}, "\n")
	if err := os.WriteFile(filepath.Join(dir, "2025-03-04.jsonl"), []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	s := openStore(t, dir)
	s.now = fixedClock(&now)
	now = now.Add(10 * time.Second)

	// Appending after the torn line must not glue onto it.
	if _, err := s.Record(Event{Type: "k"}); err != nil {
		t.Fatal(err)
	}
	events, err := s.Read(time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, ev := range events {
		types = append(types, ev.Type)
	}
	if want := []string{"a", "f", "gé", "i", "k"}; !reflect.DeepEqual(types, want) {
		t.Fatalf("read types %q, want %q", types, want)
	}
	if events[2].AgentID != `esc"aped` {
		t.Fatalf("escaped agent id read as %q", events[2].AgentID)
	}
	sum, err := s.Query(time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if want := Summarize(events); !reflect.DeepEqual(sum, want) {
		t.Fatalf("Query %+v\ndiffers from Summarize(Read) %+v", sum, want)
	}
}

func TestReadSelectsDaysAndSkipsOtherFiles(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	now := time.Date(2025, 6, 10, 23, 59, 59, 0, time.UTC)
	s.now = fixedClock(&now)
	record := func(typ string) {
		t.Helper()
		if _, err := s.Record(Event{Type: typ}); err != nil {
			t.Fatal(err)
		}
	}
	record("day10")
	now = now.Add(2 * time.Second) // past midnight: a new file
	record("day11")
	now = now.Add(72 * time.Hour) // two empty days in between
	record("day14")
	for _, name := range []string{"notes.txt", "2025-13-45.jsonl", "backup.jsonl", "2025-06-12.jsonl.bak"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(`{"type":"stray","timestamp":"2025-06-12T00:00:00Z"}`+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, day := range []string{"2025-06-10", "2025-06-11", "2025-06-14"} {
		if !fileExists(filepath.Join(dir, day+".jsonl")) {
			t.Fatalf("missing day file %s", day)
		}
	}
	tests := []struct {
		since time.Time
		want  []string
	}{
		{time.Time{}, []string{"day10", "day11", "day14"}},
		{time.Date(2025, 6, 10, 23, 59, 59, 0, time.UTC), []string{"day10", "day11", "day14"}},
		{time.Date(2025, 6, 10, 23, 59, 59, 1, time.UTC), []string{"day11", "day14"}},
		{time.Date(2025, 6, 12, 0, 0, 0, 0, time.UTC), []string{"day14"}},
		{time.Date(2025, 6, 15, 0, 0, 0, 0, time.UTC), nil},
	}
	for _, tc := range tests {
		events, err := s.Read(tc.since)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, ev := range events {
			got = append(got, ev.Type)
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("since %v: %q, want %q", tc.since, got, tc.want)
		}
		sum, err := s.Query(tc.since)
		if err != nil {
			t.Fatal(err)
		}
		if sum.Total != len(tc.want) {
			t.Errorf("since %v: query total %d, want %d", tc.since, sum.Total, len(tc.want))
		}
	}
	empty := openStore(t, filepath.Join(t.TempDir(), "fresh"))
	if events, err := empty.Read(time.Time{}); err != nil || len(events) != 0 {
		t.Fatalf("fresh store: %v %v", events, err)
	}
}

func TestParseSince(t *testing.T) {
	tests := []struct {
		in      string
		want    time.Duration
		wantErr string
	}{
		{"", 7 * 24 * time.Hour, ""},
		{"7d", 7 * 24 * time.Hour, ""},
		{"24h", 24 * time.Hour, ""},
		{"30m", 30 * time.Minute, ""},
		{" 1h ", time.Hour, ""},
		{"07d", 7 * 24 * time.Hour, ""},
		{"36500d", 36500 * 24 * time.Hour, ""},
		{"7x", 0, `since: "7x" has unit "x"; use d, h or m, e.g. "7d", "24h", "30m"`},
		{"7dd", 0, `has unit "dd"`},
		{"7D", 0, `has unit "D"`},
		{"7 d", 0, `has unit " d"`},
		{"10s", 0, `has unit "s"`},
		{"7", 0, `since: "7" has no unit; add d, h or m, e.g. "7d"`},
		{"d", 0, "must start with a positive whole number"},
		{"-7d", 0, "must start with a positive whole number"},
		{"+7d", 0, "must start with a positive whole number"},
		{"0d", 0, `since: "0d" must be positive, e.g. "1d"`},
		{"1.5h", 0, "must be a whole number"},
		{"36501d", 0, "is too long; the most is 36500d"},
		{"99999999999999999999m", 0, "is too long"},
	}
	for _, tc := range tests {
		got, err := ParseSince(tc.in)
		switch {
		case tc.wantErr == "" && (err != nil || got != tc.want):
			t.Errorf("ParseSince(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("ParseSince(%q) error %v; want one containing %q", tc.in, err, tc.wantErr)
		}
	}
}

func TestSummarizeSortsAndKeepsNewest(t *testing.T) {
	base := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	var events []Event
	add := func(typ, repo, agent string, sec int) {
		events = append(events, Event{Type: typ, Repo: repo, AgentID: agent, Timestamp: base.Add(time.Duration(sec) * time.Second)})
	}
	// Out of time order on purpose, with a timestamp tie (t=20, two events).
	add("build", "core", "a1", 5)
	add("test", "web", "a2", 20)
	add("build", "web", "", 1)
	add("deploy", "", "a1", 20)
	add("test", "core", "a3", 3)
	add("build", "core", "a2", 7)
	add("alpha", "api", "a3", 2)
	for i := range 10 {
		add("lint", "", "", 8+i) // t=8..17
	}

	got := Summarize(events)
	if got.Total != 17 {
		t.Fatalf("total %d, want 17", got.Total)
	}
	wantTypes := []Count{{"lint", 10}, {"build", 3}, {"test", 2}, {"alpha", 1}, {"deploy", 1}}
	wantRepos := []Count{{"core", 3}, {"web", 2}, {"api", 1}}
	wantAgents := []Count{{"a1", 2}, {"a2", 2}, {"a3", 2}}
	if !reflect.DeepEqual(got.ByType, wantTypes) || !reflect.DeepEqual(got.ByRepo, wantRepos) || !reflect.DeepEqual(got.ByAgent, wantAgents) {
		t.Fatalf("counts\n type %v\n repo %v\n agent %v", got.ByType, got.ByRepo, got.ByAgent)
	}
	var recent []string
	for _, ev := range got.Recent {
		recent = append(recent, fmt.Sprintf("%s@%d", ev.Type, int(ev.Timestamp.Sub(base).Seconds())))
	}
	// Newest first; of the two at t=20 the later in input order comes first.
	want := []string{"deploy@20", "test@20", "lint@17", "lint@16", "lint@15", "lint@14", "lint@13", "lint@12", "lint@11", "lint@10"}
	if !reflect.DeepEqual(recent, want) {
		t.Fatalf("recent %v\nwant   %v", recent, want)
	}

	empty := Summarize(nil)
	if empty.Total != 0 || empty.ByType == nil || empty.Recent == nil {
		t.Fatalf("empty summary %+v: want zero total and empty (not nil) lists", empty)
	}
	b, _ := json.Marshal(empty)
	if string(b) != `{"total":0,"by_type":[],"by_repo":[],"by_agent":[],"recent":[]}` {
		t.Fatalf("empty summary JSON %s", b)
	}
}

// TestQueryMatchesSummarizeOfRead: the streaming Query (fast key parser and
// all) must agree with the plain decode path on what Record writes.
func TestQueryMatchesSummarizeOfRead(t *testing.T) {
	s := openStore(t, t.TempDir())
	now := time.Date(2025, 2, 1, 12, 0, 0, 0, time.UTC)
	s.now = fixedClock(&now)
	repos := []string{"", "core", "web", "ünïcode", `quo"te`}
	agents := []string{"", "a1", "a2", "tab\there"}
	for i := range 500 {
		now = now.Add(17 * time.Minute)
		ev := Event{Type: fmt.Sprintf("type%d", i%7), Repo: repos[i%len(repos)], AgentID: agents[i%len(agents)]}
		if i%3 == 0 {
			ev.Duration = time.Duration(i) * time.Millisecond
		}
		if i%2 == 0 {
			ev.Data = map[string]any{"i": i, "nested": map[string]any{"k": []any{1, "two"}}}
		}
		if _, err := s.Record(ev); err != nil {
			t.Fatal(err)
		}
	}
	for _, since := range []time.Time{{}, now.Add(-24 * time.Hour), now.Add(-time.Hour), now.Add(time.Hour)} {
		events, err := s.Read(since)
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.Query(since)
		if err != nil {
			t.Fatal(err)
		}
		if want := Summarize(events); !reflect.DeepEqual(got, want) {
			t.Fatalf("since %v: Query %+v\nSummarize(Read) %+v", since, got, want)
		}
	}
}

func TestFastKeysAgreesWithEncodingJSON(t *testing.T) {
	lines := []string{
		`{"type":"a","timestamp":"2025-01-01T00:00:00Z"}`,
		`{"type":"a","timestamp":"2025-01-01T00:00:00.123456789+02:00","agent_id":"x","repo":"y"}`,
		`{"type":"a","timestamp":"2025-01-01T00:00:00Z","repo":"y","duration":5}`,
		`{"type":"a","timestamp":"2025-01-01T00:00:00Z","data":{"repo":"not this"}}`,
		`{"type":"a","timestamp":"2025-01-01T00:00:00Z","repo":"y","repo":"z"}`, // duplicate: last wins
		`{"type":"a","timestamp":"2025-01-01T00:00:00Z","type":"b"}`,            // duplicate type
		`{"type":"a","timestamp":"2025-01-01T24:00:00Z"}`,                       // invalid hour
		`{"type":"a\u0062","timestamp":"2025-01-01T00:00:00Z"}`,                 // escape
		"{\"type\":\"\xff\",\"timestamp\":\"2025-01-01T00:00:00Z\"}",            // invalid UTF-8
		`{"type":"a","timestamp":"2025-01-01T00:00:00Z","data":{"x":}`,          // broken tail
		`{"type":"a","timestamp":"2025-01-01T00:00:00Z","agent_id":"x"} `,       // trailing space
		`{"type": "a","timestamp":"2025-01-01T00:00:00Z"}`,                      // other spacing
	}
	for _, line := range lines {
		got, gotOK := decodeKeys([]byte(line))
		var ev Event
		wantOK := json.Unmarshal([]byte(line), &ev) == nil && ev.Type != ""
		if gotOK != wantOK || (wantOK && (string(got.Type) != ev.Type || !got.Timestamp.Equal(ev.Timestamp) || string(got.AgentID) != ev.AgentID || string(got.Repo) != ev.Repo)) {
			t.Errorf("%s:\n decodeKeys %q %v %q %q %v\n json       %+v %v", line, got.Type, got.Timestamp, got.AgentID, got.Repo, gotOK, ev, wantOK)
		}
	}
}

func TestOpenRejectsEmptyDir(t *testing.T) {
	if _, err := Open(""); err == nil {
		t.Fatal("Open(\"\") succeeded")
	}
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(filepath.Join(file, "sub")); err == nil || !strings.Contains(err.Error(), "create directory") {
		t.Fatalf("Open under a file: %v", err)
	}
}

func TestRecordBatchWritesAllOrNothing(t *testing.T) {
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err := s.RecordBatch([]Event{{Type: "a", Repo: "r1"}, {Type: "b", AgentID: "x"}, {Type: "a"}})
	if err != nil || len(got) != 3 || got[0].Timestamp.IsZero() {
		t.Fatalf("RecordBatch = %+v, %v", got, err)
	}
	if _, err := s.RecordBatch([]Event{{Type: "c"}, {Type: " "}}); err == nil || !strings.Contains(err.Error(), "type") {
		t.Fatalf("batch with an invalid event: err = %v", err)
	}
	evs, err := s.Read(time.Now().Add(-time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 3 {
		t.Fatalf("read back %d events, want 3 (the invalid batch must write nothing): %+v", len(evs), evs)
	}
	sum := Summarize(evs)
	if sum.Total != 3 || sum.ByType[0].Key != "a" || sum.ByType[0].Count != 2 {
		t.Fatalf("summary = %+v", sum)
	}
}

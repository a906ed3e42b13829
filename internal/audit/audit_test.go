package audit

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-hub/switchboard/internal/jsonobj"
	"github.com/switchboard-hub/switchboard/internal/testutil"
)

func TestRecordWritesJSONWithSecurityLevel(t *testing.T) {
	file := filepath.Join(t.TempDir(), "audit", "audit.log")
	l, err := New(Options{File: file})
	if err != nil {
		t.Fatal(err)
	}
	var seen []Entry
	cancel := l.OnRecord(func(e Entry) { seen = append(seen, e) })
	l.Record(context.Background(), Entry{Tool: "file_write", Session: "s1", Transport: "unix", Outcome: "ok",
		Args: SummarizeArgs(json.RawMessage(`{"path":"a.txt","content":"top secret"}`))}, true)
	cancel()
	l.Record(context.Background(), Entry{Tool: "file_read", Outcome: "ok"}, false)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 1 || seen[0].Level != "SECURITY" {
		t.Fatalf("listener saw %+v, want one SECURITY entry (cancel must unregister)", seen)
	}
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []map[string]any
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("line is not JSON: %q", sc.Text())
		}
		lines = append(lines, m)
	}
	if len(lines) != 2 {
		t.Fatalf("got %d lines, want 2", len(lines))
	}
	if lines[0]["level"] != "SECURITY" || lines[1]["level"] != "INFO" {
		t.Errorf("levels = %v, %v", lines[0]["level"], lines[1]["level"])
	}
	for _, k := range []string{"tool", "session", "transport", "user", "duration_ms", "outcome", "args"} {
		if _, ok := lines[0][k]; !ok {
			t.Errorf("audit line lacks %q: %v", k, lines[0])
		}
	}
	if strings.Contains(lines[0]["args"].(string), "top secret") {
		t.Fatal("file contents leaked into the audit log")
	}
}

func TestSummarizeArgs(t *testing.T) {
	hello := "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824" // sha256("hello")
	cases := []struct{ in, want string }{
		{`{"path":"a.txt","content":"hello"}`, `content=<5 bytes sha256=` + hello + `> path="a.txt"`},
		{`{"id":"proc-1","input":"hello"}`, `id="proc-1" input=<5 bytes sha256=` + hello + `>`},
		{`{"command":"sh","stdin":"hello"}`, `command="sh" stdin=<5 bytes sha256=` + hello + `>`},
		{`{"command":"ls", "args": ["-l"]}`, `args=["-l"] command="ls"`},
		// secrets (package redact): neither value, size nor hash, at any depth
		{`{"api_key":"sk-1","path":"a"}`, `api_key=<redacted> path="a"`},
		{`{"command":"gh","env":["GITHUB_TOKEN=ghp_2", "HOME=/h"],"opts":{"password":"p"}}`, `command="gh" env=["GITHUB_TOKEN=<redacted>","HOME=/h"] opts={"password":"<redacted>"}`},
		{`{"script":"hello"}`, `script=<5 bytes sha256=` + hello + `>`},
		{`[1,2]`, `<5 bytes, not an object, sha256=` + digest([]byte(`[1,2]`)) + `>`},
		{``, ``},
	}
	for _, c := range cases {
		if got := SummarizeArgs(json.RawMessage(c.in)); got != c.want {
			t.Errorf("SummarizeArgs(%s) = %q, want %q", c.in, got, c.want)
		}
	}
}

// The activity feed's display values: what the summary shows, readable (strings as text, cut
// short), and nothing the summary hides.
func TestSummarizeArgsValues(t *testing.T) {
	hello := "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824" // sha256("hello")
	long := strings.Repeat("é", DisplayCap)                                     // 2 bytes each: the cut falls on a character boundary
	cases := []struct {
		in   string
		want map[string]string
	}{
		{`{"path":"src/main.go","limit":5,"follow":true,"none":null}`, map[string]string{"path": "src/main.go", "limit": "5", "follow": "true", "none": "null"}},
		{`{"path":"a \"q\"\nb"}`, map[string]string{"path": "a \"q\"\nb"}},
		{`{"command":"ls", "args": ["-l", "x"], "opts": {"a": 1}}`, map[string]string{"command": "ls", "args": `["-l","x"]`, "opts": `{"a":1}`}},
		{`{"path":"a.txt","content":"hello"}`, map[string]string{"path": "a.txt", "content": "<5 bytes sha256=" + hello + ">"}},
		{`{"message":"hello","script":{"x":1}}`, map[string]string{"message": "<5 bytes sha256=" + hello + ">",
			"script": "<redacted 7 bytes of JSON sha256=" + digest([]byte(`{"x":1}`)) + ">"}},
		{`{"api_key":"sk-live-1","password":{"a":"b"},"headers":{"Authorization":"Bearer t0k","Accept":"*/*"},"env":["GITHUB_TOKEN=ghp_2"]}`,
			map[string]string{"api_key": "<redacted>", "password": "<redacted>", "headers": `{"Accept":"*/*","Authorization":"<redacted>"}`, "env": `["GITHUB_TOKEN=<redacted>"]`}},
		{`{"path":"` + long + `x"}`, map[string]string{"path": strings.Repeat("é", DisplayCap/2) + "…"}},
		{`{}`, nil}, {`[1]`, nil}, {``, nil},
	}
	for _, c := range cases {
		sum, got := SummarizeArgsValues(json.RawMessage(c.in))
		if sum != SummarizeArgs(json.RawMessage(c.in)) {
			t.Errorf("%s: summary %q differs from SummarizeArgs", c.in, sum)
		}
		if !maps.Equal(got, c.want) {
			t.Errorf("%s: values = %q, want %q", c.in, got, c.want)
		}
		for k, v := range got {
			for _, secret := range []string{"sk-live-1", "t0k", "ghp_2", `"b"`} {
				if strings.Contains(v, secret) {
					t.Errorf("%s: value of %s shows the secret: %q", c.in, k, v)
				}
			}
		}
	}
	// At most MaxDisplayValues arguments, the first by name; long names have none.
	many := map[string]int{strings.Repeat("k", 101): 1}
	for i := range MaxDisplayValues + 10 {
		many[fmt.Sprintf("a%02d", i)] = i
	}
	raw, _ := json.Marshal(many)
	if _, got := SummarizeArgsValues(raw); len(got) != MaxDisplayValues || got["a00"] != "0" || got[fmt.Sprintf("a%02d", MaxDisplayValues-1)] == "" {
		t.Errorf("%d values: %v", len(got), got)
	}
}

// A long command is kept whole up to ValueCap: its tail (where "rm -rf" would hide) is on record,
// and beyond the cap the sha256 of the whole value pins down exactly what ran.
func TestSummarizeArgsKeepsLongValues(t *testing.T) {
	script := "echo " + strings.Repeat("a", 3000) + "; rm -rf ~/tail-is-visible"
	args, _ := json.Marshal(map[string]any{"command": "sh", "args": []string{"-c", script}})
	got := SummarizeArgs(args)
	if !strings.Contains(got, "rm -rf ~/tail-is-visible") {
		t.Fatalf("the command's tail is missing from %d-byte summary", len(got))
	}
	huge := "echo " + strings.Repeat("b", 3*ValueCap) + "; secret-tail"
	args, _ = json.Marshal(map[string]any{"command": "sh", "args": []string{"-c", huge}})
	full, _ := json.Marshal([]string{"-c", huge})
	got = SummarizeArgs(args)
	if !strings.Contains(got, fmt.Sprintf("<%d bytes in all, sha256=%s>", len(full), digest(full))) {
		t.Fatalf("value above the cap lacks its size and sha256: ...%s", got[len(got)-200:])
	}
	if len(got) > ValueCap+200 {
		t.Fatalf("value above the cap kept %d bytes", len(got))
	}
}

// Audit lines on a shared stderr are never split by another writer's line (a warning), even when
// lines straddle the audit buffer's size.
func TestAuditLinesNotSplitOnSharedStderr(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	l, err := New(Options{Stderr: w})
	if err != nil {
		t.Fatal(err)
	}
	warn := slog.New(slog.NewTextHandler(w, nil))
	read := make(chan []string)
	go func() {
		var lines []string
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			lines = append(lines, sc.Text())
		}
		read <- lines
	}()
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := range 200 {
			args, _ := json.Marshal(map[string]any{"path": strings.Repeat("p", 1000+i*37)})
			l.Record(context.Background(), Entry{Tool: "file_write", Outcome: "ok", Args: SummarizeArgs(args)}, true)
		}
	})
	wg.Go(func() {
		for i := range 2000 {
			warn.Warn("something odd", "i", i)
		}
	})
	wg.Wait()
	l.Close()
	w.Close()
	lines := <-read
	var audits int
	for _, ln := range lines {
		if strings.HasPrefix(ln, "{") {
			var m map[string]any
			if err := json.Unmarshal([]byte(ln), &m); err != nil {
				t.Fatalf("audit line split or mixed: %.120q", ln)
			}
			audits++
		} else if !strings.HasPrefix(ln, "time=") || strings.Contains(ln, `"tool"`) {
			t.Fatalf("warning line mixed with audit text: %.120q", ln)
		}
	}
	if audits != 200 {
		t.Fatalf("%d whole audit lines, want 200", audits)
	}
}

// Started is on disk at once, before any flush interval: a call that kills the hub is on record.
func TestStartedIsWrittenAtOnce(t *testing.T) {
	file := filepath.Join(t.TempDir(), "audit.log")
	l, err := New(Options{File: file})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	l.Started(context.Background(), Entry{CallID: "c1", Tool: "exec", Args: `command="sh"`})
	b, _ := os.ReadFile(file)
	if !strings.Contains(string(b), `"outcome":"started"`) || !strings.Contains(string(b), `"call":"c1"`) || !strings.Contains(string(b), `"level":"SECURITY"`) {
		t.Fatalf("started line not on disk right away: %q", b)
	}
}

// TestLinesStampedWhenTheCallArrived: an entry is written with its own time (when the call
// arrived), so the "started" line of a call that waited for approval says when it was asked for,
// not when the wait ended.
func TestLinesStampedWhenTheCallArrived(t *testing.T) {
	file := filepath.Join(t.TempDir(), "audit.log")
	l, err := New(Options{File: file})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	arrived := time.Date(2026, 11, 25, 8, 0, 0, 0, time.UTC)
	l.Started(context.Background(), Entry{Time: arrived, CallID: "c9", Tool: "file_write"})
	b, _ := os.ReadFile(file)
	if !strings.Contains(string(b), `"time":"2026-11-25T08:00:00Z"`) {
		t.Fatalf("started line not stamped with the arrival: %q", b)
	}
}

func TestBufferedLinesReachTheFileWithinTheFlushInterval(t *testing.T) {
	file := filepath.Join(t.TempDir(), "audit.log")
	l, err := New(Options{File: file})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	l.Record(context.Background(), Entry{Tool: "dir_list", Outcome: "ok"}, false)
	// The flush is a timer's and the file says nothing when it is written: look at it again and
	// again. (Not in a synctest bubble: lumberjack's mill goroutine never ends.)
	testutil.EventuallyWithin(t, 20*FlushInterval, "the audit line on disk", func() bool {
		b, _ := os.ReadFile(file)
		return strings.Contains(string(b), `"tool":"dir_list"`)
	})
}

var digests = regexp.MustCompile(`sha256=[0-9a-f]{64}`)

// FuzzSummarizeArgs: any arguments object summarises without panicking, never shows a payload
// field's text, and stays bounded. `go test -fuzz FuzzSummarizeArgs ./internal/audit` runs longer.
func FuzzSummarizeArgs(f *testing.F) {
	f.Add("path", "a.txt", "secret payload")
	f.Add("args", strings.Repeat("x", ValueCap+10), "stdin payload here")
	f.Add("", "", "")
	f.Fuzz(func(t *testing.T, key, value, payload string) {
		summary := func(p string) string {
			args, _ := json.Marshal(map[string]any{key: value, "content": p, "input": p})
			return SummarizeArgs(args)
		}
		// Two payloads of the same length give the same summary but for their digests: nothing
		// of the text itself is recorded.
		var sent string // what JSON carries (invalid UTF-8 becomes U+FFFD)
		b, _ := json.Marshal(payload)
		_ = json.Unmarshal(b, &sent)
		got, other := summary(payload), summary(strings.Repeat("q", len(sent)))
		if digests.ReplaceAllString(got, "") != digests.ReplaceAllString(other, "") {
			t.Fatalf("payload text shows in the summary:\n%s\n%s", got, other)
		}
		if len(got) > SummaryCap+ValueCap+1024 {
			t.Fatalf("summary of %d bytes", len(got))
		}
		_ = SummarizeArgs(json.RawMessage(value)) // arbitrary bytes: never panics
	})
}

// A plain io.Writer (not an *os.File) shared by the audit echo and a diagnostics logger through
// LineWriter: no data race, no split line (run with -race to see the race without it).
func TestLineWriterSharedByTwoLoggers(t *testing.T) {
	var buf bytes.Buffer
	w := LineWriter(&buf)
	l, err := New(Options{Stderr: w})
	if err != nil {
		t.Fatal(err)
	}
	warn := slog.New(slog.NewTextHandler(w, nil))
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := range 300 {
			l.Record(context.Background(), Entry{Tool: "file_write", Outcome: "ok", Args: strings.Repeat("a", 100+i*50)}, true)
		}
	})
	wg.Go(func() {
		for i := range 1000 {
			warn.Warn("odd", "i", i)
		}
	})
	wg.Wait()
	l.Close()
	var audits, warns int
	for _, ln := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		switch {
		case strings.HasPrefix(ln, "{") && json.Valid([]byte(ln)):
			audits++
		case strings.HasPrefix(ln, "time=") && !strings.Contains(ln, `"tool"`):
			warns++
		default:
			t.Fatalf("split or mixed line: %.120q", ln)
		}
	}
	if audits != 300 || warns != 1000 {
		t.Fatalf("%d audit and %d warning lines, want 300 and 1000", audits, warns)
	}
}

// The fast path of SummarizeArgs must write exactly what the general one writes.
var summaryCases = []string{
	`{}`, `{"path":"small.txt"}`, `{"b":1,"a":"x y","c":[1, 2],"d":{"e":null}}`, `{"content":"secret","path":"a"}`,
	`{"z":"\"quoted\" \\ back","a":-1.5e3}`, `{"a":1,"a":2}`, `{"a\u0062":1}`, `[1]`, `"x"`, `{"é":"ü"}`,
	`{"long":"` + strings.Repeat("x", ValueCap+10) + `"}`, `{"a" : 1 , "b" :"two"}`,
	// payload and private strings (hashed in place when plain), secrets of any shape
	`{"message":"hello from the benchmark"}`, `{"message":"é ü","path":"a"}`, `{"message":"a\nb"}`,
	`{"message":"\u00e9"}`, "{\"message\":\"bad \xff utf8\"}", `{"content":""}`, `{"content":12}`,
	`{"content":{"a":1}}`, `{"text":"` + strings.Repeat("y", ValueCap+10) + `"}`,
	`{"api_key":"sk-1","path":"p"}`, `{"token":{"nested":[1,2]}}`, `{"password":null,"message":"m"}`,
	"{\"message\":\"tab\there\"}",
}

func TestSummarizeArgsFastPathMatches(t *testing.T) {
	for _, in := range summaryCases {
		checkPathsMatch(t, in)
	}
	for _, in := range []string{`{"path":"small.txt","limit":5}`, `{"message":"hello from the benchmark"}`, `{"api_key":{"a":1},"content":"x"}`} {
		if _, ok := summarizeSimple(json.RawMessage(in), nil); !ok {
			t.Errorf("%s must take the fast path", in)
		}
	}
}

func FuzzSummarizeArgsFastPath(f *testing.F) {
	for _, in := range summaryCases {
		f.Add(in)
	}
	f.Fuzz(func(t *testing.T, in string) {
		if in == "" {
			return // "" both ways, before either path
		}
		checkPathsMatch(t, in)
	})
}

// checkPathsMatch: the fast path, where it applies, gives the general path's summary and display
// values.
func checkPathsMatch(t *testing.T, in string) {
	t.Helper()
	if got, want := SummarizeArgs(json.RawMessage(in)), summarize(json.RawMessage(in), nil); got != want {
		t.Errorf("%q: fast path %q, general %q", in, got, want)
	}
	sum, got := SummarizeArgsValues(json.RawMessage(in))
	want := displayValues{}
	wantSum := summarize(json.RawMessage(in), want)
	if sum != wantSum || !maps.Equal(got, want.orNil()) {
		t.Errorf("%q: SummarizeArgsValues = %q %v, general %q %v", in, sum, got, wantSum, want.orNil())
	}
}

// appendLine must write exactly the line slog's JSON handler writes for the same entry.
func TestAppendLineMatchesSlog(t *testing.T) {
	at := time.Date(2026, 11, 22, 18, 40, 1, 123456789, time.FixedZone("x", 3600))
	weird := "q\"b\\s\n\r\t\x01\x7f<>&é\u2028\u2029\xff end"
	entries := []Entry{
		{Tool: "file_exists", Session: "s1", Transport: "stdio", User: "u", Outcome: "ok", DurationMs: 0.123, Args: "path=\"small.txt\"", Decision: "allow", Rule: "default"},
		{Tool: "file_read", Session: "unix-1", Client: weird, Protocol: "2026-07-28", Transport: "unix", Outcome: "ok", Decision: "deny", Rule: "rule 1"},
		{CallID: "c1", Tool: "exec", Outcome: "started", Args: "command=\"true\""},
		{CallID: "a2", Actor: "dashboard", Tool: weird, Session: weird, Transport: weird, User: weird, Outcome: "error", Error: weird, Args: weird, DurationMs: 12345.678,
			Decision: "ask", Rule: weird, Approval: "approved", By: "tray", Roots: weird},
		{Tool: "t", DurationMs: 0}, {Tool: "t", DurationMs: 1e-6}, {Tool: "t", DurationMs: 999999999999.5},
	}
	for _, lvl := range []slog.Level{slog.LevelInfo, LevelSecurity} {
		for _, e := range entries {
			checkLine(t, at, lvl, e)
		}
	}
	if _, ok := appendLine(nil, at, slog.LevelInfo, "tool call", Entry{DurationMs: 1e-7}); ok {
		t.Error("a duration slog writes in exponent form must be left to slog")
	}
}

func checkLine(t *testing.T, at time.Time, lvl slog.Level, e Entry) {
	t.Helper()
	var want bytes.Buffer
	h := slog.NewJSONHandler(&want, &slog.HandlerOptions{Level: slog.LevelInfo, ReplaceAttr: levelNames})
	r := slog.NewRecord(at, lvl, entryMsg(e), 0)
	r.AddAttrs(entryAttrs(e)...)
	if err := h.Handle(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	got, ok := appendLine(nil, at, lvl, entryMsg(e), e)
	if !ok {
		t.Fatalf("%+v: not written", e)
	}
	if string(got) != want.String() {
		t.Errorf("line differs from slog's\n got: %s\nwant: %s", got, want.String())
	}
}

func FuzzAppendLine(f *testing.F) {
	f.Add("file_exists", "path=\"x\"", "boom \u2028 \xff", 0.5)
	f.Fuzz(func(t *testing.T, tool, args, errText string, d float64) {
		e := Entry{Tool: tool, Args: args, Error: errText, DurationMs: d, Outcome: "error", Decision: "allow", Rule: tool}
		if _, ok := appendLine(nil, time.Unix(1e9, 7), slog.LevelInfo, "tool call", e); !ok {
			return
		}
		checkLine(t, time.Unix(1e9, 7), LevelSecurity, e)
	})
}

// BenchmarkSummarizeArgs: the summary every audited call computes, for arguments that take the
// fast path (shown values; a private string, hashed in place) and for ones that do not, and with
// the display values the activity feed carries.
func BenchmarkSummarizeArgs(b *testing.B) {
	for _, c := range []struct{ name, args string }{
		{"shown", `{"path":"small.txt","limit":5}`},
		{"private_string", `{"message":"hello from the benchmark"}`},
		{"escaped_string", `{"message":"line one\nline two"}`},
	} {
		b.Run(c.name, func(b *testing.B) {
			raw := json.RawMessage(c.args)
			b.ReportAllocs()
			for b.Loop() {
				_ = SummarizeArgs(raw)
			}
		})
	}
	// What the middleware computes: the summary and the activity feed's display values.
	b.Run("shown_with_values", func(b *testing.B) {
		raw := json.RawMessage(`{"path":"small.txt","limit":5}`)
		b.ReportAllocs()
		for b.Loop() {
			_, _ = SummarizeArgsValues(raw)
		}
	})
}

// FuzzSummarizeSplitMatches: a summary of arguments the caller already split (the hub splits a
// call's arguments once, toolcall) is the summary of the raw arguments, display values and all.
func FuzzSummarizeSplitMatches(f *testing.F) {
	for _, in := range summaryCases {
		f.Add(in)
	}
	f.Fuzz(func(t *testing.T, in string) {
		raw := json.RawMessage(in)
		var keys, vals [][]byte
		if !jsonobj.Members(raw, func(k, v []byte) { keys, vals = append(keys, k), append(vals, v) }) {
			return // the hub only passes split members of an object jsonobj splits
		}
		wantS, wantV := SummarizeArgsValues(raw)
		gotS, gotV := SummarizeSplitValues(raw, keys, vals)
		if gotS != wantS || !maps.Equal(gotV, wantV) {
			t.Fatalf("%s:\nsplit %q %v\nraw   %q %v", in, gotS, gotV, wantS, wantV)
		}
	})
}

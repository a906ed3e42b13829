package audit_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-hub/switchboard/internal/audit"
)

// newLog opens an audit log in a temp dir that rotates at 1 MB (lumberjack's smallest size).
func newLog(t *testing.T) (*audit.Logger, string) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "logs", "audit.log")
	l, err := audit.New(audit.Options{File: file, MaxSizeMB: 1, MaxBackups: 5})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l, file
}

// record writes n entries tool-0 … tool-(n-1), each padded to about pad bytes of arguments.
func record(t *testing.T, l *audit.Logger, from, n, pad int) {
	t.Helper()
	for i := from; i < from+n; i++ {
		e := audit.Entry{Time: time.Now().UTC(), Tool: fmt.Sprintf("tool_%d", i), Session: fmt.Sprintf("unix-%d", i%3),
			Client: []string{"claude-code", "cursor", "Gemini"}[i%3], Transport: "unix", Outcome: "ok",
			Decision: "allow", Rule: "default", Args: "pad=" + strings.Repeat("x", pad)}
		if i%5 == 0 {
			e.Decision, e.Rule, e.Outcome, e.Error = "deny", "rule 2", "error", "denied by rule 2"
		}
		l.Record(context.Background(), e, false)
	}
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
}

func toolsOf(p audit.Page) []string {
	var out []string
	for _, e := range p.Entries {
		out = append(out, e.Tool)
	}
	return out
}

func want(from, to int, keep func(int) bool) []string {
	var out []string
	for i := to; i >= from; i-- {
		if keep == nil || keep(i) {
			out = append(out, fmt.Sprintf("tool_%d", i))
		}
	}
	return out
}

// readAll pages through the trail with q and returns every entry's tool, newest first.
func readAll(t *testing.T, file string, q audit.Query) (tools []string, pages int) {
	t.Helper()
	for {
		p, err := audit.Read(file, q)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		tools = append(tools, toolsOf(p)...)
		if p.Next == "" {
			return tools, pages
		}
		if len(p.Entries) == 0 || pages > 1000 {
			t.Fatalf("page %d: %d entries, next cursor %q: the pages do not end", pages, len(p.Entries), p.Next)
		}
		q.Before = p.Next
	}
}

// Pages cover the live file and its rotated backups, newest first, each entry once, with the
// entries read back as they were written.
func TestReadPagesThroughRotatedFiles(t *testing.T) {
	l, file := newLog(t)
	record(t, l, 0, 900, 3000) // ~3 MB: the live file and two or three backups
	files, err := audit.Files(file)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 3 || files[0] != file {
		t.Fatalf("files = %v, want the live file first and at least two backups", files)
	}
	got, pages := readAll(t, file, audit.Query{Limit: 70})
	if !slices.Equal(got, want(0, 899, nil)) {
		t.Fatalf("read %d entries in %d pages; first %v", len(got), pages, got[:min(5, len(got))])
	}
	if pages != 13 { // 900 / 70 = 12.9
		t.Errorf("pages = %d, want 13", pages)
	}

	p, err := audit.Read(file, audit.Query{Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	e := p.Entries[0]
	if e.Tool != "tool_899" || e.Session != "unix-2" || e.Client != "Gemini" || e.Transport != "unix" || e.Decision != "allow" ||
		e.Rule != "default" || e.Outcome != "ok" || e.Level != "INFO" || !strings.HasPrefix(e.Args, "pad=xxx") || e.Time.IsZero() || e.User == "" {
		t.Errorf("entry read back = %+v", e)
	}
	if len(p.Files) != len(files) {
		t.Errorf("page files = %v, want %v", p.Files, files)
	}
}

func TestReadFilters(t *testing.T) {
	l, file := newLog(t)
	record(t, l, 0, 60, 10)
	l.Record(context.Background(), audit.Entry{Tool: "fixture__greet", Session: "unix-9", Client: "e2e", Outcome: "ok", Decision: "ask", Rule: "rule 1", Approval: "approved", By: "dashboard"}, false)
	l.Record(context.Background(), audit.Entry{Actor: "dashboard", Tool: "transport_set", Transport: "dashboard", Outcome: "ok"}, true)
	l.Flush()

	cases := []struct {
		name string
		q    audit.Query
		want []string
	}{
		{"deny", audit.Query{Decision: "deny"}, want(0, 59, func(i int) bool { return i%5 == 0 })},
		{"error outcome", audit.Query{Outcome: "error"}, want(0, 59, func(i int) bool { return i%5 == 0 })},
		{"client name, any case", audit.Query{Client: "gemini"}, want(0, 59, func(i int) bool { return i%3 == 2 })},
		{"session id", audit.Query{Client: "unix-1"}, want(0, 59, func(i int) bool { return i%3 == 1 })},
		{"tool prefix", audit.Query{Tool: "tool_5"}, want(0, 59, func(i int) bool { return i == 5 || i/10 == 5 })},
		{"tool glob", audit.Query{Tool: "*_?7"}, []string{"tool_57", "tool_47", "tool_37", "tool_27", "tool_17"}},
		{"glob on an upstream server's tools", audit.Query{Tool: "*__greet"}, []string{"fixture__greet"}},
		{"ask", audit.Query{Decision: "ask"}, []string{"fixture__greet"}},
		{"combined", audit.Query{Client: "cursor", Decision: "deny"}, want(0, 59, func(i int) bool { return i%3 == 1 && i%5 == 0 })},
		{"dashboard actions", audit.Query{Tool: "transport_"}, []string{"transport_set"}},
		{"nothing", audit.Query{Client: "nobody"}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, limit := range []int{0, 1, 4} {
				q := c.q
				q.Limit = limit
				got, _ := readAll(t, file, q)
				if !slices.Equal(got, c.want) {
					t.Errorf("limit %d: got %v, want %v", limit, got, c.want)
				}
			}
		})
	}
}

// A mutating call's "started" line is dropped once its outcome was read; one without an outcome
// (running, or the hub went down with it) is what outcome=started finds.
func TestReadStartedLines(t *testing.T) {
	l, file := newLog(t)
	ctx := context.Background()
	l.Started(ctx, audit.Entry{CallID: "c1", Tool: "file_write", Session: "unix-1"})
	l.Record(ctx, audit.Entry{CallID: "c1", Tool: "file_write", Session: "unix-1", Outcome: "ok"}, true)
	l.Started(ctx, audit.Entry{CallID: "c2", Tool: "exec", Session: "unix-1", Args: `command="kill -9 $PPID"`})
	l.Flush()
	p, err := audit.Read(file, audit.Query{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range p.Entries {
		got = append(got, e.CallID+" "+e.Outcome)
	}
	if !slices.Equal(got, []string{"c2 started", "c1 ok"}) {
		t.Errorf("entries = %v, want the unfinished exec and the finished write once", got)
	}
	p, _ = audit.Read(file, audit.Query{Outcome: "started"})
	if len(p.Entries) != 1 || p.Entries[0].Tool != "exec" || p.Entries[0].Level != "SECURITY" {
		t.Errorf("outcome=started: %+v", p.Entries)
	}
}

// A cursor into the live file still reads on after that file was rotated into a backup.
func TestReadCursorSurvivesRotation(t *testing.T) {
	l, file := newLog(t)
	record(t, l, 0, 100, 3000)
	p, err := audit.Read(file, audit.Query{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if got := toolsOf(p); !slices.Equal(got, want(90, 99, nil)) {
		t.Fatalf("first page = %v", got)
	}
	before, _ := audit.Files(file)
	record(t, l, 100, 400, 3000) // rotates the file the cursor points into
	after, _ := audit.Files(file)
	if len(after) <= len(before) {
		t.Fatalf("no rotation: %v then %v", before, after)
	}
	got, _ := readAll(t, file, audit.Query{Limit: 25, Before: p.Next})
	if !slices.Equal(got, want(0, 89, nil)) {
		t.Errorf("after rotation the cursor read %d entries: %v…", len(got), got[:min(5, len(got))])
	}
}

func TestReadTellsWhatIsWrong(t *testing.T) {
	_, file := newLog(t)
	for _, c := range []struct {
		q    audit.Query
		want string
	}{
		{audit.Query{Decision: "maybe"}, "decision: \"maybe\" is not a policy decision; use allow, ask or deny"},
		{audit.Query{Outcome: "fine"}, "outcome: \"fine\" is not an outcome; use ok, error or started"},
		{audit.Query{Tool: "file_[x"}, "tool: \"file_[x\" is not a valid pattern"},
		{audit.Query{Limit: 5000}, "limit: 5000 is out of range; use 1 to 1000"},
		{audit.Query{Before: "yesterday"}, "before: \"yesterday\" is not a cursor; pass the \"next\" of the previous page"},
	} {
		if _, err := audit.Read(file, c.q); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want %q", c.q, err, c.want)
		}
	}
}

// No file yet (a fresh data dir): an empty page, no error.
func TestReadWithoutFiles(t *testing.T) {
	file := filepath.Join(t.TempDir(), "logs", "audit.log")
	p, err := audit.Read(file, audit.Query{})
	if err != nil || len(p.Entries) != 0 || p.Next != "" || len(p.Files) != 0 {
		t.Fatalf("Read = %+v, %v", p, err)
	}
	if _, err := os.Stat(filepath.Dir(file)); err == nil {
		t.Error("reading created the log dir")
	}
}

// A line torn by a crash, and a line longer than any audit line, are skipped; the rest reads.
func TestReadSkipsBrokenLines(t *testing.T) {
	l, file := newLog(t)
	record(t, l, 0, 3, 10)
	f, err := os.OpenFile(file, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(f, "{\"time\":\"2026-01-01T00:00:00Z\",\"level\":\"INFO\",\"msg\":\"tool call\",\"tool\":\"torn\n%s\n", strings.Repeat("y", 5<<20))
	f.Close()
	record(t, l, 3, 2, 10)
	got, _ := readAll(t, file, audit.Query{Limit: 2})
	if !slices.Equal(got, want(0, 4, nil)) {
		t.Errorf("got %v", got)
	}
}

// The MCP revision a call came in reads back with its line (the Activity view and the client
// matrix tell the eras apart by it).
func TestReadKeepsTheProtocol(t *testing.T) {
	l, file := newLog(t)
	l.Record(context.Background(), audit.Entry{Tool: "file_read", Session: "http-1", Client: "claude-code", Protocol: "2026-07-28", Outcome: "ok"}, false)
	l.Record(context.Background(), audit.Entry{Tool: "file_read", Session: "unix-1", Client: "codex", Protocol: "2025-06-18", Outcome: "ok"}, false)
	l.Flush()
	p, err := audit.Read(file, audit.Query{})
	if err != nil || len(p.Entries) != 2 {
		t.Fatalf("Read = %+v, %v", p, err)
	}
	got := map[string]string{}
	for _, e := range p.Entries {
		got[e.Client] = e.Protocol
	}
	if got["claude-code"] != "2026-07-28" || got["codex"] != "2025-06-18" {
		t.Errorf("protocols read back: %v", got)
	}
}

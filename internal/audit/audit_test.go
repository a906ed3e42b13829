package audit

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
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
	cases := []struct{ in, want string }{
		{`{"path":"a.txt","content":"hello"}`, `content=<5 bytes> path="a.txt"`},
		{`{"command":"ls","args":["-l"]}`, `args=["-l"] command="ls"`},
		{`[1,2]`, `<5 bytes, not an object>`},
		{``, ``},
	}
	for _, c := range cases {
		if got := SummarizeArgs(json.RawMessage(c.in)); got != c.want {
			t.Errorf("SummarizeArgs(%s) = %q, want %q", c.in, got, c.want)
		}
	}
	long := SummarizeArgs(json.RawMessage(`{"path":"` + strings.Repeat("x", 200) + `"}`))
	if len(long) > 100 {
		t.Errorf("long value not cut: %d chars", len(long))
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
	deadline := time.Now().Add(20 * FlushInterval)
	for {
		b, _ := os.ReadFile(file)
		if strings.Contains(string(b), `"tool":"dir_list"`) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("audit line not on disk %v after recording it", 20*FlushInterval)
		}
		time.Sleep(FlushInterval / 4)
	}
}

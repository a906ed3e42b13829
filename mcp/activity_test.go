package mcp

import (
	"context"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/internal/audit"
	"github.com/switchboard-hub/switchboard/internal/wshub"
	"github.com/switchboard-hub/switchboard/mcp/channel"
)

// The activity channel carries each call's argument values from memory, so the dashboard can
// show and find a call by its path; what the audit summary hides stays hidden there too (file
// contents as size and sha256, a secret as <redacted>), and the audit file keeps exactly its
// summary: no values, no hidden text.
func TestActivityFeedCarriesArgumentValues(t *testing.T) {
	file := filepath.Join(t.TempDir(), "audit.log")
	al, err := audit.New(audit.Options{File: file})
	if err != nil {
		t.Fatal(err)
	}
	h := wshub.New(wshub.Options{})
	s := newTestService(t, WithWSHub(h), WithAudit(al))
	cs := connect(t, s)
	w := watchHub(t, h)
	w.subscribe(channel.Activity)
	w.next(wshub.TypeSnapshot, channel.Activity, nil)

	const content, secret = "the plan: hunter2-contents", "tok-live-9f8e7d"
	mustCall(t, cs, "file_write", map[string]any{"path": "notes/plan.txt", "content": content}, nil)
	// api_token is not an argument of file_read: the call runs without it, and it is recorded.
	mustCall(t, cs, "file_read", map[string]any{"path": "notes/plan.txt", "limit": 3, "api_token": secret}, nil)
	if _, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "no_such_tool", Arguments: map[string]any{}}); err == nil {
		t.Fatal("an unknown tool was called without an error")
	}

	type feedEntry struct {
		Tool, Client, Args string
		Values             map[string]string
		Refused            bool
	}
	decode := func(d map[string]any) feedEntry {
		t.Helper()
		raw, _ := json.Marshal(d)
		if strings.Contains(string(raw), secret) {
			t.Errorf("the activity feed shows the secret: %s", raw)
		}
		if strings.Contains(string(raw), "hunter2") {
			t.Errorf("the activity feed shows the file's contents: %s", raw)
		}
		var e feedEntry
		if err := json.Unmarshal(raw, &e); err != nil {
			t.Fatal(err)
		}
		return e
	}
	byTool := func(tool string) func(map[string]any) bool {
		return func(d map[string]any) bool { return d["tool"] == tool }
	}
	write := decode(w.next(wshub.TypeEvent, channel.Activity, byTool("file_write")))
	read := decode(w.next(wshub.TypeEvent, channel.Activity, byTool("file_read")))
	unknown := decode(w.next(wshub.TypeEvent, channel.Activity, byTool("no_such_tool")))

	if write.Values["path"] != "notes/plan.txt" || !strings.HasPrefix(write.Values["content"], "<26 bytes sha256=") {
		t.Errorf("file_write values = %q", write.Values)
	}
	if want := map[string]string{"path": "notes/plan.txt", "limit": "3", "api_token": "<redacted>"}; !maps.Equal(read.Values, want) {
		t.Errorf("file_read values = %q, want %q", read.Values, want)
	}
	if read.Client != "test-client" || read.Refused || write.Refused {
		t.Errorf("file_read entry: client %q, refused %v (write refused %v)", read.Client, read.Refused, write.Refused)
	}
	if !unknown.Refused {
		t.Errorf("a call of an unknown tool is not marked refused: %+v", unknown)
	}

	// A dashboard that connects now gets the same values in the snapshot (the in-memory ring).
	w2 := watchHub(t, h)
	w2.subscribe(channel.Activity)
	snap := w2.next(wshub.TypeSnapshot, channel.Activity, nil)
	events, _ := snap["events"].([]any)
	i := slices.IndexFunc(events, func(e any) bool { return e.(map[string]any)["tool"] == "file_read" })
	if i < 0 {
		t.Fatalf("snapshot lacks the file_read call: %v", snap)
	}
	if got := decode(events[i].(map[string]any)); !maps.Equal(got.Values, read.Values) {
		t.Errorf("snapshot values = %q, event values = %q", got.Values, read.Values)
	}

	// The audit file: the summary as before, and not one value the feed added.
	if err := al.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{content, secret, `"values"`, `"refused"`} {
		if strings.Contains(string(b), bad) {
			t.Errorf("the audit file holds %q:\n%s", bad, b)
		}
	}
	var readLine map[string]any
	for line := range strings.Lines(string(b)) {
		var l map[string]any
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			t.Fatalf("audit line %q: %v", line, err)
		}
		if l["tool"] == "file_read" {
			readLine = l
		}
	}
	if readLine == nil || readLine["args"] != read.Args || !strings.Contains(read.Args, "api_token=<redacted>") {
		t.Errorf("audit line %v, feed args %q", readLine, read.Args)
	}
	wantKeys(t, "file_read audit line", readLine, "time", "level", "msg", "tool", "session", "client", "protocol", "transport", "user",
		"duration_ms", "outcome", "args", "decision", "rule")
}

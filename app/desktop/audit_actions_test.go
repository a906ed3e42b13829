package desktop

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-hub/switchboard/app"
	"github.com/switchboard-hub/switchboard/app/apptest"
	"github.com/switchboard-hub/switchboard/app/dashboard"
	"github.com/switchboard-hub/switchboard/internal/testutil"
)

// Dashboard controls (through the headless page's real HTTP API) and tray clicks are audited with
// their actor, at Security level, and appear in the activity feed; stdin is recorded by size and
// sha256, never as text.
func TestDashboardAndTrayActionsAreAudited(t *testing.T) {
	st := apptest.Stack(t, "")
	srv := httptest.NewServer(dashboard.NewServer(app.NewController(st, "test"), "dash-token").Handler())
	defer srv.Close()
	post := func(path string, body any) map[string]any {
		t.Helper()
		b, _ := json.Marshal(body)
		req, _ := http.NewRequest(http.MethodPost, srv.URL+path, bytes.NewReader(b))
		req.Header.Set("Authorization", "Bearer dash-token")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var m map[string]any
		_ = json.NewDecoder(res.Body).Decode(&m)
		if res.StatusCode != http.StatusOK {
			t.Fatalf("POST %s: %d %v", path, res.StatusCode, m)
		}
		return m
	}
	started := post("/api/processes", map[string]any{"command": "cat", "args": []string{"-u"}})
	id, _ := started["id"].(string)
	if id == "" {
		t.Fatalf("no id in %v", started)
	}
	post("/api/processes/"+id+"/input", map[string]any{"input": "secret-line\n"})
	post("/api/processes/"+id+"/kill", map[string]any{})
	post("/api/transports/tcp", map[string]any{"enabled": true})
	post("/api/transports/tcp", map[string]any{"enabled": false})

	c, view, _, ctx := runTray(t, st)
	view.waitFor(t, "initial menu", menuHas("TCP: off"))
	trayClick(t, c, view, ctx, "TCP")
	view.waitFor(t, "TCP running", menuHas("TCP: 127.0.0.1:"))

	if err := st.Audit.Flush(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(st.Config.LogDir(), "audit.log"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "secret-line") {
		t.Fatal("process input text reached the audit log")
	}
	sum := sha256.Sum256([]byte("secret-line\n"))
	want := []struct{ actor, action, args string }{
		{"dashboard", "process_start", `command="cat"`},
		{"dashboard", "process_input", "input=<12 bytes sha256=" + hex.EncodeToString(sum[:]) + ">"},
		{"dashboard", "process_kill", `id="` + id + `"`},
		{"dashboard", "transport_set", `enabled=true name="tcp"`},
		{"dashboard", "transport_set", `enabled=false name="tcp"`},
		{"tray", "transport_set", `enabled=true name="tcp"`},
	}
	lines := strings.Split(string(b), "\n")
next:
	for _, w := range want {
		for _, ln := range lines {
			var m map[string]any
			if json.Unmarshal([]byte(ln), &m) != nil {
				continue
			}
			if m["actor"] == w.actor && m["tool"] == w.action && m["level"] == "SECURITY" && m["outcome"] == "ok" && strings.Contains(m["args"].(string), w.args) {
				continue next
			}
		}
		t.Errorf("no audit line for %s %s %s in:\n%s", w.actor, w.action, w.args, b)
	}
	// Each action also has its "started" line, written before it ran, with the same call ID.
	startedCalls := map[string]bool{}
	for _, ln := range lines {
		var m map[string]any
		if json.Unmarshal([]byte(ln), &m) == nil && m["actor"] != nil && m["outcome"] == "started" {
			startedCalls[m["call"].(string)] = true
		}
	}
	for _, ln := range lines {
		var m map[string]any
		if json.Unmarshal([]byte(ln), &m) == nil && m["actor"] != nil && m["outcome"] != "started" && !startedCalls[m["call"].(string)] {
			t.Errorf("action outcome without a started line: %s", ln)
		}
	}
	if len(startedCalls) != len(want) {
		t.Errorf("%d started lines for %d actions", len(startedCalls), len(want))
	}
	// The activity feed shows them too (each action's end writes its audit line, then adds it
	// to the feed).
	testutil.Eventually(t, "the activity feed to show 1 tray and 5 dashboard actions", func() bool {
		var tray, dash int
		for _, e := range st.Service.Activity() {
			switch e.Actor {
			case "tray":
				tray++
			case "dashboard":
				dash++
			}
		}
		return tray == 1 && dash == 5
	})
}

package dashboard

import (
	"bufio"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/app"
	"github.com/switchboard-hub/switchboard/app/apptest"
	"github.com/switchboard-hub/switchboard/internal/config"
	"github.com/switchboard-hub/switchboard/internal/policy"
	"github.com/switchboard-hub/switchboard/mcp/channel"
)

// A call with secret-looking arguments (api_key, password, token, a token in exec's env) shows
// them the same way on every surface: the approval the dashboard lists (GET /api/approvals and
// its approvals channel), the activity feed (the activity channel: its summary and its argument
// values) and the audit line in audit.log all say <redacted> for each, and none holds a secret's
// value.
func TestSecretArgumentsRedactedOnEverySurface(t *testing.T) {
	st := apptest.Stack(t, "", func(c *config.Config) {
		c.Policy = policy.Config{AskTimeout: "30s", Rules: []policy.RuleSpec{{Tool: "exec", Action: "ask"}}}
	})
	srv := httptest.NewServer(NewServer(app.NewController(st, "test"), "dash-token").Handler())
	defer srv.Close()

	// The dashboard page: subscribed to approvals (so a question has someone to answer it) and
	// to the activity feed.
	conn, _, err := websocket.DefaultDialer.Dial(st.WSHub.URL(), http.Header{"Authorization": {"Bearer " + st.WSHub.Token()}})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, ch := range []string{channel.Approvals, channel.Activity} {
		if err := conn.WriteJSON(map[string]string{"type": "subscribe", "channel": ch}); err != nil {
			t.Fatal(err)
		}
	}
	type frame struct {
		Type    string          `json:"type"`
		Channel string          `json:"channel"`
		Data    json.RawMessage `json:"data"`
	}
	next := func(what string, ok func(frame) bool) frame {
		t.Helper()
		for {
			var f frame
			conn.SetReadDeadline(time.Now().Add(10 * time.Second))
			if err := conn.ReadJSON(&f); err != nil {
				t.Fatalf("waiting for %s: %v", what, err)
			}
			if ok(f) {
				return f
			}
		}
	}
	next("the approvals snapshot", func(f frame) bool { return f.Channel == channel.Approvals && f.Type == "snapshot" })

	secrets := []string{"sk-live-4f9a", "hunter2-pw", "tok-77-secret", "ghp_envsecret"}
	cs := apptest.ConnectClient(t, st, "redact-client")
	done := make(chan bool, 1)
	go func() {
		res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "exec", Arguments: map[string]any{
			"command": "true", "api_key": secrets[0], "password": secrets[1], "token": secrets[2],
			"env": []string{"GITHUB_TOKEN=" + secrets[3], "LANG=C"},
		}})
		done <- err == nil && !res.IsError
	}()
	next("the approval event", func(f frame) bool { return f.Channel == channel.Approvals && f.Type == "event" })

	code, list := apptest.DashAPI(t, srv.URL, "dash-token", "GET", "/api/approvals", nil)
	approvals, _ := list["approvals"].([]any)
	if code != 200 || len(approvals) != 1 {
		t.Fatalf("GET /api/approvals = %d %v", code, list)
	}
	approval := approvals[0].(map[string]any)
	shownForApproval := approval["arguments"].(string)
	if code, out := apptest.DashAPI(t, srv.URL, "dash-token", "POST", "/api/approvals/"+approval["id"].(string), map[string]string{"decision": "allow"}); code != 200 {
		t.Fatalf("allow: %d %v", code, out)
	}
	if !<-done {
		t.Fatal("the approved exec failed")
	}
	ev := next("the activity event", func(f frame) bool {
		return f.Channel == channel.Activity && f.Type == "event" && strings.Contains(string(f.Data), `"exec"`)
	})
	var activity struct {
		Args   string
		Values map[string]string
	}
	if err := json.Unmarshal(ev.Data, &activity); err != nil {
		t.Fatal(err)
	}
	// The feed's argument values (from memory, for the Activity view) hide them the same way.
	for _, s := range secrets {
		if strings.Contains(string(ev.Data), s) {
			t.Errorf("the activity event shows the secret %q: %s", s, ev.Data)
		}
	}
	for k, want := range map[string]string{"command": "true", "api_key": "<redacted>", "password": "<redacted>", "token": "<redacted>",
		"env": `["GITHUB_TOKEN=<redacted>","LANG=C"]`} {
		if activity.Values[k] != want {
			t.Errorf("activity value of %s = %q, want %q", k, activity.Values[k], want)
		}
	}

	if err := st.Audit.Flush(); err != nil {
		t.Fatal(err)
	}
	var auditLine string
	f, err := os.Open(filepath.Join(st.Config.DataDir, "logs", "audit.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for sc := bufio.NewScanner(f); sc.Scan(); {
		var e struct{ Tool, Outcome, Args string }
		if json.Unmarshal(sc.Bytes(), &e) == nil && e.Tool == "exec" && e.Outcome == "ok" {
			auditLine = e.Args
		}
	}

	for surface, shown := range map[string]string{"approval": shownForApproval, "activity feed": activity.Args, "audit line": auditLine} {
		for _, s := range secrets {
			if strings.Contains(shown, s) {
				t.Errorf("the %s shows the secret %q: %s", surface, s, shown)
			}
		}
		sep := "="
		if surface == "approval" {
			sep = ": "
		}
		for _, want := range []string{"api_key" + sep + "<redacted>", "password" + sep + "<redacted>", "token" + sep + "<redacted>", `"GITHUB_TOKEN=<redacted>"`, `"LANG=C"`} {
			if !strings.Contains(shown, want) {
				t.Errorf("the %s lacks %s: %s", surface, want, shown)
			}
		}
	}
	if activity.Args != auditLine {
		t.Errorf("activity feed %q and audit line %q differ", activity.Args, auditLine)
	}
}

package dashboard

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/app"
	"github.com/switchboard-hub/switchboard/app/apptest"
	"github.com/switchboard-hub/switchboard/internal/sessions"
)

// realTempDir is t.TempDir with symlinks resolved, as the hub compares directories.
func realTempDir(t *testing.T) string {
	t.Helper()
	d := t.TempDir()
	if r, err := filepath.EvalSymlinks(d); err == nil {
		d = r
	}
	return d
}

// TestWorkspaceGrantThroughDashboardAPI: a client connected over the stack's Unix socket with a
// root outside the home directory (which needs the user's consent) cannot use it while nobody can
// answer; POST /api/sessions/{id}/workspace with the dashboard token grants it for that session,
// the next call works in the root, and a revoke makes calls fail again. Bad requests get a 400
// that names the field; both actions are audited as the dashboard's.
func TestWorkspaceGrantThroughDashboardAPI(t *testing.T) {
	home := realTempDir(t)
	t.Setenv("HOME", home) // before the stack: the hub reads the home directory when it starts
	outside := realTempDir(t)
	st := apptest.Stack(t, "")
	srv := httptest.NewServer(NewServer(app.NewController(st, "test"), "dash-token").Handler())
	defer srv.Close()
	post := func(token, session string, body any) (int, map[string]any) {
		t.Helper()
		return apptest.DashAPI(t, srv.URL, token, http.MethodPost, "/api/sessions/"+session+"/workspace", body)
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := net.Dial("unix", st.Config.Unix.Path)
	if err != nil {
		t.Fatal(err)
	}
	c := sdk.NewClient(&sdk.Implementation{Name: "grant-me", Version: "1"}, nil) // roots, no elicitation
	c.AddRoots(&sdk.Root{URI: "file://" + outside})
	cs, err := c.Connect(ctx, &sdk.IOTransport{Reader: conn, Writer: conn}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	call := func(tool string, args map[string]any) (string, bool) {
		t.Helper()
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: args})
		if err != nil {
			return err.Error(), false
		}
		var text string
		for _, c := range res.Content {
			if tc, ok := c.(*sdk.TextContent); ok {
				text += tc.Text
			}
		}
		return text, !res.IsError
	}
	// A call that takes no path lists the roots (this client speaks 2026-07-28, so the hub asks
	// within a call) without asking about them.
	if msg, ok := call("lang_list", map[string]any{}); !ok {
		t.Fatalf("lang_list: %s", msg)
	}
	session := func() sessions.Info {
		t.Helper()
		for _, si := range st.Service.Sessions().List() {
			if si.ClientName == "grant-me" {
				return si
			}
		}
		t.Fatalf("no session of grant-me in %+v", st.Service.Sessions().List())
		return sessions.Info{}
	}
	si := session()
	if len(si.Roots) != 1 || si.Roots[0].Dir != outside || si.Roots[0].Status != "pending" || !strings.Contains(si.Roots[0].Detail, "outside your home") {
		t.Fatalf("roots on the Sessions view: %+v", si.Roots)
	}
	if si.Workspace != outside || si.WorkspaceFrom != "root" {
		t.Errorf("workspace %q from %q, want the root", si.Workspace, si.WorkspaceFrom)
	}
	// Nobody can answer (no elicitation, no dashboard page, no tray): the call fails fast and says
	// where to grant it.
	if msg, ok := call("file_write", map[string]any{"path": "g.txt", "content": "before"}); ok || !strings.Contains(msg, "Sessions view") {
		t.Fatalf("before the grant: ok=%v %q", ok, msg)
	}

	for _, tc := range []struct {
		name, token, session string
		body                 any
		code                 int
		want                 string
	}{
		{"no token", "wrong", si.ID, map[string]any{"dir": outside, "allow": true}, http.StatusUnauthorized, "token"},
		{"no dir", "dash-token", si.ID, map[string]any{"allow": true}, http.StatusBadRequest, "dir: required"},
		{"no allow", "dash-token", si.ID, map[string]any{"dir": outside}, http.StatusBadRequest, "allow: required"},
		{"relative dir", "dash-token", si.ID, map[string]any{"dir": "src", "allow": true}, http.StatusBadRequest, "dir: \"src\" is not an absolute path"},
		{"not its root", "dash-token", si.ID, map[string]any{"dir": home, "allow": true}, http.StatusBadRequest, "dir: " + home + " is not a root"},
		{"unknown session", "dash-token", "unix-999", map[string]any{"dir": outside, "allow": true}, http.StatusBadRequest, `session "unix-999": not connected`},
		{"bad JSON", "dash-token", si.ID, "[", http.StatusBadRequest, "body: invalid JSON"},
	} {
		code, out := post(tc.token, tc.session, tc.body)
		if msg, _ := out["error"].(string); code != tc.code || !strings.Contains(msg, tc.want) {
			t.Errorf("%s: %d %v, want %d with %q", tc.name, code, out, tc.code, tc.want)
		}
	}
	if _, err := os.Stat(filepath.Join(outside, "g.txt")); err == nil {
		t.Fatal("a call wrote into the root before it was granted")
	}

	// Grant: the next call works in the root.
	code, out := post("dash-token", si.ID, map[string]any{"dir": outside, "allow": true})
	if code != http.StatusOK || out["status"] != "approved" || out["dir"] != outside || out["sessionId"] != si.ID || out["allow"] != true {
		t.Fatalf("grant: %d %v", code, out)
	}
	if r := session().Roots; len(r) != 1 || r[0].Status != "approved" || r[0].Detail != "granted on the dashboard" {
		t.Errorf("after the grant the Sessions view shows %+v", r)
	}
	if msg, ok := call("file_write", map[string]any{"path": "g.txt", "content": "granted"}); !ok {
		t.Fatalf("after the grant: %s", msg)
	}
	if b, err := os.ReadFile(filepath.Join(outside, "g.txt")); err != nil || string(b) != "granted" {
		t.Fatalf("the write did not land in the root: %v %q", err, b)
	}

	// Revoke: calls fail again, at once, saying it was declined.
	code, out = post("dash-token", si.ID, map[string]any{"dir": outside, "allow": false})
	if code != http.StatusOK || out["status"] != "declined" {
		t.Fatalf("revoke: %d %v", code, out)
	}
	start := time.Now()
	if msg, ok := call("file_read", map[string]any{"path": "g.txt"}); ok || !strings.Contains(msg, "declined") {
		t.Errorf("after the revoke: ok=%v %q", ok, msg)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("a revoked root took %s to refuse; it must not ask again", took)
	}
	if r := session().Roots; len(r) != 1 || r[0].Status != "declined" || r[0].Detail != "revoked on the dashboard" {
		t.Errorf("after the revoke the Sessions view shows %+v", r)
	}

	// Both are on record as the dashboard's actions, with the session and directory.
	if err := st.Audit.Flush(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(st.Config.LogDir(), "audit.log"))
	if err != nil {
		t.Fatal(err)
	}
	outcomes := map[string][]string{}
	for _, ln := range strings.Split(string(b), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(ln), &m) != nil || m["actor"] != "dashboard" {
			continue
		}
		tool, _ := m["tool"].(string)
		args, _ := m["args"].(string)
		if m["outcome"] == "ok" && (!strings.Contains(args, si.ID) || !strings.Contains(args, outside)) {
			t.Errorf("audit line without the session and directory: %s", ln)
		}
		outcomes[tool] = append(outcomes[tool], m["outcome"].(string))
	}
	// The requests refused before reaching the hub (no dir, no allow, a relative dir) leave no
	// line; the two the hub refused (not its root, unknown session) are on record as errors.
	want := map[string]string{"workspace_grant": "started,error,started,error,started,ok", "workspace_revoke": "started,ok"}
	for action, w := range want {
		if got := strings.Join(outcomes[action], ","); got != w {
			t.Errorf("audit %s: outcomes %q, want %q", action, got, w)
		}
	}
}

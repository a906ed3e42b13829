//go:build linux

package dashboard

import (
	"context"
	"encoding/json"
	"io"
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
	"github.com/switchboard-hub/switchboard/internal/config"
	"github.com/switchboard-hub/switchboard/internal/oauthclient/oauthtest"
	"github.com/switchboard-hub/switchboard/internal/secrets/secretstest"
	"github.com/switchboard-hub/switchboard/internal/testutil"
	"github.com/switchboard-hub/switchboard/internal/upstream"
)

// TestServerSignInThroughAPI: the Servers view's Sign in through the real /api. A remote server
// that asks for OAuth shows state signin; POST /api/servers/{name}/login answers with the page
// (opened: false in a headless hub, so the view opens it); the browser (an HTTP client here, the
// test AS consenting at once) comes back to the hub, which stores the grant in the real keyring
// and runs the server; an MCP client calls its tool; POST …/logout puts it back to signin. No
// token is in any /api answer, the audit log or any file of the hub's data directory.
func TestServerSignInThroughAPI(t *testing.T) {
	secretstest.Start(t)
	as := oauthtest.NewAS(t)
	srv := sdk.NewServer(&sdk.Implementation{Name: "protected", Version: "1"}, nil)
	sdk.AddTool(srv, &sdk.Tool{Name: "echo", Description: "echoes"}, func(_ context.Context, _ *sdk.CallToolRequest, in struct {
		Message string `json:"message"`
	}) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "Echo: " + in.Message}}}, nil, nil
	})
	res := oauthtest.NewResource(t, as, sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	cfgPath := filepath.Join(t.TempDir(), "config.toml")
	spec := upstream.Spec{Name: "remote", URL: res.URL}
	data, err := upstream.AddServer(nil, spec)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfgPath, data, 0o600); err != nil {
		t.Fatal(err)
	}
	st := apptest.Stack(t, "", func(c *config.Config) {
		c.Path = cfgPath
		c.Env = config.ReadEnv() // the test's keyring bus
		c.Servers = []upstream.Spec{spec}
	})
	ctl := app.NewController(st, "test")
	dash := httptest.NewServer(NewServer(ctl, "dash-token").Handler())
	defer dash.Close()
	var answers strings.Builder
	call := func(method, route string, body any) map[string]any {
		t.Helper()
		code, out := apptest.DashAPI(t, dash.URL, "dash-token", method, route, body)
		b, _ := json.Marshal(out)
		answers.Write(b)
		if code != 200 {
			t.Fatalf("%s %s: %d %s", method, route, code, b)
		}
		return out
	}
	state := func() string {
		list := call("GET", "/api/servers", nil)
		return list["servers"].([]any)[0].(map[string]any)["state"].(string)
	}
	waitFor := func(want string) {
		t.Helper()
		if !testutil.Poll(30*time.Second, func() bool { return state() == want }) {
			t.Fatalf("state %q, want %q", state(), want)
		}
	}
	list := call("GET", "/api/servers", nil)
	hash := list["servers"].([]any)[0].(map[string]any)["command_hash"].(string)
	call("POST", "/api/servers/remote/approve-command", map[string]any{"hash": hash})
	// This hub starts servers on demand: approving the tools starts it, and says why it cannot.
	if code, out := apptest.DashAPI(t, dash.URL, "dash-token", "POST", "/api/servers/remote/approve", map[string]any{"tools": []string{}}); code != 400 || !strings.Contains(out["error"].(string), "needs you to sign in") {
		t.Fatalf("approve before sign-in: %d %v", code, out)
	}
	waitFor("signin")
	row := call("GET", "/api/servers", nil)["servers"].([]any)[0].(map[string]any)
	if row["oauth"] != true || !strings.Contains(row["last_error"].(string), "switchboard servers login remote") {
		t.Errorf("row: %v", row)
	}

	si := call("POST", "/api/servers/remote/login", nil)
	u, _ := si["url"].(string)
	if !strings.HasPrefix(u, as.URL+"/authorize?") || si["opened"] != false {
		t.Fatalf("login answer %v", si)
	}
	resp, err := http.Get(u) // the browser
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(page), "Switchboard is signed in to remote") {
		t.Errorf("the browser shows %s", page)
	}
	waitFor("running")
	if row := call("GET", "/api/servers", nil)["servers"].([]any)[0].(map[string]any); row["signed_in"] != true {
		t.Errorf("running after the sign-in, signed_in = %v", row["signed_in"])
	}
	call("POST", "/api/servers/remote/approve", map[string]any{"tools": []string{}})
	cs := apptest.InMemoryClient(t, st, "signin-test")
	if r := apptest.CallTool(t, cs, "remote__echo", map[string]any{"message": "via the hub"}); !strings.Contains(r.Content[0].(*sdk.TextContent).Text, "Echo: via the hub") {
		t.Fatalf("call: %+v", r)
	}
	call("GET", "/api/servers/remote/log", nil)
	call("POST", "/api/servers/remote/logout", nil)
	waitFor("signin")
	r, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "remote__echo", Arguments: map[string]any{"message": "x"}})
	if err != nil || !r.IsError || !strings.Contains(r.Content[0].(*sdk.TextContent).Text, "server remote needs you to sign in: run `switchboard servers login remote` or click Sign in in the Servers view") {
		t.Fatalf("call after logout: %q %v", r.Content[0].(*sdk.TextContent).Text, err)
	}

	var files strings.Builder
	_ = filepath.WalkDir(st.Config.DataDir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			b, _ := os.ReadFile(p)
			files.Write(b)
		}
		return nil
	})
	if !strings.Contains(files.String(), "server_login") {
		t.Error("the sign-in is not in the audit log")
	}
	for _, tok := range as.Issued() {
		if strings.Contains(answers.String(), tok) || strings.Contains(files.String(), tok) {
			t.Errorf("token %q in an /api answer or a file of the data directory", tok)
		}
	}
}

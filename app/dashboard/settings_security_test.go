//go:build linux

package dashboard

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/app"
	"github.com/switchboard-hub/switchboard/app/apptest"
	"github.com/switchboard-hub/switchboard/internal/config"
	"github.com/switchboard-hub/switchboard/internal/secrets/secretstest"
	"github.com/switchboard-hub/switchboard/mcp"
	mcptransport "github.com/switchboard-hub/switchboard/mcp/transport"
)

// securityConfig is the user's file for the security, web, InfluxDB and RAG key sections: each
// with a comment that must survive the saves, an HTTP token kept in the file, and an InfluxDB URL
// with a password the view must never show.
const securityConfig = `# my switchboard

[tcp]
enabled = true  # for the relay on the laptop
addr = "127.0.0.1:0"

[http]
enabled = true
addr = "127.0.0.1:0"
token = "file-token-1"  # the inspector has it

[ml]
influx_url = "http://admin:hunter2@127.0.0.1:8086"  # the lab's

[web]
allow = ["intranet.example"]  # the wiki

[rag]
backend = "embedded"
`

// mcpHTTPStatus is what the Streamable HTTP endpoint answers an initialize with this bearer token
// (and Origin, when not empty).
func mcpHTTPStatus(t *testing.T, addr, token, origin string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}

// tcpServedWithoutToken reports whether the TCP transport serves a client that sends no token.
func tcpServedWithoutToken(t *testing.T, addr string) bool {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "no-token", Version: "1"}, nil).Connect(ctx, &sdk.IOTransport{Reader: conn, Writer: conn}, nil)
	if err != nil {
		return false
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "file_exists", Arguments: map[string]any{"path": "."}})
	return err == nil && !res.IsError
}

// TestSettingsSecurityThroughDashboardAPI drives the Settings view's security, web, InfluxDB and
// RAG key saves on a real stack whose file a person wrote: each is checked first (a 400 naming
// the key, the file byte for byte as it was), saved with its comments, audited, and applied where
// the hub can — TCP starts asking for its token and HTTP lets a new origin in at once, a
// regenerated token is the only one accepted right after, a host added to [web] allow is fetched
// by the next web_fetch, the InfluxDB keys apply now (nothing pending). No answer, audit line or
// diff ever holds a token, the InfluxDB password or the RAG key.
func TestSettingsSecurityThroughDashboardAPI(t *testing.T) {
	home := realTempDir(t)
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	for _, k := range []string{"MCP_ADDR", "SWITCHBOARD_TOKEN", "SWITCHBOARD_TCP_TOKEN", "SWITCHBOARD_FETCH_ALLOW", "SWITCHBOARD_WORKSPACE",
		"SWITCHBOARD_TOOLSETS", "SWITCHBOARD_SOCKET", "SWITCHBOARD_QDRANT_URL", "OPENAI_BASE_URL", "OPENAI_API_KEY"} {
		t.Setenv(k, "")
	}
	secretstest.Start(t) // a real keyring for the RAG key
	cfgPath := filepath.Join(home, ".config", "switchboard", "config.toml")
	os.MkdirAll(filepath.Dir(cfgPath), 0o700)
	if err := os.WriteFile(cfgPath, []byte(securityConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	// As the desktop app starts: the file, then the client token for what the file leaves out.
	st := apptest.Stack(t, "", func(c *config.Config) {
		file, _, err := config.ReadFile(cfgPath)
		if err != nil {
			t.Fatal(err)
		}
		c.Path, c.TCP, c.HTTP, c.ML, c.Web = cfgPath, file.TCP, file.HTTP, file.ML, file.Web
		if err := app.ResolveClientToken(c); err != nil {
			t.Fatal(err)
		}
	})
	for _, n := range []string{mcp.TransportTCP, mcp.TransportHTTP} {
		if err := st.Transports.Start(n); err != nil {
			t.Fatal(err)
		}
	}
	tcpAddr, httpAddr := st.Transports.Addr(mcp.TransportTCP), st.Transports.Addr(mcp.TransportHTTP)
	clientToken := func() string {
		b, err := os.ReadFile(config.TokenPath())
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(b))
	}
	firstClientToken := clientToken()
	srv := httptest.NewServer(NewServer(app.NewController(st, "test"), "dash-token").Handler())
	defer srv.Close()
	var secretsSeen []string // every secret in play: none may appear in an answer or the audit log
	noSecret := func(what string, v any) {
		t.Helper()
		b, _ := json.Marshal(v)
		for _, s := range append(secretsSeen, "hunter2", "file-token-1", firstClientToken) {
			if strings.Contains(string(b), s) {
				t.Fatalf("%s shows a secret (%.6s…): %s", what, s, b)
			}
		}
	}
	do := func(method, route string, body any) (int, map[string]any) {
		t.Helper()
		code, out := apptest.DashAPI(t, srv.URL, "dash-token", method, route, body)
		noSecret(method+" "+route, out)
		return code, out
	}
	chk := settingsChecks{t, cfgPath, do}
	read, refused, saved := chk.read, chk.refused, chk.saved
	settings := func() map[string]any {
		t.Helper()
		code, s := do(http.MethodGet, "/api/settings", nil)
		if code != 200 {
			t.Fatalf("GET /api/settings: %d %v", code, s)
		}
		return s
	}
	tokens := func(s map[string]any) map[string]map[string]any {
		out := map[string]map[string]any{}
		for _, x := range s["security"].(map[string]any)["tokens"].([]any) {
			m := x.(map[string]any)
			out[m["name"].(string)] = m
		}
		return out
	}

	// Where each token is kept, never its value.
	s := settings()
	tk := tokens(s)
	if tk["client"]["source"] != "file" || tk["client"]["where"] != config.TokenPath() || fmt.Sprint(tk["client"]["usedBy"]) != "[tcp]" ||
		tk["http"]["source"] != "config" || tk["http"]["regenerate"] != true || tk["tcp"]["source"] != "client" || tk["tcp"]["regenerate"] != false {
		t.Fatalf("tokens: %v", tk)
	}
	if ml := s["ml"].(map[string]any); ml["influxUrl"] != "http://admin:xxxxx@127.0.0.1:8086" {
		t.Fatalf("influxUrl shown as %v", ml["influxUrl"])
	}

	// Security: refused with the key and the fix; saved, TCP asks for its token and HTTP lets the
	// inspector's origin in, on the same ports.
	const inspector = "http://localhost:6274"
	refused("/api/settings/security", map[string]any{"tcpRequireToken": true, "httpAllowedOrigins": []string{"*"}}, `http.allowed_origins[1]: "*": wildcards are not allowed`)
	refused("/api/settings/security", map[string]any{"httpAllowedOrigins": []string{inspector + "/"}}, `write "http://localhost:6274"`)
	if !tcpServedWithoutToken(t, tcpAddr) || mcpHTTPStatus(t, httpAddr, "file-token-1", inspector) != http.StatusForbidden {
		t.Fatal("before the save: TCP should serve without a token, HTTP refuse the inspector's origin")
	}
	out := saved("/api/settings/security", map[string]any{"tcpRequireToken": true, "httpAllowedOrigins": []string{inspector}})
	if out["applies"] != "now" {
		t.Fatalf("security answer: %v", out)
	}
	want := strings.Replace(securityConfig, "addr = \"127.0.0.1:0\"\n\n[http]", "addr = \"127.0.0.1:0\"\nrequire_token = true\n\n[http]", 1)
	want = strings.Replace(want, "token = \"file-token-1\"  # the inspector has it\n", "token = \"file-token-1\"  # the inspector has it\nallowed_origins = [\""+inspector+"\"]\n", 1)
	if got := read(); got != want {
		t.Fatalf("after saving security:\n%s\nwant:\n%s", got, want)
	}
	if st.Transports.Addr(mcp.TransportTCP) != tcpAddr || st.Transports.Addr(mcp.TransportHTTP) != httpAddr {
		t.Fatal("the transports moved")
	}
	if tcpServedWithoutToken(t, tcpAddr) {
		t.Fatal("require_token saved, but TCP still serves a client without a token")
	}
	if got := mcpHTTPStatus(t, httpAddr, "file-token-1", inspector); got != http.StatusOK {
		t.Fatalf("the inspector's origin after the save: HTTP %d", got)
	}
	if sec := settings()["security"].(map[string]any); sec["runningTcpRequireToken"] != true || fmt.Sprint(sec["runningHttpAllowedOrigins"]) != "["+inspector+"]" {
		t.Fatalf("running security: %v", sec)
	}

	// Tokens: from the environment or shared with the client token, not regenerated here.
	t.Setenv("SWITCHBOARD_TOKEN", "env-token")
	refused("/api/settings/token", map[string]any{"token": "http"}, "http.token: set by SWITCHBOARD_TOKEN in Switchboard's environment; change it where that variable is set")
	t.Setenv("SWITCHBOARD_TOKEN", "")
	refused("/api/settings/token", map[string]any{"token": "tcp"}, "tcp.token: TCP uses the client token; regenerate that one")
	refused("/api/settings/token", map[string]any{"token": "dashboard"}, `token: "dashboard" is not a token here`)
	// The HTTP token kept in the file: a new one there (comment kept, diff redacted), in force now.
	out = saved("/api/settings/token", map[string]any{"token": "http"})
	m := regexp.MustCompile(`token = "([0-9a-f]{64})"  # the inspector has it\n`).FindStringSubmatch(read())
	if m == nil {
		t.Fatalf("no new [http] token in the file:\n%s", read())
	}
	secretsSeen = append(secretsSeen, m[1])
	noSecret("the regenerate answer", out)
	if !strings.Contains(fmt.Sprint(out["diff"]), "(not shown)") || !strings.Contains(fmt.Sprint(out["reconfigure"]), "Authorization: Bearer") {
		t.Fatalf("regenerate http: %v", out)
	}
	if mcpHTTPStatus(t, httpAddr, "file-token-1", "") != http.StatusUnauthorized || mcpHTTPStatus(t, httpAddr, m[1], "") != http.StatusOK {
		t.Fatal("after regenerating the HTTP token the old one should be refused and the new one let in")
	}
	// The client token (TCP's): a new file, in force for TCP at once.
	saved("/api/settings/token", map[string]any{"token": "client"})
	newClient := clientToken()
	secretsSeen = append(secretsSeen, newClient)
	if newClient == firstClientToken {
		t.Fatal("the client token file did not change")
	}
	if fi, _ := os.Stat(config.TokenPath()); fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file mode %v", fi.Mode().Perm())
	}
	if _, err := tokenRelay(tcpAddr, firstClientToken); err == nil {
		t.Fatal("TCP took the old client token")
	}
	if _, err := tokenRelay(tcpAddr, newClient); err != nil {
		t.Fatalf("TCP with the new client token: %v", err)
	}
	// The Overview's HTTP snippet follows the token in force.
	if cc := app.NewController(st, "test").ClientConfig(); cc.HTTP == nil || cc.HTTP.MCPServers.Switchboard.Headers.Authorization != "Bearer "+m[1] {
		t.Fatalf("client config after regenerating: %+v", cc.HTTP)
	}

	// [web]: a URL is refused; a loopback server added to the allow-list is fetched by the next
	// web_fetch, without a restart.
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "intranet page") }))
	defer page.Close()
	pageHost := strings.TrimPrefix(page.URL, "http://")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs := apptest.InMemoryClient(t, st, "settings-web")
	fetch := func() *sdk.CallToolResult {
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "web_fetch", Arguments: map[string]any{"url": page.URL}})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	if res := fetch(); !res.IsError {
		t.Fatal("a loopback page was fetched before it was allowed")
	}
	refused("/api/settings/web", map[string]any{"allow": []string{"intranet.example", page.URL}}, `web.allow[2]: "`+page.URL+`" is a URL; write the host alone, such as "`+pageHost+`"`)
	refused("/api/settings/web", map[string]any{"allow": []string{}, "timeout": "1h"}, "web.timeout: 1h0m0s is out of range")
	saved("/api/settings/web", map[string]any{"allow": []string{"intranet.example", pageHost}, "timeout": "20s"})
	if res := fetch(); res.IsError {
		t.Fatalf("web_fetch right after allowing %s: %v", pageHost, res.Content[0].(*sdk.TextContent).Text)
	}
	if !strings.Contains(read(), `allow = ["intranet.example", "`+pageHost+`"]  # the wiki`+"\ntimeout = \"20s\"\n") {
		t.Fatalf("[web] not saved as expected:\n%s", read())
	}
	if w := settings()["web"].(map[string]any); w["timeout"] != "20s" || len(w["allow"].([]any)) != 2 {
		t.Fatalf("web settings: %v", w)
	}

	// InfluxDB: checked as ml_status opens it; the redacted URL sent back keeps the file's password;
	// a new password is refused. In force at once: nothing pending.
	refused("/api/settings/ml", map[string]any{"influxUrl": "influx.lab:8086"}, `ml.influx_url: "influx.lab:8086" is not an http(s) URL`)
	refused("/api/settings/ml", map[string]any{"influxUrl": "http://u:newpass@127.0.0.1:8086"}, `ml.influx_url: "http://u:xxxxx@127.0.0.1:8086" holds a password`)
	out = saved("/api/settings/ml", map[string]any{"influxUrl": "http://admin:xxxxx@127.0.0.1:8086", "influxDb": "training"})
	if !strings.Contains(read(), `influx_url = "http://admin:hunter2@127.0.0.1:8086"  # the lab's`+"\ninflux_db = \"training\"\n") {
		t.Fatalf("influx not saved as expected:\n%s", read())
	}
	if out["applies"] != "now" || strings.Contains(fmt.Sprint(out["settings"].(map[string]any)["pending"]), "ml") {
		t.Fatalf("ml saved as %v, pending %v", out["applies"], out["settings"].(map[string]any)["pending"])
	}

	// The RAG key: a literal is refused (the file is no place for it); a reference is written as
	// it is; a new key goes to the keyring and the file refers to it.
	refused("/api/settings/rag/apikey", map[string]any{"action": "reference", "ref": "qdrant-key-123"}, "rag.api_key: write a reference")
	refused("/api/settings/rag/apikey", map[string]any{"action": "store", "name": "bad name", "value": "k"}, `rag.api_key: secret name "bad name"`)
	refused("/api/settings/rag/apikey", map[string]any{"action": "store"}, "rag.api_key: the key is empty")
	saved("/api/settings/rag/apikey", map[string]any{"action": "reference", "ref": "${QDRANT_API_KEY}"})
	if k := settings()["rag"].(map[string]any)["apiKey"].(map[string]any); k["state"] != "env" || k["name"] != "QDRANT_API_KEY" {
		t.Fatalf("rag api key after a reference: %v", k)
	}
	const ragKey = "qdrant-secret-key-987"
	secretsSeen = append(secretsSeen, ragKey)
	out = saved("/api/settings/rag/apikey", map[string]any{"action": "store", "name": "lab-qdrant", "value": ragKey})
	if !strings.Contains(read(), "[rag]\nbackend = \"embedded\"\napi_key = \"${secret:lab-qdrant}\"\n") {
		t.Fatalf("rag api key not saved as a reference:\n%s", read())
	}
	if v, err := app.KeyringLookup(config.ReadEnv())("lab-qdrant"); err != nil || v != ragKey {
		t.Fatalf("keyring lab-qdrant = %q, %v", v, err)
	}
	if got, err := app.ResolveRAGAPIKey(config.ReadEnv(), "${secret:lab-qdrant}"); err != nil || got != ragKey {
		t.Fatalf("the next start would resolve the key to %q, %v", got, err)
	}
	if pend := fmt.Sprint(out["settings"].(map[string]any)["pending"]); strings.Contains(pend, "rag") || out["applies"] != "now" || st.RunningRAG().APIKey != "${secret:lab-qdrant}" {
		t.Fatalf("rag key: applies %v, pending %s; running %+v", out["applies"], pend, st.RunningRAG())
	}
	out = saved("/api/settings/rag/apikey", map[string]any{"action": "remove"})
	if strings.Contains(read(), "api_key") || !strings.Contains(fmt.Sprint(out["note"]), "switchboard secret delete lab-qdrant") {
		t.Fatalf("remove: %v\n%s", out["note"], read())
	}

	// Audited as the dashboard's actions, and no secret in the audit log.
	if err := st.Audit.Flush(); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(st.Config.LogDir(), "audit.log"))
	for _, action := range []string{"settings_security", "token_regenerate", "settings_web", "settings_ml", "settings_rag_api_key"} {
		if !regexp.MustCompile(`"actor":"dashboard".*"tool":"` + action + `".*"outcome":"ok"`).Match(b) {
			t.Errorf("no ok audit line for %s", action)
		}
	}
	noSecret("the audit log", string(b))
}

// tokenRelay connects to the TCP transport with the switchboard/auth handshake and lists tools.
func tokenRelay(addr, token string) ([]string, error) {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	// The switchboard/auth handshake, as `switchboard connect --tcp` sends it.
	hello, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": mcptransport.AuthMethod, "params": map[string]string{"token": token}})
	if _, err := conn.Write(append(hello, '\n')); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "tok", Version: "1"}, nil).Connect(ctx, &sdk.IOTransport{Reader: conn, Writer: conn}, nil)
	if err != nil {
		return nil, err
	}
	defer cs.Close()
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	return names, nil
}

// TestSettingsMarksFlagOverrides: the real binary started with --workspace and --toolsets that
// differ from its config file; the Settings API names each flag with the key it set, and the
// toolsets flag stops being reported once the toolsets are switched (the switch saved them).
func TestSettingsMarksFlagOverrides(t *testing.T) {
	bin := apptest.Binary(t)
	env := append(apptest.Env(t), "DISPLAY=", "WAYLAND_DISPLAY=", "SWITCHBOARD_DASHBOARD_ADDR=127.0.0.1:0", "SWITCHBOARD_WORKSPACE=", "SWITCHBOARD_TOOLSETS=")
	cfgPath := filepath.Join(apptest.EnvValue(env, "XDG_CONFIG_HOME"), "switchboard", "config.toml")
	os.MkdirAll(filepath.Dir(cfgPath), 0o700)
	saved := t.TempDir()
	if err := os.WriteFile(cfgPath, []byte("# mine\nworkspace = \""+saved+"\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ws := t.TempDir()
	h := apptest.StartHeadless(t, bin, env, "", "--workspace", ws, "--toolsets", "files,git")
	url, token := h.URL, h.Token
	flags := func() map[string]map[string]any {
		code, s := apptest.DashAPI(t, url, token, http.MethodGet, "/api/settings", nil)
		if code != 200 {
			t.Fatalf("GET /api/settings: %d %v", code, s)
		}
		out := map[string]map[string]any{}
		for _, x := range s["flags"].([]any) {
			f := x.(map[string]any)
			out[f["flag"].(string)] = f
		}
		return out
	}
	f := flags()
	if f["--workspace"]["key"] != "workspace" || f["--workspace"]["value"] != ws || f["--toolsets"]["key"] != "toolsets" || f["--toolsets"]["value"] != "files,git" {
		t.Fatalf("flags: %v", f)
	}
	if code, out := apptest.DashAPI(t, url, token, http.MethodPost, "/api/settings/toolsets", map[string]any{"toolsets": []string{"files", "git", "web"}}); code != 200 {
		t.Fatalf("save toolsets: %d %v", code, out)
	}
	f = flags()
	if _, still := f["--toolsets"]; still || f["--workspace"] == nil {
		t.Fatalf("after switching toolsets: %v", f)
	}
}

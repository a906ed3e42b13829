package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/internal/clienttokens"
	"github.com/switchboard-hub/switchboard/internal/policy"
	"github.com/switchboard-hub/switchboard/internal/sessions"
)

// wireLog records what a client sent and got over HTTP: each POST's JSON-RPC method, whether it
// named a session, and the response bodies.
type wireLog struct {
	mu       sync.Mutex
	methods  []string
	sessions []string // Mcp-Session-Id of each request
	replies  bytes.Buffer
}

func (w *wireLog) sent() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string{}, w.methods...)
}

func (w *wireLog) received() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.replies.String()
}

// recordingTransport is an http.RoundTripper that adds the bearer token and records the wire.
type recordingTransport struct {
	token string
	log   *wireLog
}

func (rt recordingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+rt.token)
	if r.Body != nil && r.Method == http.MethodPost {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return nil, err
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		var m struct {
			Method string `json:"method"`
		}
		_ = json.Unmarshal(body, &m)
		rt.log.mu.Lock()
		rt.log.methods = append(rt.log.methods, m.Method)
		rt.log.sessions = append(rt.log.sessions, r.Header.Get("Mcp-Session-Id"))
		rt.log.mu.Unlock()
	}
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	resp.Body = struct {
		io.Reader
		io.Closer
	}{io.TeeReader(resp.Body, lockedWriter{rt.log}), resp.Body}
	return resp, nil
}

type lockedWriter struct{ l *wireLog }

func (w lockedWriter) Write(p []byte) (int, error) {
	w.l.mu.Lock()
	defer w.l.mu.Unlock()
	return w.l.replies.Write(p)
}

// httpClient connects a go-sdk v1.8 client to the hub's HTTP endpoint; version "" is the
// client's default (2026-07-28).
func httpClient(t *testing.T, url, token, name, version string, opts *sdk.ClientOptions) (*sdk.ClientSession, *wireLog) {
	t.Helper()
	log := &wireLog{}
	tr := &sdk.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: recordingTransport{token, log}}}
	var so *sdk.ClientSessionOptions
	if version != "" {
		so = &sdk.ClientSessionOptions{ProtocolVersion: version}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: name, Version: "1.0"}, opts).Connect(ctx, tr, so)
	if err != nil {
		t.Fatalf("%s connects over HTTP: %v", name, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs, log
}

// erasService is a hub with a deny and an ask rule, served over HTTP with a per-client token
// store; it returns the endpoint's URL, the store and the hub.
func erasService(t *testing.T) (*Service, string, *clienttokens.Store) {
	t.Helper()
	s, _ := trustService(t, policy.Config{Rules: []policy.RuleSpec{
		{Tool: "file_delete", Action: "deny"},
		{Tool: "file_write", Action: "ask"},
	}}, policy.RootsConfig{})
	store, err := clienttokens.Open(filepath.Join(t.TempDir(), "client-tokens.json"))
	if err != nil {
		t.Fatal(err)
	}
	addr := listen(t, s, TransportHTTP, TransportConfig{HTTPAddr: "127.0.0.1:0", HTTPToken: "s3cret", HTTPClientTokens: store})
	return s, "http://" + addr + "/mcp", store
}

// exercise lists, calls, gets a denied call and answers an ask, as every client in these tests
// does, and checks what the client saw.
func exercise(t *testing.T, cs *sdk.ClientSession, who string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tl, err := cs.ListTools(ctx, nil)
	if err != nil || len(tl.Tools) == 0 {
		t.Fatalf("%s: tools/list: %v", who, err)
	}
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "lang_detect", Arguments: map[string]any{"path": "main.go"}})
	if err != nil || res.IsError || !strings.Contains(toolText(res), `"go"`) {
		t.Fatalf("%s: lang_detect: %v %+v", who, err, res)
	}
	res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "file_delete", Arguments: map[string]any{"path": "a.txt"}})
	if err != nil || !res.IsError || !strings.Contains(toolText(res), "denied by") {
		t.Fatalf("%s: a denied call must be an error result: %v %+v", who, err, res)
	}
	res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "file_write", Arguments: map[string]any{"path": "b.txt", "content": "x"}})
	if err != nil || res.IsError {
		t.Fatalf("%s: file_write after answering the ask: %v %q", who, err, toolText(res))
	}
}

// approve answers every elicitation yes.
func approve(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
	return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}, nil
}

// TestHTTPServesBothEras: one URL serves a go-sdk v1.8 client in its default 2026-07-28 mode
// (stateless: it never sends initialize and never names a session; an ask is answered through
// input_required and a retry) and the same client in 2025-11-25 mode (initialize, a session).
// Every 2026-07-28 result carries resultType, the policy's refusal included. The stateless
// client has one entry in the Sessions view however many requests it makes, naming the client
// its token was issued to.
func TestHTTPServesBothEras(t *testing.T) {
	s, url, store := erasService(t)
	token, err := store.Issue("cursor")
	if err != nil {
		t.Fatal(err)
	}
	opts := &sdk.ClientOptions{ElicitationHandler: approve}

	modern, wire := httpClient(t, url, token, "modern-go", "", opts)
	exercise(t, modern, "go-sdk 2026-07-28")
	for i, m := range wire.sent() {
		if m == "initialize" || m == "notifications/initialized" {
			t.Errorf("the 2026-07-28 client sent %s", m)
		}
		if sid := wire.sessions[i]; sid != "" {
			t.Errorf("the 2026-07-28 client named session %q in %s", sid, m)
		}
	}
	if sent := strings.Join(wire.sent(), " "); !strings.Contains(sent, "server/discover") || !strings.Contains(sent, "tools/call") {
		t.Errorf("the 2026-07-28 client sent %s", sent)
	}
	replies := wire.received()
	for _, want := range []string{`"resultType":"input_required"`, `denied by rule`} {
		if !strings.Contains(replies, want) {
			t.Errorf("the 2026-07-28 replies lack %s:\n%s", want, replies)
		}
	}
	for _, line := range strings.Split(replies, "\n") {
		if strings.Contains(line, `"result"`) && !strings.Contains(line, `"resultType"`) {
			t.Errorf("a 2026-07-28 result without resultType: %s", line)
		}
	}
	var stateless []sessions.Info
	for _, si := range s.Sessions().List() {
		if si.Stateless {
			stateless = append(stateless, si)
		}
	}
	if len(stateless) != 1 || stateless[0].Identity != "cursor" || stateless[0].ClientName != "modern-go" || stateless[0].Calls < 3 {
		t.Errorf("stateless Sessions entries: %+v", stateless)
	}

	codexTok, _ := store.Issue("codex")
	legacy, lwire := httpClient(t, url, codexTok, "legacy-go", "2025-11-25", opts)
	exercise(t, legacy, "go-sdk 2025-11-25")
	if sent := lwire.sent(); len(sent) == 0 || sent[0] != "initialize" {
		t.Errorf("the 2025-11-25 client sent %v", sent)
	}
	if lwire.sessions[len(lwire.sessions)-1] == "" {
		t.Errorf("the 2025-11-25 client has no session")
	}
	if strings.Contains(lwire.received(), `"resultType"`) {
		t.Errorf("a 2025-11-25 reply carries resultType:\n%s", lwire.received())
	}
	named := false
	for _, si := range s.Sessions().List() {
		named = named || (!si.Stateless && si.Identity == "codex" && si.ClientName == "legacy-go")
	}
	if !named {
		t.Errorf("the session opened with codex's token does not name it: %+v", s.Sessions().List())
	}
}

// modernCall is a raw 2026-07-28 request: the _meta every such request carries and the standard
// headers, which hdr may override (an empty value removes one).
func modernCall(t *testing.T, url, token, method, name, params string, hdr map[string]string) (int, string) {
	t.Helper()
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"},"io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}`
	if params == "" {
		params = "{" + meta + "}"
	} else {
		params = strings.Replace(params, "{", "{"+meta+",", 1)
	}
	body := `{"jsonrpc":"2.0","id":7,"method":"` + method + `","params":` + params + `}`
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	h := map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
		"Authorization": "Bearer " + token, "Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": method, "Mcp-Name": name}
	for k, v := range hdr {
		h[k] = v
	}
	for k, v := range h {
		if v != "" {
			req.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestHTTPStatelessAttacks tries to break the stateless side of the endpoint: a wrong or revoked
// token, Mcp-Method and Mcp-Name headers that do not match the body, GET and DELETE without a
// session, an oversized body, and a requestState replayed by another client identity.
func TestHTTPStatelessAttacks(t *testing.T) {
	s, url, store := erasService(t)
	alice, _ := store.Issue("alice")
	bob, _ := store.Issue("bob")

	if code, body := modernCall(t, url, alice, "server/discover", "", "", nil); code != 200 || !strings.Contains(body, `"2026-07-28"`) || !strings.Contains(body, `"resultType":"complete"`) {
		t.Errorf("discover: %d %s", code, body)
	}
	lang := `{"name":"lang_detect","arguments":{"path":"a.go"}}`
	for _, c := range []struct {
		name string
		hdr  map[string]string
		want string
	}{
		{"Mcp-Method names another method", map[string]string{"Mcp-Method": "tools/list"}, "Mcp-Method"},
		{"Mcp-Method missing", map[string]string{"Mcp-Method": ""}, "Mcp-Method"},
		{"Mcp-Name names another tool", map[string]string{"Mcp-Name": "file_delete"}, "Mcp-Name"},
		{"Mcp-Protocol-Version differs from _meta", map[string]string{"Mcp-Protocol-Version": "2026-08-01"}, "protocol"},
	} {
		code, body := modernCall(t, url, alice, "tools/call", "lang_detect", lang, c.hdr)
		if code != http.StatusBadRequest || !strings.Contains(body, c.want) || strings.Contains(body, `"language"`) {
			t.Errorf("%s: %d %s", c.name, code, body)
		}
	}
	for _, m := range []string{http.MethodGet, http.MethodDelete} {
		r := httpDo(t, m, url, "", map[string]string{"Authorization": "Bearer " + alice, "Mcp-Protocol-Version": "2026-07-28"})
		if r.StatusCode != http.StatusMethodNotAllowed {
			t.Errorf("%s without a session on 2026-07-28: %d, want 405", m, r.StatusCode)
		}
	}
	big := `{"name":"lang_detect","arguments":{"path":"` + strings.Repeat("a", 11<<20) + `"}}`
	if code, _ := modernCall(t, url, alice, "tools/call", "lang_detect", big, nil); code != http.StatusRequestEntityTooLarge {
		t.Errorf("an 11 MiB body: %d, want 413", code)
	}
	if code, _ := modernCall(t, url, "sbc_"+strings.Repeat("0", 64), "tools/call", "lang_detect", lang, nil); code != http.StatusUnauthorized {
		t.Errorf("a made-up client token: %d, want 401", code)
	}

	// alice is asked; bob replays her requestState with an answer: he is asked afresh, and
	// nothing runs on alice's question.
	write := `{"name":"file_write","arguments":{"path":"x.txt","content":"x"}}`
	_, body := modernCall(t, url, alice, "tools/call", "file_write", write, nil)
	var reply struct {
		Result struct {
			ResultType   string `json:"resultType"`
			RequestState string `json:"requestState"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(strings.TrimPrefix(sseData(body), "")), &reply); err != nil || reply.Result.ResultType != "input_required" {
		t.Fatalf("alice's ask: %v %s", err, body)
	}
	replay := `{"name":"file_write","arguments":{"path":"x.txt","content":"x"},"requestState":"` + reply.Result.RequestState +
		`","inputResponses":{"switchboard-approve-call":{"action":"accept","content":{}}}}`
	if _, body := modernCall(t, url, bob, "tools/call", "file_write", replay, nil); !strings.Contains(body, `"input_required"`) {
		t.Errorf("bob's replay of alice's requestState was not asked afresh: %s", body)
	}

	// A revoked token is refused from the next request on, and its client leaves the Sessions view.
	if code, _ := modernCall(t, url, alice, "tools/call", "lang_detect", lang, nil); code != 200 {
		t.Fatalf("alice before revocation: %d", code)
	}
	if ok, err := store.Revoke("alice"); !ok || err != nil {
		t.Fatalf("revoke: %v %v", ok, err)
	}
	if code, _ := modernCall(t, url, alice, "tools/call", "lang_detect", lang, nil); code != http.StatusUnauthorized {
		t.Errorf("a revoked token: %d, want 401", code)
	}
	for _, si := range s.Sessions().List() {
		if si.Identity == "alice" {
			t.Errorf("alice's entry outlived her token: %+v", si)
		}
	}
	if code, _ := modernCall(t, url, bob, "tools/call", "lang_detect", lang, nil); code != 200 {
		t.Errorf("bob after alice's revocation: %d", code)
	}
}

// sseData is the data of the last event of an SSE body (or the body when it is plain JSON).
func sseData(body string) string {
	out := body
	for _, line := range strings.Split(body, "\n") {
		if d, ok := strings.CutPrefix(line, "data: "); ok {
			out = d
		}
	}
	return out
}

// TestHTTPListCacheHintsAndListen: a 2026-07-28 client over HTTP gets server/discover with cache
// hints (ttlMs DiscoverTTL, cacheScope private), the tool list in name order marked not to be
// kept (it changes while the hub runs), and a toolset switched off is announced on its
// subscriptions/listen stream; its next list has the change.
func TestHTTPListCacheHintsAndListen(t *testing.T) {
	s, url, _ := erasService(t)
	changed := make(chan struct{}, 4)
	cs, wire := httpClient(t, url, "s3cret", "listener", "", &sdk.ClientOptions{
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) { changed <- struct{}{} },
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tl, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	names := []string{}
	hasMetrics := false
	for _, tool := range tl.Tools {
		names = append(names, tool.Name)
		hasMetrics = hasMetrics || strings.HasPrefix(tool.Name, "metrics_")
	}
	if !slicesSorted(names) || !hasMetrics {
		t.Errorf("tools not in name order, or no metrics tools: %v", names)
	}
	if !strings.Contains(wire.received(), `"ttlMs":300000,"cacheScope":"private","supportedVersions"`) {
		t.Errorf("server/discover without its cache hints")
	}
	if !strings.Contains(wire.received(), `"ttlMs":0,"cacheScope":"private","tools":[`) {
		t.Errorf("tools/list without ttlMs 0, cacheScope private")
	}
	if !strings.Contains(strings.Join(wire.sent(), " "), "subscriptions/listen") {
		t.Fatalf("the client opened no listen stream: %v", wire.sent())
	}
	if _, err := s.SetToolset("metrics", false); err != nil {
		t.Fatal(err)
	}
	select {
	case <-changed:
	case <-ctx.Done():
		t.Fatal("the toolset switch was not announced on the listen stream")
	}
	tl, err = cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range tl.Tools {
		if strings.HasPrefix(tool.Name, "metrics_") {
			t.Errorf("after the switch the client still lists %s (a stale cached list)", tool.Name)
		}
	}
}

func slicesSorted(s []string) bool {
	for i := 1; i < len(s); i++ {
		if s[i-1] > s[i] {
			return false
		}
	}
	return true
}

// TestTypeScriptSDKv2ClientOverHTTP drives the TypeScript SDK v2 client (test/node/client_v2.mjs,
// @modelcontextprotocol/client pinned in test/node/package.json) against the hub's HTTP endpoint
// in both eras: versionNegotiation "auto" speaks 2026-07-28 (never initialize; every result with
// resultType; the ask as input_required) and the default "legacy" initializes a session.
func TestTypeScriptSDKv2ClientOverHTTP(t *testing.T) {
	dir := nodePackageDir(t, "@modelcontextprotocol/client")
	s, url, store := erasService(t)
	token, err := store.Issue("ts-v2")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "client_v2.mjs", url, token)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil || strings.Contains(string(out), "not ok") {
		t.Fatalf("node client_v2.mjs: %v\n%s", err, out)
	}
	t.Logf("node client_v2.mjs:\n%s", out)
	found := false
	for _, si := range s.Sessions().List() {
		found = found || (si.Stateless && si.Identity == "ts-v2" && si.ClientName == "ts-sdk-v2-auto")
	}
	if !found {
		t.Errorf("the v2 client's stateless entry is not in the Sessions view: %+v", s.Sessions().List())
	}
}

// nodePackageDir is test/node when the npm package pkg is installed there and node is on PATH;
// otherwise the test skips, or fails under CI=true (a missing dependency is never a skip there).
func nodePackageDir(t *testing.T, pkg string) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "test", "node"))
	if err != nil {
		t.Fatal(err)
	}
	skip := t.Skipf
	if os.Getenv("CI") == "true" {
		skip = t.Fatalf
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", filepath.FromSlash(pkg))); err != nil {
		skip("%s is not installed in test/node: run `make node-deps` (%v)", pkg, err)
	}
	if _, err := exec.LookPath("node"); err != nil {
		skip("node is not on PATH: %v", err)
	}
	return dir
}

// TestHTTPStatelessTodosFollowIdentity: a stateless client's todo list lives across its requests
// (each a go-sdk session of its own) because it is kept under the client's identity; another
// client identity has its own.
func TestHTTPStatelessTodosFollowIdentity(t *testing.T) {
	s := newTestService(t, WithNotes(t.TempDir()))
	store, err := clienttokens.Open(filepath.Join(t.TempDir(), "t.json"))
	if err != nil {
		t.Fatal(err)
	}
	addr := listen(t, s, TransportHTTP, TransportConfig{HTTPAddr: "127.0.0.1:0", HTTPToken: "s3cret", HTTPClientTokens: store})
	url := "http://" + addr + "/mcp"
	aliceTok, _ := store.Issue("alice")
	bobTok, _ := store.Issue("bob")
	alice, _ := httpClient(t, url, aliceTok, "agent", "", nil)
	bob, _ := httpClient(t, url, bobTok, "agent", "", nil)
	ctx := context.Background()
	if _, err := alice.CallTool(ctx, &sdk.CallToolParams{Name: "todo_write", Arguments: map[string]any{"items": []map[string]any{{"content": "ship the eras", "status": "pending"}}}}); err != nil {
		t.Fatal(err)
	}
	read := func(cs *sdk.ClientSession) string {
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "todo_read", Arguments: map[string]any{}})
		if err != nil || res.IsError {
			t.Fatalf("todo_read: %v %+v", err, res)
		}
		return toolText(res)
	}
	if got := read(alice); !strings.Contains(got, "ship the eras") {
		t.Errorf("alice's list in a later request: %s", got)
	}
	if got := read(bob); strings.Contains(got, "ship the eras") {
		t.Errorf("bob sees alice's list: %s", got)
	}
}

// TestHTTPStatelessClientProject: a stateless client whose token names a client with a project
// ([clients.NAME] project) works there — its relative paths resolve in that directory, and the
// Sessions view says so — while another client works in the hub's workspace.
func TestHTTPStatelessClientProject(t *testing.T) {
	project := t.TempDir()
	s, url, store := erasService(t)
	s.SetClientProjects(map[string]string{"cursor": project})
	cursorTok, _ := store.Issue("cursor")
	otherTok, _ := store.Issue("other")
	ctx := context.Background()
	for _, c := range []struct{ token, content string }{{cursorTok, "in the project"}, {otherTok, "in the hub"}} {
		cs, _ := httpClient(t, url, c.token, "agent", "", &sdk.ClientOptions{ElicitationHandler: approve})
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "file_write", Arguments: map[string]any{"path": "where.txt", "content": c.content}})
		if err != nil || res.IsError {
			t.Fatalf("file_write: %v %q", err, toolText(res))
		}
	}
	if b, err := os.ReadFile(filepath.Join(project, "where.txt")); err != nil || string(b) != "in the project" {
		t.Errorf("cursor's project: %v %q", err, b)
	}
	if b, err := os.ReadFile(filepath.Join(s.WorkspaceDir(), "where.txt")); err != nil || string(b) != "in the hub" {
		t.Errorf("the hub's workspace: %v %q", err, b)
	}
	shown := false
	for _, si := range s.Sessions().List() {
		shown = shown || (si.Identity == "cursor" && si.WorkspaceFrom == "client" && si.Workspace != "")
	}
	if !shown {
		t.Errorf("the Sessions view does not show cursor's project: %+v", s.Sessions().List())
	}
}

// TestRevokedTokenCutsOpenStreams: revoking a client's own token refuses its next request and
// also ends what it has open at that moment — a 2026-07-28 subscriptions/listen stream and a
// 2025 session's GET stream — while another client's stream stays open.
func TestRevokedTokenCutsOpenStreams(t *testing.T) {
	_, url, store := erasService(t)
	alice, _ := store.Issue("alice")
	bob, _ := store.Issue("bob")
	listen := func(token string) chan string {
		done := make(chan string, 1)
		go func() {
			_, body := modernCall(t, url, token, "subscriptions/listen", "", `{"notifications":{"toolsListChanged":true}}`, nil)
			done <- body
		}()
		return done
	}
	aliceListen, bobListen := listen(alice), listen(bob)

	// alice's 2025 session and its GET stream.
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"alice-session","version":"1"}}}`
	r := httpDo(t, http.MethodPost, url, init, map[string]string{"Authorization": "Bearer " + alice, "Content-Type": "application/json", "Accept": "application/json, text/event-stream"})
	sid := r.Header.Get("Mcp-Session-Id")
	if r.StatusCode != http.StatusOK || sid == "" {
		t.Fatalf("initialize: %d, session %q", r.StatusCode, sid)
	}
	hdr := map[string]string{"Authorization": "Bearer " + alice, "Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-11-25",
		"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
	httpDo(t, http.MethodPost, url, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, hdr)
	getDone := make(chan int, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		req.Header.Set("Accept", "text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			getDone <- -1
			return
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		getDone <- resp.StatusCode
	}()

	time.Sleep(500 * time.Millisecond) // the streams are open, and stay so
	select {
	case b := <-aliceListen:
		t.Fatalf("alice's listen stream ended before anything was revoked: %s", b)
	case c := <-getDone:
		t.Fatalf("alice's GET stream ended before anything was revoked: %d", c)
	default:
	}
	if _, err := store.Revoke("alice"); err != nil {
		t.Fatal(err)
	}
	for what, ch := range map[string]<-chan struct{}{"listen": drained(aliceListen), "GET": drained(getDone)} {
		select {
		case <-ch:
		case <-time.After(5 * time.Second):
			t.Errorf("alice's %s stream is still open 5 s after her token was revoked", what)
		}
	}
	select {
	case b := <-bobListen:
		t.Errorf("bob's listen stream ended with alice's revocation: %s", b)
	case <-time.After(300 * time.Millisecond):
	}
	if code, _ := modernCall(t, url, alice, "tools/list", "", "", nil); code != http.StatusUnauthorized {
		t.Errorf("alice's next request: %d, want 401", code)
	}
	if _, err := store.Revoke("bob"); err != nil { // and bob's ends with his own
		t.Fatal(err)
	}
	select {
	case <-bobListen:
	case <-time.After(5 * time.Second):
		t.Error("bob's listen stream is still open 5 s after his token was revoked")
	}
}

// drained turns a result channel into a done channel.
func drained[T any](ch <-chan T) <-chan struct{} {
	done := make(chan struct{})
	go func() { <-ch; close(done) }()
	return done
}

package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/internal/audit"
	"github.com/switchboard-hub/switchboard/internal/policy"
	"github.com/switchboard-hub/switchboard/mcp/tool"
	"github.com/switchboard-hub/switchboard/mcp/tools"
	mcptransport "github.com/switchboard-hub/switchboard/mcp/transport"
)

// modesHub is a hub on a Unix socket, so each client is a session of its own with the tools
// mode its relay hello asks for.
func modesHub(t *testing.T, opts ...Option) (*Service, string) {
	t.Helper()
	s := newTestService(t, opts...)
	sock := filepath.Join(shortTempDir(t), "m.sock")
	listen(t, s, TransportUnix, TransportConfig{UnixPath: sock})
	return s, sock
}

// dialMode connects a go-sdk client over the socket, announcing mode as `switchboard connect
// --tools-mode` does ("" announces nothing).
func dialMode(t *testing.T, sock, mode string, opts *sdk.ClientOptions) *sdk.ClientSession {
	t.Helper()
	return dialModeProto(t, sock, mode, opts, "")
}

// dialModeProto is dialMode speaking protocol version proto ("": go-sdk's default, 2026-07-28).
func dialModeProto(t *testing.T, sock, mode string, opts *sdk.ClientOptions, proto string) *sdk.ClientSession {
	t.Helper()
	conn, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	if mode != "" {
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": mcptransport.RelayMethod, "params": mcptransport.RelayHello{ToolsMode: mode}})
		if _, err := conn.Write(append(b, '\n')); err != nil {
			t.Fatal(err)
		}
	}
	var so *sdk.ClientSessionOptions
	if proto != "" {
		so = &sdk.ClientSessionOptions{ProtocolVersion: proto}
	}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "mode-" + mode, Version: "1"}, opts).Connect(t.Context(), &sdk.IOTransport{Reader: conn, Writer: conn}, so)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func listNames(t *testing.T, cs *sdk.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, tl := range res.Tools {
		out = append(out, tl.Name)
	}
	return out
}

var catalogTools = []string{tools.ToolResultRead, tools.ToolResultSearch, tools.ToolToolsCall, tools.ToolToolsSearch}

// TestToolsModesListPerSession: a session lists what its mode says — full everything but the
// catalogue tools, search the core and the catalogue tools, script the same with tools_call in
// script_run's place — each client in the mode it asked for, the others in the hub's; a change of
// the hub's mode reaches connected clients as list_changed.
func TestToolsModesListPerSession(t *testing.T) {
	s, sock := modesHub(t)
	full := listNames(t, dialMode(t, sock, "", nil))
	if !slices.Contains(full, "file_read") || !slices.Contains(full, "dir_list") || slices.ContainsFunc(full, func(n string) bool { return slices.Contains(catalogTools, n) }) {
		t.Fatalf("full mode lists %v", full)
	}
	// The default core, as far as this hub has it (no exec, no file_grep here).
	want := append(slices.Clone(catalogTools), "file_edit", "file_read")
	slices.Sort(want)
	for _, mode := range []string{"search", "script"} {
		got := listNames(t, dialMode(t, sock, mode, nil))
		slices.Sort(got)
		want := want
		if mode == "script" { // script_run in tools_call's place
			want = append(slices.DeleteFunc(slices.Clone(want), func(n string) bool { return n == tools.ToolToolsCall }), tools.ToolScriptRun)
			slices.Sort(want)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("%s mode lists %v, want %v", mode, got, want)
		}
	}
	var shown []string
	for _, si := range s.Sessions().List() {
		shown = append(shown, si.ToolsMode)
	}
	if !slices.Contains(shown, "search") || !slices.Contains(shown, "script") {
		t.Fatalf("the sessions' tools modes, as the Sessions view shows them: %q", shown)
	}
	if got := listNames(t, dialMode(t, sock, "bogus", nil)); !slices.Equal(got, full) {
		t.Fatalf("a session asking for an unknown mode lists %v, want the hub's (%v)", got, full)
	}

	changed := make(chan struct{}, 4)
	cs := dialMode(t, sock, "", &sdk.ClientOptions{ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) { changed <- struct{}{} }})
	listNames(t, cs)
	if err := s.SetToolsMode("search", []string{"files"}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-changed:
	case <-time.After(5 * time.Second):
		t.Fatal("no tools/list_changed after the tools mode changed")
	}
	got := listNames(t, cs)
	if !slices.Contains(got, "dir_list") || !slices.Contains(got, tools.ToolToolsSearch) || slices.Contains(got, "metrics_query") {
		t.Fatalf("search mode with the files toolset as core lists %v", got)
	}
	if err := s.SetToolsMode("search", []string{"file_raed"}); err == nil || !strings.Contains(err.Error(), "file_raed") {
		t.Fatalf("a core naming no tool: %v", err)
	}
	if err := s.SetToolsMode("everything", nil); err == nil || !strings.Contains(err.Error(), "full, search or script") {
		t.Fatalf("an unknown mode: %v", err)
	}
}

// TestToolsSearchAndCall: tools_search ranks every offered tool and gives script sessions a
// TypeScript declaration; tools_call runs the tool it names under that tool's policy rule and
// audit line (never as tools_call), and refuses what is not offered.
func TestToolsSearchAndCall(t *testing.T) {
	p, err := policy.Compile(policy.Config{Rules: []policy.RuleSpec{{Tool: "file_delete", Action: "deny"}}}, policy.RootsConfig{})
	if err != nil {
		t.Fatal(err)
	}
	al := audit.Discard()
	var mu sync.Mutex
	var audited []string
	al.OnRecord(func(e audit.Entry) { mu.Lock(); audited = append(audited, e.Tool); mu.Unlock() })
	_, sock := modesHub(t, WithAudit(al), WithPolicy(policy.NewStore("", p), policy.NewBroker()), WithToolsMode("search", nil))
	cs := dialMode(t, sock, "", nil)

	var found tools.CatalogSearchOutput
	mustCall(t, cs, tools.ToolToolsSearch, map[string]any{"query": "write text to a file", "limit": 3}, &found)
	if len(found.Tools) == 0 || found.Tools[0].Name != "file_write" || !strings.Contains(found.Tools[0].Arguments, "path (string, required)") ||
		!strings.Contains(found.Tools[0].InputSchema, `"content"`) || found.Tools[0].Declaration != "" {
		t.Fatalf("search: %+v", found)
	}
	if slices.ContainsFunc(found.Tools, func(f tools.FoundTool) bool { return tools.IsCatalogTool(f.Name) }) {
		t.Fatalf("search found a catalogue tool: %+v", found)
	}
	var scripted tools.CatalogSearchOutput
	mustCall(t, dialMode(t, sock, "script", nil), tools.ToolToolsSearch, map[string]any{"query": "read a file", "limit": 1}, &scripted)
	if len(scripted.Tools) != 1 || !strings.HasPrefix(scripted.Tools[0].Declaration, "declare function file_read(args: {\n  /** ") || scripted.Tools[0].InputSchema != "" {
		t.Fatalf("script-mode search: %+v", scripted)
	}

	mustCall(t, cs, tools.ToolToolsCall, map[string]any{"name": "file_write", "arguments": map[string]any{"path": "a.txt", "content": "hello"}}, nil)
	var read tools.ReadFileOutput
	mustCall(t, cs, tools.ToolToolsCall, map[string]any{"name": "file_read", "arguments": map[string]any{"path": "a.txt"}}, &read)
	if read.Content != "hello" {
		t.Fatalf("tools_call file_read: %+v", read)
	}
	direct := call(t, cs, "file_delete", map[string]any{"path": "a.txt"}, nil)
	through := call(t, cs, tools.ToolToolsCall, map[string]any{"name": "file_delete", "arguments": map[string]any{"path": "a.txt"}}, nil)
	if !strings.Contains(through, "denied by") || through != direct {
		t.Fatalf("tools_call of a denied tool: %q; direct call: %q", through, direct)
	}
	for _, c := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"name": "no_such_tool"}, "not a tool the hub offers"},
		{map[string]any{"name": "tools_call", "arguments": map[string]any{"name": "file_read"}}, "name that tool"},
		{map[string]any{"name": "fixture__greet"}, "not a tool the hub offers"},
		{map[string]any{}, "name: required"},
	} {
		if msg := call(t, cs, tools.ToolToolsCall, c.args, nil); !strings.Contains(msg, c.want) {
			t.Fatalf("tools_call %v: %q, want %q", c.args, msg, c.want)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Contains(audited, "file_write") || !slices.Contains(audited, "file_delete") || slices.Contains(audited, tools.ToolToolsCall) {
		t.Fatalf("audited %v: want the real tools, never tools_call", audited)
	}
}

// TestResultHandles: in search mode a large result comes back as a handle with its head;
// result_read and result_search read it; another session cannot; a full-mode session and a
// listed tool with an output schema get results whole; the handle ends with its session.
func TestResultHandles(t *testing.T) {
	s, sock := modesHub(t, WithToolsMode("search", nil))
	var b strings.Builder
	for i := 1; i <= 3000; i++ {
		fmt.Fprintf(&b, "row %04d: nothing to see here\n", i)
	}
	b.WriteString("the needle: 42 wombats\n")
	if err := os.WriteFile(filepath.Join(s.WorkspaceDir(), "big.txt"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	cs := dialMode(t, sock, "", nil)
	res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: tools.ToolToolsCall, Arguments: map[string]any{"name": "file_read", "arguments": map[string]any{"path": "big.txt", "limit": 5000}}})
	if err != nil || res.IsError {
		t.Fatalf("tools_call file_read: %v %s", err, toolText(res))
	}
	var kept HandleResult
	raw, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(raw, &kept); err != nil || kept.Handle == "" || kept.Bytes < 90000 || kept.Tool != "file_read" {
		t.Fatalf("not kept as a handle: %s", raw)
	}
	if text := toolText(res); len(text) > 4096 || !strings.Contains(text, kept.Handle) || !strings.Contains(text, "row 0001") {
		t.Fatalf("handle answer (%d bytes): %s", len(text), text)
	}

	var hits tools.ResultSearchOutput
	mustCall(t, cs, tools.ToolResultSearch, map[string]any{"handle": kept.Handle, "query": "needle wombats"}, &hits)
	if hits.Lexical != 1 || len(hits.Matches) == 0 || !strings.Contains(hits.Matches[0].Text, "the needle: 42 wombats") {
		t.Fatalf("result_search: %+v", hits)
	}
	var w struct {
		Text       string `json:"text"`
		NextOffset int    `json:"next_offset"`
	}
	mustCall(t, cs, tools.ToolResultRead, map[string]any{"handle": kept.Handle, "offset": hits.Matches[0].Line, "limit": 1}, &w)
	if !strings.Contains(w.Text, "the needle: 42 wombats") {
		t.Fatalf("result_read at the match: %+v", w)
	}

	other := dialMode(t, sock, "", nil)
	if msg := call(t, other, tools.ToolResultRead, map[string]any{"handle": kept.Handle}, nil); !strings.Contains(msg, "belongs to another session") {
		t.Fatalf("another session read the handle: %q", msg)
	}
	if msg := call(t, cs, tools.ToolResultRead, map[string]any{"handle": "h000000000000"}, nil); !strings.Contains(msg, "unknown or expired") {
		t.Fatalf("unknown handle: %q", msg)
	}
	// file_read is in the core, listed with its output schema: a direct call keeps its shape.
	var whole tools.ReadFileOutput
	mustCall(t, cs, "file_read", map[string]any{"path": "big.txt", "limit": 5000}, &whole)
	if !strings.Contains(whole.Content, "wombats") {
		t.Fatal("a direct call of a listed tool with an output schema came back as a handle")
	}
	var fullRead tools.ReadFileOutput
	mustCall(t, dialMode(t, sock, "full", nil), tools.ToolToolsCall, map[string]any{"name": "file_read", "arguments": map[string]any{"path": "big.txt", "limit": 5000}}, &fullRead)
	if !strings.Contains(fullRead.Content, "wombats") {
		t.Fatal("a full-mode session got a handle")
	}

	cs.Close()
	deadline := time.Now().Add(5 * time.Second)
	for s.results.Used() != 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := s.results.Used(); n != 0 {
		t.Fatalf("%d bytes of results outlived their session", n)
	}
}

// scriptStandIn stands in for script_run: its handler makes the inner calls its input lists
// through Service.CallInner and returns their texts.
type scriptStandIn struct{ s **Service }

func (scriptStandIn) Name() string { return "test-script" }

type standInInput struct {
	Calls []struct {
		Name string         `json:"name"`
		Args map[string]any `json:"args,omitempty"`
	} `json:"calls"`
}

type standInOutput struct {
	Results []string `json:"results"`
}

func (st scriptStandIn) Tools() tool.Group {
	return tool.NewGroup("", tool.Func(sdk.Tool{Name: "test_script", Description: "runs inner calls", Annotations: tool.Write("script", false, false)}, scriptStandIn.run))
}

func (st scriptStandIn) run(ctx context.Context, req *sdk.CallToolRequest, in standInInput) (*sdk.CallToolResult, standInOutput, error) {
	var out standInOutput
	for _, c := range in.Calls {
		args, _ := json.Marshal(c.Args)
		res, err := (*st.s).CallInner(ctx, req, c.Name, args)
		if err != nil {
			return nil, out, err
		}
		prefix := "ok: "
		if res.IsError {
			prefix = "error: "
		}
		out.Results = append(out.Results, prefix+toolText(res))
	}
	return nil, out, nil
}

// TestCallInnerGoesThroughTheChain: calls made inside a call (a script's) are refused by the
// policy like a client's, ask the client through elicitation while the outer call waits (a
// 2026-07-28 client, which takes questions only as input_required, is not asked: the question
// goes to the dashboard, and here nobody answers it), are
// audited under the calling session with the outer call as parent, never come back as handles,
// and cannot start script_run.
func TestCallInnerGoesThroughTheChain(t *testing.T) {
	p, err := policy.Compile(policy.Config{Rules: []policy.RuleSpec{
		{Tool: "file_delete", Action: "deny"},
		{Tool: "file_rename", Action: "ask"},
	}}, policy.RootsConfig{})
	if err != nil {
		t.Fatal(err)
	}
	al := audit.Discard()
	var mu sync.Mutex
	var entries []audit.Entry
	al.OnRecord(func(e audit.Entry) { mu.Lock(); entries = append(entries, e); mu.Unlock() })
	var s *Service
	s, sock := modesHub(t, WithAudit(al), WithPolicy(policy.NewStore("", p), policy.NewBroker()), WithSubsystem(scriptStandIn{&s}), WithToolsMode("script", []string{"test_script"}), WithResultHandles(100, 0))
	if err := os.WriteFile(filepath.Join(s.WorkspaceDir(), "a.txt"), []byte(strings.Repeat("inner result stays whole\n", 20)), 0o644); err != nil {
		t.Fatal(err)
	}
	var asked []string
	elicit := &sdk.ClientOptions{ElicitationHandler: func(_ context.Context, r *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
		mu.Lock()
		asked = append(asked, r.Params.Message)
		mu.Unlock()
		return &sdk.ElicitResult{Action: "decline"}, nil
	}}
	modern := dialMode(t, sock, "", elicit)
	var unasked standInOutput
	mustCall(t, modern, "test_script", map[string]any{"calls": []map[string]any{{"name": "file_rename", "args": map[string]any{"from": "a.txt", "to": "b.txt"}}}}, &unasked)
	if len(unasked.Results) != 1 || !strings.Contains(unasked.Results[0], "unanswerable") {
		t.Fatalf("an ask inside a 2026-07-28 client's script: %q", unasked.Results)
	}
	cs := dialModeProto(t, sock, "", elicit, "2025-11-25")
	var out standInOutput
	mustCall(t, cs, "test_script", map[string]any{"calls": []map[string]any{
		{"name": "file_read", "args": map[string]any{"path": "a.txt"}},
		{"name": "file_delete", "args": map[string]any{"path": "a.txt"}},
		{"name": "file_rename", "args": map[string]any{"from": "a.txt", "to": "b.txt"}},
		{"name": "script_run"},
		{"name": "tools_call", "args": map[string]any{"name": "file_read", "arguments": map[string]any{"path": "a.txt"}}},
		{"name": "metrics_nothing"},
	}}, &out)
	want := []string{"ok: ", "error: ", "error: ", "error: ", "ok: ", "error: "}
	if len(out.Results) != len(want) {
		t.Fatalf("results %q", out.Results)
	}
	for i, w := range want {
		if !strings.HasPrefix(out.Results[i], w) {
			t.Fatalf("inner call %d: %q, want %s…", i, out.Results[i], w)
		}
	}
	if !strings.Contains(out.Results[0], "inner result stays whole") || !strings.Contains(out.Results[4], "inner result stays whole") {
		t.Fatalf("an inner result came back as a handle: %q", out.Results[0])
	}
	if !strings.Contains(out.Results[1], "denied by") || !strings.Contains(out.Results[2], "declined") ||
		!strings.Contains(out.Results[3], "cannot run another script") || !strings.Contains(out.Results[5], "metrics_nothing") {
		t.Fatalf("refusals: %q", out.Results)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(asked) != 1 || !strings.Contains(asked[0], "file_rename") {
		t.Fatalf("the client was asked %q", asked)
	}
	var outer audit.Entry // the second script run (the first was the 2026-07-28 client's)
	byTool := map[string][]audit.Entry{}
	for _, e := range entries {
		if e.Tool == "test_script" {
			outer = e
			continue
		}
		if outer.CallID != "" {
			byTool[e.Tool] = append(byTool[e.Tool], e)
		}
	}
	if outer.CallID == "" || outer.Session == "" || outer.Parent != "" {
		t.Fatalf("outer call audited as %+v", outer)
	}
	for _, name := range []string{"file_read", "file_delete", "file_rename"} {
		es := byTool[name]
		if len(es) == 0 {
			t.Fatalf("inner %s not audited; entries %+v", name, entries)
		}
		for _, e := range es {
			if e.Parent != outer.CallID || e.Session != outer.Session {
				t.Fatalf("inner %s audited as %+v; want parent %s, session %s", name, e, outer.CallID, outer.Session)
			}
		}
	}
	if len(byTool["file_read"]) != 2 || byTool["file_delete"][0].Decision != "deny" || byTool["file_rename"][0].Approval != "declined" {
		t.Fatalf("inner audit lines: %+v", byTool)
	}
}

// TestCatalogToolsRefuseHostileInput: malformed and hostile arguments to the catalogue tools get
// an error naming the field, a tool switched off stays out of reach through tools_call, and the
// session keeps serving.
func TestCatalogToolsRefuseHostileInput(t *testing.T) {
	s, sock := modesHub(t, WithToolsMode("search", nil))
	cs := dialMode(t, sock, "", nil)
	if _, err := s.SetToolset("metrics", false); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{tools.ToolToolsCall, map[string]any{"name": "file_read", "arguments": "path=go.mod"}, "arguments"},
		{tools.ToolToolsCall, map[string]any{"name": "file_read\x00x"}, "not a tool the hub offers"},
		{tools.ToolToolsCall, map[string]any{"name": "../file_read"}, "not a tool the hub offers"},
		{tools.ToolToolsCall, map[string]any{"name": "metrics_query"}, "not a tool the hub offers"},
		{tools.ToolToolsCall, map[string]any{"name": 42}, "arguments"},
		{tools.ToolToolsSearch, map[string]any{"query": "x", "limit": 1000}, "limit"},
		{tools.ToolToolsSearch, map[string]any{"query": ""}, "query: required"},
		{tools.ToolResultRead, map[string]any{"handle": strings.Repeat("h", 1<<20)}, "unknown or expired"},
		{tools.ToolResultRead, map[string]any{"handle": "h1", "offset": -5}, "offset"},
		{tools.ToolResultRead, map[string]any{"handle": "h1", "limit": 1 << 30}, "limit"},
		{tools.ToolResultSearch, map[string]any{"handle": "h1", "query": "x", "limit": -1}, "limit"},
	} {
		if msg := call(t, cs, c.tool, c.args, nil); !strings.Contains(msg, c.want) {
			t.Errorf("%s %.80v: %q, want %q", c.tool, c.args, msg, c.want)
		}
	}
	var found tools.CatalogSearchOutput
	mustCall(t, cs, tools.ToolToolsSearch, map[string]any{"query": "query metrics events"}, &found)
	for _, f := range found.Tools {
		if strings.HasPrefix(f.Name, "metrics_") {
			t.Fatalf("tools_search found %s, whose toolset is off", f.Name)
		}
	}
	mustCall(t, cs, "file_exists", map[string]any{"path": "x"}, nil)
}

// TestToolsModeOverHTTP: an HTTP client picks its mode with ?tools_mode= on the endpoint's URL,
// and a handle it got is its own (another HTTP session cannot read it).
func TestToolsModeOverHTTP(t *testing.T) {
	s := newTestService(t)
	addr := listen(t, s, TransportHTTP, TransportConfig{HTTPAddr: "127.0.0.1:0", HTTPToken: "s3cret"})
	hc := &http.Client{Transport: bearer{"s3cret", http.DefaultTransport}}
	dial := func(query string) *sdk.ClientSession {
		cs, err := sdk.NewClient(&sdk.Implementation{Name: "http-modes", Version: "1"}, nil).Connect(t.Context(), &sdk.StreamableClientTransport{Endpoint: "http://" + addr + "/mcp" + query, HTTPClient: hc}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	search := dial("?tools_mode=search")
	if got := listNames(t, search); !slices.Contains(got, tools.ToolToolsSearch) || slices.Contains(got, "dir_list") {
		t.Fatalf("?tools_mode=search lists %v", got)
	}
	if got := listNames(t, dial("")); slices.Contains(got, tools.ToolToolsSearch) || !slices.Contains(got, "dir_list") {
		t.Fatalf("the hub's mode over HTTP lists %v", got)
	}
	if err := os.WriteFile(filepath.Join(s.WorkspaceDir(), "big.txt"), []byte(strings.Repeat("0123456789abcdef\n", 2000)), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := search.CallTool(t.Context(), &sdk.CallToolParams{Name: tools.ToolToolsCall, Arguments: map[string]any{"name": "file_read", "arguments": map[string]any{"path": "big.txt"}}})
	if err != nil || res.IsError {
		t.Fatalf("tools_call over HTTP: %v %s", err, toolText(res))
	}
	var kept HandleResult
	raw, _ := json.Marshal(res.StructuredContent)
	if json.Unmarshal(raw, &kept) != nil || kept.Handle == "" {
		t.Fatalf("no handle over HTTP: %s", raw)
	}
	mustCall(t, search, tools.ToolResultRead, map[string]any{"handle": kept.Handle, "limit": 2}, nil)
	// Another client: a stateless 2026-07-28 client is known by its token and clientInfo, so the
	// same name on the same token is the same client (it reads its own handle); another name is not.
	otherCS, err := sdk.NewClient(&sdk.Implementation{Name: "http-modes-other", Version: "1"}, nil).Connect(t.Context(), &sdk.StreamableClientTransport{Endpoint: "http://" + addr + "/mcp?tools_mode=search", HTTPClient: hc}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { otherCS.Close() })
	mustCall(t, dial("?tools_mode=search"), tools.ToolResultRead, map[string]any{"handle": kept.Handle, "limit": 1}, nil)
	if msg := call(t, otherCS, tools.ToolResultRead, map[string]any{"handle": kept.Handle}, nil); !strings.Contains(msg, "another session") {
		t.Fatalf("another HTTP session read the handle: %q", msg)
	}
}

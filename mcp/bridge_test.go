package mcp

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/internal/audit"
	"github.com/switchboard-hub/switchboard/internal/policy"
	"github.com/switchboard-hub/switchboard/internal/testutil"
	"github.com/switchboard-hub/switchboard/internal/upstream"
)

// The bridge between protocol eras (mcp/proxy/bridge.go, internal/upstream/rounds.go): real
// go-sdk v1.8 clients of both eras on the hub's Unix socket, upstream servers of both eras
// (bridge_upstreams_test.go, and the real server-everything), each asserting on the wire which
// era it used.

type bridgeHub struct {
	s              *Service
	m              *upstream.Manager
	sock           string
	modern, legacy *testUpstream
	workspace      string

	auditMu sync.Mutex
	audited []audit.Entry
}

func (h *bridgeHub) asked(server string) []audit.Entry {
	h.auditMu.Lock()
	defer h.auditMu.Unlock()
	var out []audit.Entry
	for _, e := range h.audited {
		if e.Outcome == "asked" && strings.Contains(e.Args, "from server "+server+" ") {
			out = append(out, e)
		}
	}
	return out
}

// newBridgeHub is a hub serving modern (2026-07-28, stateless HTTP) and legacy (2025-11-25,
// HTTP session), both approved, on a Unix socket.
func newBridgeHub(t testing.TB, opts ...Option) *bridgeHub {
	t.Helper()
	h := &bridgeHub{modern: modernUpstream(t), legacy: legacyUpstream(t), workspace: t.TempDir()}
	m, err := upstream.New(upstream.Options{ApprovalsFile: filepath.Join(t.TempDir(), "a.json"), Workspace: t.TempDir(), Reserved: ToolsetNames()})
	if err != nil {
		t.Fatal(err)
	}
	al := audit.Discard()
	al.OnRecord(func(e audit.Entry) { h.auditMu.Lock(); h.audited = append(h.audited, e); h.auditMu.Unlock() })
	h.s = newTestService(t, append([]Option{WithWorkspaceRoot(h.workspace), WithAudit(al), WithUpstreams(m)}, opts...)...)
	h.m = m
	if err := approveSync(m, []upstream.Spec{{Name: "modern", URL: h.modern.url}, {Name: "legacy", URL: h.legacy.url}}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"modern", "legacy"} {
		waitUpstream(t, m, name, func(st upstream.Status) bool { return st.State == upstream.StateRunning })
		if _, err := m.Approve(t.Context(), name); err != nil {
			t.Fatal(err)
		}
		waitUpstream(t, m, name, func(upstream.Status) bool { return hasTool(h.s, name+"__ask") })
	}
	h.sock = serveUnix(t, h.s)
	return h
}

// serveUnix serves s on a fresh Unix socket.
func serveUnix(t testing.TB, s *Service) string {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "m.sock")
	tr := s.NewTransports(TransportConfig{UnixPath: sock})
	if err := tr.Start(TransportUnix); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = tr.StopAll(ctx)
	})
	return sock
}

// bridgeClient is a go-sdk v1.8 client on the hub's socket that shows each question it gets
// (records it) and answers as a user would.
type bridgeClient struct {
	name string
	cs   *sdk.ClientSession

	mu           sync.Mutex
	asked        []string // elicitation messages and sampling prompts shown
	progress     []any    // the progress tokens of the notifications that reached it
	toolsChanged chan struct{}
}

func (c *bridgeClient) shown() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.asked)
}

type clientCaps struct {
	elicit, sample bool
	manualRounds   bool // multi round-trip answered by the test, not go-sdk's middleware
	noRoots        bool // no roots capability (go-sdk declares it by default)
}

// dialBridge connects a client: protocol "" is go-sdk's default (2026-07-28, no initialize),
// else the protocol it initializes with.
func dialBridge(t testing.TB, sock, name, protocol string, caps clientCaps) *bridgeClient {
	t.Helper()
	c := &bridgeClient{name: name, toolsChanged: make(chan struct{}, 16)}
	opts := &sdk.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
			c.mu.Lock()
			c.progress = append(c.progress, req.Params.ProgressToken)
			c.mu.Unlock()
		},
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) {
			select {
			case c.toolsChanged <- struct{}{}:
			default:
			}
		},
	}
	if caps.manualRounds {
		opts.MultiRoundTrip = &sdk.MultiRoundTripOptions{Disabled: true}
		opts.Capabilities = &sdk.ClientCapabilities{} // no roots: the hub's first round is the server's question
	}
	if caps.noRoots {
		opts.Capabilities = &sdk.ClientCapabilities{}
	}
	if caps.elicit {
		opts.ElicitationHandler = func(_ context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			c.mu.Lock()
			c.asked = append(c.asked, req.Params.Message)
			c.mu.Unlock()
			if s, ok := req.Params.RequestedSchema.(map[string]any); ok {
				if props, ok := s["properties"].(map[string]any); ok && props["answer"] != nil {
					return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"answer": "yes from " + name}}, nil
				}
			}
			if strings.HasPrefix(req.Params.Message, "Switchboard:") || strings.HasPrefix(req.Params.Message, "question ") {
				return &sdk.ElicitResult{Action: "accept"}, nil
			}
			return &sdk.ElicitResult{Action: "decline"}, nil
		}
	}
	if caps.sample {
		opts.CreateMessageHandler = func(_ context.Context, req *sdk.CreateMessageRequest) (*sdk.CreateMessageResult, error) {
			var prompt string
			for _, m := range req.Params.Messages {
				prompt += samplingText(m.Content)
			}
			c.mu.Lock()
			c.asked = append(c.asked, prompt)
			c.mu.Unlock()
			return &sdk.CreateMessageResult{Model: "stand-in", Role: "assistant", Content: &sdk.TextContent{Text: "sampled by " + name + ": " + prompt}}, nil
		}
	}
	cl := sdk.NewClient(&sdk.Implementation{Name: name, Version: "1.0"}, opts)
	var cs *sdk.ClientSession
	if protocol == "" {
		cs = dialHub(t, sock, "", cl)
	} else {
		conn := dialHubRaw(t, sock)
		var err error
		cs, err = cl.Connect(t.Context(), &sdk.IOTransport{Reader: conn, Writer: conn}, &sdk.ClientSessionOptions{ProtocolVersion: protocol})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
	}
	want := protocol
	if want == "" {
		want = "2026-07-28"
	}
	if got := cs.InitializeResult().ProtocolVersion; got != want {
		t.Fatalf("client %s: protocol %s on the wire, want %s", name, got, want)
	}
	c.cs = cs
	return c
}

func callText(t *testing.T, cs *sdk.ClientSession, name string, args map[string]any) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return toolText(res)
}

// TestBridgeFourWays: elicitation, sampling and roots during a call, for each pair of upstream
// era and client era: the question reaches the client that called (shown to it, answered by
// it), the answer reaches the upstream, each side speaks its own era on the wire, and each
// relayed question is one audit line naming the server.
func TestBridgeFourWays(t *testing.T) {
	h := newBridgeHub(t)
	clients := []*bridgeClient{
		dialBridge(t, h.sock, "client-2025", "2025-11-25", clientCaps{elicit: true, sample: true}),
		dialBridge(t, h.sock, "client-2026", "", clientCaps{elicit: true, sample: true}),
	}
	ups := []struct {
		name     string
		up       *testUpstream
		protocol string
	}{{"legacy", h.legacy, "2025-11-25"}, {"modern", h.modern, "2026-07-28"}}
	for _, c := range clients {
		for _, u := range ups {
			t.Run(u.name+" upstream, "+c.name, func(t *testing.T) {
				before := len(h.asked(u.name))
				q := fmt.Sprintf("May %s go on, %s?", u.name, c.name)
				if got, want := callText(t, c.cs, u.name+"__ask", map[string]any{"question": q}), "answered: accept yes from "+c.name; got != want {
					t.Fatalf("elicitation: %q, want %q", got, want)
				}
				if got := u.up.lastProtocol(); got != u.protocol {
					t.Errorf("upstream %s saw protocol %q, want %q", u.name, got, u.protocol)
				}
				p := fmt.Sprintf("a haiku for %s from %s", c.name, u.name)
				if got, want := callText(t, c.cs, u.name+"__sample", map[string]any{"prompt": p}), "sampled: sampled by "+c.name+": "+p; got != want {
					t.Fatalf("sampling: %q, want %q", got, want)
				}
				if shown := c.shown(); !slices.Contains(shown, q) || !slices.Contains(shown, p) {
					t.Errorf("the client was shown %q; want the server's question and prompt", shown)
				}
				if n := len(h.asked(u.name)) - before; n != 2 {
					t.Errorf("%d audit lines for the two questions of %s", n, u.name)
				}
			})
		}
		// Roots: a 2026-era server's roots/list input request is answered by the hub with the
		// calling client's workspace (as a 2025-era server's roots/list request is), never
		// put to the client.
		if got, want := callText(t, c.cs, "modern__roots", nil), "roots: file://"+h.workspace; got != want {
			t.Errorf("%s: roots %q, want %q", c.name, got, want)
		}
	}
	h.auditMu.Lock()
	defer h.auditMu.Unlock()
	for _, e := range h.audited {
		if e.Outcome == "asked" && (e.Client == "" || e.Session == "" || e.Transport != "unix" || !strings.HasSuffix(e.Tool, "__ask") && !strings.HasSuffix(e.Tool, "__sample")) {
			t.Errorf("audit line of a relayed question without its client, session or tool: %+v", e)
		}
	}
}

// TestBridgeHoldsPromptsAndReads: a 2025-era server that asks its client during prompts/get and
// resources/read reaches a client of either era: a 2025-era client is sent the elicitation
// during its request; a 2026-07-28 client's request is held and answered input_required, and its
// retry (go-sdk's client answers the round itself) gets the prompt and the resource.
func TestBridgeHoldsPromptsAndReads(t *testing.T) {
	h := newBridgeHub(t)
	for _, c := range []*bridgeClient{
		dialBridge(t, h.sock, "client-2025", "2025-11-25", clientCaps{elicit: true}),
		dialBridge(t, h.sock, "client-2026", "", clientCaps{elicit: true}),
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			q := "May the prompt go on, " + c.name + "?"
			var gp *sdk.GetPromptResult
			var err error
			if !testutil.Poll(10*time.Second, func() bool {
				gp, err = c.cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "legacy__ask-prompt", Arguments: map[string]string{"question": q}})
				return err == nil || !strings.Contains(err.Error(), "unknown prompt")
			}) || err != nil {
				t.Fatalf("prompts/get: %v", err)
			}
			if len(gp.Messages) != 1 || promptText(gp) != "prompted: accept yes from "+c.name {
				t.Errorf("prompts/get: %+v", gp.Messages)
			}
			rr, err := c.cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "bridge://ask"})
			if err != nil || len(rr.Contents) != 1 || rr.Contents[0].Text != "read: accept yes from "+c.name {
				t.Fatalf("resources/read: %v %+v", err, rr)
			}
			if shown := c.shown(); !slices.Contains(shown, q) || !slices.Contains(shown, "May the resource be read?") {
				t.Errorf("the client was shown %q; want the server's two questions", shown)
			}
		})
	}
}

func promptText(r *sdk.GetPromptResult) string {
	if tc, ok := r.Messages[0].Content.(*sdk.TextContent); ok {
		return tc.Text
	}
	return fmt.Sprintf("%T", r.Messages[0].Content)
}

// TestBridgeServerEverythingToNewClient: the real server-everything (TypeScript SDK, 2025 era,
// stdio) asks a 2026-07-28 client through the hub: elicitation and sampling arrive as
// input_required rounds, its roots/list is answered with the client's workspace.
func TestBridgeServerEverythingToNewClient(t *testing.T) {
	s, m := upstreamHub(t)
	waitUpstream(t, m, "everything", func(st upstream.Status) bool {
		return slices.ContainsFunc(st.Tools, func(ts upstream.ToolStatus) bool { return ts.Name == "trigger-sampling-request" })
	})
	if _, err := m.Approve(t.Context(), "everything"); err != nil {
		t.Fatal(err)
	}
	waitUpstream(t, m, "everything", func(upstream.Status) bool { return hasTool(s, "everything__trigger-elicitation-request") })
	c := dialBridge(t, serveUnix(t, s), "client-2026", "", clientCaps{elicit: true, sample: true})
	if got := callText(t, c.cs, "everything__trigger-sampling-request", map[string]any{"prompt": "a haiku about hubs"}); !strings.Contains(got, "sampled by client-2026: ") || !strings.Contains(got, "haiku about hubs") {
		t.Fatalf("sampling: %q", got)
	}
	if got := callText(t, c.cs, "everything__trigger-elicitation-request", map[string]any{}); !strings.Contains(strings.ToLower(got), "decline") {
		t.Fatalf("elicitation: %q", got)
	}
	if got := callText(t, c.cs, "everything__get-roots-list", map[string]any{}); !strings.Contains(got, "file://") {
		t.Fatalf("roots: %q", got)
	}
	if shown := c.shown(); len(shown) != 2 {
		t.Fatalf("questions shown to the client: %q, want the sampling prompt and the elicitation", shown)
	}
}

// TestBridgeClientLacksCapability: a server asking a client for what it did not declare gets
// an error naming what it asked for, in both directions.
func TestBridgeClientLacksCapability(t *testing.T) {
	h := newBridgeHub(t)
	old := dialBridge(t, h.sock, "plain-2025", "2025-11-25", clientCaps{})
	modern := dialBridge(t, h.sock, "plain-2026", "", clientCaps{})
	res, err := old.cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "modern__ask", Arguments: map[string]any{"question": "q"}})
	if err != nil || !res.IsError || !strings.Contains(toolText(res), `server "modern" asked the calling client (plain-2025) for elicitation, which it does not support`) {
		t.Fatalf("2026 upstream, 2025 client without elicitation: %v %q", err, toolText(res))
	}
	if got := callText(t, modern.cs, "legacy__sample", map[string]any{"prompt": "p"}); !strings.Contains(got, `server "legacy" asked the calling client (plain-2026) for sampling, which it does not support`) {
		t.Fatalf("2025 upstream, 2026 client without sampling: %q", got)
	}
}

// TestBridgeHeldCallExpires: a 2026-era client that never retries leaves the upstream's
// question unanswered only until the hold timeout: the upstream gets a clear error, the call
// ends, and a late retry is told the call was ended.
func TestBridgeHeldCallExpires(t *testing.T) {
	h := newBridgeHub(t, WithUpstreamHoldTimeout(500*time.Millisecond))
	c := dialBridge(t, h.sock, "forgetful", "", clientCaps{elicit: true, manualRounds: true})
	res, err := c.cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "legacy__ask", Arguments: map[string]any{"question": "anyone?"}})
	if err != nil || !res.NeedsInput() || len(res.InputRequests) != 1 || res.RequestState == "" {
		t.Fatalf("first round: %v %+v", err, res)
	}
	var id string
	for k, q := range res.InputRequests {
		id = k
		if ep, ok := q.(*sdk.ElicitParams); !ok || ep.Message != "anyone?" {
			t.Fatalf("input request %T %+v, want the server's elicitation", q, q)
		}
	}
	testutil.Eventually(t, "the held call ended", func() bool { st, _ := h.m.Status("legacy"); return st.InFlight == 0 })
	late, err := c.cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "legacy__ask", Arguments: map[string]any{"question": "anyone?"},
		RequestState: res.RequestState, InputResponses: sdk.InputResponseMap{id: &sdk.ElicitResult{Action: "accept", Content: map[string]any{"answer": "late"}}}})
	if err != nil || !late.IsError || !strings.Contains(toolText(late), "was ended") {
		t.Fatalf("a retry after the hold timeout: %v %q", err, toolText(late))
	}
	// The upstream's own view: its question failed with the reason.
	h.legacy.mu.Lock()
	n := len(h.legacy.protocols)
	h.legacy.mu.Unlock()
	if n != 1 {
		t.Errorf("the upstream was called %d times, want 1 (a late retry must not run the call again)", n)
	}
}

// TestBridgeHostileUpstreams: upstreams that flood questions, never answer, or ask after their
// call ended cannot hang or harm the hub.
func TestBridgeHostileUpstreams(t *testing.T) {
	h := newBridgeHub(t)
	modern := dialBridge(t, h.sock, "client-2026", "", clientCaps{elicit: true, sample: true})
	old := dialBridge(t, h.sock, "client-2025", "2025-11-25", clientCaps{elicit: true, sample: true})

	// A 2025-era server asking again and again of a 2026-era client: bounded rounds.
	if got := callText(t, modern.cs, "legacy__ask-many", map[string]any{"times": 30}); !strings.Contains(got, `server "legacy" asked the client 9 times during one call; the hub stops there`) {
		t.Fatalf("flood from a 2025 upstream: %q", got)
	}
	// ... and asking 50 questions at once: bounded too, and every question ends.
	if got := callText(t, modern.cs, "legacy__ask-parallel", map[string]any{"times": 50}); !strings.Contains(got, "the hub stops there") {
		t.Fatalf("parallel flood from a 2025 upstream: %q", got)
	}
	// A 2026-era server answering input_required forever, to either client: bounded rounds.
	for _, c := range []*bridgeClient{modern, old} {
		res, err := c.cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "modern__ask-forever", Arguments: map[string]any{}})
		if err != nil || !res.IsError || !strings.Contains(toolText(res), "the hub stops there") {
			t.Fatalf("%s: flood from a 2026 upstream: %v %q", c.name, err, toolText(res))
		}
	}
	// A server that asks after its call ended is refused at once.
	if got := callText(t, modern.cs, "legacy__ask-late", nil); got != "returned before asking" {
		t.Fatalf("ask-late: %q", got)
	}
	if err := testutil.Receive(t, h.legacy.lateErr, "the late question's answer"); err == nil || !strings.Contains(err.Error(), "no client call is in flight") {
		t.Fatalf("a question after the call ended: %v", err)
	}
	// A server that never answers: the client's cancellation (its request timeout) reaches it.
	ctx, cancel := context.WithTimeout(t.Context(), 500*time.Millisecond)
	_, err := modern.cs.CallTool(ctx, &sdk.CallToolParams{Name: "legacy__hang", Arguments: map[string]any{}})
	cancel()
	if err == nil {
		t.Fatal("a call of a server that never answers returned")
	}
	if got := testutil.Receive(t, h.legacy.cancelled, "the upstream's cancellation"); got != "hang" {
		t.Fatalf("cancelled %q", got)
	}
	// The hub still serves both clients.
	for _, c := range []*bridgeClient{modern, old} {
		if got := callText(t, c.cs, "legacy__ask", map[string]any{"question": "still there?"}); got != "answered: accept yes from "+c.name {
			t.Fatalf("%s after the hostile calls: %q", c.name, got)
		}
	}
	testutil.Eventually(t, "no upstream call left in flight", func() bool {
		a, _ := h.m.Status("legacy")
		b, _ := h.m.Status("modern")
		return a.InFlight == 0 && b.InFlight == 0
	})
}

// TestBridgeProgressCancellationListChanged: progress from upstreams of both eras reaches
// clients of both eras with their own token (a held call's with each round's), a client's
// cancellation cancels the upstream request, and an upstream's tools/list_changed (a 2026-era
// upstream's over subscriptions/listen) reaches clients of both eras.
func TestBridgeProgressCancellationListChanged(t *testing.T) {
	h := newBridgeHub(t)
	clients := []*bridgeClient{
		dialBridge(t, h.sock, "client-2025", "2025-11-25", clientCaps{elicit: true}),
		dialBridge(t, h.sock, "client-2026", "", clientCaps{elicit: true}),
	}
	for _, c := range clients {
		for _, server := range []string{"legacy", "modern"} {
			tok := c.name + "-" + server
			p := &sdk.CallToolParams{Name: server + "__slow", Arguments: map[string]any{"ms": 400}}
			p.SetProgressToken(tok)
			res, err := c.cs.CallTool(t.Context(), p)
			if err != nil || toolText(res) != "slept 400" {
				t.Fatalf("%s %s slow: %v %q", c.name, server, err, toolText(res))
			}
			testutil.Eventually(t, "progress with the client's token", func() bool {
				c.mu.Lock()
				defer c.mu.Unlock()
				return slices.Contains(c.progress, any(tok))
			})
			// Cancellation: the client gives up; the upstream's handler sees its context end.
			ctx, cancel := context.WithCancel(t.Context())
			done := make(chan error, 1)
			go func() {
				_, err := c.cs.CallTool(ctx, &sdk.CallToolParams{Name: server + "__slow", Arguments: map[string]any{"ms": 20000}})
				done <- err
			}()
			up := h.legacy
			if server == "modern" {
				up = h.modern
			}
			testutil.Receive(t, up.started, "the slow call running upstream")
			cancel()
			<-done
			select {
			case <-up.cancelled:
			case <-time.After(10 * time.Second):
				t.Fatalf("%s: %s's request was not cancelled upstream", c.name, server)
			}
		}
	}
	c := clients[0]
	for _, c := range clients { // drain earlier notifications
		for len(c.toolsChanged) > 0 {
			<-c.toolsChanged
		}
	}
	// A new tool upstream: the hub hears of it (listen for the 2026-era upstream), holds it
	// until approved, and tells every client once it is offered.
	for _, u := range []*testUpstream{h.modern, h.legacy} {
		u.server.AddTool(bridgeTool("added"), func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return textResult("added"), nil
		})
	}
	for _, name := range []string{"modern", "legacy"} {
		waitUpstream(t, h.m, name, func(st upstream.Status) bool { return st.Held == 1 })
		if _, err := h.m.Approve(t.Context(), name, "added"); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range clients {
		testutil.Eventually(t, c.name+" told of the new tools", func() bool {
			return slices.Contains(toolNames(t, c.cs), "modern__added") && slices.Contains(toolNames(t, c.cs), "legacy__added")
		})
		select {
		case <-c.toolsChanged:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: no tools/list_changed", c.name)
		}
	}
	_ = c
}

// TestBridgePolicyAsksOnce: a call the policy asks about is asked once, not at every round of
// its held upstream call.
func TestBridgePolicyAsksOnce(t *testing.T) {
	p, err := policy.Compile(policy.Config{AskTimeout: "10s", Rules: []policy.RuleSpec{{Tool: "legacy__ask-many", Action: "ask"}}}, policy.RootsConfig{})
	if err != nil {
		t.Fatal(err)
	}
	h := newBridgeHub(t, WithPolicy(policy.NewStore("", p), policy.NewBroker()))
	c := dialBridge(t, h.sock, "client-2026", "", clientCaps{elicit: true})
	if got := callText(t, c.cs, "legacy__ask-many", map[string]any{"times": 3}); got != "all answered" {
		t.Fatalf("ask-many: %q", got)
	}
	var approvals, questions int
	for _, q := range c.shown() {
		switch {
		case strings.HasPrefix(q, "Switchboard:"):
			approvals++
		case strings.HasPrefix(q, "question "):
			questions++
		}
	}
	if approvals != 1 || questions != 3 {
		t.Fatalf("shown %q: want one approval and the server's three questions", c.shown())
	}
}

// dialHubRaw is a connection to the hub's socket.
func dialHubRaw(t testing.TB, sock string) net.Conn {
	t.Helper()
	conn, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// TestBridgeStateStaysOpaqueAndBound: between a 2026-era upstream and a 2026-era client the
// question is relayed, but the upstream's requestState never leaves the hub; the hub's own is
// bound to the session, tool and arguments that got it, and used once.
func TestBridgeStateStaysOpaqueAndBound(t *testing.T) {
	h := newBridgeHub(t)
	a := dialBridge(t, h.sock, "client-a", "", clientCaps{elicit: true, manualRounds: true})
	b := dialBridge(t, h.sock, "client-b", "", clientCaps{elicit: true, manualRounds: true})
	args := map[string]any{"question": "bound?"}
	first, err := a.cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "modern__ask", Arguments: args})
	if err != nil || !first.NeedsInput() || len(first.InputRequests) != 1 {
		t.Fatalf("first round: %v %+v", err, first)
	}
	if first.RequestState == "" || strings.Contains(first.RequestState, "modern-ask") {
		t.Fatalf("requestState %q: want the hub's own, never the upstream's", first.RequestState)
	}
	var id string
	for k, q := range first.InputRequests {
		if ep, ok := q.(*sdk.ElicitParams); !ok || ep.Message != "bound?" {
			t.Fatalf("input request %T %+v", q, q)
		}
		id = k
	}
	answer := func(who string) sdk.InputResponseMap {
		return sdk.InputResponseMap{id: &sdk.ElicitResult{Action: "accept", Content: map[string]any{"answer": who}}}
	}
	// Another session presenting A's state starts a call of its own: it cannot answer A's.
	stolen, err := b.cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "modern__ask", Arguments: args, RequestState: first.RequestState, InputResponses: answer("b")})
	if err != nil || !stolen.NeedsInput() || stolen.RequestState == first.RequestState {
		t.Fatalf("B with A's state: %v %+v", err, stolen)
	}
	// So does A with other arguments.
	other, err := a.cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "modern__ask", Arguments: map[string]any{"question": "other?"}, RequestState: first.RequestState, InputResponses: answer("a")})
	if err != nil || !other.NeedsInput() {
		t.Fatalf("A's state with other arguments: %v %+v", err, other)
	}
	done, err := a.cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "modern__ask", Arguments: args, RequestState: first.RequestState, InputResponses: answer("a")})
	if err != nil || done.NeedsInput() || toolText(done) != "answered: accept a" {
		t.Fatalf("A's retry: %v %q", err, toolText(done))
	}
	again, err := a.cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "modern__ask", Arguments: args, RequestState: first.RequestState, InputResponses: answer("a")})
	if err != nil || !again.NeedsInput() {
		t.Fatalf("A's state used twice: %v %+v", err, again)
	}
}

// TestBridgeHeldCallEndsWithItsSession: a held call whose client's session ends (the
// connection closed) ends at once, not at the hold timeout: no retry can come.
func TestBridgeHeldCallEndsWithItsSession(t *testing.T) {
	h := newBridgeHub(t) // the default hold timeout: minutes
	c := dialBridge(t, h.sock, "leaver", "", clientCaps{elicit: true, manualRounds: true})
	res, err := c.cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "legacy__ask", Arguments: map[string]any{"question": "still there?"}})
	if err != nil || !res.NeedsInput() {
		t.Fatalf("first round: %v %+v", err, res)
	}
	if st, _ := h.m.Status("legacy"); st.InFlight != 1 {
		t.Fatalf("in flight on legacy: %d, want the held call", st.InFlight)
	}
	c.cs.Close()
	testutil.EventuallyWithin(t, 10*time.Second, "the held call ended with its session", func() bool {
		st, _ := h.m.Status("legacy")
		return st.InFlight == 0
	})
}

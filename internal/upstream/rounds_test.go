//go:build unix

package upstream

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

type callTag struct{}

// TestInputRequiredAnsweredWithTheCallsContext: a server on protocol 2026-07-28 (go-sdk v1.8,
// stateless Streamable HTTP) that answers input_required gets its elicitation, sampling and
// roots answered through the hooks, each hook seeing the context of the call that caused it
// (so the hub knows which client's call asked), and the retry carries the server's own
// requestState. A server that keeps asking is stopped after maxInputRounds.
func TestInputRequiredAnsweredWithTheCallsContext(t *testing.T) {
	var mu sync.Mutex
	var protocols, states []string
	srv := sdk.NewServer(&sdk.Implementation{Name: "modern", Version: "1"}, nil)
	schema := map[string]any{"type": "object", "properties": map[string]any{}}
	srv.AddTool(&sdk.Tool{Name: "ask", InputSchema: schema}, func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		mu.Lock()
		protocols = append(protocols, req.Session.InitializeParams().ProtocolVersion)
		states = append(states, req.Params.RequestState)
		mu.Unlock()
		e, eok := req.Params.InputResponses["e"].(*sdk.ElicitResult)
		s, sok := req.Params.InputResponses["s"].(*sdk.CreateMessageWithToolsResult)
		r, rok := req.Params.InputResponses["r"].(*sdk.ListRootsResult)
		if eok && sok && rok && req.Params.RequestState == "opaque-1" {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: fmt.Sprintf("%s|%s|%s", e.Action, s.Content[0].(*sdk.TextContent).Text, r.Roots[0].URI)}}}, nil
		}
		return &sdk.CallToolResult{RequestState: "opaque-1", InputRequests: sdk.InputRequestMap{
			"e": &sdk.ElicitParams{Message: "ok?", RequestedSchema: schema},
			"s": &sdk.CreateMessageParams{MaxTokens: 5, Messages: []*sdk.SamplingMessage{{Role: "user", Content: &sdk.TextContent{Text: "hi"}}}},
			"r": &sdk.ListRootsParams{},
		}}, nil
	})
	srv.AddTool(&sdk.Tool{Name: "forever", InputSchema: schema}, func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{RequestState: "again", InputRequests: sdk.InputRequestMap{"e": &sdk.ElicitParams{Message: "again?", RequestedSchema: schema}}}, nil
	})
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, &sdk.StreamableHTTPOptions{Stateless: true}))
	t.Cleanup(ts.Close)

	var seen []string // what each hook saw of the call's context
	hooks := Hooks{
		Elicit: func(ctx context.Context, _ string, _ *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			mu.Lock()
			seen = append(seen, fmt.Sprint("elicit:", ctx.Value(callTag{})))
			mu.Unlock()
			return &sdk.ElicitResult{Action: "accept"}, nil
		},
		Sampling: func(ctx context.Context, _ string, req *sdk.CreateMessageRequest) (*sdk.CreateMessageResult, error) {
			mu.Lock()
			seen = append(seen, fmt.Sprint("sample:", ctx.Value(callTag{})))
			mu.Unlock()
			return &sdk.CreateMessageResult{Model: "m", Role: "assistant", Content: &sdk.TextContent{Text: "sampled " + req.Params.Messages[0].Content.(*sdk.TextContent).Text}}, nil
		},
		Roots: func(ctx context.Context, _ string) (*sdk.ListRootsResult, error) {
			mu.Lock()
			seen = append(seen, fmt.Sprint("roots:", ctx.Value(callTag{})))
			mu.Unlock()
			return &sdk.ListRootsResult{Roots: []*sdk.Root{{URI: "file:///work"}}}, nil
		},
	}
	m := newTestManager(t, Options{Hooks: hooks})
	if err := approveSync(m, []Spec{{Name: "modern", URL: ts.URL}}); err != nil {
		t.Fatal(err)
	}
	waitState(t, m, "modern", StateRunning)
	if _, err := m.Approve(t.Context(), "modern"); err != nil {
		t.Fatal(err)
	}
	ctx := context.WithValue(t.Context(), callTag{}, "call-7")
	res, err := m.CallTool(ctx, "modern", "ask", nil, nil)
	if err != nil || text(res) != "accept|sampled hi|file:///work" {
		t.Fatalf("ask: %v %q", err, text(res))
	}
	mu.Lock()
	if strings.Join(seen, " ") != "elicit:call-7 roots:call-7 sample:call-7" {
		t.Errorf("hooks saw %q, want each with the call's context, in the order of the ids", seen)
	}
	if strings.Join(protocols, ",") != "2026-07-28,2026-07-28" || strings.Join(states, ",") != ",opaque-1" {
		t.Errorf("the server saw protocols %q and states %q", protocols, states)
	}
	mu.Unlock()

	if _, err := m.CallTool(ctx, "modern", "forever", nil, nil); err == nil || !strings.Contains(err.Error(), `server "modern" asked for input 10 times during one request`) {
		t.Fatalf("a server that keeps asking: %v", err)
	}
}

package mcp

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/internal/policy"
)

// syncBuffer is a bytes.Buffer safe for the transport's writer and the test's reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (w *syncBuffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *syncBuffer) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// TestRefusalsCarryResultType: on a 2026-07-28 session every tools/call result carries
// resultType, the hub's own refusals (a policy deny, an unanswerable ask) as much as a tool's
// result or error: clients of that revision (the AI SDK) reject a result without it ("Modern
// MCP result is missing resultType").
func TestRefusalsCarryResultType(t *testing.T) {
	s, _ := trustService(t, policy.Config{Rules: []policy.RuleSpec{
		{Tool: "file_delete", Action: "deny"},
		{Tool: "file_write", Action: "ask"},
	}}, policy.RootsConfig{})
	ctx := context.Background()
	ct, st := sdk.NewInMemoryTransports()
	ss, err := s.Server().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	var wire syncBuffer
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "modern", Version: "1"}, nil).Connect(ctx, &sdk.LoggingTransport{Transport: ct, Writer: &wire}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); ss.Close() })
	if v := ss.InitializeParams().ProtocolVersion; v < "2026-07-28" {
		t.Fatalf("the go-sdk client negotiated %s; this test needs 2026-07-28", v)
	}
	for _, c := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"file_delete", map[string]any{"path": "a.txt"}, "denied by"},
		{"file_write", map[string]any{"path": "b.txt", "content": "x"}, "approval"},
		{"file_read", map[string]any{"path": "missing.txt"}, "missing.txt"},
		{"lang_list", map[string]any{}, "languages"},
	} {
		before := len(wire.String())
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: c.tool, Arguments: c.args})
		if err != nil {
			t.Fatalf("%s: %v", c.tool, err)
		}
		text := ""
		for _, ct := range res.Content {
			if tc, ok := ct.(*sdk.TextContent); ok {
				text += tc.Text
			}
		}
		if !strings.Contains(text, c.want) {
			t.Errorf("%s: %q does not say %q", c.tool, text, c.want)
		}
		var reply string
		for _, line := range strings.Split(wire.String()[before:], "\n") {
			if strings.Contains(line, `"result"`) && strings.Contains(line, `"content"`) {
				reply = line
			}
		}
		if !strings.Contains(reply, `"resultType":"complete"`) {
			t.Errorf("%s: the result has no resultType complete on a 2026-07-28 session:\n%s", c.tool, reply)
		}
	}
}

// TestEveryModernResultHasResultType: resultType is added in one place every result passes, so a
// result built by any middleware of the hub — here one that answers a tool call itself, before
// go-sdk's dispatch, as the policy and the upstream relay do — reaches a 2026-07-28 client with
// it, and a 2025-11-25 client without it.
func TestEveryModernResultHasResultType(t *testing.T) {
	s := newTestService(t, WithServerSetup(func(srv *sdk.Server) {
		srv.AddReceivingMiddleware(func(next sdk.MethodHandler) sdk.MethodHandler {
			return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
				if p, ok := req.GetParams().(*sdk.CallToolParamsRaw); ok && p.Name == "lang_list" {
					return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "answered by a middleware"}}}, nil
				}
				return next(ctx, method, req)
			}
		})
	}))
	ctx := context.Background()
	for _, era := range []string{"", "2025-11-25"} {
		ct, st := sdk.NewInMemoryTransports()
		ss, err := s.Server().Connect(ctx, st, nil)
		if err != nil {
			t.Fatal(err)
		}
		var wire syncBuffer
		var so *sdk.ClientSessionOptions
		if era != "" {
			so = &sdk.ClientSessionOptions{ProtocolVersion: era}
		}
		cs, err := sdk.NewClient(&sdk.Implementation{Name: "c", Version: "1"}, nil).Connect(ctx, &sdk.LoggingTransport{Transport: ct, Writer: &wire}, so)
		if err != nil {
			t.Fatal(err)
		}
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "lang_list", Arguments: map[string]any{}})
		if err != nil || !strings.Contains(toolText(res), "answered by a middleware") {
			t.Fatalf("%q: %v %+v", era, err, res)
		}
		has := strings.Contains(wire.String(), `"answered by a middleware"}],"resultType":"complete"`)
		if has != (era == "") {
			t.Errorf("era %q: resultType on the wire = %v:\n%s", era, has, wire.String())
		}
		cs.Close()
		ss.Close()
	}
}

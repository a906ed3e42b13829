package mcp

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/mcp/tool"
)

// newTestService builds a Service on a fresh temp workspace.
func newTestService(t testing.TB, opts ...Option) *Service {
	t.Helper()
	opts = append([]Option{WithWorkspaceRoot(t.TempDir())}, opts...)
	s, err := New(opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = s.Shutdown(ctx)
	})
	return s
}

// connect returns a real go-sdk client session talking to s over in-memory transports.
func connect(t *testing.T, s *Service) *sdk.ClientSession {
	t.Helper()
	ctx := context.Background()
	ct, st := sdk.NewInMemoryTransports()
	ss, err := s.Server().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test-client", Version: "1.0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); ss.Close() })
	return cs
}

// call invokes a tool and decodes its structured result into out (if non-nil). It returns the
// error text for isError results and fails the test on protocol errors.
func call(t *testing.T, cs *sdk.ClientSession, tool string, args any, out any) (errText string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error: %v", tool, err)
	}
	return resultOf(t, tool, res, out)
}

// resultOf is what call returns for a result: the error text of an isError result, else ""
// with the structured content decoded into out (if non-nil).
func resultOf(t *testing.T, tool string, res *sdk.CallToolResult, out any) (errText string) {
	t.Helper()
	if res.IsError {
		var b strings.Builder
		for _, c := range res.Content {
			if tc, ok := c.(*sdk.TextContent); ok {
				b.WriteString(tc.Text)
			}
		}
		return b.String()
	}
	if out != nil {
		raw, err := json.Marshal(res.StructuredContent)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("%s: decode %s: %v", tool, raw, err)
		}
	}
	return ""
}

// mustCall is call that fails the test on a tool error.
func mustCall(t *testing.T, cs *sdk.ClientSession, tool string, args any, out any) {
	t.Helper()
	if e := call(t, cs, tool, args, out); e != "" {
		t.Fatalf("%s(%v): tool error: %s", tool, args, e)
	}
}

// sleepSubsystem adds a tool that takes a while, for in-flight and shutdown tests. When
// started is set, each call sends on it as it begins, so a test knows the call is in flight.
type sleepSubsystem struct{ started chan<- struct{} }

func (sleepSubsystem) Name() string { return "test-sleep" }

type sleepInput struct {
	Ms int `json:"ms" jsonschema:"milliseconds to sleep"`
}
type sleepOutput struct {
	Slept int `json:"slept"`
}

func (ss sleepSubsystem) Tools() tool.Group {
	return tool.NewGroup("", tool.Func(sdk.Tool{Name: "test_sleep", Description: "sleep", Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		sleepSubsystem.sleep))
}

func (ss sleepSubsystem) sleep(ctx context.Context, _ *sdk.CallToolRequest, in sleepInput) (*sdk.CallToolResult, sleepOutput, error) {
	if ss.started != nil {
		ss.started <- struct{}{}
	}
	select {
	case <-time.After(time.Duration(in.Ms) * time.Millisecond):
	case <-ctx.Done():
		return nil, sleepOutput{}, ctx.Err()
	}
	return nil, sleepOutput{Slept: in.Ms}, nil
}

// writeTree creates files (slash-separated relative paths) under root.
func writeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for p, c := range files {
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// toolText is a result's text contents, joined ("" for no result).
func toolText(res *sdk.CallToolResult) string {
	if res == nil {
		return ""
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

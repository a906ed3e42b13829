package tool_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/mcp/tool"
)

type echoIn struct {
	Name  string `json:"name" jsonschema:"who to greet"`
	Count int    `json:"count,omitempty" jsonschema:"how many times"`
}

type echoOut struct {
	Greeting string `json:"greeting"`
}

type noArgs struct{}

// connect serves tools registered through tool.Add to a real go-sdk client over in-memory
// transports, so the test sees exactly what a client sees.
func connect(t *testing.T) *sdk.ClientSession {
	t.Helper()
	server := sdk.NewServer(&sdk.Implementation{Name: "t", Version: "0"}, nil)
	tool.Add(server, &sdk.Tool{Name: "echo", Annotations: tool.ReadOnly("Echo")},
		func(_ context.Context, _ *sdk.CallToolRequest, in echoIn) (*sdk.CallToolResult, echoOut, error) {
			if in.Name == "fail" {
				return nil, echoOut{}, errors.New("name: fail is not a name")
			}
			return nil, echoOut{Greeting: strings.Repeat("hi "+in.Name+" ", max(in.Count, 1))}, nil
		})
	tool.Add(server, &sdk.Tool{Name: "ping", Annotations: tool.ReadOnly("Ping")},
		func(context.Context, *sdk.CallToolRequest, noArgs) (*sdk.CallToolResult, echoOut, error) {
			return nil, echoOut{Greeting: "pong"}, nil
		})
	ct, st := sdk.NewInMemoryTransports()
	ss, err := server.Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "c", Version: "0"}, nil).Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func TestAdd(t *testing.T) {
	cs := connect(t)
	tests := []struct {
		name    string
		tool    string
		args    any
		wantErr bool
		want    string
	}{
		{"typed output", "echo", map[string]any{"name": "ada", "count": 2}, false, `{"greeting":"hi ada hi ada "}`},
		{"missing required", "echo", map[string]any{}, true, "name: required; see the tool's input schema"},
		{"wrong type", "echo", map[string]any{"name": 3}, true, "name: want a string, got a JSON number"},
		{"unknown key is ignored", "echo", map[string]any{"name": "a", "colour": 1}, false, `{"greeting":"hi a "}`},
		{"unknown key on a tool without arguments", "ping", map[string]any{"x": 1}, false, `{"greeting":"pong"}`},
		{"unknown key does not excuse a missing one", "echo", map[string]any{"colour": 1}, true, "name: required; see the tool's input schema"},
		{"no arguments at all", "ping", nil, false, `{"greeting":"pong"}`},
		{"handler error is a tool error", "echo", map[string]any{"name": "fail"}, true, "name: fail is not a name"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: tc.tool, Arguments: tc.args})
			if err != nil {
				t.Fatalf("protocol error (want a tool result): %v", err)
			}
			if res.IsError != tc.wantErr {
				t.Fatalf("IsError = %v, want %v", res.IsError, tc.wantErr)
			}
			text := res.Content[0].(*sdk.TextContent).Text
			if text != tc.want {
				t.Errorf("text = %q, want %q", text, tc.want)
			}
		})
	}
}

// TestAddIgnoresUnknownArguments: an argument the tool does not take (Gemini CLI sends
// wait_for_previous with every call) is ignored; the client is told in the result (a warning
// line naming it and the tool's arguments, and the _meta the audit reads) and in a logging
// notification.
func TestAddIgnoresUnknownArguments(t *testing.T) {
	server := sdk.NewServer(&sdk.Implementation{Name: "t", Version: "0"}, nil)
	tool.Add(server, &sdk.Tool{Name: "echo", Annotations: tool.ReadOnly("Echo")},
		func(_ context.Context, _ *sdk.CallToolRequest, in echoIn) (*sdk.CallToolResult, echoOut, error) {
			return nil, echoOut{Greeting: "hi " + in.Name}, nil
		})
	ct, st := sdk.NewInMemoryTransports()
	ss, err := server.Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	logs := make(chan *sdk.LoggingMessageParams, 4)
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "c", Version: "0"}, &sdk.ClientOptions{
		LoggingMessageHandler: func(_ context.Context, r *sdk.LoggingMessageRequest) { logs <- r.Params },
	}).Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if err := cs.SetLoggingLevel(context.Background(), &sdk.SetLoggingLevelParams{Level: "info"}); err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{"name": "ada", "wait_for_previous": true}})
	if err != nil || res.IsError {
		t.Fatalf("call with an extra argument failed: %v %+v", err, res)
	}
	if len(res.Content) != 2 {
		t.Fatalf("content = %d blocks, want the result and a warning", len(res.Content))
	}
	warn := res.Content[1].(*sdk.TextContent).Text
	if !strings.Contains(warn, "wait_for_previous") || !strings.Contains(warn, "count, name") {
		t.Errorf("warning = %q", warn)
	}
	if got, _ := res.Meta[tool.IgnoredMetaKey].([]any); len(got) != 1 || got[0] != "wait_for_previous" {
		t.Errorf("_meta = %v", res.Meta)
	}
	select {
	case l := <-logs:
		if l.Level != "warning" || !strings.Contains(fmt.Sprint(l.Data), "wait_for_previous") {
			t.Errorf("log = %+v", l)
		}
	case <-time.After(5 * time.Second):
		t.Error("no logging notification about the ignored argument")
	}
}

func TestAddSchemas(t *testing.T) {
	cs := connect(t)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range res.Tools {
		if tl.InputSchema == nil || tl.OutputSchema == nil {
			t.Errorf("%s: schemas missing", tl.Name)
		}
		if tl.Annotations == nil || !tl.Annotations.ReadOnlyHint {
			t.Errorf("%s: annotations lost", tl.Name)
		}
	}
}

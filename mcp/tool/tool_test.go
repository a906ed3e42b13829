package tool_test

import (
	"context"
	"errors"
	"strings"
	"testing"

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
		{"unknown key lists the known ones", "echo", map[string]any{"name": "a", "colour": 1}, true, "colour: unknown argument; this tool takes count, name"},
		{"unknown key on a tool without arguments", "ping", map[string]any{"x": 1}, true, "x: unknown argument; this tool takes no arguments (send {})"},
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

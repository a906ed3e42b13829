package tool_test

import (
	"context"
	"fmt"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/mcp/tool"
)

// greeter is a tool group's dependencies: what its handlers use, and nothing else of the hub.
type greeter struct{ greeting string }

// GreetInput is greet's arguments. A field holding a workspace path would be tagged
// workspace:"path", so the hub knows the tool works in the caller's workspace.
type GreetInput struct {
	Name string `json:"name" jsonschema:"who to greet"`
}

// GreetOutput is greet's result.
type GreetOutput struct {
	Text string `json:"text" jsonschema:"the greeting"`
}

func (g *greeter) greet(_ context.Context, _ *sdk.CallToolRequest, in GreetInput) (*sdk.CallToolResult, GreetOutput, error) {
	if in.Name == "" {
		return nil, GreetOutput{}, fmt.Errorf("name: required; say who to greet")
	}
	return nil, GreetOutput{Text: g.greeting + ", " + in.Name}, nil
}

// greeterGroup declares the group: a value that needs no server and no dependencies, so a
// catalogue, docs or schema snapshots can be made from it alone.
func greeterGroup() tool.Group {
	return tool.NewGroup("demo",
		tool.Func(sdk.Tool{Name: "greet", Description: "Greet someone.", Annotations: tool.ReadOnly("Greet")},
			(*greeter).greet),
	)
}

// Declaring a tool group and listing it without a server: the schemas come from the input and
// output types, the toolset from the group.
func ExampleNewGroup() {
	for _, def := range greeterGroup().Defs() {
		fmt.Println(def.Name, tool.ToolsetOf(def), def.Annotations.ReadOnlyHint)
	}
	// Output: greet demo true
}

// Binding a group to its dependencies and serving it: what a hub does with each configured
// group (mcp.New), here with a bare go-sdk server and an in-memory client.
func ExampleGroup_Bind() {
	ctx := context.Background()
	server := sdk.NewServer(&sdk.Implementation{Name: "example", Version: "0"}, nil)
	var inv tool.Inventory
	inv.Add(greeterGroup().Bind(&greeter{greeting: "Hello"})...)
	for _, t := range inv.Tools() {
		server.AddTool(t.Def, t.Handler)
	}

	ct, st := sdk.NewInMemoryTransports()
	ss, _ := server.Connect(ctx, st, nil)
	defer ss.Close()
	cs, _ := sdk.NewClient(&sdk.Implementation{Name: "client", Version: "0"}, nil).Connect(ctx, ct, nil)
	defer cs.Close()
	for _, args := range []map[string]any{{"name": "Ada"}, {}, {"name": 7}} {
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "greet", Arguments: args})
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Println(res.IsError, strings.TrimSpace(res.Content[0].(*sdk.TextContent).Text))
	}
	// Output:
	// false {"text":"Hello, Ada"}
	// true name: required; see the tool's input schema
	// true name: want a string, got a JSON number
}

package tool_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/mcp/tool"
)

type innerOut struct {
	Tags []string `json:"tags"`
}

type portableOut struct {
	List   []string            `json:"list"`
	Nested []innerOut          `json:"nested"`
	ByName map[string]innerOut `json:"by_name"`
	Ptr    *innerOut           `json:"ptr,omitempty"`
	Opt    []int               `json:"opt,omitempty"`
}

type portableIn struct {
	Args []string          `json:"args,omitempty"`
	Env  map[string]string `json:"env,omitempty"`
}

// TestPortableSchemasAndNoNullOutputs: slices and maps get single-typed schemas, every object
// (maps, empty inputs) gets properties, and nil slices and maps in the output arrive as [] and
// {} so the output matches its schema.
func TestPortableSchemasAndNoNullOutputs(t *testing.T) {
	server := sdk.NewServer(&sdk.Implementation{Name: "t", Version: "0"}, nil)
	tool.Add(server, &sdk.Tool{Name: "portable", Annotations: tool.ReadOnly("Portable")},
		func(context.Context, *sdk.CallToolRequest, portableIn) (*sdk.CallToolResult, portableOut, error) {
			return nil, portableOut{Nested: []innerOut{{}}}, nil
		})
	tool.Add(server, &sdk.Tool{Name: "empty", Annotations: tool.ReadOnly("Empty")},
		func(context.Context, *sdk.CallToolRequest, noArgs) (*sdk.CallToolResult, echoOut, error) {
			return nil, echoOut{}, nil
		})
	ct, st := sdk.NewInMemoryTransports()
	ss, err := server.Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "c", Version: "0"}, nil).Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	list, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range list.Tools {
		for _, schema := range []any{tl.InputSchema, tl.OutputSchema} {
			raw, _ := json.Marshal(schema)
			if strings.Contains(string(raw), `"null"`) {
				t.Errorf("%s: schema still has a null type: %s", tl.Name, raw)
			}
			if strings.Contains(string(raw), `"type":"object","`) && !strings.Contains(string(raw), `"properties"`) {
				t.Errorf("%s: object without properties: %s", tl.Name, raw)
			}
		}
		if tl.Name == "empty" {
			raw, _ := json.Marshal(tl.InputSchema)
			if !strings.Contains(string(raw), `"properties":{}`) {
				t.Errorf("empty input schema %s lacks properties: {}", raw)
			}
		}
		if tl.Name == "portable" {
			raw, _ := json.Marshal(tl.InputSchema)
			if !strings.Contains(string(raw), `"env":{"type":"object","properties":{},"additionalProperties":{"type":"string"}}`) &&
				!strings.Contains(string(raw), `"properties":{}`) {
				t.Errorf("map input schema lacks properties: %s", raw)
			}
		}
	}
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "portable", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("call: %v %+v", err, res)
	}
	text := res.Content[0].(*sdk.TextContent).Text
	if want := `{"list":[],"nested":[{"tags":[]}],"by_name":{}}`; text != want {
		t.Errorf("output %s, want %s", text, want)
	}
	raw, _ := json.Marshal(res.StructuredContent)
	if strings.Contains(string(raw), "null") {
		t.Errorf("structured output carries null: %s", raw)
	}
}

// TestJSONValueAcceptsEveryJSONValue: the schema a Go `any` gets lists types, but accepts every
// JSON value an `any` did (null and nested containers included), as a validating client sees it.
func TestJSONValueAcceptsEveryJSONValue(t *testing.T) {
	resolved, err := tool.JSONValue().Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, src := range []string{`"s"`, `0`, `-1.5e300`, `true`, `false`, `null`, `[]`, `{}`,
		`[1,"a",null,{"k":[{"deep":[null]}]}]`, `{"a":{"b":{"c":[1,2,{"d":null}]}},"e":""}`} {
		var v any
		if err := json.Unmarshal([]byte(src), &v); err != nil {
			t.Fatal(err)
		}
		if err := resolved.Validate(v); err != nil {
			t.Errorf("%s refused: %v", src, err)
		}
	}
}

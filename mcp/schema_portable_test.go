package mcp_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/switchboard-hub/switchboard/internal/process"
	"github.com/switchboard-hub/switchboard/internal/wshub"
	"github.com/switchboard-hub/switchboard/mcp"
	"github.com/switchboard-hub/switchboard/mcp/ide"
)

// TestEverySchemaPortable walks the input and output schema of every registered tool (every
// group, ide_* included) as clients receive them and checks the subset every model provider
// accepts: one "type" string per schema (Gemini rejects ["null","array"]) and "properties" on
// every object (OpenAI rejects objects without it).
func TestEverySchemaPortable(t *testing.T) {
	svc, err := mcp.New(
		mcp.WithWorkspaceRoot(t.TempDir()),
		mcp.WithProcessService(process.New(process.Options{})),
		mcp.WithWSHub(wshub.New(wshub.Options{})),
		mcp.WithSubsystem(ide.New(nil)),
	)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Shutdown(t.Context()) })
	tools := svc.Tools()
	if len(tools) < 30 {
		t.Fatalf("only %d tools registered; the walk would prove little", len(tools))
	}
	checked := 0
	for _, tl := range tools {
		for kind, schema := range map[string]any{"inputSchema": tl.InputSchema, "outputSchema": tl.OutputSchema} {
			if schema == nil {
				continue
			}
			raw, err := json.Marshal(schema)
			if err != nil {
				t.Fatal(err)
			}
			var v any
			if err := json.Unmarshal(raw, &v); err != nil {
				t.Fatal(err)
			}
			for _, p := range portabilityProblems(v, kind) {
				t.Errorf("%s: %s", tl.Name, p)
			}
			checked++
		}
	}
	t.Logf("%d schemas of %d tools checked", checked, len(tools))
}

func portabilityProblems(v any, path string) []string {
	var out []string
	switch s := v.(type) {
	case map[string]any:
		if typ, ok := s["type"]; ok {
			if _, single := typ.(string); !single {
				out = append(out, fmt.Sprintf("%s: type %v is not a single type", path, typ))
			}
		}
		if s["type"] == "object" {
			if _, ok := s["properties"].(map[string]any); !ok {
				out = append(out, fmt.Sprintf("%s: object schema without properties", path))
			}
		}
		for k, sub := range s {
			switch k {
			case "properties", "$defs", "definitions", "patternProperties":
				if m, ok := sub.(map[string]any); ok {
					for name, p := range m {
						out = append(out, portabilityProblems(p, path+"."+k+"."+name)...)
					}
				}
			case "items", "additionalProperties", "not", "additionalItems":
				out = append(out, portabilityProblems(sub, path+"."+k)...)
			case "anyOf", "oneOf", "allOf", "prefixItems":
				if l, ok := sub.([]any); ok {
					for i, p := range l {
						out = append(out, portabilityProblems(p, fmt.Sprintf("%s.%s[%d]", path, k, i))...)
					}
				}
			}
		}
	}
	return out
}

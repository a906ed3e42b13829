package mcp_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"testing"

	"github.com/switchboard-hub/switchboard/mcp/tool"
)

// TestEverySchemaPortable walks the input and output schema of every registered tool (every
// group, ide_* included) as clients receive them and checks the subset every model provider
// accepts: one "type" string per schema (Gemini rejects ["null","array"]), "properties" on
// every object (OpenAI rejects objects without it), a type on every property, array item and
// map member (Gemini CLI skipped tools with untyped ones, the MCP Inspector's strict mode flags
// them; anyOf branches that each have a type count), and an object with no properties either
// closed (additionalProperties false) or a map with typed members (Gemini flags an object that
// describes none of its members). A Go `any` is tool.JSONValue, whose containers' members are
// any JSON value again: the one untyped schema allowed.
func TestEverySchemaPortable(t *testing.T) {
	svc := everyGroup(t)
	tools := svc.Tools()
	if len(tools) < 60 {
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
			for _, p := range portabilityProblems(v, kind, jsonValue(t)) {
				t.Errorf("%s: %s", tl.Name, p)
			}
			checked++
		}
	}
	t.Logf("%d schemas of %d tools checked", checked, len(tools))
}

// jsonValue is tool.JSONValue as clients receive it, without a description: the schema of a Go
// `any`, recognised wherever it appears.
func jsonValue(t *testing.T) map[string]any {
	raw, err := json.Marshal(tool.JSONValue())
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// isJSONValue reports whether s is the JSON value schema, whatever its description.
func isJSONValue(s map[string]any, jsonValue map[string]any) bool {
	c := maps.Clone(s)
	delete(c, "description")
	return reflect.DeepEqual(c, jsonValue)
}

// typed reports whether a schema says what type its values have: a "type", or anyOf/oneOf/allOf
// branches that each do (Gemini CLI's rule).
func typed(v any) bool {
	s, ok := v.(map[string]any)
	if !ok {
		return false
	}
	if _, ok := s["type"].(string); ok {
		return true
	}
	for _, k := range []string{"anyOf", "oneOf", "allOf"} {
		if l, ok := s[k].([]any); ok && len(l) > 0 && !slices.ContainsFunc(l, func(b any) bool { return !typed(b) }) {
			return true
		}
	}
	return false
}

func portabilityProblems(v any, path string, jsonValue map[string]any) []string {
	var out []string
	s, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	if typ, ok := s["type"]; ok {
		if _, single := typ.(string); !single {
			out = append(out, fmt.Sprintf("%s: type %v is not a single type", path, typ))
		}
	}
	if isJSONValue(s, jsonValue) {
		// Its branches are single-typed and its containers' members are any JSON value again,
		// which a schema cannot type without a $ref to itself (see tool.JSONValue).
		return out
	}
	if s["type"] == "object" {
		props, ok := s["properties"].(map[string]any)
		if !ok {
			out = append(out, fmt.Sprintf("%s: object schema without properties", path))
		}
		if len(props) == 0 && s["additionalProperties"] != false && !typed(s["additionalProperties"]) {
			out = append(out, fmt.Sprintf("%s: object schema that describes no members (no properties, additionalProperties neither false nor typed)", path))
		}
		for name, p := range props {
			if !typed(p) {
				out = append(out, fmt.Sprintf("%s.properties.%s: property without a type", path, name))
			}
		}
		if ap, ok := s["additionalProperties"].(map[string]any); ok && len(props) == 0 && !typed(ap) {
			out = append(out, fmt.Sprintf("%s.additionalProperties: map members without a type", path))
		}
	}
	if s["type"] == "array" && !typed(s["items"]) {
		out = append(out, fmt.Sprintf("%s.items: array items without a type", path))
	}
	for k, sub := range s {
		switch k {
		case "properties", "$defs", "definitions", "patternProperties":
			if m, ok := sub.(map[string]any); ok {
				for name, p := range m {
					out = append(out, portabilityProblems(p, path+"."+k+"."+name, jsonValue)...)
				}
			}
		case "items", "additionalProperties", "not", "additionalItems":
			out = append(out, portabilityProblems(sub, path+"."+k, jsonValue)...)
		case "anyOf", "oneOf", "allOf", "prefixItems":
			if l, ok := sub.([]any); ok {
				for i, p := range l {
					out = append(out, portabilityProblems(p, fmt.Sprintf("%s.%s[%d]", path, k, i), jsonValue)...)
				}
			}
		}
	}
	return out
}

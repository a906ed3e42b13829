// Package tsdecl renders a tool as a TypeScript declaration from its JSON Schemas, the form a
// model writing a script reads best: `declare function file_read(args: {path: string; …}):
// Promise<{content: string; …}>;`. It reads schemas as plain JSON values (what any MCP server's
// tool carries), resolves local $refs, and falls back to `unknown` for what TypeScript cannot say
// or what nests too deep.
package tsdecl

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// maxDepth bounds nesting: deeper schemas (or recursive $refs) are `unknown`.
const maxDepth = 6

// Function declares a tool: its description as a doc comment, input as the one argument,
// output (nil: none declared) as the promised result. name that is not a JavaScript identifier
// (an upstream server whose name has a dash) is declared as a member of `tools`.
func Function(name, description string, input, output any) string {
	var b strings.Builder
	if d := strings.TrimSpace(description); d != "" {
		b.WriteString("/** ")
		b.WriteString(strings.ReplaceAll(oneLine(d), "*/", "*\\/"))
		b.WriteString(" */\n")
	}
	in := normalize(input)
	args := "{}"
	if in != nil {
		args = render(in, in, 0, true)
	}
	ret := "unknown"
	if out := normalize(output); out != nil {
		ret = render(out, out, 0, false)
	}
	if identifier.MatchString(name) {
		fmt.Fprintf(&b, "declare function %s(args: %s): Promise<%s>;", name, args, ret)
	} else {
		fmt.Fprintf(&b, "declare const tools: { %s(args: %s): Promise<%s> };", quote(name), args, ret)
	}
	return b.String()
}

var identifier = regexp.MustCompile(`^[A-Za-z_$][A-Za-z0-9_$]*$`)

// normalize turns a schema of any Go form (a *jsonschema.Schema, a map, raw JSON) into plain
// JSON values.
func normalize(schema any) map[string]any {
	if schema == nil {
		return nil
	}
	var raw []byte
	switch v := schema.(type) {
	case json.RawMessage:
		raw = v
	case []byte:
		raw = v
	default:
		var err error
		if raw, err = json.Marshal(schema); err != nil {
			return nil
		}
	}
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil {
		return nil
	}
	return m
}

// render is schema s as a TypeScript type; root holds the $defs a $ref points into. top: the
// arguments object, whose properties carry their descriptions as comments.
func render(s, root map[string]any, depth int, top bool) string {
	if depth > maxDepth {
		return "unknown"
	}
	if ref, ok := s["$ref"].(string); ok {
		if t := resolve(ref, root); t != nil {
			return render(t, root, depth+1, false)
		}
		return "unknown"
	}
	if c, ok := s["const"]; ok {
		return literal(c)
	}
	if e, ok := s["enum"].([]any); ok && len(e) > 0 {
		parts := make([]string, len(e))
		for i, v := range e {
			parts[i] = literal(v)
		}
		return strings.Join(parts, " | ")
	}
	for _, k := range []string{"anyOf", "oneOf"} {
		if alts, ok := s[k].([]any); ok && len(alts) > 0 {
			return union(alts, root, depth)
		}
	}
	if all, ok := s["allOf"].([]any); ok && len(all) == 1 {
		if m, ok := all[0].(map[string]any); ok {
			return render(m, root, depth+1, top)
		}
	}
	switch t := s["type"].(type) {
	case string:
		return renderType(t, s, root, depth, top)
	case []any:
		var parts []string
		for _, one := range t {
			if name, ok := one.(string); ok {
				parts = appendUnique(parts, renderType(name, s, root, depth, top))
			}
		}
		if len(parts) > 0 {
			return strings.Join(parts, " | ")
		}
	}
	if _, ok := s["properties"]; ok {
		return renderType("object", s, root, depth, top)
	}
	return "unknown"
}

func union(alts []any, root map[string]any, depth int) string {
	var parts []string
	for _, a := range alts {
		if m, ok := a.(map[string]any); ok {
			parts = appendUnique(parts, render(m, root, depth+1, false))
		}
	}
	if len(parts) == 0 || slices.Contains(parts, "unknown") {
		return "unknown"
	}
	return strings.Join(parts, " | ")
}

func appendUnique(parts []string, p string) []string {
	if slices.Contains(parts, p) {
		return parts
	}
	return append(parts, p)
}

func renderType(t string, s, root map[string]any, depth int, top bool) string {
	switch t {
	case "string":
		return "string"
	case "integer", "number":
		return "number"
	case "boolean":
		return "boolean"
	case "null":
		return "null"
	case "array":
		items, ok := s["items"].(map[string]any)
		if !ok {
			return "unknown[]"
		}
		it := render(items, root, depth+1, false)
		if strings.Contains(it, " | ") || strings.HasPrefix(it, "\"") {
			return "(" + it + ")[]"
		}
		return it + "[]"
	case "object":
		return object(s, root, depth, top)
	}
	return "unknown"
}

func object(s, root map[string]any, depth int, top bool) string {
	props, _ := s["properties"].(map[string]any)
	var required []string
	if r, ok := s["required"].([]any); ok {
		for _, v := range r {
			if n, ok := v.(string); ok {
				required = append(required, n)
			}
		}
	}
	names := make([]string, 0, len(props))
	for n := range props {
		names = append(names, n)
	}
	// Required first, then by name: what a caller must give is read first.
	slices.SortFunc(names, func(a, b string) int {
		ra, rb := slices.Contains(required, a), slices.Contains(required, b)
		if ra != rb {
			if ra {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
	var fields []string
	for _, n := range names {
		p, _ := props[n].(map[string]any)
		if p == nil {
			p = map[string]any{}
		}
		key := n
		if !identifier.MatchString(n) {
			key = quote(n)
		}
		if !slices.Contains(required, n) {
			key += "?"
		}
		field := key + ": " + render(p, root, depth+1, false)
		if d, ok := p["description"].(string); ok && top && strings.TrimSpace(d) != "" {
			field = "/** " + strings.ReplaceAll(oneLine(d), "*/", "*\\/") + " */ " + field
		}
		fields = append(fields, field)
	}
	if ap, ok := s["additionalProperties"].(map[string]any); ok && len(ap) > 0 {
		if len(fields) == 0 {
			return "Record<string, " + render(ap, root, depth+1, false) + ">"
		}
		fields = append(fields, "[key: string]: unknown")
	}
	if len(fields) == 0 {
		if ap, ok := s["additionalProperties"].(bool); ok && !ap {
			return "{}"
		}
		return "Record<string, unknown>"
	}
	if top {
		return "{\n  " + strings.Join(fields, ";\n  ") + ";\n}"
	}
	return "{ " + strings.Join(fields, "; ") + " }"
}

// resolve finds a local reference (#/$defs/X, #/definitions/X) in root.
func resolve(ref string, root map[string]any) map[string]any {
	for _, prefix := range []string{"#/$defs/", "#/definitions/"} {
		if name, ok := strings.CutPrefix(ref, prefix); ok {
			defs, _ := root[strings.Trim(prefix[1:], "/")].(map[string]any)
			if d, ok := defs[name].(map[string]any); ok {
				return d
			}
		}
	}
	if ref == "#" {
		return root
	}
	return nil
}

func literal(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return "unknown"
	}
	return string(b)
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

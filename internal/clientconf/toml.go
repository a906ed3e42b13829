package clientconf

import (
	"errors"
	"fmt"
	"maps"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"
)

// Codex keeps its servers in TOML (~/.codex/config.toml) as [mcp_servers.NAME] tables. There is
// no Go library that edits TOML while keeping comments and layout (BurntSushi/toml and
// pelletier/go-toml re-encode the whole document), so the edit is surgical on the text: the
// table is appended at the end, removed, or has its command and args lines rewritten, and
// BurntSushi/toml parses the result to check that everything else decodes as before.

func tomlParse(data []byte, what string) (map[string]any, error) {
	var m map[string]any
	if _, err := toml.Decode(string(data), &m); err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return nil, fmt.Errorf("%s does not parse: line %d: %s; fix the file (or restore it from a backup) and run this again", what, pe.Position.Line, pe.Message)
		}
		return nil, fmt.Errorf("%s does not parse: %v; fix the file and run this again", what, err)
	}
	if m == nil {
		m = map[string]any{}
	}
	return m, nil
}

// tomlInspect returns [mcp_servers.name] as decoded, or nil.
func tomlInspect(data []byte, name, what string) (map[string]any, error) {
	m, err := tomlParse(data, what)
	if err != nil {
		return nil, err
	}
	servers, _ := m["mcp_servers"].(map[string]any)
	e, _ := servers[name].(map[string]any)
	return e, nil
}

var tomlHeader = regexp.MustCompile(`^[ \t]*\[\[?[ \t]*([^\]]*?)[ \t]*\]\]?[ \t]*(#.*)?$`)

// tomlTable finds the [mcp_servers.name] table: the offsets of its header line and of the end of
// its last key line (sub-tables such as [mcp_servers.name.env] included; comments and blank
// lines after the last key belong to what follows).
func tomlTable(text, name string) (start, end int, found bool) {
	own := func(h string) bool {
		parts := strings.Split(h, ".")
		for i := range parts {
			parts[i] = strings.Trim(strings.TrimSpace(parts[i]), `"'`)
		}
		return len(parts) >= 2 && parts[0] == "mcp_servers" && parts[1] == name
	}
	off, in := 0, false
	for _, ln := range strings.SplitAfter(text, "\n") {
		body := strings.TrimRight(ln, "\r\n")
		trimmed := strings.TrimSpace(body)
		if m := tomlHeader.FindStringSubmatch(body); m != nil {
			if own(m[1]) {
				if !in && !found {
					start, in, found = off, true, true
				}
				end = off + len(ln)
			} else if in {
				in = false
			}
		} else if in && trimmed != "" && !strings.HasPrefix(trimmed, "#") {
			end = off + len(ln)
		}
		off += len(ln)
	}
	return start, end, found
}

// tomlString is a TOML basic string.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

func tomlArray(a []string) string {
	q := make([]string, len(a))
	for i, s := range a {
		q[i] = tomlString(s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

var (
	tomlCommandLine = regexp.MustCompile(`(?m)^([ \t]*command[ \t]*=[ \t]*)[^\n]*$`)
	tomlArgsLine    = regexp.MustCompile(`(?m)^([ \t]*args[ \t]*=[ \t]*)[^\n]*$`)
	// tomlEnvLine is an env written as a one-line inline table, the only form of env the edit
	// rewrites (to add the client token beside the user's variables).
	tomlBareKey = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)
	tomlEnvLine = regexp.MustCompile(`(?m)^([ \t]*env[ \t]*=[ \t]*)\{[^\n]*\}[ \t]*$`)
)

// tomlInline is env as a TOML inline table, in key order.
func tomlInline(env map[string]string) string {
	keys := slices.Sorted(maps.Keys(env))
	parts := make([]string, len(keys))
	for i, k := range keys {
		key := k
		if !tomlBareKey.MatchString(k) {
			key = tomlString(k)
		}
		parts[i] = key + " = " + tomlString(env[k])
	}
	return "{ " + strings.Join(parts, ", ") + " }"
}

// tomlSet makes [mcp_servers.name] hold command and args (e != nil) or removes the table.
func tomlSet(data []byte, name string, e *Entry, what string) ([]byte, error) {
	before, err := tomlParse(data, what)
	if err != nil {
		return nil, err
	}
	text := string(data)
	start, end, found := tomlTable(text, name)
	servers, _ := before["mcp_servers"].(map[string]any)
	_, defined := servers[name]
	if defined && !found {
		return nil, fmt.Errorf("%s defines mcp_servers.%s in a form switchboard does not edit (dotted keys or an inline table); edit it by hand", what, name)
	}
	var out string
	switch {
	case e == nil && !found:
		return data, nil
	case e == nil:
		out = text[:start] + text[end:]
		// the blank line connect put before the table
		if strings.HasSuffix(text[:start], "\n\n") && (end == len(text) || strings.HasPrefix(text[end:], "\n")) {
			out = text[:start-1] + text[end:]
		}
	case !found:
		block := "[mcp_servers." + name + "]\ncommand = " + tomlString(e.Command) + "\nargs = " + tomlArray(e.Args) + "\n"
		if len(e.Env) > 0 {
			block += "env = " + tomlInline(e.Env) + "\n"
		}
		switch {
		case strings.TrimSpace(text) == "":
			out = text + block
		case strings.HasSuffix(text, "\n"):
			out = text + "\n" + block
		default:
			out = text + "\n\n" + block
		}
	default:
		cur, _ := servers[name].(map[string]any)
		if entryMatches(cur, *e) && reflect.DeepEqual(cur["args"], toAny(e.Args)) && envHas(cur, e.Env) {
			return data, nil
		}
		// Only the table's own lines (up to its first sub-table) are rewritten.
		tbl := text[start:end]
		own := tbl
		if k := strings.Index(tbl[1:], "\n["); k >= 0 {
			own = tbl[:k+2]
		}
		nl := strings.IndexByte(own, '\n') + 1
		hdr, body := own[:nl], own[nl:]
		cmd := "command = " + tomlString(e.Command)
		args := "args = " + tomlArray(e.Args)
		if tomlCommandLine.MatchString(body) {
			body = tomlCommandLine.ReplaceAllLiteralString(body, cmd)
		} else {
			body = cmd + "\n" + body
		}
		if tomlArgsLine.MatchString(body) {
			body = tomlArgsLine.ReplaceAllLiteralString(body, args)
		} else {
			body = strings.Replace(body, cmd+"\n", cmd+"\n"+args+"\n", 1)
		}
		if len(e.Env) > 0 && !envHas(cur, e.Env) {
			env := "env = " + tomlInline(mergedEnv(cur, e.Env))
			switch {
			case tomlEnvLine.MatchString(body):
				body = tomlEnvLine.ReplaceAllLiteralString(body, env)
			case cur["env"] != nil:
				return nil, fmt.Errorf("%s keeps the env of [mcp_servers.%s] in a form switchboard does not edit (a table of its own or several lines); add %s to it by hand or write env as one inline table", what, name, TokenEnv)
			default:
				body = strings.Replace(body, args+"\n", args+"\n"+env+"\n", 1)
			}
		}
		out = text[:start] + hdr + body + tbl[len(own):] + text[end:]
	}
	after, err := tomlParse([]byte(out), what)
	if err != nil {
		return nil, fmt.Errorf("switchboard cannot edit %s safely (%v; a multi-line value?): edit [mcp_servers.%s] by hand", what, err, name)
	}
	got := pluck(after, name)
	was := pluck(before, name)
	if e != nil && !(entryMatches(got, *e) && reflect.DeepEqual(got["args"], toAny(e.Args)) && envHas(got, e.Env)) {
		return nil, fmt.Errorf("switchboard cannot edit %s safely: edit [mcp_servers.%s] by hand", what, name)
	}
	if e == nil && got != nil {
		return nil, fmt.Errorf("switchboard cannot remove [mcp_servers.%s] from %s safely: remove it by hand", name, what)
	}
	if e != nil && was != nil {
		// a replaced entry keeps its other keys (env, approval mode)
		for k := range was {
			if k == "env" && len(e.Env) > 0 {
				if !reflect.DeepEqual(toAnyMap(mergedEnv(was, e.Env)), got[k]) {
					return nil, fmt.Errorf("switchboard cannot edit %s safely: edit [mcp_servers.%s] by hand", what, name)
				}
				continue
			}
			if k != "command" && k != "args" {
				if !reflect.DeepEqual(was[k], got[k]) {
					return nil, fmt.Errorf("switchboard cannot edit %s safely: edit [mcp_servers.%s] by hand", what, name)
				}
			}
		}
	}
	if !reflect.DeepEqual(before, after) {
		return nil, fmt.Errorf("internal error: the edit of %s would change other settings; nothing written", what)
	}
	return []byte(out), nil
}

// pluck removes and returns mcp_servers.name (and an emptied mcp_servers) from a decoded file.
func pluck(m map[string]any, name string) map[string]any {
	servers, ok := m["mcp_servers"].(map[string]any)
	if !ok {
		return nil
	}
	e, _ := servers[name].(map[string]any)
	delete(servers, name)
	if len(servers) == 0 {
		delete(m, "mcp_servers")
	}
	return e
}

func toAny(a []string) []any {
	out := make([]any, len(a))
	for i, s := range a {
		out[i] = s
	}
	return out
}

// toAnyMap is m as decoded TOML or JSON holds it.
func toAnyMap(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

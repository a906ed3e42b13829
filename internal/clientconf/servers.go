package clientconf

import (
	"fmt"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"
	"github.com/tailscale/hujson"
)

// RawServer is one server entry of a client's file as decoded: JSON values as encoding/json
// decodes them (numbers are float64), TOML values as BurntSushi/toml does. Fields is nil when
// the entry is not an object.
type RawServer struct {
	Name   string
	Fields map[string]any
}

// Servers reads every server entry of a client's file (data: the file of one scope), in the
// file's order, for importing them elsewhere. A file the client cannot read is an error with the
// line, as for Plan. Switchboard's own entry (ServerName) is included: the caller decides.
func (c Client) Servers(data []byte, what string) ([]RawServer, error) {
	if c.format == formatTOML {
		return tomlServers(data, what)
	}
	return jsonServers(data, c.dialect, []string{c.container}, what)
}

// LocalServers reads Claude Code's local-scope servers for the project directory: the
// projects[project].mcpServers object of its user file (~/.claude.json), where `claude mcp add`
// puts a server by default. Other clients have no such scope: nil.
func (c Client) LocalServers(data []byte, project, what string) ([]RawServer, error) {
	if c.Name != "claude-code" || project == "" {
		return nil, nil
	}
	return jsonServers(data, c.dialect, []string{"projects", project, "mcpServers"}, what)
}

// jsonServers reads the members of the object at path (member names from the top level).
func jsonServers(data []byte, d jsonDialect, path []string, what string) ([]RawServer, error) {
	if len(strings.TrimSpace(string(data))) == 0 {
		return nil, nil
	}
	v, err := parseJSON(data, d, what)
	if err != nil {
		return nil, err
	}
	obj := v.Value.(*hujson.Object)
	for _, name := range path {
		i := member(obj, name)
		if i < 0 {
			return nil, nil
		}
		next, ok := obj.Members[i].Value.Value.(*hujson.Object)
		if !ok {
			return nil, fmt.Errorf("%s: %q is not an object; fix the file and run this again", what, strings.Join(path, "."))
		}
		obj = next
	}
	out := make([]RawServer, 0, len(obj.Members))
	for _, m := range obj.Members {
		name := m.Name.Value.(hujson.Literal).String()
		e, err := plain(m.Value)
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", what, name, err)
		}
		fields, _ := e.(map[string]any)
		out = append(out, RawServer{Name: name, Fields: fields})
	}
	return out, nil
}

// tomlServers reads Codex's [mcp_servers.NAME] tables in the order they are written.
func tomlServers(data []byte, what string) ([]RawServer, error) {
	m, err := tomlParse(data, what)
	if err != nil {
		return nil, err
	}
	servers, _ := m["mcp_servers"].(map[string]any)
	var order []string
	if md, err := toml.Decode(string(data), &map[string]any{}); err == nil {
		for _, k := range md.Keys() {
			if len(k) >= 2 && k[0] == "mcp_servers" && !slices.Contains(order, k[1]) {
				order = append(order, k[1])
			}
		}
	}
	var rest []string
	for name := range servers {
		if !slices.Contains(order, name) {
			rest = append(rest, name)
		}
	}
	slices.Sort(rest)
	out := make([]RawServer, 0, len(servers))
	for _, name := range append(order, rest...) {
		if e, ok := servers[name]; ok {
			fields, _ := e.(map[string]any)
			out = append(out, RawServer{Name: name, Fields: fields})
		}
	}
	return out, nil
}

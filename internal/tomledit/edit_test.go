package tomledit

import (
	"strings"
	"testing"
)

// realConfig is shaped like a config file a person keeps: a heading, top-level keys with
// comments after them, tables with commented-out settings, policy rules with comments between
// them and an args sub-table, and servers after them.
const realConfig = `# Switchboard — my settings
# (edited by hand, and by the dashboard)

workspace = "~/src/app"  # the project I work on
read_only = false

# Transports
[unix]
enabled = true

[tcp]
enabled = false   # on when I test with mcp-inspector
# addr = "0.0.0.0:9100"

[policy]
default = "allow"
ask_timeout = "60s"

# Rules: the first match wins.

# deletes need a yes
[[policy.rules]]
tool = "file_delete"
args = { path = "src/*" }
action = "ask"

# never let agents rm
[[policy.rules]]
tool = "exec"
action = "deny"
[policy.rules.args]
command = "rm"

[[policy.rules]]
tool = "git_*"
client = "cursor"
action = "allow"
# action = "ask"

[roots]
allow = [
  "~/src",  # projects
  "/srv/shared",
]

[[servers]]
name = "memory"
command = "npx"
args = ["-y", "@modelcontextprotocol/server-memory"]
`

func TestSet(t *testing.T) {
	cases := []struct {
		name  string
		file  string
		table []string
		key   string
		value any
		want  string // the file after, or "same" for unchanged
	}{
		{"value in place keeps its comment", realConfig, []string{"tcp"}, "enabled", true,
			strings.Replace(realConfig, "enabled = false   # on when", "enabled = true   # on when", 1)},
		{"same value leaves the file alone", realConfig, []string{"unix"}, "enabled", true, "same"},
		{"new key after the table's last key, before its comment", realConfig, []string{"tcp"}, "addr", "127.0.0.1:9200",
			strings.Replace(realConfig, "on when I test with mcp-inspector\n", "on when I test with mcp-inspector\naddr = \"127.0.0.1:9200\"\n", 1)},
		{"new top-level key after the last one", realConfig, nil, "toolsets", []string{"files", "git"},
			strings.Replace(realConfig, "read_only = false\n", "read_only = false\ntoolsets = [\"files\", \"git\"]\n", 1)},
		{"top-level key replaced, comment kept", realConfig, nil, "workspace", "/home/me/other",
			strings.Replace(realConfig, `workspace = "~/src/app"  #`, `workspace = "/home/me/other"  #`, 1)},
		{"array replaced", realConfig, []string{"roots"}, "allow", []string{"~/work"},
			strings.Replace(realConfig, "allow = [\n  \"~/src\",  # projects\n  \"/srv/shared\",\n]\n", "allow = [\"~/work\"]\n", 1)},
		{"new table at the end", realConfig, []string{"desktop"}, "autostart", true,
			realConfig + "\n[desktop]\nautostart = true\n"},
		{"a table without keys gets it after its header", "# x\n[rag]\n# backend = \"qdrant\"\n\n[web]\n", []string{"rag"}, "backend", "embedded",
			"# x\n[rag]\nbackend = \"embedded\"\n# backend = \"qdrant\"\n\n[web]\n"},
		{"top-level key without top-level keys goes above the first table and its comments",
			"# heading\n\n# TCP\n[tcp]\nenabled = true\n", nil, "toolsets", []string{"files"},
			"# heading\n\ntoolsets = [\"files\"]\n\n# TCP\n[tcp]\nenabled = true\n"},
		{"empty file", "", []string{"tcp"}, "enabled", true, "[tcp]\nenabled = true\n"},
		{"no newline at the end", "[tcp]\nenabled = false", []string{"tcp"}, "addr", "127.0.0.1:1", "[tcp]\nenabled = false\naddr = \"127.0.0.1:1\"\n"},
		{"CRLF file", "[tcp]\r\nenabled = false\r\n", []string{"tcp"}, "addr", "127.0.0.1:1", "[tcp]\r\nenabled = false\r\naddr = \"127.0.0.1:1\"\r\n"},
		{"indented keys stay indented", "[ml]\n  judge_backend = \"a\"\n", []string{"ml"}, "default_backend", "b", "[ml]\n  judge_backend = \"a\"\n  default_backend = \"b\"\n"},
		{"super-table after its array of tables", "[[ml.backends]]\nname = \"gpu\"\n", []string{"ml"}, "default_backend", "gpu",
			"[[ml.backends]]\nname = \"gpu\"\n\n[ml]\ndefault_backend = \"gpu\"\n"},
		{"long list one per line", "", nil, "toolsets", []string{"files", "process", "ws", "metrics", "rag", "ml", "browser", "ide", "git", "web", "memory"},
			"toolsets = [\n  \"files\",\n  \"process\",\n  \"ws\",\n  \"metrics\",\n  \"rag\",\n  \"ml\",\n  \"browser\",\n  \"ide\",\n  \"git\",\n  \"web\",\n  \"memory\",\n]\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Set([]byte(c.file), c.table, c.key, c.value)
			if err != nil {
				t.Fatal(err)
			}
			want := c.want
			if want == "same" {
				want = c.file
			}
			if string(got) != want {
				t.Errorf("got:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}

func TestDelete(t *testing.T) {
	got, err := Delete([]byte(realConfig), nil, "read_only")
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.Replace(realConfig, "read_only = false\n", "", 1); string(got) != want {
		t.Errorf("got:\n%s", got)
	}
	got, err = Delete([]byte(realConfig), []string{"tcp"}, "enabled")
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.Replace(realConfig, "enabled = false   # on when I test with mcp-inspector\n", "", 1); string(got) != want {
		t.Errorf("got:\n%s", got)
	}
	if got, err := Delete([]byte(realConfig), []string{"rag"}, "backend"); err != nil || string(got) != realConfig {
		t.Errorf("absent key: %v\n%s", err, got)
	}
}

func TestReplaceTables(t *testing.T) {
	rules := []string{"policy", "rules"}
	del := Entry{Origin: 0, Pairs: []Pair{{"tool", "file_delete"}, {"args", map[string]string{"path": "src/*"}}, {"action", "ask"}}}
	rm := Entry{Origin: 1, Pairs: []Pair{{"tool", "exec"}, {"args", map[string]string{"command": "rm"}}, {"action", "deny"}}}
	git := Entry{Origin: 2, Pairs: []Pair{{"tool", "git_*"}, {"client", "cursor"}, {"action", "allow"}}}
	rule1 := "# deletes need a yes\n[[policy.rules]]\ntool = \"file_delete\"\nargs = { path = \"src/*\" }\naction = \"ask\"\n"
	rule2 := "# never let agents rm\n[[policy.rules]]\ntool = \"exec\"\naction = \"deny\"\n[policy.rules.args]\ncommand = \"rm\"\n"
	rule3 := "[[policy.rules]]\ntool = \"git_*\"\nclient = \"cursor\"\naction = \"allow\"\n# action = \"ask\"\n"
	list := "# Rules: the first match wins.\n\n" + rule1 + "\n" + rule2 + "\n" + rule3
	if !strings.Contains(realConfig, list) {
		t.Fatal("test file changed: rules not found")
	}
	newRule := "[[policy.rules]]\ntool = \"web_fetch\"\naction = \"deny\"\n"
	cases := []struct {
		name    string
		file    string
		entries []Entry
		want    string
	}{
		{"unchanged list is the same text", realConfig, []Entry{del, rm, git}, realConfig},
		{"reorder moves each entry with its comments", realConfig, []Entry{rm, del, git},
			strings.Replace(realConfig, list, "# Rules: the first match wins.\n\n"+rule2+"\n"+rule1+"\n"+rule3, 1)},
		{"reorder without origins matches equal entries", realConfig, []Entry{
			{Origin: -1, Pairs: git.Pairs}, {Origin: -1, Pairs: del.Pairs}, {Origin: -1, Pairs: rm.Pairs}},
			strings.Replace(realConfig, list, "# Rules: the first match wins.\n\n"+rule3+"\n"+rule1+"\n"+rule2, 1)},
		{"a new entry is written, the others kept", realConfig, []Entry{del, {Origin: -1, Pairs: []Pair{{"tool", "web_fetch"}, {"action", "deny"}}}, rm, git},
			strings.Replace(realConfig, list, "# Rules: the first match wins.\n\n"+rule1+"\n"+newRule+"\n"+rule2+"\n"+rule3, 1)},
		{"an edited entry keeps the comment above it", realConfig, []Entry{del, {Origin: 1, Pairs: []Pair{{"tool", "exec"}, {"args", map[string]string{"command": "rm*"}}, {"action", "deny"}}}, git},
			strings.Replace(realConfig, rule2, "# never let agents rm\n[[policy.rules]]\ntool = \"exec\"\nargs = { command = \"rm*\" }\naction = \"deny\"\n", 1)},
		{"removing an entry takes its comments and one blank line", realConfig, []Entry{del, git},
			strings.Replace(realConfig, rule2+"\n", "", 1)},
		{"removing all leaves the heading", realConfig, nil,
			strings.Replace(realConfig, list+"\n", "# Rules: the first match wins.\n\n", 1)},
		{"a changed first entry keeps the comment above it", realConfig, []Entry{{Origin: 0, Pairs: []Pair{{"tool", "file_delete"}, {"action", "deny"}}}, rm, git},
			strings.Replace(realConfig, rule1, "# deletes need a yes\n[[policy.rules]]\ntool = \"file_delete\"\naction = \"deny\"\n", 1)},
		{"first rules go after [policy]", "[policy]\ndefault = \"ask\"\n# ask_timeout = \"1m\"\n\n[rag]\nbackend = \"embedded\"\n",
			[]Entry{{Origin: -1, Pairs: []Pair{{"tool", "web_fetch"}, {"action", "deny"}}}},
			"[policy]\ndefault = \"ask\"\n# ask_timeout = \"1m\"\n\n" + newRule + "\n[rag]\nbackend = \"embedded\"\n"},
		{"first rules without [policy] go at the end", "workspace = \"/w\"\n",
			[]Entry{{Origin: -1, Pairs: []Pair{{"tool", "web_fetch"}, {"action", "deny"}}}},
			"workspace = \"/w\"\n\n" + newRule},
		{"compact lists stay compact", "[[policy.rules]]\ntool = \"a\"\naction = \"deny\"\n[[policy.rules]]\ntool = \"b\"\naction = \"ask\"\n",
			[]Entry{{Origin: 1, Pairs: []Pair{{"tool", "b"}, {"action", "ask"}}}, {Origin: 0, Pairs: []Pair{{"tool", "a"}, {"action", "deny"}}}},
			"[[policy.rules]]\ntool = \"b\"\naction = \"ask\"\n[[policy.rules]]\ntool = \"a\"\naction = \"deny\"\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := ReplaceTables([]byte(c.file), rules, c.entries)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != c.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, c.want)
			}
		})
	}
}

// TestRefused: forms the edits cannot follow are refused with the line and what to do, and
// nothing is returned.
func TestRefused(t *testing.T) {
	cases := []struct {
		name, file string
		edit       func([]byte) ([]byte, error)
		want       string
	}{
		{"dotted key at the top", "tcp.enabled = false\n", func(b []byte) ([]byte, error) { return Set(b, []string{"tcp"}, "addr", "x:1") },
			"line 1: tcp is written as the value tcp.enabled"},
		{"inline table", "tcp = { enabled = false }\n", func(b []byte) ([]byte, error) { return Set(b, []string{"tcp"}, "enabled", true) },
			"line 1: tcp is written as the value tcp"},
		{"inline array of rules", "[policy]\nrules = [{ tool = \"a\", action = \"deny\" }]\n", func(b []byte) ([]byte, error) {
			return ReplaceTables(b, []string{"policy", "rules"}, nil)
		}, "rewrite it so"},
		{"sub-table away from its entry", "[[policy.rules]]\ntool = \"a\"\naction = \"deny\"\n[rag]\nx = 1\n[policy.rules.args]\nc = \"d\"\n", func(b []byte) ([]byte, error) {
			return ReplaceTables(b, []string{"policy", "rules"}, nil)
		}, "line 6: [policy.rules.args] is away from its [[policy.rules]] entry"},
		{"syntax error", "[tcp\n", func(b []byte) ([]byte, error) { return Set(b, []string{"tcp"}, "enabled", true) },
			"does not parse: line 2"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, err := c.edit([]byte(c.file))
			if err == nil || !strings.Contains(err.Error(), c.want) || out != nil {
				t.Fatalf("got %q, %v; want an error containing %q", out, err, c.want)
			}
		})
	}
}

// FuzzEdits: on any file BurntSushi/toml accepts, the edits never panic, and what they return
// decodes with the change made (the edits check that themselves; this makes sure the check and
// the text agree on files nobody thought of).
func FuzzEdits(f *testing.F) {
	for _, seed := range []string{realConfig, "", "a = 1", "[tcp]\r\nenabled = true\r\n", "[[policy.rules]]\ntool = 'a'\naction = \"deny\"\n[policy.rules.args]\nx = \"\"\"y\"\"\"\n",
		"# c\n[policy]\n[[policy.rules]]\n[[policy.rules]]\ntool = \"b\"\n"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, file string) {
		m, err := decodeMap([]byte(file))
		if err != nil {
			return
		}
		if out, err := Set([]byte(file), []string{"tcp"}, "enabled", true); err == nil {
			if got, _ := decodeMap(out); got == nil || lookupOr(got, "tcp", "enabled") != true {
				t.Fatalf("set: tcp.enabled not true in %q", out)
			}
		}
		if out, err := Delete([]byte(file), nil, "a"); err == nil {
			if got, _ := decodeMap(out); got == nil || got["a"] != nil {
				t.Fatalf("delete: a still in %q", out)
			}
		}
		rules, _ := lookup(m, []string{"policy", "rules"})
		list, _ := rules.([]map[string]any)
		var entries []Entry
		for i := len(list) - 1; i >= 0; i-- { // reversed
			entries = append(entries, Entry{Origin: i, Pairs: []Pair{{"tool", "t"}, {"action", "deny"}}})
		}
		entries = append(entries, Entry{Origin: -1, Pairs: []Pair{{"tool", "new"}, {"action", "ask"}}})
		if out, err := ReplaceTables([]byte(file), []string{"policy", "rules"}, entries); err == nil {
			got, _ := decodeMap(out)
			v, _ := lookup(got, []string{"policy", "rules"})
			if l, _ := v.([]map[string]any); len(l) != len(entries) {
				t.Fatalf("replace: %d rules in %q, want %d", len(l), out, len(entries))
			}
		}
	})
}

func lookupOr(m map[string]any, path ...string) any {
	v, _ := lookup(m, path)
	return v
}

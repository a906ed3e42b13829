package config

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/switchboard-hub/switchboard/internal/policy"
)

// settingsFile is a config file as a person keeps it: a heading, comments on keys and tables, a
// commented-out setting, rules with a comment between them, RAG and ML sections, a server.
const settingsFile = `# Switchboard — my settings

workspace = "/srv/app"  # the project I work on

# Transports
[unix]
enabled = true

[tcp]
enabled = false   # on when I test with mcp-inspector
# addr = "0.0.0.0:9100"

[policy]
default = "allow"

# deletes need a yes
[[policy.rules]]
tool = "file_delete"
args = { path = "src/*" }
action = "ask"

# never rm
[[policy.rules]]
tool = "exec"
args = { command = "rm" }
action = "deny"

[rag]
embedder = "offline"  # no network

[ml]
default_backend = "gpu"

[[ml.backends]]
name = "gpu"
kind = "openai"
url = "http://gpu-box:8000/v1"  # the lab machine

[[servers]]
name = "graph"
command = "npx"
`

// loadText writes text as a config file and loads it as the hub would.
func loadText(t *testing.T, text []byte) Config {
	t.Helper()
	p := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(p, text, 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := Load(p)
	if err != nil {
		t.Fatalf("the edited file does not load: %v\n%s", err, text)
	}
	return c
}

func TestEditTransport(t *testing.T) {
	t.Setenv("MCP_ADDR", "")
	cases := []struct {
		name, file string
		transport  string
		enabled    bool
		addr       string
		want       string // the file after; "same" for unchanged
	}{
		{"tcp on keeps the comment", settingsFile, "tcp", true, "",
			strings.Replace(settingsFile, "enabled = false   # on when", "enabled = true   # on when", 1)},
		{"tcp on with an address", settingsFile, "tcp", true, "127.0.0.1:9200",
			strings.Replace(settingsFile, "enabled = false   # on when I test with mcp-inspector\n", "enabled = true   # on when I test with mcp-inspector\naddr = \"127.0.0.1:9200\"\n", 1)},
		{"off where the file says nothing writes nothing", "# mine\n", "http", false, "", "same"},
		{"the default address where the file says nothing writes nothing", "# mine\n", "http", false, DefaultHTTPAddr, "same"},
		{"on where the file says nothing adds the table", "# mine\n", "http", true, "", "# mine\n\n[http]\nenabled = true\n"},
		{"unix off", settingsFile, "unix", false, "", strings.Replace(settingsFile, "[unix]\nenabled = true", "[unix]\nenabled = false", 1)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := EditTransport([]byte(c.file), c.transport, c.enabled, c.addr)
			if err != nil {
				t.Fatal(err)
			}
			want := c.want
			if want == "same" {
				want = c.file
			}
			if string(got) != want {
				t.Fatalf("got:\n%s\nwant:\n%s", got, want)
			}
		})
	}
	cfg := loadText(t, must(EditTransport([]byte(settingsFile), "tcp", true, "127.0.0.1:9200")))
	if !cfg.TCP.Enabled || cfg.TCP.Addr != "127.0.0.1:9200" {
		t.Errorf("loaded tcp = %+v", cfg.TCP)
	}
}

func TestEditRefusesBadValues(t *testing.T) {
	ws := t.TempDir()
	file := filepath.Join(ws, "a-file")
	os.WriteFile(file, nil, 0o600)
	rule := func(tool, action string) PolicyRule {
		return PolicyRule{RuleSpec: policy.RuleSpec{Tool: tool, Action: action}, Origin: -1}
	}
	cases := []struct {
		name string
		edit func([]byte) ([]byte, error)
		want string
	}{
		{"tcp address without a port", func(b []byte) ([]byte, error) { return EditTransport(b, "tcp", true, "localhost") },
			`tcp.addr: "localhost" is not host:port; write it like "127.0.0.1:9100"`},
		{"http port out of range", func(b []byte) ([]byte, error) { return EditTransport(b, "http", true, "127.0.0.1:70000") },
			`http.addr: "127.0.0.1:70000": the port must be a number from 0 to 65535`},
		{"relative socket path", func(b []byte) ([]byte, error) { return EditTransport(b, "unix", true, "run/mcp.sock") },
			`unix.path: "run/mcp.sock" is relative`},
		{"the ws transport", func(b []byte) ([]byte, error) { return EditTransport(b, "ws", true, "") },
			`transports: "ws" is not a transport the config file starts`},
		{"relative workspace", func(b []byte) ([]byte, error) { return EditWorkspace(b, "src/app") },
			`workspace: "src/app" is relative`},
		{"missing workspace", func(b []byte) ([]byte, error) { return EditWorkspace(b, filepath.Join(ws, "nope")) },
			`does not exist; create it first`},
		{"workspace is a file", func(b []byte) ([]byte, error) { return EditWorkspace(b, file) }, `is not a directory`},
		{"bad glob", func(b []byte) ([]byte, error) {
			return EditPolicy(b, PolicyEdit{Rules: []PolicyRule{rule("file_*", "deny"), rule("exec[", "deny")}})
		}, "policy.rules[2].tool: "},
		{"bad action", func(b []byte) ([]byte, error) {
			return EditPolicy(b, PolicyEdit{Rules: []PolicyRule{rule("exec", "block")}})
		}, `policy.rules[1].action: "block" is not an action; use "allow", "ask" or "deny"`},
		{"bad default and timeout", func(b []byte) ([]byte, error) {
			return EditPolicy(b, PolicyEdit{Default: "maybe", AskTimeout: "soon"})
		}, `policy.default: "maybe" is not an action`},
		{"relative root", func(b []byte) ([]byte, error) { return EditPolicy(b, PolicyEdit{RootsAllow: []string{"src"}}) },
			`roots.allow[1]: "src" is relative`},
		{"backend kind", func(b []byte) ([]byte, error) {
			return EditML(b, MLEdit{Backends: []MLBackendEdit{{MLBackend: MLBackend{Name: "x", Kind: "llama", URL: "http://x:1"}, Origin: -1}}})
		}, `ml.backends[1].kind: "llama" is not a backend kind; use ollama or openai`},
		{"backend url", func(b []byte) ([]byte, error) {
			return EditML(b, MLEdit{Backends: []MLBackendEdit{{MLBackend: MLBackend{Name: "x", Kind: "ollama", URL: "gpu-box"}, Origin: -1}}})
		}, `ml.backends[1].url: "gpu-box" is not an http(s) URL`},
		{"unknown default backend", func(b []byte) ([]byte, error) { return EditML(b, MLEdit{DefaultBackend: "gpu"}) },
			`ml.default_backend: "gpu" is not a backend; available: ollama`},
		{"rag backend", func(b []byte) ([]byte, error) { return EditRAG(b, RAG{Backend: "chroma"}) },
			`rag.backend: "chroma" is not a backend; use "embedded" or "qdrant"`},
		{"rag dir", func(b []byte) ([]byte, error) { return EditRAG(b, RAG{Dir: "rag"}) }, `rag.dir: "rag" is relative`},
		{"empty toolset name", func(b []byte) ([]byte, error) { return EditToolsets(b, []string{"files", " "}) }, `toolsets[2]: empty`},
	}
	t.Setenv("OPENAI_BASE_URL", "")
	t.Setenv("OPENAI_API_KEY", "")
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, err := c.edit([]byte(settingsFile))
			if err == nil || !strings.Contains(err.Error(), c.want) || out != nil {
				t.Fatalf("got %v (%d bytes); want an error containing %q", err, len(out), c.want)
			}
		})
	}
}

func TestEditPolicy(t *testing.T) {
	rm := PolicyRule{RuleSpec: policy.RuleSpec{Tool: "exec", Args: map[string]string{"command": "rm"}, Action: "deny"}, Origin: 1}
	del := PolicyRule{RuleSpec: policy.RuleSpec{Tool: "file_delete", Args: map[string]string{"path": "src/*"}, Action: "ask"}, Origin: 0}
	fetch := PolicyRule{RuleSpec: policy.RuleSpec{Tool: "web_fetch", Client: "cursor*", Action: "deny"}, Origin: -1}
	out, err := EditPolicy([]byte(settingsFile), PolicyEdit{Default: "ask", AskTimeout: "60s", Rules: []PolicyRule{rm, fetch, del}, RootsAllow: []string{"/srv"}})
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(settingsFile, `[policy]
default = "allow"

# deletes need a yes
[[policy.rules]]
tool = "file_delete"
args = { path = "src/*" }
action = "ask"

# never rm
[[policy.rules]]
tool = "exec"
args = { command = "rm" }
action = "deny"
`, `[policy]
default = "ask"
ask_timeout = "60s"

# never rm
[[policy.rules]]
tool = "exec"
args = { command = "rm" }
action = "deny"

[[policy.rules]]
tool = "web_fetch"
client = "cursor*"
action = "deny"

# deletes need a yes
[[policy.rules]]
tool = "file_delete"
args = { path = "src/*" }
action = "ask"
`, 1) + "\n[roots]\nallow = [\"/srv\"]\n"
	if string(out) != want {
		t.Fatalf("got:\n%s\nwant:\n%s", out, want)
	}
	cfg := loadText(t, out)
	if cfg.Policy.Default != "ask" || len(cfg.Policy.Rules) != 3 || cfg.Policy.Rules[1].Tool != "web_fetch" || !reflect.DeepEqual(cfg.Roots.Allow, []string{"/srv"}) {
		t.Fatalf("loaded %+v %+v", cfg.Policy, cfg.Roots)
	}
	// Back to the defaults: the keys go, the rules go with their comments, [policy] keeps its header.
	back, err := EditPolicy(out, PolicyEdit{Default: "allow"})
	if err != nil {
		t.Fatal(err)
	}
	if c := loadText(t, back); len(c.Policy.Rules) != 0 || c.Policy.AskTimeout != "" || len(c.Roots.Allow) != 0 ||
		!strings.Contains(string(back), "[policy]\ndefault = \"allow\"\n\n[rag]") {
		t.Fatalf("after removing everything:\n%s", back)
	}
}

func TestEditMLAndRAG(t *testing.T) {
	t.Setenv("OPENAI_BASE_URL", "")
	t.Setenv("OPENAI_API_KEY", "")
	gpu := MLBackendEdit{MLBackend: MLBackend{Name: "gpu", Kind: "openai", URL: "http://gpu-box:8000/v1"}, Origin: 0}
	local := MLBackendEdit{MLBackend: MLBackend{Name: "local", Kind: "ollama", URL: "http://127.0.0.1:11434", Model: "llama3.2", Endpoint: "generate"}, Origin: -1}
	out, err := EditML([]byte(settingsFile), MLEdit{DefaultBackend: "local", JudgeBackend: "gpu", Backends: []MLBackendEdit{gpu, local}})
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(settingsFile, `[ml]
default_backend = "gpu"

[[ml.backends]]
name = "gpu"
kind = "openai"
url = "http://gpu-box:8000/v1"  # the lab machine
`, `[ml]
default_backend = "local"
judge_backend = "gpu"

[[ml.backends]]
name = "gpu"
kind = "openai"
url = "http://gpu-box:8000/v1"  # the lab machine

[[ml.backends]]
name = "local"
kind = "ollama"
url = "http://127.0.0.1:11434"
model = "llama3.2"
endpoint = "generate"
`, 1)
	if string(out) != want {
		t.Fatalf("got:\n%s\nwant:\n%s", out, want)
	}
	out, err = EditRAG(out, RAG{Backend: "qdrant", URL: "localhost:6334", Embedder: "offline", Collection: "hostuk-docs"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "[rag]\nembedder = \"offline\"  # no network\nbackend = \"qdrant\"\nurl = \"localhost:6334\"\n\n") {
		t.Fatalf("rag:\n%s", out)
	}
	cfg := loadText(t, out)
	if cfg.RAG.Backend != "qdrant" || cfg.ML.DefaultBackend != "local" || len(cfg.ML.Backends) != 2 || cfg.ML.Backends[1].Endpoint != "generate" {
		t.Fatalf("loaded %+v %+v", cfg.RAG, cfg.ML)
	}
}

func TestEditToolsetsWorkspaceAutostart(t *testing.T) {
	ws := t.TempDir()
	out := must(EditToolsets([]byte(settingsFile), []string{"files", "git"}))
	out = must(EditWorkspace(out, ws))
	out = must(EditAutostart(out, false))
	cfg := loadText(t, out)
	if !reflect.DeepEqual(cfg.Toolsets, []string{"files", "git"}) || cfg.Workspace != ws || cfg.Desktop.Autostart == nil || *cfg.Desktop.Autostart {
		t.Fatalf("loaded %+v %q %v\n%s", cfg.Toolsets, cfg.Workspace, cfg.Desktop.Autostart, out)
	}
	if !strings.HasPrefix(string(out), "# Switchboard — my settings\n\nworkspace = \""+ws+"\"  # the project I work on\ntoolsets = [\"files\", \"git\"]\n") {
		t.Fatalf("top of the file:\n%s", out)
	}
	back := must(EditWorkspace(must(EditToolsets(out, nil)), ""))
	if c := loadText(t, back); len(c.Toolsets) != 0 || c.Workspace != "" {
		t.Fatalf("not removed:\n%s", back)
	}
}

func TestReadFileAndOverrides(t *testing.T) {
	p := filepath.Join(t.TempDir(), "config.toml")
	os.WriteFile(p, []byte("[tcp]\naddr = \"127.0.0.1:9300\"\n"), 0o600)
	t.Setenv("MCP_ADDR", "127.0.0.1:9999")
	t.Setenv("SWITCHBOARD_TOOLSETS", "")
	t.Setenv("SWITCHBOARD_FETCH_ALLOW", "intranet.example, 10.0.0.0/8")
	c, data, err := ReadFile(p)
	if err != nil || c.TCP.Addr != "127.0.0.1:9300" || len(data) == 0 {
		t.Fatalf("ReadFile: %v %q", err, c.TCP.Addr)
	}
	if o := EnvOverrides(); !slices_contains(o, EnvOverride{"MCP_ADDR", "tcp.addr", false}) || slices_contains(o, EnvOverride{"SWITCHBOARD_TOOLSETS", "toolsets", false}) ||
		!slices_contains(o, EnvOverride{"SWITCHBOARD_FETCH_ALLOW", "web.allow", true}) {
		t.Fatalf("overrides: %v", o)
	}
	if got := ReadEnv().FetchAllowList(); !reflect.DeepEqual(got, []string{"intranet.example", "10.0.0.0/8"}) {
		t.Fatalf("FetchAllowList = %q", got)
	}
	if c, data, err := ReadFile(filepath.Join(t.TempDir(), "none.toml")); err != nil || data != nil || c.TCP.Addr != DefaultTCPAddr {
		t.Fatalf("absent file: %v %v %q", err, data, c.TCP.Addr)
	}
}

func slices_contains(list []EnvOverride, o EnvOverride) bool {
	for _, x := range list {
		if x == o {
			return true
		}
	}
	return false
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

// TestToolsetsFollowServers: the toolsets key names servers as toolsets, so an edit of [[servers]]
// takes it along: a server added joins a key that lists toolsets one by one, a server removed
// leaves it (a stale name would stop the next start); no key and "all" serve every server and
// stay untouched, as does an edit that adds or removes no server; the last name is not removed
// (an empty key would mean every toolset).
func TestToolsetsFollowServers(t *testing.T) {
	const github = "\n[[servers]]\nname = \"github\"\ncommand = \"gh-mcp\"\n"
	const linear = "\n[[servers]]\nname = \"linear\"\nurl = \"https://mcp.linear.app/mcp\"\n"
	for _, c := range []struct {
		name, old, new string
		want           string // "" : new unchanged
		err            string
	}{
		{name: "added to a list", old: "toolsets = [\"files\", \"github\"]  # mine\n" + github,
			new:  "toolsets = [\"files\", \"github\"]  # mine\n" + github + linear,
			want: "toolsets = [\"files\", \"github\", \"linear\"]  # mine\n" + github + linear},
		{name: "removed from a list", old: "toolsets = [\"files\", \"github\", \"linear\"]\n" + github + linear,
			new:  "toolsets = [\"files\", \"github\", \"linear\"]\n" + linear,
			want: "toolsets = [\"files\", \"linear\"]\n" + linear},
		{name: "removed, not named", old: "toolsets = [\"files\"]\n" + github, new: "toolsets = [\"files\"]\n"},
		{name: "no key", old: "read_only = true\n" + github, new: "read_only = true\n" + github + linear},
		{name: "all", old: "toolsets = [\"all\"]\n", new: "toolsets = [\"all\"]\n" + github},
		{name: "no server added or removed", old: "toolsets = [\"files\"]\n" + github, new: "toolsets = [\"files\"]\n" + strings.Replace(github, "gh-mcp", "gh-mcp2", 1)},
		{name: "the last name", old: "toolsets = [\"github\"]\n" + github, new: "toolsets = [\"github\"]\n", err: "toolsets: names only github"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := ToolsetsFollowServers([]byte(c.old), []byte(c.new))
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := c.want
			if want == "" {
				want = c.new
			}
			if string(got) != want {
				t.Errorf("got:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}

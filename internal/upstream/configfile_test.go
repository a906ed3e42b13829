package upstream

import (
	"strings"
	"testing"
)

// configWithServers is shaped like a real config: a heading, root keys, tables before and after
// the servers, comments between them, an inline table, a multi-line array with comments in it, a
// sub-table of an entry and an entry header written with spaces.
const configWithServers = `# Switchboard configuration
workspace = "~/src"
toolsets = ["files", "process", "git"]

[policy]
default = "ask"                  # allow | ask | deny
# ask_timeout = "120s"

# The servers I use every day
[[servers]]
name = "everything"
command = "npx"
args = ["-y", "@modelcontextprotocol/server-everything"]
env = { API_KEY = "${secret:api-key}" } # from the keyring
# cwd = "/tmp"

[[ servers ]]
name = "memory-notes"
command = "npx"
args = [
  "-y",      # no prompt
  "@modelcontextprotocol/server-memory",
]
start = "on-demand"
[servers.env]
MEMORY_FILE_PATH = "/home/me/.memory.json"
DEBUG = "1"

# remote
[[servers]]
name = "remote"
url = "https://example.test/mcp"
headers = { Authorization = "Bearer ${REMOTE_TOKEN}" }

# Trust
[[policy.rules]]
tool = "file_delete"
action = "deny"

[ml]
default_backend = "gpu"

[[ml.backends]]
name = "gpu"
kind = "openai"
url = "http://gpu-box:8000/v1"
`

const configNoServers = `# Switchboard configuration
read_only = false

[policy]
default = "allow"

[[ml.backends]]
name = "gpu"
kind = "ollama"
url = "http://gpu-box:11434"
# model = "llama3"
`

func TestReadSpecs(t *testing.T) {
	specs, err := ReadSpecs([]byte(configWithServers))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range specs {
		names = append(names, s.Name)
	}
	if strings.Join(names, ",") != "everything,memory-notes,remote" {
		t.Fatalf("names = %v", names)
	}
	if specs[1].Env["MEMORY_FILE_PATH"] != "/home/me/.memory.json" || specs[1].StartMode() != StartOnDemand || len(specs[1].Args) != 2 {
		t.Errorf("memory-notes = %+v", specs[1])
	}
	if err := ValidateAll(specs, ReservedNames()); err != nil {
		t.Error(err)
	}
	for _, tc := range []struct{ name, file, want string }{
		{"syntax error names the line", "[policy]\ndefault = \"ask\"\n\n[[servers]]\nname = everything\n", "line 5"},
		{"unknown key names it", "[[servers]]\nname = \"a\"\ncomand = \"npx\"\n", "servers.comand"},
		{"servers as a table", "[servers]\nname = \"a\"\n", "servers"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := ReadSpecs([]byte(tc.file)); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want it to mention %q", err, tc.want)
			}
		})
	}
	if specs, err := ReadSpecs(nil); err != nil || len(specs) != 0 {
		t.Errorf("empty file: %v, %v", specs, err)
	}
}

func TestAddServer(t *testing.T) {
	off := false
	for _, tc := range []struct {
		name, file string
		spec       Spec
		want       string
	}{
		{name: "no file yet", file: "",
			spec: Spec{Name: "everything", Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-everything"}},
			want: "[[servers]]\nname = \"everything\"\ncommand = \"npx\"\nargs = [\"-y\", \"@modelcontextprotocol/server-everything\"]\n"},
		{name: "after the last table, comment kept", file: configNoServers,
			spec: Spec{Name: "remote", URL: "https://example.test/mcp", Transport: "sse", Headers: map[string]string{"Authorization": "Bearer ${REMOTE_TOKEN}"}, Enabled: &off},
			want: configNoServers + "\n[[servers]]\nname = \"remote\"\nurl = \"https://example.test/mcp\"\ntransport = \"sse\"\nheaders = { Authorization = \"Bearer ${REMOTE_TOKEN}\" }\nenabled = false\n"},
		{name: "after the last entry, before the next table's comment", file: configWithServers,
			spec: Spec{Name: "fetch", Command: "uvx", Args: []string{"mcp-server-fetch"}, Start: StartOnDemand},
			want: strings.Replace(configWithServers, "Bearer ${REMOTE_TOKEN}\" }\n\n# Trust\n",
				"Bearer ${REMOTE_TOKEN}\" }\n\n[[servers]]\nname = \"fetch\"\ncommand = \"uvx\"\nargs = [\"mcp-server-fetch\"]\nstart = \"on-demand\"\n\n# Trust\n", 1)},
		{name: "no newline at the end", file: "read_only = true",
			spec: Spec{Name: "a", Command: "a-server"},
			want: "read_only = true\n\n[[servers]]\nname = \"a\"\ncommand = \"a-server\"\n"},
		{name: "CRLF file", file: "# config\r\n[policy]\r\ndefault = \"ask\"\r\n",
			spec: Spec{Name: "a", Command: "a-server", Env: map[string]string{"K": "v"}},
			want: "# config\r\n[policy]\r\ndefault = \"ask\"\r\n\r\n[[servers]]\r\nname = \"a\"\r\ncommand = \"a-server\"\r\nenv = { K = \"v\" }\r\n"},
		{name: "last entry directly followed by a table", file: "[[servers]]\nname = \"a\"\ncommand = \"a\"\n[web]\ntimeout = \"5s\"\n",
			spec: Spec{Name: "b", Command: "b"},
			want: "[[servers]]\nname = \"a\"\ncommand = \"a\"\n\n[[servers]]\nname = \"b\"\ncommand = \"b\"\n\n[web]\ntimeout = \"5s\"\n"},
		{name: "long args, many env vars, quoting", file: "",
			spec: Spec{Name: "pg", Command: `C:\tools\pg "mcp".exe`, Args: []string{"--connection-string", "postgres://user@localhost:5432/a-rather-long-database-name", "--read-only", "--schema", "public"},
				Env: map[string]string{"PGPASSWORD": "${secret:pg}", "PGHOST": "localhost", "PGPORT": "5432", "weird key": "tab\there"}},
			want: `[[servers]]
name = "pg"
command = "C:\\tools\\pg \"mcp\".exe"
args = [
  "--connection-string",
  "postgres://user@localhost:5432/a-rather-long-database-name",
  "--read-only",
  "--schema",
  "public",
]
[servers.env]
PGHOST = "localhost"
PGPASSWORD = "${secret:pg}"
PGPORT = "5432"
"weird key" = "tab\there"
`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := AddServer([]byte(tc.file), tc.spec)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Fatalf("got:\n%s\nwant:\n%s", got, tc.want)
			}
			specs, err := ReadSpecs(got)
			if err != nil {
				t.Fatal(err)
			}
			if !sameSpec(specs[len(specs)-1], tc.spec) && !sameSpec(specs[findSpec(specs, tc.spec.Name)], tc.spec) {
				t.Errorf("decoded %+v, want %+v", specs, tc.spec)
			}
			// removing what was added gives the file back (up to the blank line it was given
			// when the next table followed without one)
			back, err := RemoveServer(got, tc.spec.Name)
			if err != nil {
				t.Fatal(err)
			}
			if want := tc.file; string(back) != want && tc.name != "no newline at the end" && tc.name != "last entry directly followed by a table" {
				t.Errorf("add then remove:\n%s\nwant:\n%s", back, want)
			}
		})
	}
}

func findSpec(specs []Spec, name string) int {
	for i, s := range specs {
		if s.Name == name {
			return i
		}
	}
	return 0
}

func TestAddServerRefuses(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		spec       Spec
		want       string
	}{
		{"name taken", configWithServers, Spec{Name: "remote", Command: "x"}, `"remote": name: already configured (line 30)`},
		{"invalid name", "", Spec{Name: "GitHub!", Command: "x"}, "name: use lower-case letters"},
		{"reserved name", "", Spec{Name: "memory", Command: "x"}, "one of the hub's own toolsets"},
		{"command and url", "", Spec{Name: "a", Command: "x", URL: "https://a.test/"}, "set either command (a local server) or url (a remote one), not both"},
		{"file does not parse", "[policy]\ndefault = \"ask\"\n\n[[servers]]\nname = a\n", Spec{Name: "a", Command: "x"}, "line 5"},
		{"servers written inline", "servers = [{ name = \"a\", command = \"x\" }]\n", Spec{Name: "b", Command: "x"}, "line 1: servers is written as a value"},
		{"sub-table away from its entry", "[[servers]]\nname = \"a\"\ncommand = \"x\"\n[web]\ntimeout = \"5s\"\n[servers.env]\nK = \"v\"\n", Spec{Name: "b", Command: "x"}, "line 6: [servers.env] is away from its [[servers]] entry"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := AddServer([]byte(tc.file), tc.spec)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestRemoveServer(t *testing.T) {
	for _, tc := range []struct {
		name, file, server, want string
	}{
		// A comment directly above the removed header stays, and the blank lines around it
		// stay as they were.
		{name: "first: its inline table and the comment in it go, the heading comment above stays",
			file: configWithServers, server: "everything",
			want: strings.Replace(configWithServers, `[[servers]]
name = "everything"
command = "npx"
args = ["-y", "@modelcontextprotocol/server-everything"]
env = { API_KEY = "${secret:api-key}" } # from the keyring
# cwd = "/tmp"
`, "", 1)},
		{name: "header with spaces, multi-line array, sub-table; the next entry's comment stays",
			file: configWithServers, server: "memory-notes",
			want: strings.Replace(configWithServers, `[[ servers ]]
name = "memory-notes"
command = "npx"
args = [
  "-y",      # no prompt
  "@modelcontextprotocol/server-memory",
]
start = "on-demand"
[servers.env]
MEMORY_FILE_PATH = "/home/me/.memory.json"
DEBUG = "1"

`, "", 1)},
		{name: "last entry before other tables",
			file: configWithServers, server: "remote",
			want: strings.Replace(configWithServers, `[[servers]]
name = "remote"
url = "https://example.test/mcp"
headers = { Authorization = "Bearer ${REMOTE_TOKEN}" }
`, "", 1)},
		{name: "last in the file, trailing comment owned, footer kept",
			file:   "[policy]\ndefault = \"ask\"\n\n[[servers]]\nname = \"a\"\ncommand = \"x\"\n# cwd = \"/tmp\"\n\n# end of file\n",
			server: "a", want: "[policy]\ndefault = \"ask\"\n\n# end of file\n"},
		{name: "last in the file, no footer",
			file:   "[policy]\ndefault = \"ask\"\n\n[[servers]]\nname = \"a\"\ncommand = \"x\"\n# cwd = \"/tmp\"\n",
			server: "a", want: "[policy]\ndefault = \"ask\"\n"},
		{name: "only entry", file: "[[servers]]\nname = \"a\"\ncommand = \"x\"\n", server: "a", want: ""},
		{name: "first in the file, blank line after it goes",
			file: "[[servers]]\nname = \"a\"\ncommand = \"x\"\n\n[web]\ntimeout = \"5s\"\n", server: "a", want: "[web]\ntimeout = \"5s\"\n"},
		{name: "comment directly above the next header stays",
			file:   "[[servers]]\nname = \"a\"\ncommand = \"x\"\n# about b\n[[servers]]\nname = \"b\"\ncommand = \"y\"\n",
			server: "a", want: "# about b\n[[servers]]\nname = \"b\"\ncommand = \"y\"\n"},
		{name: "multi-line strings that look like headers",
			file:   "[[servers]]\nname = \"a\"\ncommand = \"\"\"\n[[servers]]\nname = \"b\"\"\"\"\nargs = ['''\n[web]\n''']\n\n[web]\ntimeout = \"5s\"\n",
			server: "a", want: "[web]\ntimeout = \"5s\"\n"},
		{name: "TOML 1.1 inline table over several lines; an unknown key does not stop the edit",
			file:   "[[servers]]\nname = \"a\"\ncommand = \"x\"\ncomand = \"typo\"\nenv = {\n  A = \"1\", # one\n  B = \"[[servers]]\",\n}\n\n[web]\ntimeout = \"5s\"\n",
			server: "a", want: "[web]\ntimeout = \"5s\"\n"},
		{name: "CRLF, quoted header key", file: "# c\r\n[[\"servers\"]]\r\nname = \"a\"\r\ncommand = \"x\"\r\n\r\n[[servers]]\r\nname = \"b\"\r\ncommand = \"y\"\r\n",
			server: "b", want: "# c\r\n[[\"servers\"]]\r\nname = \"a\"\r\ncommand = \"x\"\r\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := RemoveServer([]byte(tc.file), tc.server)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Fatalf("got:\n%q\nwant:\n%q", got, tc.want)
			}
		})
	}
	if _, err := RemoveServer([]byte(configWithServers), "nosuch"); err == nil || !strings.Contains(err.Error(), "configured: everything, memory-notes, remote") {
		t.Errorf("unknown name: %v", err)
	}
	if _, err := RemoveServer([]byte("[[servers]]\nname = \"a\"\ncommand = \"x\"\n\n[[servers]]\nname = \"a\"\ncommand = \"y\"\n"), "a"); err == nil || !strings.Contains(err.Error(), "configured twice (lines 1 and 5)") {
		t.Errorf("same name twice: %v", err)
	}
	if _, err := RemoveServer(nil, "a"); err == nil || !strings.Contains(err.Error(), "no [[servers]] entries") {
		t.Errorf("empty file: %v", err)
	}
}

func TestSetServerEnabled(t *testing.T) {
	for _, tc := range []struct {
		name, file, server string
		on                 bool
		want               string
	}{
		{name: "disable: a line after the name", file: configWithServers, server: "memory-notes",
			want: strings.Replace(configWithServers, "name = \"memory-notes\"\n", "name = \"memory-notes\"\nenabled = false\n", 1)},
		{name: "enable: the line goes", file: "[[servers]]\n  name = \"a\"\n  enabled = false # broken\n  command = \"x\"\n", server: "a", on: true,
			want: "[[servers]]\n  name = \"a\"\n  command = \"x\"\n"},
		{name: "disable: indentation followed", file: "[[servers]]\n  name = \"a\"\n  command = \"x\"\n", server: "a",
			want: "[[servers]]\n  name = \"a\"\n  enabled = false\n  command = \"x\"\n"},
		{name: "disable: enabled = true rewritten, comment kept", file: "[[servers]]\nname = \"a\"\ncommand = \"x\"\nenabled = true # for now\n[servers.env]\nenabled = \"1\"\n", server: "a",
			want: "[[servers]]\nname = \"a\"\ncommand = \"x\"\nenabled = false # for now\n[servers.env]\nenabled = \"1\"\n"},
		{name: "enable: already on, explicit true stays", file: "[[servers]]\nname = \"a\"\ncommand = \"x\"\nenabled = true\n", server: "a", on: true,
			want: "[[servers]]\nname = \"a\"\ncommand = \"x\"\nenabled = true\n"},
		{name: "disable: already off", file: "[[servers]]\nname = \"a\"\ncommand = \"x\"\nenabled = false\n", server: "a",
			want: "[[servers]]\nname = \"a\"\ncommand = \"x\"\nenabled = false\n"},
		{name: "disable: CRLF, no newline at the end", file: "[[servers]]\r\ncommand = \"x\"\r\nname = \"a\"", server: "a",
			want: "[[servers]]\r\ncommand = \"x\"\r\nname = \"a\"\r\nenabled = false\r\n"},
		{name: "enable: the env key of the same name is not touched", file: "[[servers]]\nname = \"a\"\ncommand = \"x\"\nenabled = false\nenv = { enabled = \"no\" }\n", server: "a", on: true,
			want: "[[servers]]\nname = \"a\"\ncommand = \"x\"\nenv = { enabled = \"no\" }\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := SetServerEnabled([]byte(tc.file), tc.server, tc.on)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Fatalf("got:\n%q\nwant:\n%q", got, tc.want)
			}
			specs, _ := ReadSpecs(got)
			if specs[findSpec(specs, tc.server)].IsEnabled() != tc.on {
				t.Error("state not as asked")
			}
		})
	}
	// disable then enable is the identity
	off, err := SetServerEnabled([]byte(configWithServers), "remote", false)
	if err != nil {
		t.Fatal(err)
	}
	on, err := SetServerEnabled(off, "remote", true)
	if err != nil || string(on) != configWithServers {
		t.Errorf("disable+enable changed the file (%v):\n%s", err, on)
	}
	if _, err := SetServerEnabled([]byte(configWithServers), "nosuch", false); err == nil || !strings.Contains(err.Error(), `no server named "nosuch"`) {
		t.Errorf("unknown name: %v", err)
	}
}

// TestEditsKeepEverythingElse: on every sample, each edit of each server leaves every other
// setting decoding as before (checkEdit), and the texts outside the edited entry are kept.
func TestEditsKeepEverythingElse(t *testing.T) {
	for _, file := range []string{configWithServers, strings.ReplaceAll(configWithServers, "\n", "\r\n")} {
		specs, err := ReadSpecs([]byte(file))
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range specs {
			rm, err := RemoveServer([]byte(file), s.Name)
			if err != nil {
				t.Fatalf("remove %s: %v", s.Name, err)
			}
			for _, keep := range []string{"# Switchboard configuration", "# ask_timeout", "# Trust", "[[ml.backends]]", "# The servers I use every day"} {
				if !strings.Contains(string(rm), keep) {
					t.Errorf("remove %s lost %q", s.Name, keep)
				}
			}
			back, err := AddServer(rm, s)
			if err != nil {
				t.Fatalf("re-add %s: %v", s.Name, err)
			}
			again, _ := ReadSpecs(back)
			if !sameSpec(again[findSpec(again, s.Name)], s) {
				t.Errorf("re-added %s decodes as %+v", s.Name, again[findSpec(again, s.Name)])
			}
			if _, err := SetServerEnabled([]byte(file), s.Name, false); err != nil {
				t.Errorf("disable %s: %v", s.Name, err)
			}
		}
	}
}

// FuzzEdits: on any file BurntSushi/toml accepts, the edits never panic, and what they return
// keeps every other setting (checkEdit) and has the entry removed, switched or added.
func FuzzEdits(f *testing.F) {
	for _, seed := range []string{configWithServers, configNoServers, "", "[[servers]]\nname = \"a\"\ncommand = \"x\"\n# c\n",
		"[[servers]]\r\nname = 'a'\r\nurl = \"https://a.test/\"\r\n[servers.headers]\r\nA = \"\"\"b\"\"\"\r\n"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, file string) {
		specs, err := decodeLenient([]byte(file))
		if err != nil {
			return
		}
		for _, s := range specs {
			if out, err := RemoveServer([]byte(file), s.Name); err == nil {
				if again, _ := decodeLenient(out); len(again) != len(specs)-1 {
					t.Fatalf("remove %q: %d servers left of %d", s.Name, len(again), len(specs))
				}
			}
			for _, on := range []bool{false, true} {
				if out, err := SetServerEnabled([]byte(file), s.Name, on); err == nil {
					again, _ := decodeLenient(out)
					if i := findSpec(again, s.Name); again[i].IsEnabled() != on {
						t.Fatalf("enabled(%v) not set", on)
					}
				}
			}
		}
		if out, err := AddServer([]byte(file), Spec{Name: "fuzz-added", Command: "x", Env: map[string]string{"K": "v"}}); err == nil {
			if again, _ := decodeLenient(out); len(again) != len(specs)+1 {
				t.Fatal("add: not added")
			}
		}
	})
}

// TestSandboxAndPassthroughRoundTrip: [servers.sandbox], sandbox = "off" and env_passthrough
// are read as written, refused when malformed, and written back by AddServer.
func TestSandboxAndPassthroughRoundTrip(t *testing.T) {
	specs, err := ReadSpecs([]byte(`
[[servers]]
name = "mem"
command = "npx"
env_passthrough = ["GITHUB_HOST"]
[servers.sandbox]
read = ["~/data"]
write = ["/srv/shared"]
network = false

[[servers]]
name = "raw"
command = "raw-server"
sandbox = "off"
`))
	if err != nil {
		t.Fatal(err)
	}
	mem, raw := specs[0], specs[1]
	if mem.Sandbox == nil || mem.Sandbox.Read[0] != "~/data" || mem.Sandbox.Write[0] != "/srv/shared" || mem.Sandbox.NetworkAllowed() || mem.EnvPassthrough[0] != "GITHUB_HOST" {
		t.Fatalf("mem: %+v %+v", mem, mem.Sandbox)
	}
	if raw.Sandbox == nil || !raw.Sandbox.Off {
		t.Fatalf("raw: %+v", raw.Sandbox)
	}
	for _, s := range specs {
		out, err := AddServer(nil, s)
		if err != nil {
			t.Fatal(err)
		}
		back, err := ReadSpecs(out)
		if err != nil || len(back) != 1 || !sameSpec(back[0], s) || back[0].CommandHash() != s.CommandHash() {
			t.Fatalf("round trip of %s:\n%s\n%+v %v", s.Name, out, back, err)
		}
	}
	for _, bad := range []struct{ toml, want string }{
		{"[[servers]]\nname = \"x\"\ncommand = \"c\"\nsandbox = \"none\"\n", `write sandbox = "off"`},
		{"[[servers]]\nname = \"x\"\ncommand = \"c\"\n[servers.sandbox]\nexec = true\n", `unknown key "exec"`},
		{"[[servers]]\nname = \"x\"\ncommand = \"c\"\n[servers.sandbox]\nread = \"/a\"\n", "a list of paths"},
	} {
		if _, err := ReadSpecs([]byte(bad.toml)); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%q: %v, want %q", bad.toml, err, bad.want)
		}
	}
	rel := Spec{Name: "x", Command: "c", Sandbox: &Sandbox{Write: []string{"data"}}}
	if err := rel.Validate(nil); err == nil || !strings.Contains(err.Error(), "absolute path") {
		t.Fatalf("relative sandbox path: %v", err)
	}
	remote := Spec{Name: "x", URL: "https://example.test/mcp", Sandbox: &Sandbox{Off: true}}
	if err := remote.Validate(nil); err == nil || !strings.Contains(err.Error(), "local server") {
		t.Fatalf("sandbox on a remote server: %v", err)
	}
}

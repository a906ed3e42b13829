package config

import (
	"os"
	"path/filepath"
	"reflect"
)

// Env is every environment variable Switchboard reads, read in one place (ReadEnv) and passed
// down: packages below app get the values (through Config.Env or as arguments), never
// os.Getenv. The `env` tags name the variables; EnvVars lists them with what each does, and
// docs/development.md's table of environment variables is checked against that list.
//
// Not here: variables the user names in the config file (`api_key_env`, `${VAR}` in
// [[servers]]), which Lookup serves; the environment handed on whole to programs the hub starts
// (minus its secrets, process.StripSecrets); what the Go runtime and standard library read
// themselves (GOGC, HOME, TMPDIR); and test-only switches (CI, SWITCHBOARD_UPDATE_ICONS).
type Env struct {
	// Settings: each overrides a config file key; flags override both.
	MCPAddr       string `env:"MCP_ADDR"`
	Token         string `env:"SWITCHBOARD_TOKEN"`
	TCPToken      string `env:"SWITCHBOARD_TCP_TOKEN"`
	ClientToken   string `env:"SWITCHBOARD_CLIENT_TOKEN"`
	Workspace     string `env:"SWITCHBOARD_WORKSPACE"`
	DataDir       string `env:"SWITCHBOARD_DATA_DIR"`
	Socket        string `env:"SWITCHBOARD_SOCKET"`
	IDEURL        string `env:"SWITCHBOARD_IDE_URL"`
	IDEToken      string `env:"SWITCHBOARD_IDE_TOKEN"`
	Toolsets      string `env:"SWITCHBOARD_TOOLSETS"`
	Browser       string `env:"SWITCHBOARD_BROWSER"`
	DashboardAddr string `env:"SWITCHBOARD_DASHBOARD_ADDR"`
	QdrantURL     string `env:"SWITCHBOARD_QDRANT_URL"`
	FetchAllow    string `env:"SWITCHBOARD_FETCH_ALLOW"`
	ReadOnly      string `env:"SWITCHBOARD_READ_ONLY"`

	// Model backends, read as their own tools read them.
	OllamaHost    string `env:"OLLAMA_HOST"`
	OpenAIBaseURL string `env:"OPENAI_BASE_URL"`
	OpenAIAPIKey  string `env:"OPENAI_API_KEY"`

	// The desktop session.
	Display        string `env:"DISPLAY"`
	WaylandDisplay string `env:"WAYLAND_DISPLAY"`
	DBusSession    string `env:"DBUS_SESSION_BUS_ADDRESS"`
	XDGConfigHome  string `env:"XDG_CONFIG_HOME"`
	XDGDataHome    string `env:"XDG_DATA_HOME"`
	XDGRuntimeDir  string `env:"XDG_RUNTIME_DIR"`
	User           string `env:"USER"`
	Path           string `env:"PATH"`

	// Other programs' variables, read to find their config files (`switchboard clients`).
	ClaudeConfigDir string `env:"CLAUDE_CONFIG_DIR"`
	CodexHome       string `env:"CODEX_HOME"`

	// Lookup reads a variable the user named in the config file. Nil: none is set.
	Lookup func(name string) (string, bool) `env:"-"`
}

// EnvVar is one variable Switchboard reads.
type EnvVar struct {
	Name string
	Does string
}

// EnvVars lists the variables of Env in its order, with what each does.
var EnvVars = []EnvVar{
	{"MCP_ADDR", "TCP address (`tcp.addr`); `serve` with no transport flag then serves TCP instead of stdio"},
	{"SWITCHBOARD_TOKEN", "Streamable HTTP bearer token (`http.token`)"},
	{"SWITCHBOARD_TCP_TOKEN", "TCP handshake token (`tcp.token`)"},
	{"SWITCHBOARD_CLIENT_TOKEN", "a client's own token, which `switchboard connect` presents to the hub (`switchboard clients connect` writes it into the client's entry)"},
	{"SWITCHBOARD_WORKSPACE", "workspace root (`workspace`)"},
	{"SWITCHBOARD_DATA_DIR", "data directory: logs, metrics, RAG store (`data_dir`)"},
	{"SWITCHBOARD_SOCKET", "Unix socket path (`unix.path`)"},
	{"SWITCHBOARD_IDE_URL", "agentic backend URL (`ide.url`); turns the `ide` toolset on"},
	{"SWITCHBOARD_IDE_TOKEN", "agentic backend token (`ide.token`)"},
	{"SWITCHBOARD_TOOLSETS", "served toolsets, comma-separated (`toolsets`)"},
	{"SWITCHBOARD_BROWSER", "browser executable for `webview_launch` (`browser.path`)"},
	{"SWITCHBOARD_DASHBOARD_ADDR", "headless dashboard address (`dashboard.addr`)"},
	{"SWITCHBOARD_QDRANT_URL", "selects the Qdrant RAG backend at this address (`rag.backend`, `rag.url`)"},
	{"SWITCHBOARD_FETCH_ALLOW", "hosts `web_fetch` may reach although internal, comma-separated; added to `web.allow`"},
	{"SWITCHBOARD_READ_ONLY", "`true`: serve read-only tools only (`read_only`)"},
	{"OLLAMA_HOST", "Ollama for the built-in `ollama` ML backend and the `ollama` RAG embedder (`host`, `host:port` or a URL; default `http://localhost:11434`)"},
	{"OPENAI_BASE_URL", "OpenAI-compatible API for the built-in `openai` ML backend (which exists when this or the key is set) and the `openai` RAG embedder; default `https://api.openai.com/v1`"},
	{"OPENAI_API_KEY", "key for that API"},
	{"DISPLAY", "X11 display: desktop mode, `webview_launch` with `headless: false`"},
	{"WAYLAND_DISPLAY", "Wayland display, as DISPLAY"},
	{"DBUS_SESSION_BUS_ADDRESS", "session bus for the keyring (`${secret:NAME}`); notifications, the tray and the single-instance check reach it through godbus, which reads it itself"},
	{"XDG_CONFIG_HOME", "where the config file, the autostart entry and clients' config files are (default `~/.config`)"},
	{"XDG_DATA_HOME", "default data directory's parent (default `~/.local/share`)"},
	{"XDG_RUNTIME_DIR", "default Unix socket's directory; the session bus at `$XDG_RUNTIME_DIR/bus` when DBUS_SESSION_BUS_ADDRESS is unset"},
	{"USER", "the user audit lines name when the system cannot say"},
	{"PATH", "where `switchboard clients` looks for the clients it configures"},
	{"CLAUDE_CONFIG_DIR", "Claude Code's config directory, where `switchboard clients` writes its entry"},
	{"CODEX_HOME", "Codex's config directory, as CLAUDE_CONFIG_DIR"},
}

// ReadEnv reads the process environment: the one place Switchboard reads its variables.
func ReadEnv() Env { return EnvFrom(os.LookupEnv) }

// EnvFrom reads the variables through lookup (tests pass their own).
func EnvFrom(lookup func(string) (string, bool)) Env {
	e := Env{Lookup: lookup}
	v := reflect.ValueOf(&e).Elem()
	for i := range v.NumField() {
		if name := v.Type().Field(i).Tag.Get("env"); name != "" && name != "-" {
			s, _ := lookup(name)
			v.Field(i).SetString(s)
		}
	}
	return e
}

// Value is the value of the variable name ("" for a name Env does not hold).
func (e Env) Value(name string) string {
	v := reflect.ValueOf(e)
	for i := range v.NumField() {
		if v.Type().Field(i).Tag.Get("env") == name {
			return v.Field(i).String()
		}
	}
	return ""
}

// HasDisplay reports whether a graphical session is there (DISPLAY or WAYLAND_DISPLAY).
func (e Env) HasDisplay() bool { return e.Display != "" || e.WaylandDisplay != "" }

// ConfigHome is $XDG_CONFIG_HOME when it is absolute, else ~/.config ("" without a home).
func (e Env) ConfigHome() string {
	if filepath.IsAbs(e.XDGConfigHome) {
		return e.XDGConfigHome
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".config")
	}
	return ""
}

// Getenv is Lookup without the "set" flag, for APIs that take a func(string) string.
func (e Env) Getenv(name string) string {
	if e.Lookup == nil {
		return ""
	}
	v, _ := e.Lookup(name)
	return v
}

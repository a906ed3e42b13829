// Package config loads Switchboard's settings: built-in defaults, then the TOML file, then
// environment variables; command-line flags are applied last by the caller.
package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/switchboard-hub/switchboard/internal/code"
	"github.com/switchboard-hub/switchboard/internal/policy"
	"github.com/switchboard-hub/switchboard/internal/upstream"
)

// Config is the whole configuration. TOML keys are snake_case.
type Config struct {
	// Path is the file the config was read from ("" when none was); the hub watches it for
	// policy changes.
	Path string `toml:"-"`
	// Env is the environment the config was read with (Load): the settings it overrode are
	// applied already; the rest (model backends, the desktop session) is for the app to pass on.
	Env Env `toml:"-" json:"-"`

	Workspace     string   `toml:"workspace"`
	DataDir       string   `toml:"data_dir"`
	ReadOnly      bool     `toml:"read_only"`
	DisabledTools []string `toml:"disabled_tools"`
	// Toolsets served to clients (files, process, ws, metrics, rag, ml, browser, ide, git, web,
	// memory, the name of a [[servers]] entry — a server not named is not offered — or all);
	// empty: every set except ide, which is on only when an IDE backend URL is configured
	// (ide.url or SWITCHBOARD_IDE_URL), and every server.
	Toolsets []string `toml:"toolsets"`
	// Clients holds settings per MCP client, keyed by the name its own token was issued to
	// (Settings › Client tokens, `switchboard token --client NAME`): [clients.NAME].
	Clients map[string]ClientSettings `toml:"clients"`
	// ideURLSet records that the IDE backend URL came from the file or the environment rather
	// than the built-in default.
	ideURLSet bool
	// Flags are the keys this process took from command-line flags (over the file and the
	// environment), recorded by the command line with SetByFlag so the Settings view can say
	// which saved values this run does not use.
	Flags []FlagOverride `toml:"-"`

	// Desktop is the desktop app's own settings.
	Desktop struct {
		// Autostart, when set, is applied each time the desktop app starts: true writes the XDG
		// autostart entry ($XDG_CONFIG_HOME/autostart/switchboard.desktop, starting the app
		// hidden in the tray at login), false removes it. Unset (the default): the entry's
		// presence is the setting, switched by the tray's "Start at login" item; no entry, off.
		Autostart *bool `toml:"autostart"`
		// Notifications: the desktop app shows a desktop notification when an approval starts
		// waiting, when an upstream server keeps crashing (3 exits within 5 minutes, or it
		// failed) and when the policy refuses a client's call (at most one a minute per client).
		// They go to the session's notification service over DBus; with none, nothing is shown.
		// Default true.
		Notifications bool `toml:"notifications"`
	} `toml:"desktop"`

	Unix struct {
		Enabled bool   `toml:"enabled"`
		Path    string `toml:"path"`
	} `toml:"unix"`
	TCP struct {
		Enabled bool   `toml:"enabled"`
		Addr    string `toml:"addr"`
		// Token TCP clients present (switchboard/auth handshake); empty: the client token kept
		// in the config dir (`switchboard token`). Required beyond loopback; on loopback only
		// with require_token.
		Token        string `toml:"token"`
		RequireToken bool   `toml:"require_token"`
	} `toml:"tcp"`
	HTTP struct {
		Enabled bool   `toml:"enabled"`
		Addr    string `toml:"addr"`
		Token   string `toml:"token"` // empty: the client token kept in the config dir
		// Browser origins allowed besides the endpoint's own, e.g. "http://localhost:6274".
		AllowedOrigins []string `toml:"allowed_origins"`
		// Auth is how clients beyond the static token get in: "" or "token" (the token only,
		// loopback only) or "oauth" (the hub's own authorization server: each client approved
		// on the dashboard or tray; required for an address beyond loopback, which is then
		// served over TLS).
		Auth string `toml:"auth"`
		// Cert and Key are the TLS certificate and key (PEM files) served with auth = "oauth";
		// empty: beyond loopback, the hub makes its own (self-signed, kept in its data
		// directory) and the dashboard shows its fingerprint.
		Cert string `toml:"cert"`
		Key  string `toml:"key"`
		// ClientMetadataDocuments (default true) lets clients name themselves by a Client ID
		// Metadata Document, an https URL the hub fetches (Claude Code's is on claude.ai). A hub
		// that cannot reach where clients publish theirs sets it false: clients then register
		// (RFC 7591) instead, as the authorization server's metadata no longer offers documents.
		ClientMetadataDocuments *bool `toml:"client_metadata_documents"`
	} `toml:"http"`
	Hub struct {
		Enabled bool   `toml:"enabled"`
		Addr    string `toml:"addr"`
		Token   string `toml:"token"`
	} `toml:"hub"`
	IDE struct {
		URL   string `toml:"url"`
		Token string `toml:"token"`
		// Backoff of the bridge's reconnect loop and how long a tool waits for the backend's
		// answer before answering from cached state (Go durations, e.g. "2s", "1500ms").
		ReconnectInterval    Duration `toml:"reconnect_interval"`
		MaxReconnectInterval Duration `toml:"max_reconnect_interval"`
		ResponseWait         Duration `toml:"response_wait"`
	} `toml:"ide"`
	Process struct {
		MaxProcesses     int `toml:"max_processes"`
		BufferBytes      int `toml:"buffer_bytes"`
		StopGraceSeconds int `toml:"stop_grace_seconds"`
	} `toml:"process"`
	Audit struct {
		MaxSizeMB  int `toml:"max_size_mb"`
		MaxBackups int `toml:"max_backups"`
	} `toml:"audit"`
	Metrics struct {
		Dir string `toml:"dir"`
	} `toml:"metrics"`
	Browser struct {
		Path     string `toml:"path"`     // executable for webview_launch; empty: chromium, chromium-browser, google-chrome on PATH
		Headless bool   `toml:"headless"` // default of webview_launch's headless (true)
	} `toml:"browser"`
	Dashboard struct {
		// Addr is where the headless dashboard (no display) listens, loopback. The default,
		// DefaultDashboardAddr, gives a URL that stays the same across starts so a bookmark
		// works; when that port is taken the hub picks a free one and says so.
		Addr string `toml:"addr"`
		// Token guards the dashboard's API; empty: the one kept in DashboardTokenPath (created
		// on first use, mode 0600), so the URL with its token stays valid across starts.
		Token string `toml:"token"`
	} `toml:"dashboard"`
	// Trust: allow/ask/deny rules and MCP roots granted without asking (docs/policy.md). The
	// hub re-reads both sections when the file changes.
	Policy policy.Config      `toml:"policy"`
	Roots  policy.RootsConfig `toml:"roots"`
	RAG    RAG                `toml:"rag"`
	ML     ML                 `toml:"ml"`
	Web    struct {
		// Allow lists hosts web_fetch may reach although they are internal: "host",
		// "host:port", an IP or a CIDR. SWITCHBOARD_FETCH_ALLOW (comma-separated) adds to it.
		Allow   []string `toml:"allow"`
		Timeout Duration `toml:"timeout"` // whole request including redirects
	} `toml:"web"`
	// Code configures code intelligence: the language-server pool (internal/code).
	Code Code `toml:"code"`
	// Servers are the user's other MCP servers ([[servers]] tables), run by the hub and offered
	// to every client as <name>__<tool> once approved. Load validates them (names unique, not a
	// toolset's); `switchboard servers add/remove/enable/disable/import` edit them in the file.
	Servers []upstream.Spec `toml:"servers"`
	// ServerTools is how clients see the servers' tools: "all" (the default: every approved
	// tool, as <name>__<tool>) or "search" (for large catalogues and clients with a tool limit:
	// only servers_search and servers_call; the tools stay callable by name). A top-level key:
	// write it above the first [table].
	ServerTools string `toml:"server_tools"`
	// TaskAfter: a tool call still running after this long is handed back to its client as a
	// task (a task_id to collect with tasks_get; a Tasks-extension task for clients that declare
	// io.modelcontextprotocol/tasks) and goes on running. Default 45s, under the 60 s timeout
	// most clients use; "0s" turns it off. A top-level key: write it above the first [table].
	TaskAfter Duration `toml:"task_after"`
	// ToolsMode is how much of the catalogue clients list (top-level keys, like server_tools):
	// "full" (the default: every offered tool), "search" (ToolsCore plus tools_search and
	// tools_call, which reach every other tool, the hub's and the servers') or "script"
	// (ToolsCore plus tools_search and script_run). A client can ask for its own mode
	// (`switchboard clients connect --tools-mode`). server_tools = "search" without a tools_mode
	// is the search mode with every hub toolset as the core.
	ToolsMode string `toml:"tools_mode"`
	// ToolsCore is what search and script mode always list: tool names, toolsets (files, git,
	// …) or servers' names. Unset: file_read, file_edit, exec.
	ToolsCore []string `toml:"tools_core"`
	// ResultHandleBytes: in search and script mode a result larger than this many bytes is kept
	// by the hub and answered with a handle (result_read, result_search). 0: 16384; negative:
	// never.
	ResultHandleBytes int `toml:"result_handle_bytes"`
}

// ToolsModes are the values of tools_mode.
var ToolsModes = []string{"full", "search", "script"}

// Code is the [code] section: how long an unused language server lives and, per language, the
// command that starts its server instead of the one found on PATH.
//
//	[code]
//	idle = "10m"
//	[code.servers]
//	go = ["/opt/gopls/bin/gopls"]
//	python = ["basedpyright-langserver", "--stdio"]
type Code struct {
	// Idle: a server no call used for this long is stopped ("0s": never). Default 10m.
	Idle Duration `toml:"idle"`
	// Servers maps a language (go, typescript, python, c, rust) to its server's command line.
	Servers map[string][]string `toml:"servers"`
}

// Validate checks the section; errors name the key and the fix.
func (c Code) Validate() error {
	if c.Idle.Duration > 0 && c.Idle.Duration < time.Second {
		return fmt.Errorf("code.idle: %s is too short for a language server to be of use; write at least \"1s\", or \"0s\" to keep servers running", c.Idle.Duration)
	}
	langs := code.Languages()
	for lang, argv := range c.Servers {
		if !slices.Contains(langs, lang) {
			return fmt.Errorf("code.servers.%s: not a language with a server; use one of %s", lang, strings.Join(langs, ", "))
		}
		if len(argv) == 0 || strings.TrimSpace(argv[0]) == "" {
			return fmt.Errorf("code.servers.%s: empty command; write the program and its arguments, e.g. %s = [\"%s\"], or remove the key to use the one on PATH", lang, lang, code.DefaultCommand(lang))
		}
	}
	return nil
}

// IdleTimeout is the pool's idle setting: the configured value, a negative one for "0s" (never).
func (c Code) IdleTimeout() time.Duration {
	if c.Idle.Duration == 0 {
		return -1
	}
	return c.Idle.Duration
}

// ML configures the ml_* tools: generation backends besides the built-in `ollama` (OLLAMA_HOST)
// and `openai` (OPENAI_BASE_URL / OPENAI_API_KEY), the default and judge backends, and InfluxDB.
type ML struct {
	DefaultBackend string `toml:"default_backend"` // empty: the first available backend
	JudgeBackend   string `toml:"judge_backend"`   // ml_score semantic; empty: the default backend
	// InfluxURL is the InfluxDB 1.x server ml_status reads by default (else
	// http://localhost:8086); when set, ml_generate and ml_probe also write a point per generation.
	InfluxURL string      `toml:"influx_url"`
	InfluxDB  string      `toml:"influx_db"` // default "lem"
	Backends  []MLBackend `toml:"backends"`
}

// MLBackend is one [[ml.backends]] entry.
type MLBackend struct {
	Name      string `toml:"name"`
	Kind      string `toml:"kind"` // ollama or openai
	URL       string `toml:"url"`  // Ollama: server root; OpenAI-compatible: base URL with /v1
	Model     string `toml:"model"`
	APIKeyEnv string `toml:"api_key_env"` // environment variable holding the API key
	Endpoint  string `toml:"endpoint"`    // Ollama: chat (default) or generate
}

// RAG configures rag_query, rag_ingest and rag_collections.
type RAG struct {
	Backend     string `toml:"backend"`      // "embedded" (default) or "qdrant"
	URL         string `toml:"url"`          // Qdrant gRPC address; default localhost:6334
	APIKey      string `toml:"api_key"`      // Qdrant API key
	Embedder    string `toml:"embedder"`     // "offline" (default), "ollama" or "openai"
	Model       string `toml:"model"`        // embedding model; default nomic-embed-text (ollama), text-embedding-3-small (openai)
	EmbedderURL string `toml:"embedder_url"` // default $OLLAMA_HOST / $OPENAI_BASE_URL
	Collection  string `toml:"collection"`   // default collection; hostuk-docs
	Dir         string `toml:"dir"`          // embedded store; default <data_dir>/rag
}

// WithEnv is r as the environment e overrides it (Load applies it): SWITCHBOARD_QDRANT_URL
// selects the Qdrant backend at its address.
func (r RAG) WithEnv(e Env) RAG {
	if v := e.QdrantURL; v != "" {
		r.Backend, r.URL = "qdrant", v
	}
	return r
}

// RAGDir is where the embedded RAG store keeps its collections.
func (c Config) RAGDir() string {
	if c.RAG.Dir != "" {
		return c.RAG.Dir
	}
	return filepath.Join(c.DataDir, "rag")
}

// CompilePolicy checks the [policy] and [roots] sections.
func (c Config) CompilePolicy() (*policy.Policy, error) { return policy.Compile(c.Policy, c.Roots) }

// Duration is a time.Duration written as a Go duration string in TOML ("2s", "1m30s").
type Duration struct{ time.Duration }

// UnmarshalText parses "2s"-style durations and refuses negative ones.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return fmt.Errorf("%q is not a duration; write it like \"2s\" or \"1500ms\"", b)
	}
	if v < 0 {
		return fmt.Errorf("%q is negative", b)
	}
	d.Duration = v
	return nil
}

// MarshalText writes the duration back in the same form.
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.Duration.String()), nil }

// Defaults for transports (DESIGN.md).
const (
	DefaultTCPAddr  = "127.0.0.1:9100"
	DefaultHTTPAddr = "127.0.0.1:9101"
	DefaultHubAddr  = "127.0.0.1:0"
	// DefaultDashboardAddr is the headless dashboard's address (after TCP 9100 and HTTP 9101).
	DefaultDashboardAddr = "127.0.0.1:9102"
)

// DefaultTaskAfter is task_after's default: under the 60 s request timeout of most clients.
const DefaultTaskAfter = 45 * time.Second

// Default returns the built-in configuration.
func Default() Config { return defaultFor(ReadEnv()) }

// defaultFor is Default with the paths e implies.
func defaultFor(e Env) Config {
	c := Config{Env: e}
	c.DataDir = e.DefaultDataDir()
	c.Unix.Enabled = true
	c.Unix.Path = e.DefaultSocketPath()
	c.TCP.Addr = DefaultTCPAddr
	c.HTTP.Addr = DefaultHTTPAddr
	c.Hub.Enabled = true
	c.Hub.Addr = DefaultHubAddr
	c.IDE.URL = "ws://localhost:9876/ws"
	c.IDE.ReconnectInterval.Duration = 2 * time.Second
	c.IDE.MaxReconnectInterval.Duration = 30 * time.Second
	c.IDE.ResponseWait.Duration = 1500 * time.Millisecond
	c.Dashboard.Addr = DefaultDashboardAddr
	c.Process.MaxProcesses = 32
	c.Process.BufferBytes = 4 << 20
	c.Process.StopGraceSeconds = 5
	c.RAG.Backend = "embedded"
	c.RAG.Embedder = "offline"
	c.RAG.Collection = "hostuk-docs"
	c.Web.Timeout.Duration = 30 * time.Second
	c.Browser.Headless = true
	c.Desktop.Notifications = true
	c.Code.Idle.Duration = code.DefaultIdle
	c.TaskAfter.Duration = DefaultTaskAfter
	return c
}

// DefaultPath is the config file in the user config dir (~/.config/switchboard/config.toml).
func DefaultPath() string { return ReadEnv().DefaultPath() }

// DefaultPath is the config file under e's config home.
func (e Env) DefaultPath() string {
	dir := e.ConfigHome()
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "switchboard-config")
	}
	return filepath.Join(dir, "switchboard", "config.toml")
}

// DefaultDataDir holds logs, metrics and the fallback socket ($XDG_DATA_HOME/switchboard).
func DefaultDataDir() string { return ReadEnv().DefaultDataDir() }

// DefaultDataDir is the data directory e's XDG_DATA_HOME implies.
func (e Env) DefaultDataDir() string {
	if d := e.XDGDataHome; d != "" {
		return filepath.Join(d, "switchboard")
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".local", "share", "switchboard")
	}
	return filepath.Join(os.TempDir(), "switchboard-data")
}

// DefaultSocketPath is $XDG_RUNTIME_DIR/switchboard/mcp.sock, else under the data dir.
func DefaultSocketPath() string { return ReadEnv().DefaultSocketPath() }

// DefaultSocketPath is the Unix socket path e's XDG_RUNTIME_DIR implies.
func (e Env) DefaultSocketPath() string {
	if d := e.XDGRuntimeDir; d != "" {
		return filepath.Join(d, "switchboard", "mcp.sock")
	}
	return filepath.Join(e.DefaultDataDir(), "mcp.sock")
}

// Load reads defaults, then the file at path (explicit = must exist; empty = the default path,
// optional), then the environment (ReadEnv).
func Load(path string) (Config, error) { return LoadWith(path, ReadEnv()) }

// LoadWith is Load with the environment e.
func LoadWith(path string, e Env) (Config, error) {
	c := defaultFor(e)
	c.Env = e
	explicit := path != ""
	if !explicit {
		path = e.DefaultPath()
	}
	md, err := toml.DecodeFile(path, &c)
	switch {
	case err == nil:
		c.Path = path
		if undec := md.Undecoded(); len(undec) > 0 {
			keys := make([]string, len(undec))
			for i, k := range undec {
				keys[i] = k.String()
			}
			return c, fmt.Errorf("config %s: unknown keys %s; see docs/development.md for the valid keys", path, strings.Join(keys, ", "))
		}
		c.ideURLSet = md.IsDefined("ide", "url")
	case errors.Is(err, fs.ErrNotExist) && !explicit:
		c.Path = path // absent now; the hub picks the file up when it is created
	default:
		return c, fmt.Errorf("config %s: %w", path, err)
	}
	if err := c.applyEnv(); err != nil {
		return c, err
	}
	if err := upstream.ValidateAll(c.Servers, upstream.ReservedNames()); err != nil {
		return c, fmt.Errorf("config %s: %w", c.Path, err)
	}
	if err := c.Code.Validate(); err != nil {
		return c, fmt.Errorf("config %s: %w", c.Path, err)
	}
	if d := c.TaskAfter.Duration; d > 0 && d < time.Second {
		return c, fmt.Errorf("config %s: task_after: %s would turn almost every call into a task; write at least \"1s\" (default \"45s\"), or \"0s\" to turn tasks off", c.Path, d)
	}
	for name, cl := range c.Clients {
		if cl.Project != "" && !filepath.IsAbs(cl.Project) {
			return c, fmt.Errorf("config %s: clients.%s.project: %q is not an absolute path; give the project directory in full", c.Path, name, cl.Project)
		}
	}
	if err := c.validateHTTPAuth(); err != nil {
		return c, fmt.Errorf("config %s: %w", c.Path, err)
	}
	switch c.ServerTools {
	case "", "all", "search":
	default:
		return c, fmt.Errorf("config %s: server_tools: %q is not a mode; use \"all\" or \"search\"", c.Path, c.ServerTools)
	}
	if c.ToolsMode != "" && !slices.Contains(ToolsModes, c.ToolsMode) {
		return c, fmt.Errorf("config %s: tools_mode: %q is not a mode; use \"full\", \"search\" or \"script\"", c.Path, c.ToolsMode)
	}
	return c, nil
}

// HTTP authentication modes ([http] auth).
const (
	HTTPAuthToken = "token"
	HTTPAuthOAuth = "oauth"
)

// OAuth reports whether the HTTP endpoint runs the hub's authorization server.
func (c Config) OAuth() bool { return c.HTTP.Auth == HTTPAuthOAuth }

// ClientMetadataDocuments reports whether the hub's authorization server accepts Client ID
// Metadata Documents ([http] client_metadata_documents, default true).
func (c Config) ClientMetadataDocuments() bool {
	return c.HTTP.ClientMetadataDocuments == nil || *c.HTTP.ClientMetadataDocuments
}

// validateHTTPAuth checks [http] auth, cert and key.
func (c Config) validateHTTPAuth() error {
	switch c.HTTP.Auth {
	case "", HTTPAuthToken, HTTPAuthOAuth:
	default:
		return fmt.Errorf(`http.auth: %q is not a mode; use "token" (loopback clients with the token) or "oauth" (clients from other machines, each approved on the dashboard)`, c.HTTP.Auth)
	}
	if (c.HTTP.Cert == "") != (c.HTTP.Key == "") {
		return errors.New("http.cert and http.key: give both (PEM files), or neither to let the hub make its own certificate")
	}
	if c.HTTP.Cert != "" && !c.OAuth() {
		return errors.New(`http.cert: TLS is served with auth = "oauth"; set it, or remove cert and key`)
	}
	return nil
}

// TLSDir is where the hub keeps the certificate it makes for its HTTP endpoint.
func (c Config) TLSDir() string { return filepath.Join(c.DataDir, "tls") }

// OAuthDir is where the hub's authorization server keeps its grants.
func (c Config) OAuthDir() string { return filepath.Join(c.DataDir, "oauth") }

// applyEnv overrides file settings with the environment's (c.Env).
func (c *Config) applyEnv() error {
	e := c.Env
	if v := e.MCPAddr; v != "" {
		c.TCP.Addr = v
	}
	if v := e.Token; v != "" {
		c.HTTP.Token = v
	}
	if v := e.TCPToken; v != "" {
		c.TCP.Token = v
	}
	if v := e.Workspace; v != "" {
		c.Workspace = v
	}
	if v := e.DataDir; v != "" {
		c.DataDir = v
	}
	if v := e.Socket; v != "" {
		c.Unix.Path = v
	}
	if v := e.IDEURL; v != "" {
		c.IDE.URL = v
		c.ideURLSet = true
	}
	if v := e.Toolsets; v != "" {
		c.Toolsets = strings.Split(v, ",")
	}
	if v := e.IDEToken; v != "" {
		c.IDE.Token = v
	}
	if v := e.Browser; v != "" {
		c.Browser.Path = v
	}
	if v := e.DashboardAddr; v != "" {
		c.Dashboard.Addr = v
	}
	c.RAG = c.RAG.WithEnv(e)
	c.Web.Allow = append(c.Web.Allow, e.FetchAllowList()...)
	if v := e.ReadOnly; v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("SWITCHBOARD_READ_ONLY=%q: use true or false", v)
		}
		c.ReadOnly = b
	}
	return nil
}

// FlagOverride is a config key a command-line flag set for this run.
type FlagOverride struct {
	Flag  string // e.g. --workspace
	Key   string // e.g. workspace, tcp.addr
	Value string // what the flag gave (lists comma-separated)
}

// SetByFlag records that flag set key to value for this run (the caller sets the field itself).
func (c *Config) SetByFlag(flag, key, value string) {
	c.Flags = append(c.Flags, FlagOverride{Flag: flag, Key: key, Value: value})
}

// FetchAllowList is SWITCHBOARD_FETCH_ALLOW's entries (comma-separated), which web_fetch allows
// besides [web] allow.
func (e Env) FetchAllowList() []string {
	var out []string
	for _, v := range strings.Split(e.FetchAllow, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}

// IDEConfigured reports whether an IDE backend URL was configured (file or environment), not
// just the built-in default: only then is the ide toolset on by default.
func (c Config) IDEConfigured() bool { return c.ideURLSet }

// SetIDEURL sets the IDE backend URL as if configured (flags, tests).
func (c *Config) SetIDEURL(u string) { c.IDE.URL, c.ideURLSet = u, true }

// LogDir is where the audit log lives.
func (c Config) LogDir() string { return filepath.Join(c.DataDir, "logs") }

// MetricsDir is where daily metrics files live.
func (c Config) MetricsDir() string {
	if c.Metrics.Dir != "" {
		return c.Metrics.Dir
	}
	return filepath.Join(c.DataDir, "metrics")
}

// ClientSettings are one client's settings ([clients.NAME]).
type ClientSettings struct {
	// Project is the directory the client known by this name works in instead of the hub's
	// workspace: without a session (2026-07-28 over HTTP, its own token), or through the relay
	// `clients connect` wrote (its token in the relay's hello); its paths resolve there. Absolute.
	Project string `toml:"project"`
}

package config

// Edits of the config file for the dashboard's Settings view and its switches
// (app/controller_settings.go). Each takes the file's text and returns it with one group of
// settings changed, through internal/tomledit: comments, order, blank lines and every other
// setting stay as they were, and tomledit refuses an edit that would move anything else. Values
// are checked first; an error names the key as the file spells it (tcp.addr,
// policy.rules[2].tool) and says what would be valid, and nothing is returned.
//
// A key the file leaves out stays out when the new value is what its absence means (switching
// TCP off in a file without [tcp] writes nothing), and an emptied optional value removes its key,
// so the file keeps holding what the user chose rather than a dump of every default.

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/switchboard-hub/switchboard/internal/ml"
	"github.com/switchboard-hub/switchboard/internal/policy"
	"github.com/switchboard-hub/switchboard/internal/tomledit"
)

// ReadFile reads the config file alone: the built-in defaults, then the file (absent: just the
// defaults), without the environment and flags. It is what the file says, for editing it; Load is
// what a hub starting now would run with. It also returns the file's text (nil when absent).
func ReadFile(path string) (Config, []byte, error) {
	c := Default()
	c.Path = path
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return c, nil, nil
	}
	if err != nil {
		return c, nil, fmt.Errorf("config %s: %w", path, err)
	}
	if _, err := toml.Decode(string(data), &c); err != nil {
		return c, data, fmt.Errorf("config %s: %w", path, err)
	}
	return c, data, nil
}

// EnvOverride is an environment variable that overrides a key of the file in this process.
type EnvOverride struct {
	Env string // e.g. MCP_ADDR
	Key string // e.g. tcp.addr
	// Adds: the variable's entries are used besides the file's (SWITCHBOARD_FETCH_ALLOW), rather
	// than instead of them.
	Adds bool
}

// EnvOverrides lists the environment variables set now that override keys the Settings view
// edits: a hub started with the same environment does not use the file's value for those keys.
func EnvOverrides() []EnvOverride { return ReadEnv().Overrides() }

// Overrides is EnvOverrides for the environment e.
func (e Env) Overrides() []EnvOverride {
	var out []EnvOverride
	for _, o := range []EnvOverride{
		{"MCP_ADDR", "tcp.addr", false},
		{"SWITCHBOARD_SOCKET", "unix.path", false},
		{"SWITCHBOARD_WORKSPACE", "workspace", false},
		{"SWITCHBOARD_TOOLSETS", "toolsets", false},
		{"SWITCHBOARD_QDRANT_URL", "rag.backend, rag.url", false},
		{"SWITCHBOARD_TOKEN", "http.token", false},
		{"SWITCHBOARD_TCP_TOKEN", "tcp.token", false},
		{"SWITCHBOARD_FETCH_ALLOW", "web.allow", true},
	} {
		if e.Value(o.Env) != "" {
			out = append(out, o)
		}
	}
	return out
}

// ---- transports ----

// transportKeys names a transport's table, its address key and their defaults.
func transportKeys(name string) (addrKey string, defOn bool, defAddr string, err error) {
	def := Default()
	switch name {
	case "unix":
		return "path", def.Unix.Enabled, def.Unix.Path, nil
	case "tcp":
		return "addr", def.TCP.Enabled, def.TCP.Addr, nil
	case "http":
		return "addr", def.HTTP.Enabled, def.HTTP.Addr, nil
	}
	return "", false, "", fmt.Errorf("transports: %q is not a transport the config file starts; use unix, tcp or http (the WebSocket hub always starts)", name)
}

// maxSocketPath is the longest Unix socket path Linux takes (sun_path holds 108 bytes with its NUL).
const maxSocketPath = 107

// ValidateTransportAddr checks where a transport listens: host:port for tcp and http, an absolute
// path for the unix socket.
func ValidateTransportAddr(name, addr string) error {
	addrKey, _, _, err := transportKeys(name)
	if err != nil {
		return err
	}
	field := name + "." + addrKey
	if name == "unix" {
		switch {
		case addr == "":
			return fmt.Errorf("%s: required; an absolute path such as %q", field, Default().Unix.Path)
		case strings.IndexByte(addr, 0) >= 0:
			return fmt.Errorf("%s: contains a NUL byte", field)
		case !filepath.IsAbs(addr):
			return fmt.Errorf("%s: %q is relative; write an absolute path such as %q", field, addr, Default().Unix.Path)
		case len(addr) > maxSocketPath:
			return fmt.Errorf("%s: %q is %d bytes; Unix socket paths are limited to %d, choose a shorter one", field, addr, len(addr), maxSocketPath)
		}
		return nil
	}
	example := Default().TCP.Addr
	if name == "http" {
		example = Default().HTTP.Addr
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%s: %q is not host:port; write it like %q", field, addr, example)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return fmt.Errorf("%s: %q: the port must be a number from 0 to 65535, e.g. %q", field, addr, example)
	}
	if strings.ContainsAny(host, " /\\") {
		return fmt.Errorf("%s: %q: the host must be an IP address or a name, e.g. %q", field, addr, example)
	}
	return nil
}

// EditTransport sets whether a transport starts with the hub ([unix], [tcp], [http] enabled)
// and, when addr is not empty, where it listens (unix path, tcp and http addr).
func EditTransport(data []byte, name string, enabled bool, addr string) ([]byte, error) {
	addrKey, defOn, defAddr, err := transportKeys(name)
	if err != nil {
		return nil, err
	}
	if addr != "" {
		if err := ValidateTransportAddr(name, addr); err != nil {
			return nil, err
		}
	}
	out, err := setKey(data, []string{name}, "enabled", enabled, defOn)
	if err != nil || addr == "" {
		return out, err
	}
	return setKey(out, []string{name}, addrKey, addr, defAddr)
}

// ---- toolsets and workspace ----

// EditToolsets writes the top-level toolsets list; an empty list removes the key, which means
// the default set (the caller checks the names against the hub's toolsets).
func EditToolsets(data []byte, sets []string) ([]byte, error) {
	for i, s := range sets {
		if strings.TrimSpace(s) == "" {
			return nil, fmt.Errorf("toolsets[%d]: empty; name a toolset such as \"files\"", i+1)
		}
	}
	if len(sets) == 0 {
		return tomledit.Delete(data, nil, "toolsets")
	}
	return tomledit.Set(data, nil, "toolsets", sets)
}

// ToolsetsFollowServers keeps the toolsets key in step with an edit of [[servers]] (old is the
// file before, data after): the key names each server it serves as a toolset of its own, so a
// server added joins a key that lists toolsets one by one (its tools would be off otherwise),
// and a server removed leaves it (a name nothing answers to stops the next start). A file
// without the key, or with "all" in it, serves every server and is left as it is; so is a key
// whose last name would go (an empty key means the default set, which is more, not less).
func ToolsetsFollowServers(old, data []byte) ([]byte, error) {
	var file struct {
		Toolsets []string `toml:"toolsets"`
	}
	if _, err := toml.Decode(string(data), &file); err != nil || len(file.Toolsets) == 0 {
		return data, nil // a file that does not parse is the server edit's to refuse
	}
	var sets []string
	for _, entry := range file.Toolsets {
		for _, n := range strings.Split(entry, ",") {
			if n = strings.TrimSpace(n); strings.EqualFold(n, "all") {
				return data, nil
			} else if n != "" {
				sets = append(sets, n)
			}
		}
	}
	names := func(b []byte) []string {
		var f struct {
			Servers []struct {
				Name string `toml:"name"`
			} `toml:"servers"`
		}
		_, _ = toml.Decode(string(b), &f)
		out := make([]string, 0, len(f.Servers))
		for _, s := range f.Servers {
			out = append(out, s.Name)
		}
		return out
	}
	before, after := names(old), names(data)
	next := slices.DeleteFunc(slices.Clone(sets), func(n string) bool { return slices.Contains(before, n) && !slices.Contains(after, n) })
	for _, n := range after {
		if !slices.Contains(before, n) && !slices.Contains(next, n) {
			next = append(next, n)
		}
	}
	if slices.Equal(next, sets) {
		return data, nil
	}
	if len(next) == 0 {
		return nil, fmt.Errorf("toolsets: names only %s; without it the key would be empty, which serves every toolset: write the toolsets to serve instead first", strings.Join(sets, ", "))
	}
	return EditToolsets(data, next)
}

// EditWorkspace writes the top-level workspace: an existing directory, absolute; empty removes
// the key (the directory switchboard starts in).
func EditWorkspace(data []byte, dir string) ([]byte, error) {
	if dir == "" {
		return tomledit.Delete(data, nil, "workspace")
	}
	if err := ValidateWorkspace(dir); err != nil {
		return nil, err
	}
	return tomledit.Set(data, nil, "workspace", dir)
}

// ValidateWorkspace checks a workspace directory: absolute, existing, a directory.
func ValidateWorkspace(dir string) error {
	if !filepath.IsAbs(dir) {
		return fmt.Errorf("workspace: %q is relative; write an absolute directory such as \"/home/me/project\"", dir)
	}
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("workspace: %s does not exist; create it first or choose another directory", dir)
	case err != nil:
		return fmt.Errorf("workspace: %w", err)
	case !fi.IsDir():
		return fmt.Errorf("workspace: %s is not a directory", dir)
	}
	return nil
}

// ---- policy and roots ----

// PolicyRule is one [[policy.rules]] entry as edited: the rule and where it was in the file.
type PolicyRule struct {
	policy.RuleSpec
	// Origin is the rule's position in the file before the edit (0-based), or -1 for a new rule.
	// A rule that is unchanged keeps its text, comments included, wherever it moves to.
	Origin int
}

// PolicyEdit is the [policy] section and [roots] allow as edited.
type PolicyEdit struct {
	Default    string
	AskTimeout string
	Rules      []PolicyRule
	RootsAllow []string
}

// Config is the edit as the policy package reads it.
func (p PolicyEdit) Config() (policy.Config, policy.RootsConfig) {
	c := policy.Config{Default: p.Default, AskTimeout: p.AskTimeout}
	for _, r := range p.Rules {
		c.Rules = append(c.Rules, r.RuleSpec)
	}
	return c, policy.RootsConfig{Allow: p.RootsAllow}
}

// Compile checks the edit as the hub will (policy.Compile): errors name the key at fault.
func (p PolicyEdit) Compile() (*policy.Policy, error) {
	return policy.Compile(p.Config())
}

// EditPolicy writes [policy] default and ask_timeout, the [[policy.rules]] list (in the given
// order) and [roots] allow, after checking them with policy.Compile.
func EditPolicy(data []byte, p PolicyEdit) ([]byte, error) {
	if _, err := p.Compile(); err != nil {
		return nil, err
	}
	out, err := setString(data, []string{"policy"}, "default", p.Default, string(policy.Allow))
	if err != nil {
		return nil, err
	}
	if out, err = setString(out, []string{"policy"}, "ask_timeout", p.AskTimeout, policy.DefaultAskTimeout.String()); err != nil {
		return nil, err
	}
	entries := make([]tomledit.Entry, len(p.Rules))
	for i, r := range p.Rules {
		pairs := []tomledit.Pair{{Key: "tool", Value: r.Tool}}
		if len(r.Args) > 0 {
			pairs = append(pairs, tomledit.Pair{Key: "args", Value: r.Args})
		}
		if r.Client != "" {
			pairs = append(pairs, tomledit.Pair{Key: "client", Value: r.Client})
		}
		pairs = append(pairs, tomledit.Pair{Key: "action", Value: r.Action})
		entries[i] = tomledit.Entry{Origin: r.Origin, Pairs: pairs}
	}
	if out, err = tomledit.ReplaceTables(out, []string{"policy", "rules"}, entries); err != nil {
		return nil, err
	}
	if len(p.RootsAllow) == 0 {
		return tomledit.Delete(out, []string{"roots"}, "allow")
	}
	return tomledit.Set(out, []string{"roots"}, "allow", p.RootsAllow)
}

// ---- inference and RAG ----

// MLBackendEdit is one [[ml.backends]] entry as edited, with its position in the file before the
// edit (0-based; -1 for a new one), as PolicyRule.Origin.
type MLBackendEdit struct {
	MLBackend
	Origin int
}

// MLEdit is the [ml] keys the Settings view edits.
type MLEdit struct {
	DefaultBackend string
	JudgeBackend   string
	Backends       []MLBackendEdit
	// InfluxURL and InfluxDB are the InfluxDB 1.x server ml_status reads ("": the defaults,
	// http://localhost:8086 and lem); with influx_url set, generations are written there too.
	InfluxURL string
	InfluxDB  string
}

// Validate checks the backends as the hub builds them at start (ml.NewBackend), and that the
// default and judge backends name one (a configured one or a built-in one: ollama, and openai
// when OPENAI_BASE_URL or OPENAI_API_KEY is set).
func (e MLEdit) Validate() error {
	var errs []error
	var cfgs []ml.BackendConfig
	seen := map[string]int{}
	for i, b := range e.Backends {
		field := fmt.Sprintf("ml.backends[%d]", i+1)
		if _, err := ml.NewBackend(b.Name, b.Kind, b.URL, b.Model, "", b.Endpoint); err != nil {
			errs = append(errs, fmt.Errorf("%s.%w", field, err))
			continue
		}
		if j, dup := seen[b.Name]; dup {
			errs = append(errs, fmt.Errorf("%s.name: %q is also backend %d; give each backend its own name", field, b.Name, j))
			continue
		}
		seen[b.Name] = i + 1
		if b.APIKeyEnv != "" && strings.ContainsAny(b.APIKeyEnv, "= \t") {
			errs = append(errs, fmt.Errorf("%s.api_key_env: %q is not an environment variable name; write the variable's name, such as \"GPU_API_KEY\", never the key", field, b.APIKeyEnv))
		}
		cfgs = append(cfgs, ml.BackendConfig{Name: b.Name, Kind: b.Kind, URL: b.URL, Model: b.Model, Endpoint: b.Endpoint})
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	if err := e.validateInflux(); err != nil {
		errs = append(errs, err)
	}
	env := ReadEnv()
	reg, err := ml.NewRegistry(ml.Options{Backends: cfgs, OllamaHost: env.OllamaHost, OpenAIBaseURL: env.OpenAIBaseURL, OpenAIAPIKey: env.OpenAIAPIKey})
	if err != nil {
		return errors.Join(append(errs, err)...)
	}
	names := reg.Names()
	for _, k := range []struct{ field, name string }{{"ml.default_backend", e.DefaultBackend}, {"ml.judge_backend", e.JudgeBackend}} {
		if k.name != "" && !slices.Contains(names, k.name) {
			errs = append(errs, fmt.Errorf("%s: %q is not a backend; available: %s (or empty for the default)", k.field, k.name, strings.Join(names, ", ")))
		}
	}
	return errors.Join(errs...)
}

// validateInflux checks influx_url and influx_db as ml_status opens them (ml.NewInflux), and
// refuses a new password in the URL: the file is no place for a secret (a password the file
// already holds is kept by the caller, which never shows it).
func (e MLEdit) validateInflux() error {
	var errs []error
	if _, err := ml.NewInflux(e.InfluxURL, "lem"); err != nil {
		errs = append(errs, fmt.Errorf("ml.%w", err))
	} else if hasPassword(e.InfluxURL) {
		errs = append(errs, fmt.Errorf("ml.influx_url: %q holds a password, which would be kept in the config file in clear; use an InfluxDB without authentication on loopback, or keep the URL in the file by hand", RedactURL(e.InfluxURL)))
	}
	if e.InfluxDB != "" {
		if _, err := ml.NewInflux("", e.InfluxDB); err != nil {
			errs = append(errs, fmt.Errorf("ml.%w", err))
		} else if strings.TrimSpace(e.InfluxDB) != e.InfluxDB {
			errs = append(errs, fmt.Errorf("ml.influx_db: %q has spaces around it; write the database name alone, like lem", e.InfluxDB))
		}
	}
	return errors.Join(errs...)
}

// EditML writes [ml] default_backend, judge_backend, influx_url and influx_db and the
// [[ml.backends]] list.
func EditML(data []byte, e MLEdit) ([]byte, error) {
	return editML(data, e, false)
}

// EditMLKeepingInfluxURL is EditML for a form that showed influx_url redacted and sent it back
// unchanged: the file's URL (with its password) stays as it is.
func EditMLKeepingInfluxURL(data []byte, e MLEdit) ([]byte, error) {
	return editML(data, e, true)
}

func editML(data []byte, e MLEdit, keepURL bool) ([]byte, error) {
	check := e
	if keepURL {
		check.InfluxURL = ""
	}
	if err := check.Validate(); err != nil {
		return nil, err
	}
	out, err := setString(data, []string{"ml"}, "default_backend", e.DefaultBackend, "")
	if err != nil {
		return nil, err
	}
	if out, err = setString(out, []string{"ml"}, "judge_backend", e.JudgeBackend, ""); err != nil {
		return nil, err
	}
	if !keepURL {
		if out, err = setString(out, []string{"ml"}, "influx_url", e.InfluxURL, ""); err != nil {
			return nil, err
		}
	}
	if out, err = setString(out, []string{"ml"}, "influx_db", e.InfluxDB, ""); err != nil {
		return nil, err
	}
	entries := make([]tomledit.Entry, len(e.Backends))
	for i, b := range e.Backends {
		pairs := []tomledit.Pair{{Key: "name", Value: b.Name}, {Key: "kind", Value: b.Kind}, {Key: "url", Value: b.URL}}
		for _, p := range []tomledit.Pair{{Key: "model", Value: b.Model}, {Key: "api_key_env", Value: b.APIKeyEnv}, {Key: "endpoint", Value: b.Endpoint}} {
			if p.Value != "" {
				pairs = append(pairs, p)
			}
		}
		entries[i] = tomledit.Entry{Origin: b.Origin, Pairs: pairs}
	}
	return tomledit.ReplaceTables(out, []string{"ml", "backends"}, entries)
}

// ValidateRAG checks the [rag] keys the Settings view edits (the collection name is checked by
// the caller with the RAG engine's own rule).
func ValidateRAG(r RAG) error {
	var errs []error
	switch r.Backend {
	case "", "embedded", "qdrant":
	default:
		errs = append(errs, fmt.Errorf("rag.backend: %q is not a backend; use \"embedded\" or \"qdrant\"", r.Backend))
	}
	switch r.Embedder {
	case "", "offline", "ollama", "openai":
	default:
		errs = append(errs, fmt.Errorf("rag.embedder: %q is not an embedder; use \"offline\", \"ollama\" or \"openai\"", r.Embedder))
	}
	if r.Dir != "" && !filepath.IsAbs(r.Dir) {
		errs = append(errs, fmt.Errorf("rag.dir: %q is relative; write an absolute directory, or leave it empty for <data_dir>/rag", r.Dir))
	}
	return errors.Join(errs...)
}

// EditRAG writes the [rag] keys backend, url, embedder, model, embedder_url, collection and dir
// (api_key stays as it is: the dashboard never shows it).
func EditRAG(data []byte, r RAG) ([]byte, error) {
	if err := ValidateRAG(r); err != nil {
		return nil, err
	}
	def := Default().RAG
	out := data
	for _, k := range []struct{ key, v, def string }{
		{"backend", r.Backend, def.Backend},
		{"url", r.URL, def.URL},
		{"embedder", r.Embedder, def.Embedder},
		{"model", r.Model, def.Model},
		{"embedder_url", r.EmbedderURL, def.EmbedderURL},
		{"collection", r.Collection, def.Collection},
		{"dir", r.Dir, def.Dir},
	} {
		var err error
		if out, err = setString(out, []string{"rag"}, k.key, k.v, k.def); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// RAGAsSaved is r as Load reads it back once EditRAG has written it (before the environment's
// overrides, RAG.WithEnv): a key left empty is removed from the file, so it reads as its default.
func RAGAsSaved(r RAG) RAG {
	def := Default().RAG
	for _, f := range []struct{ v, def *string }{
		{&r.Backend, &def.Backend}, {&r.URL, &def.URL}, {&r.Embedder, &def.Embedder}, {&r.Model, &def.Model},
		{&r.EmbedderURL, &def.EmbedderURL}, {&r.Collection, &def.Collection}, {&r.Dir, &def.Dir},
	} {
		if *f.v == "" {
			*f.v = *f.def
		}
	}
	return r
}

// EditAutostart writes [desktop] autostart.
func EditAutostart(data []byte, on bool) ([]byte, error) {
	return tomledit.Set(data, []string{"desktop"}, "autostart", on)
}

// ---- helpers ----

// setKey writes table.key = v, unless the file leaves the key out and v is what its absence
// means (def).
func setKey(data []byte, table []string, key string, v, def any) ([]byte, error) {
	_, set, err := tomledit.Lookup(data, append(slices.Clone(table), key)...)
	if err != nil {
		return nil, err
	}
	if !set && reflect.DeepEqual(v, def) {
		return data, nil
	}
	return tomledit.Set(data, table, key, v)
}

// setString is setKey for an optional string: empty removes the key.
func setString(data []byte, table []string, key, v, def string) ([]byte, error) {
	if v == "" {
		return tomledit.Delete(data, table, key)
	}
	return setKey(data, table, key, v, def)
}

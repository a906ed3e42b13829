// Package clientconf finds the MCP clients installed for a user and adds, checks or removes
// Switchboard's server entry in each client's own configuration file — JSON, JSON with
// comments (JSONC) or TOML — changing nothing else in the file: other servers, comments, key
// order, indentation and trailing commas stay byte for byte. Writes are atomic (a temporary
// file renamed over the original, with the original's mode) and keep a backup of the original.
//
// A project's files are the repository's to shape, not the user's: a cloned repository can hold
// `.vscode/mcp.json` as a symlink to ~/.claude.json, or `.cursor` as one to ~/.ssh. Project-scope
// files are therefore read and written only when every existing component resolves inside the
// project, and their backups go to the hub's data directory, never into the repository.
package clientconf

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/pmezard/go-difflib/difflib"
	"github.com/switchboard-hub/switchboard/internal/atomicfile"
)

// ServerName is the key Switchboard's entry has in every client's server list.
const ServerName = "switchboard"

// Scope is where a client's configuration lives: the user's, or the project's (the current
// directory).
type Scope string

// The scopes a client can be set up in; not every client has both (Client.Scopes).
const (
	ScopeUser    Scope = "user"
	ScopeProject Scope = "project"
)

// Env is the user's environment: HOME, XDG_CONFIG_HOME, the project directory and how to look
// up a command on PATH.
type Env struct {
	Home, ConfigHome, Project string
	// ProjectBackups is where backups of project-scope files go: a directory of the hub's own
	// (the callers pass DATA_DIR/client-backups), so a backup never lands in the repository,
	// where it would be committed or picked up by the client. "" writes no backup for them.
	ProjectBackups string
	Getenv         func(string) string
	LookPath       func(string) (string, error)
}

// OSEnv is the running process's environment, its variables read through getenv
// (config.Env.Value: XDG_CONFIG_HOME, PATH, CLAUDE_CONFIG_DIR, CODEX_HOME).
func OSEnv(getenv func(string) string) (Env, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return Env{}, err
	}
	wd, err := os.Getwd()
	if err != nil {
		return Env{}, err
	}
	cfg := getenv("XDG_CONFIG_HOME")
	if cfg == "" || !filepath.IsAbs(cfg) {
		cfg = filepath.Join(home, ".config")
	}
	path := getenv("PATH")
	return Env{Home: home, ConfigHome: cfg, Project: wd, Getenv: getenv, LookPath: func(name string) (string, error) { return lookPath(path, name) }}, nil
}

// lookPath finds an executable name in the directories of path (a PATH value).
func lookPath(path, name string) (string, error) {
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			continue
		}
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fs.ErrNotExist
}

func (e Env) getenv(k string) string {
	if e.Getenv == nil {
		return ""
	}
	return e.Getenv(k)
}

// Entry is the stdio server Switchboard writes: the relay to the running hub.
type Entry struct {
	Command string
	Args    []string
	// Env are variables the client sets for the relay: TokenEnv, the client's own token. Written
	// beside the user's own variables in the entry's env, which stay.
	Env map[string]string
}

// TokenEnv is the entry's variable carrying the client's own token to `switchboard connect`,
// which presents it to the hub (the relay's hello): the client's identity on the hub.
const TokenEnv = "SWITCHBOARD_CLIENT_TOKEN"

// tokenPattern matches a client token (clienttokens.Prefix and 64 hex digits): Diff shows none.
var tokenPattern = regexp.MustCompile(`sbc_[0-9a-f]{64}`)

// RedactTokens replaces every client token in text with a mark, for diffs and messages.
func RedactTokens(text string) string { return tokenPattern.ReplaceAllString(text, "sbc_…(hidden)") }

// envOf is an entry's env as strings (nil when it has none or it is not an object).
func envOf(got map[string]any) map[string]string {
	m, _ := got["env"].(map[string]any)
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		if s, ok := v.(string); ok {
			out[k] = s
		}
	}
	return out
}

// envHas reports whether got's env holds every variable of want with its value.
func envHas(got map[string]any, want map[string]string) bool {
	have, _ := got["env"].(map[string]any)
	for k, v := range want {
		if s, _ := have[k].(string); s != v {
			return false
		}
	}
	return true
}

// mergedEnv is got's env (the user's variables) with want's set over it; nil when both are empty.
func mergedEnv(got map[string]any, want map[string]string) map[string]string {
	if len(want) == 0 {
		return nil
	}
	out := envOf(got)
	if out == nil {
		out = map[string]string{}
	}
	maps.Copy(out, want)
	return out
}

type format int

const (
	formatJSON format = iota
	formatTOML
)

// Client is one MCP client and where and how it keeps its servers.
type Client struct {
	Name, Display string
	format        format
	dialect       jsonDialect
	container     string // the JSON member holding the servers
	typ           string // "type" the client wants on a stdio entry ("" = none)
	bins          []string
	dirs          func(Env) []string
	paths         map[Scope]func(Env) string
}

// Scopes lists the scopes the client has a file for.
func (c Client) Scopes() []Scope {
	var out []Scope
	for _, s := range []Scope{ScopeUser, ScopeProject} {
		if c.paths[s] != nil {
			out = append(out, s)
		}
	}
	return out
}

// Path is the client's configuration file for scope.
func (c Client) Path(env Env, scope Scope) (string, error) {
	p := c.paths[scope]
	if p == nil {
		var have []string
		for _, s := range c.Scopes() {
			have = append(have, string(s))
		}
		return "", fmt.Errorf("%s has no %s configuration (scopes: %s)", c.Display, scope, strings.Join(have, ", "))
	}
	return p(env), nil
}

// Format names the file format, for people.
func (c Client) Format() string {
	switch {
	case c.format == formatTOML:
		return "TOML"
	case c.dialect.trailingCommas:
		return "JSONC (comments, trailing commas)"
	case c.dialect.comments:
		return "JSON with comments"
	}
	return "JSON"
}

// Installed reports whether the client's configuration directory exists or its command is on PATH.
func (c Client) Installed(env Env) bool {
	for _, d := range c.dirs(env) {
		if st, err := os.Stat(d); err == nil && st.IsDir() {
			return true
		}
	}
	if env.LookPath != nil {
		for _, b := range c.bins {
			if _, err := env.LookPath(b); err == nil {
				return true
			}
		}
	}
	return false
}

func jsonEntry(typ string, e Entry) any {
	return struct {
		Type    string            `json:"type,omitempty"`
		Command string            `json:"command"`
		Args    []string          `json:"args"`
		Env     map[string]string `json:"env,omitempty"`
	}{typ, e.Command, e.Args, e.Env}
}

func jsonc(commas bool) jsonDialect { return jsonDialect{comments: true, trailingCommas: commas} }

var strictJSON = jsonDialect{}

// Clients is every client Switchboard configures, in the order `switchboard clients list` shows.
func Clients() []Client {
	cfg := func(parts ...string) func(Env) string {
		return func(e Env) string { return filepath.Join(append([]string{e.ConfigHome}, parts...)...) }
	}
	home := func(parts ...string) func(Env) string {
		return func(e Env) string { return filepath.Join(append([]string{e.Home}, parts...)...) }
	}
	project := func(parts ...string) func(Env) string {
		return func(e Env) string { return filepath.Join(append([]string{e.Project}, parts...)...) }
	}
	dirs := func(fns ...func(Env) string) func(Env) []string {
		return func(e Env) []string {
			out := make([]string, len(fns))
			for i, f := range fns {
				out[i] = f(e)
			}
			return out
		}
	}
	claudeDir := func(e Env) string {
		if d := e.getenv("CLAUDE_CONFIG_DIR"); d != "" {
			return d
		}
		return filepath.Join(e.Home, ".claude")
	}
	codexHome := func(e Env) string {
		if d := e.getenv("CODEX_HOME"); d != "" {
			return d
		}
		return filepath.Join(e.Home, ".codex")
	}
	// Cline (VS Code extension, CLI and JetBrains plugin alike) keeps its servers in
	// ~/.cline/data/settings/cline_mcp_settings.json since its SDK release, which migrates the
	// extension's older copy in VS Code's globalStorage once; CLINE_MCP_SETTINGS_PATH,
	// CLINE_DATA_DIR and CLINE_DIR move it (resolveMcpSettingsPath in cline's
	// sdk/packages/shared/src/storage/paths.ts).
	clineDir := func(e Env) string {
		if d := e.getenv("CLINE_DIR"); d != "" {
			return d
		}
		return filepath.Join(e.Home, ".cline")
	}
	clineSettings := func(e Env) string {
		if p := e.getenv("CLINE_MCP_SETTINGS_PATH"); p != "" {
			return p
		}
		data := e.getenv("CLINE_DATA_DIR")
		if data == "" {
			data = filepath.Join(clineDir(e), "data")
		}
		return filepath.Join(data, "settings", "cline_mcp_settings.json")
	}
	continueDir := func(e Env) string {
		if d := e.getenv("CONTINUE_GLOBAL_DIR"); d != "" {
			return d
		}
		return filepath.Join(e.Home, ".continue")
	}
	return []Client{
		{Name: "claude-desktop", Display: "Claude Desktop", format: formatJSON, dialect: strictJSON, container: "mcpServers",
			bins: []string{"claude-desktop"}, dirs: dirs(cfg("Claude")),
			paths: map[Scope]func(Env) string{ScopeUser: cfg("Claude", "claude_desktop_config.json")}},
		// Claude Code keeps user-scope servers in ~/.claude.json ($CLAUDE_CONFIG_DIR/.claude.json
		// when set), a file it rewrites itself; project scope is .mcp.json.
		{Name: "claude-code", Display: "Claude Code", format: formatJSON, dialect: strictJSON, container: "mcpServers", typ: "stdio",
			bins: []string{"claude"}, dirs: dirs(claudeDir),
			paths: map[Scope]func(Env) string{
				ScopeUser: func(e Env) string {
					if d := e.getenv("CLAUDE_CONFIG_DIR"); d != "" {
						return filepath.Join(d, ".claude.json")
					}
					return filepath.Join(e.Home, ".claude.json")
				},
				ScopeProject: project(".mcp.json")}},
		{Name: "cursor", Display: "Cursor", format: formatJSON, dialect: strictJSON, container: "mcpServers",
			bins: []string{"cursor"}, dirs: dirs(home(".cursor"), cfg("Cursor")),
			paths: map[Scope]func(Env) string{ScopeUser: home(".cursor", "mcp.json"), ScopeProject: project(".cursor", "mcp.json")}},
		{Name: "vscode", Display: "VS Code", format: formatJSON, dialect: jsonc(true), container: "servers", typ: "stdio",
			bins: []string{"code"}, dirs: dirs(cfg("Code")),
			paths: map[Scope]func(Env) string{ScopeUser: cfg("Code", "User", "mcp.json"), ScopeProject: project(".vscode", "mcp.json")}},
		{Name: "windsurf", Display: "Windsurf", format: formatJSON, dialect: strictJSON, container: "mcpServers",
			bins: []string{"windsurf"}, dirs: dirs(home(".codeium", "windsurf")),
			paths: map[Scope]func(Env) string{ScopeUser: home(".codeium", "windsurf", "mcp_config.json")}},
		{Name: "zed", Display: "Zed", format: formatJSON, dialect: jsonc(true), container: "context_servers",
			bins: []string{"zed", "zeditor"}, dirs: dirs(cfg("zed")),
			paths: map[Scope]func(Env) string{ScopeUser: cfg("zed", "settings.json")}},
		// Gemini CLI strips comments (strip-json-comments) and then JSON.parse: no trailing commas.
		{Name: "gemini-cli", Display: "Gemini CLI", format: formatJSON, dialect: jsonc(false), container: "mcpServers",
			bins: []string{"gemini"}, dirs: dirs(home(".gemini")),
			paths: map[Scope]func(Env) string{ScopeUser: home(".gemini", "settings.json"), ScopeProject: project(".gemini", "settings.json")}},
		{Name: "codex", Display: "Codex", format: formatTOML,
			bins: []string{"codex"}, dirs: dirs(codexHome),
			paths: map[Scope]func(Env) string{ScopeUser: func(e Env) string { return filepath.Join(codexHome(e), "config.toml") }}},
		// Cline reads its settings with JSON.parse: strict JSON.
		{Name: "cline", Display: "Cline", format: formatJSON, dialect: strictJSON, container: "mcpServers",
			bins: []string{"cline"}, dirs: dirs(clineDir, cfg("Code", "User", "globalStorage", "saoudrizwan.claude-dev")),
			paths: map[Scope]func(Env) string{ScopeUser: clineSettings}},
		// Continue loads every *.json in ~/.continue/mcpServers and .continue/mcpServers as a
		// Claude-Desktop-style {"mcpServers": {...}} file, parsed with comment-json; Switchboard
		// writes a block file of its own there rather than Continue's config.yaml (no YAML editor
		// here keeps a user's comments and layout).
		{Name: "continue", Display: "Continue", format: formatJSON, dialect: jsonc(false), container: "mcpServers",
			bins: []string{"cn"}, dirs: dirs(continueDir),
			paths: map[Scope]func(Env) string{
				ScopeUser:    func(e Env) string { return filepath.Join(continueDir(e), "mcpServers", "switchboard.json") },
				ScopeProject: project(".continue", "mcpServers", "switchboard.json")}},
		// JetBrains Junie (IDE plugin and CLI share the files).
		{Name: "junie", Display: "JetBrains Junie", format: formatJSON, dialect: strictJSON, container: "mcpServers",
			bins: []string{"junie"}, dirs: dirs(home(".junie")),
			paths: map[Scope]func(Env) string{ScopeUser: home(".junie", "mcp", "mcp.json"), ScopeProject: project(".junie", "mcp", "mcp.json")}},
	}
}

// Lookup finds a client by name.
func Lookup(name string) (Client, error) {
	var names []string
	for _, c := range Clients() {
		if c.Name == name {
			return c, nil
		}
		names = append(names, c.Name)
	}
	return Client{}, fmt.Errorf("unknown client %q; one of: %s", name, strings.Join(names, ", "))
}

// State is how a client's configuration stands towards this hub.
type State string

// The states, worded for people: `switchboard clients` and the dashboard's Clients view show
// them as they are.
const (
	NotInstalled State = "not installed"
	NotSetUp     State = "not set up"
	Connected    State = "connected to this hub"
	Different    State = "set up differently"
	Unreadable   State = "cannot read the config"
)

// Status is one client's state in one scope.
type Status struct {
	Client Client
	Scope  Scope
	Path   string
	State  State
	Detail string // the entry found when set up differently, or why the file cannot be read
	// ToolsMode is the tools mode the entry asks the hub for (ToolsModeArg), "" for the hub's.
	ToolsMode string
	// HasToken: the entry carries a client token (TokenEnv) for the relay to present.
	HasToken bool
}

// ToolsModeArg is the relay's flag naming the client's own tools mode
// (`switchboard connect --tools-mode search`).
const ToolsModeArg = "--tools-mode"

// splitBare is got without a tools mode.
func splitBare(got map[string]any) map[string]any {
	_, bare := splitToolsMode(got)
	return bare
}

// splitToolsMode returns the mode an entry's relay asks for and the entry without it.
func splitToolsMode(got map[string]any) (mode string, bare map[string]any) {
	args, _ := got["args"].([]any)
	for i, a := range args {
		if a == ToolsModeArg && i+1 < len(args) {
			mode, _ = args[i+1].(string)
			bare = maps.Clone(got)
			bare["args"] = append(slices.Clone(args[:i]), args[i+2:]...)
			return mode, bare
		}
	}
	return "", got
}

// inspect returns the entry under ServerName in data (nil when there is none).
func (c Client) inspect(data []byte, what string) (map[string]any, error) {
	if c.format == formatTOML {
		return tomlInspect(data, ServerName, what)
	}
	if len(strings.TrimSpace(string(data))) == 0 {
		return nil, nil
	}
	return jsonInspect(data, c.dialect, c.container, ServerName, what)
}

// entryMatches reports whether a decoded entry starts this hub's relay: the same command (the
// same file, also when written as a name found on PATH) and the same arguments. Other keys
// (env, trust, approval settings) are the user's and do not matter.
func entryMatches(got map[string]any, want Entry) bool {
	if got == nil {
		return false
	}
	cmd, _ := got["command"].(string)
	if !sameCommand(cmd, want.Command) {
		return false
	}
	args, _ := got["args"].([]any)
	return reflect.DeepEqual(args, toAny(want.Args))
}

func sameCommand(got, want string) bool {
	if got == want {
		return true
	}
	if got == "" {
		return false
	}
	if !filepath.IsAbs(got) {
		// exec.LookPath reads PATH itself; the entry's command resolves as the client's
		// launcher would resolve it.
		p, err := exec.LookPath(got)
		if err != nil {
			return false
		}
		got = p
	}
	a, err1 := os.Stat(got)
	b, err2 := os.Stat(want)
	return err1 == nil && err2 == nil && os.SameFile(a, b)
}

func describe(got map[string]any) string {
	if u, ok := got["url"].(string); ok {
		return "url " + u
	}
	if u, ok := got["httpUrl"].(string); ok {
		return "url " + u
	}
	cmd, _ := got["command"].(string)
	parts := []string{cmd}
	if args, ok := got["args"].([]any); ok {
		for _, a := range args {
			parts = append(parts, fmt.Sprint(a))
		}
	}
	return strings.TrimSpace(strings.Join(parts, " "))
}

// Check returns the client's state in scope for the entry want.
func (c Client) Check(env Env, scope Scope, want Entry) Status {
	st := Status{Client: c, Scope: scope}
	path, err := c.Path(env, scope)
	if err != nil {
		st.State, st.Detail = Unreadable, err.Error()
		return st
	}
	st.Path = path
	if err := env.contained(scope, path); err != nil {
		st.State, st.Detail = Unreadable, err.Error()
		return st
	}
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if scope == ScopeUser && !c.Installed(env) {
			st.State = NotInstalled
		} else {
			st.State = NotSetUp
		}
		return st
	case err != nil:
		st.State, st.Detail = Unreadable, err.Error()
		return st
	}
	got, err := c.inspect(data, path)
	switch {
	case err != nil:
		st.State, st.Detail = Unreadable, err.Error()
	case got == nil:
		st.State = NotSetUp
	case entryMatches(got, want):
		st.State = Connected
		st.ToolsMode, _ = splitToolsMode(got)
		st.HasToken = envOf(got)[TokenEnv] != ""
	case entryMatches(splitBare(got), want):
		// Connected to this hub in a tools mode of its own.
		st.State = Connected
		st.ToolsMode, _ = splitToolsMode(got)
		st.HasToken = envOf(got)[TokenEnv] != ""
	default:
		st.State, st.Detail = Different, describe(got)
	}
	return st
}

// Change is an edit of one configuration file, computed but not yet written.
type Change struct {
	Path     string
	Old, New []byte
	Exists   bool
	Mode     fs.FileMode
	// project is the directory a project-scope file must stay inside (checked again by Apply:
	// the user may take a while to confirm); backupDir is where its backup goes.
	project, backupDir string
}

// Empty reports whether the change changes nothing.
func (ch Change) Empty() bool {
	return ch.Exists && string(ch.Old) == string(ch.New) || !ch.Exists && ch.New == nil
}

// Diff is the change as a unified diff, client tokens hidden (RedactTokens): it is shown on
// terminals and the dashboard.
func (ch Change) Diff() string {
	from := ch.Path
	if !ch.Exists {
		from = "/dev/null"
	}
	d, _ := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A: lines(ch.Old), B: lines(ch.New),
		FromFile: from, ToFile: ch.Path, Context: 3,
	})
	return RedactTokens(d)
}

// Plan computes the edit that connects (e != nil) or disconnects (e == nil) the client in
// scope. A file that does not parse as the client reads it is refused, with the line.
func (c Client) Plan(env Env, scope Scope, e *Entry) (Change, error) {
	path, err := c.Path(env, scope)
	if err != nil {
		return Change{}, err
	}
	ch := Change{Path: path, Mode: 0o600}
	if scope == ScopeProject {
		ch.project, ch.backupDir = env.Project, env.ProjectBackups
		if err := env.contained(scope, path); err != nil {
			return ch, err
		}
	}
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if e == nil {
			return ch, nil
		}
	case err != nil:
		return ch, err
	default:
		st, err := os.Stat(path)
		if err != nil {
			return ch, err
		}
		ch.Exists, ch.Old, ch.Mode = true, data, st.Mode().Perm()
	}
	if e != nil && e.Env[TokenEnv] != "" {
		// The file holds a credential now: readable by the user alone, whatever it was.
		ch.Mode &= 0o600
	}
	if c.format == formatTOML {
		ch.New, err = tomlSet(data, ServerName, e, path)
		return ch, err
	}
	var entry any
	if e != nil {
		got, err := c.inspect(data, path)
		if err != nil {
			return ch, err
		}
		if entryMatches(got, *e) && envHas(got, e.Env) {
			ch.New = data // connected already (maybe with the user's own extra keys)
			return ch, nil
		}
		we := *e
		we.Env = mergedEnv(got, e.Env) // the user's own variables stay beside the token
		entry = jsonEntry(c.typ, we)
	}
	ch.New, err = jsonSet(data, c.dialect, c.container, ServerName, entry, path)
	if err != nil {
		return ch, err
	}
	if err := checkJSONEdit(data, ch.New, c.dialect, c.container, ServerName, entry, path); err != nil {
		return ch, err
	}
	return ch, nil
}

// Apply writes the change: the original is copied to PATH.switchboard-backup-TIMESTAMP first
// (returned; "" for a new file), then the new content goes to a temporary file in the same
// directory with the original's mode and is renamed over the original. A project-scope file's
// backup goes to Env.ProjectBackups instead, named after the file's whole path (none when that
// is ""), and the file must still resolve inside the project.
func (ch Change) Apply(now time.Time) (backup string, err error) {
	if ch.Empty() {
		return "", nil
	}
	if ch.project != "" {
		if err := within(ch.project, ch.Path); err != nil {
			return "", err
		}
	}
	dir := filepath.Dir(ch.Path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	if ch.project != "" {
		// MkdirAll follows a symlinked directory created since the check; look again.
		if err := within(ch.project, ch.Path); err != nil {
			return "", err
		}
	}
	if ch.Exists {
		cur, err := os.ReadFile(ch.Path)
		if err != nil {
			return "", err
		}
		if string(cur) != string(ch.Old) {
			return "", fmt.Errorf("%s changed while switchboard was editing it (the client rewrote it?); nothing written, run this again", ch.Path)
		}
		if backup, err = ch.backup(now); err != nil {
			return "", fmt.Errorf("backup: %w", err)
		}
	}
	target := ch.Path
	if p, err := filepath.EvalSymlinks(ch.Path); err == nil {
		target = p // a symlinked config (dotfiles repo) stays a symlink
	}
	return backup, atomicfile.WriteMode(target, ch.New, ch.Mode)
}

// backup copies the original to a new file (never over an existing one) and returns its path:
// beside the file, or for a project-scope file in ch.backupDir ("" when there is none).
func (ch Change) backup(now time.Time) (string, error) {
	base := ch.Path
	if ch.project != "" {
		if ch.backupDir == "" {
			return "", nil
		}
		if err := os.MkdirAll(ch.backupDir, 0o700); err != nil {
			return "", err
		}
		// The whole path in the name: which project the file belongs to stays readable in a
		// listing of the directory.
		flat := strings.ReplaceAll(strings.TrimPrefix(filepath.Clean(ch.Path), string(filepath.Separator)), string(filepath.Separator), "%")
		base = filepath.Join(ch.backupDir, flat)
	}
	stamp := now.Format("20060102-150405")
	name := base + ".switchboard-backup-" + stamp
	for i := 2; ; i++ {
		if _, err := os.Lstat(name); errors.Is(err, fs.ErrNotExist) {
			break
		}
		name = fmt.Sprintf("%s.switchboard-backup-%s-%d", base, stamp, i)
	}
	// O_EXCL: a name that appeared since the Lstat (a symlink planted there) is not followed.
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, ch.Mode)
	if err != nil {
		return "", err
	}
	if _, err := f.Write(ch.Old); err != nil {
		f.Close()
		return "", err
	}
	return name, f.Close()
}

// contained refuses a project-scope path that leaves env.Project (see within).
func (e Env) contained(scope Scope, path string) error {
	if scope != ScopeProject {
		return nil
	}
	return within(e.Project, path)
}

// within checks that path, a file under project, stays inside project on disk: every component
// that exists, the file itself included when it is a symlink, must resolve (EvalSymlinks) to a
// place inside the project's own resolved directory. A repository decides what its
// `.vscode/mcp.json` or `.cursor` is; following one that points at ~/.claude.json or ~/.ssh would
// read and rewrite the user's files from a project-scope setup.
func within(project, path string) error {
	refuse := func(format string, a ...any) error {
		return fmt.Errorf("scope project: refusing %s: %s; only files inside the project %s are written for the project scope (remove the link, or use --scope user to set up the client for your user)",
			path, fmt.Sprintf(format, a...), project)
	}
	root, err := filepath.EvalSymlinks(project)
	if err != nil {
		return fmt.Errorf("scope project: the project directory %s: %w", project, err)
	}
	rel, err := filepath.Rel(project, path)
	if err != nil || !filepath.IsLocal(rel) {
		return refuse("it is not under the project directory")
	}
	cur := project
	for _, part := range strings.Split(rel, string(filepath.Separator)) {
		cur = filepath.Join(cur, part)
		_, err := os.Lstat(cur)
		if errors.Is(err, fs.ErrNotExist) {
			return nil // created by Apply, inside what has been checked so far
		}
		if err != nil {
			return refuse("%v", err)
		}
		real, err := filepath.EvalSymlinks(cur)
		if err != nil {
			return refuse("%s is a symlink whose target cannot be resolved (%v)", cur, err)
		}
		if r, err := filepath.Rel(root, real); err != nil || !filepath.IsLocal(r) {
			return refuse("%s is a symlink to %s, outside the project", cur, real)
		}
	}
	return nil
}

// lines splits text after each newline; a last line without one gets a marker, as in diff(1).
func lines(text []byte) []string {
	if len(text) == 0 {
		return nil
	}
	out := strings.SplitAfter(string(text), "\n")
	if out[len(out)-1] == "" {
		return out[:len(out)-1]
	}
	out[len(out)-1] += "\n\\ No newline at end of file\n"
	return out
}

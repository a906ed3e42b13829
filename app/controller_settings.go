package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/switchboard-hub/switchboard/internal/autostart"
	"github.com/switchboard-hub/switchboard/internal/clientconf"
	"github.com/switchboard-hub/switchboard/internal/config"
	"github.com/switchboard-hub/switchboard/internal/policy"
	"github.com/switchboard-hub/switchboard/internal/rag"
	"github.com/switchboard-hub/switchboard/internal/tomledit"
	"github.com/switchboard-hub/switchboard/mcp"
	mcptransport "github.com/switchboard-hub/switchboard/mcp/transport"
)

// The dashboard's Settings view: the settings people otherwise write in the config file, edited
// in the file itself (internal/config/edit.go keeps comments, order and every other setting), so
// the file stays the source of truth for people who edit it by hand. Each save is checked first
// (an error names the key and the fix, and nothing is written), audited like the other
// dashboard actions, and applied as far as the running hub can:
//
//   - transports and toolsets switch live (before the file is written: a change the hub refuses
//     is not saved);
//   - the policy and [roots] are in force as soon as the file is written (the policy store
//     reloads it);
//   - the inference backends ([ml]) are put in force once the file is written; RAG ([rag]) is
//     switched before it is written (a backend the hub cannot open or reach is refused, and
//     nothing is saved);
//   - the workspace key moves the running hub too unless a flag or the environment chose this
//     run's folder (app/project.go: the desktop's project folder is also chosen, and changed
//     live, in the header and the tray). Settings lists what is saved but not yet running
//     under Pending.
//
// The Overview's transport and toolset switches (and the tray's transport items) save too, so
// a switch the user flips stays flipped after a restart.

// Settings is GET /api/settings: what the config file says (what the form edits), what the hub
// runs now, and what overrides the file.
type Settings struct {
	// Path is the config file; Exists is false until something is saved to it.
	Path       string             `json:"path"`
	Exists     bool               `json:"exists"`
	Transports []TransportSetting `json:"transports"`
	Toolsets   ToolsetSettings    `json:"toolsets"`
	Workspace  WorkspaceSetting   `json:"workspace"`
	Policy     PolicySettings     `json:"policy"`
	ML         MLSettings         `json:"ml"`
	RAG        RAGSettings        `json:"rag"`
	Autostart  AutostartSetting   `json:"autostart"`
	// Security is how TCP and HTTP clients are let in (controller_settings_security.go).
	Security SecuritySettings `json:"security"`
	// Web is web_fetch's [web] section.
	Web WebSettings `json:"web"`
	// Code is the [code] section: the language-server pool (controller_settings_code.go).
	Code CodeSettings `json:"code"`
	// Tasks is task_after: the file's and the running hub's (controller_settings_tasks.go).
	Tasks TaskSettings `json:"tasks"`
	// Overrides are environment variables of this hub that override keys of the file.
	Overrides []SettingOverride `json:"overrides"`
	// Flags are command-line flags this hub was started with that set a key to something other
	// than the file's value: the saved value applies when it is started without them.
	Flags []SettingFlag `json:"flags"`
	// Pending names the sections whose values in the file the running hub does not use
	// ("workspace", "ml", "rag"): a hand edit it could not put in force (a Qdrant server that did
	// not answer, a workspace that is not a directory; the hub log says why), or a workspace
	// this run took from --workspace or SWITCHBOARD_WORKSPACE.
	Pending []string `json:"pending"`
}

// TransportSetting is one transport the config file starts: saved (enabled, addr) and live.
type TransportSetting struct {
	Name    string `json:"name"`    // unix, tcp, http
	Enabled bool   `json:"enabled"` // saved: starts with the hub
	// Addr is the saved address (tcp, http: host:port) or socket path (unix).
	Addr        string `json:"addr"`
	Running     bool   `json:"running"`
	RunningAddr string `json:"runningAddr"`
	Error       string `json:"error,omitempty"`
}

// ToolsetSettings is the top-level toolsets key and the hub's own toolsets (upstream servers'
// toolsets are switched on the Overview and kept with the Servers tab).
type ToolsetSettings struct {
	// Saved is the file's list; empty: the default set.
	Saved []string `json:"saved"`
	// Default is what an empty list means: every set but ide, which is on when an IDE backend
	// URL is configured.
	Default   []string        `json:"default"`
	Available []ToolsetChoice `json:"available"`
}

// ToolsetChoice is one of the hub's own toolsets with its live state.
type ToolsetChoice struct {
	Name    string `json:"name"`
	Title   string `json:"title"`
	Enabled bool   `json:"enabled"` // served now
	Tools   int    `json:"tools"`
}

// WorkspaceSetting is the saved workspace ("" : the directory switchboard starts in) and the one
// the hub runs with.
type WorkspaceSetting struct {
	Saved   string `json:"saved"`
	Running string `json:"running"`
}

// PolicyRule is one [[policy.rules]] entry as the form edits it.
type PolicyRule struct {
	Tool   string            `json:"tool"`
	Args   map[string]string `json:"args,omitempty"`
	Client string            `json:"client,omitempty"`
	Action string            `json:"action"`
	// Origin is the rule's 1-based position in the file when it was read (0: a new rule), so a
	// moved rule keeps its text and comments.
	Origin int `json:"origin,omitempty"`
}

// PolicyInput is the [policy] section and [roots] allow as the form saves or tests them.
type PolicyInput struct {
	Default    string       `json:"default"`
	AskTimeout string       `json:"askTimeout"`
	Rules      []PolicyRule `json:"rules"`
	Roots      []string     `json:"roots"`
}

// PolicySettings is PolicyInput as saved, and the policy in force.
type PolicySettings struct {
	Default    string        `json:"default"`
	AskTimeout string        `json:"askTimeout"`
	Rules      []PolicyRule  `json:"rules"`
	Roots      []string      `json:"roots"`
	Status     policy.Status `json:"status"`
}

// PolicyTest is a call to decide against a policy being edited (not yet saved).
type PolicyTest struct {
	Policy PolicyInput `json:"policy"`
	Tool   string      `json:"tool"`
	// Args is the call's arguments: a JSON object (or a string holding one); empty for none.
	Args   json.RawMessage `json:"args,omitempty"`
	Client string          `json:"client,omitempty"`
}

// PolicyDecision is what the policy decides for a call, as `switchboard policy check` prints it.
type PolicyDecision struct {
	Decision string `json:"decision"` // allow, ask or deny
	Rule     string `json:"rule"`     // the rule that decided, or "default policy (allow)"
	// RuleIndex is the deciding rule's 1-based position in the list tested (0: the default).
	RuleIndex int `json:"ruleIndex"`
	// Warnings are PolicyWarnings: rules tested that can never match, and a tool asked about
	// that the hub never decides by that name.
	Warnings []string `json:"warnings,omitempty"`
}

// MLBackendSetting is one [[ml.backends]] entry.
type MLBackendSetting struct {
	Name      string `json:"name"`
	Kind      string `json:"kind"`
	URL       string `json:"url"`
	Model     string `json:"model,omitempty"`
	APIKeyEnv string `json:"apiKeyEnv,omitempty"`
	Endpoint  string `json:"endpoint,omitempty"`
	Origin    int    `json:"origin,omitempty"` // as PolicyRule.Origin
}

// MLInput is what the form saves of [ml].
type MLInput struct {
	DefaultBackend string             `json:"defaultBackend"`
	JudgeBackend   string             `json:"judgeBackend"`
	Backends       []MLBackendSetting `json:"backends"`
	// InfluxURL and InfluxDB are the InfluxDB 1.x server ml_status reads ("" : the defaults;
	// left out: the file's stay). A URL that holds a password is shown with the password hidden;
	// sent back unchanged, the file's URL stays as it is.
	InfluxURL *string `json:"influxUrl,omitempty"`
	InfluxDB  *string `json:"influxDb,omitempty"`
}

// MLSettings is MLInput as saved, and the backends the running hub has.
type MLSettings struct {
	DefaultBackend string             `json:"defaultBackend"`
	JudgeBackend   string             `json:"judgeBackend"`
	Backends       []MLBackendSetting `json:"backends"`
	Running        []string           `json:"running"`
	InfluxURL      string             `json:"influxUrl"` // password hidden
	InfluxDB       string             `json:"influxDb"`
}

// RAGSettings is the [rag] keys the form edits. The API key is never shown: APIKey says how the
// file holds it, and SetRAGAPIKey changes it (SaveRAG leaves it as it is).
type RAGSettings struct {
	Backend     string `json:"backend"`
	URL         string `json:"url"`
	Embedder    string `json:"embedder"`
	Model       string `json:"model"`
	EmbedderURL string `json:"embedderUrl"`
	Collection  string `json:"collection"`
	Dir         string `json:"dir"`
	// APIKey is read only (ignored by SaveRAG).
	APIKey *RAGAPIKeySetting `json:"apiKey,omitempty"`
}

// AutostartSetting is the tray's "Start at login": the XDG autostart entry, and [desktop]
// autostart when the file sets it (then applied at every desktop start).
type AutostartSetting struct {
	Available bool   `json:"available"` // the running binary's path is known
	Enabled   bool   `json:"enabled"`
	Entry     string `json:"entry"`
	Config    *bool  `json:"config,omitempty"`
}

// SettingOverride is an environment variable that overrides a key of the file in this hub.
type SettingOverride struct {
	Env string `json:"env"`
	Key string `json:"key"`
	// Adds: the variable's entries are used besides the file's (SWITCHBOARD_FETCH_ALLOW).
	Adds bool `json:"adds,omitempty"`
}

// TransportInput is one transport as the form saves it; Addr "" keeps the saved address.
type TransportInput struct {
	Name    string `json:"name"`
	Enabled bool   `json:"enabled"`
	Addr    string `json:"addr"`
}

// SettingsChange is the answer of a save: the file, its diff (empty when nothing in it had to
// change), when the change takes effect, and the settings after it.
type SettingsChange struct {
	Path string `json:"path"`
	Diff string `json:"diff"`
	// Applies is "now" (in force in the running hub) or "next start".
	Applies  string   `json:"applies"`
	Note     string   `json:"note"`
	Settings Settings `json:"settings"`
}

// When a saved change takes effect (SettingsChange.Applies).
const (
	appliesNow       = "now"
	appliesNextStart = "next start"
)

// errNoConfigPath: a hub built without a config file path (tests) has nothing to save to.
var errNoConfigPath = errors.New("settings: this hub has no config file; start it with --config FILE")

// ---- reading ----

// Settings reads the config file and the running hub's state.
func (c *Controller) Settings() (Settings, error) {
	path := c.st.Config.Path
	if path == "" {
		return Settings{}, errNoConfigPath
	}
	file, data, err := config.ReadFile(path)
	if err != nil {
		return Settings{}, fmt.Errorf("%w; fix the file (the Settings view edits it once it reads)", err)
	}
	s := Settings{Path: path, Exists: data != nil, Overrides: []SettingOverride{}, Pending: []string{}}

	live := map[string]mcp.TransportStatus{}
	for _, t := range c.st.Transports.Status() {
		live[t.Name] = t
	}
	for _, t := range []struct {
		name    string
		enabled bool
		addr    string
	}{{mcp.TransportUnix, file.Unix.Enabled, file.Unix.Path}, {mcp.TransportTCP, file.TCP.Enabled, file.TCP.Addr}, {mcp.TransportHTTP, file.HTTP.Enabled, file.HTTP.Addr}} {
		l := live[t.name]
		ts := TransportSetting{Name: t.name, Enabled: t.enabled, Addr: t.addr, Running: l.Running, Error: l.Error}
		if l.Running {
			ts.RunningAddr = l.Addr
		}
		s.Transports = append(s.Transports, ts)
	}

	s.Toolsets = ToolsetSettings{Saved: orEmpty(file.Toolsets), Default: mcp.DefaultToolsets(c.st.Config.IDEConfigured())}
	for _, ts := range c.st.Service.Toolsets() {
		if !ts.Upstream {
			s.Toolsets.Available = append(s.Toolsets.Available, ToolsetChoice{Name: ts.Name, Title: ts.Title, Enabled: ts.Enabled, Tools: len(ts.Tools)})
		}
	}

	s.Workspace = WorkspaceSetting{Saved: file.Workspace, Running: c.st.Service.WorkspaceDir()}

	s.Policy = PolicySettings{Default: file.Policy.Default, AskTimeout: file.Policy.AskTimeout, Rules: []PolicyRule{},
		Roots: orEmpty(file.Roots.Allow), Status: c.st.Policy.Status()}
	for i, r := range file.Policy.Rules {
		s.Policy.Rules = append(s.Policy.Rules, PolicyRule{Tool: r.Tool, Args: r.Args, Client: r.Client, Action: r.Action, Origin: i + 1})
	}

	s.ML = MLSettings{DefaultBackend: file.ML.DefaultBackend, JudgeBackend: file.ML.JudgeBackend, Backends: []MLBackendSetting{}, Running: []string{},
		InfluxURL: config.RedactURL(file.ML.InfluxURL), InfluxDB: file.ML.InfluxDB}
	for i, b := range file.ML.Backends {
		s.ML.Backends = append(s.ML.Backends, MLBackendSetting{Name: b.Name, Kind: b.Kind, URL: b.URL, Model: b.Model, APIKeyEnv: b.APIKeyEnv, Endpoint: b.Endpoint, Origin: i + 1})
	}
	// The backends the hub runs: from the [ml] in force (the start's, or the last one saved here)
	// and this process's environment, as at start.
	runCfg := c.st.Config
	runCfg.ML = c.st.RunningML()
	if reg, err := NewMLRegistry(runCfg); err == nil {
		s.ML.Running = reg.Names()
	}

	r := file.RAG
	s.RAG = RAGSettings{Backend: r.Backend, URL: r.URL, Embedder: r.Embedder, Model: r.Model, EmbedderURL: r.EmbedderURL, Collection: r.Collection, Dir: r.Dir,
		APIKey: ragAPIKeySetting(r.APIKey)}

	s.Autostart = AutostartSetting{Config: file.Desktop.Autostart}
	if _, err := AutostartExe(); err == nil {
		s.Autostart.Available, s.Autostart.Enabled = true, autostart.Enabled(c.st.Config.Env.ConfigHome())
	}
	s.Autostart.Entry, _ = autostart.Path(c.st.Config.Env.ConfigHome())

	for _, o := range config.EnvOverrides() {
		s.Overrides = append(s.Overrides, SettingOverride{Env: o.Env, Key: o.Key, Adds: o.Adds})
	}
	s.Security = c.securitySettings(file)
	s.Web = webSettings(file, data, c.st.Config.Env)
	s.Code = c.codeSettings(file, data)
	s.Tasks = c.taskSettings(data)
	s.Flags = c.flagOverrides(file)
	if data != nil {
		s.Pending = c.pending()
	}
	return s, nil
}

// pending names the sections whose saved values differ from what the hub started with: what a
// start now would run with (config.Load: the file and the environment) against what runs.
func (c *Controller) pending() []string {
	out := []string{}
	next, err := config.Load(c.st.Config.Path)
	if err != nil {
		return out
	}
	if next.Workspace != "" {
		dir := next.Workspace
		if r, err := filepath.EvalSymlinks(dir); err == nil {
			dir = r
		}
		if dir != c.st.Service.WorkspaceDir() {
			out = append(out, "workspace")
		}
	}
	if !reflect.DeepEqual(next.ML, c.st.RunningML()) {
		out = append(out, "ml")
	}
	if next.RAG != c.st.RunningRAG() {
		out = append(out, "rag")
	}
	return out
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// ---- saving ----

// editConfig is one change of the config file, under the stack's lock on the file: edit turns the
// file's text into the new text (nothing is written when it fails, nor when the text stays the
// same); live, when not nil, applies the change to the running hub before the file is written,
// so a change the hub refuses is not saved; after, when not nil, runs once the file is written.
// It returns the file's diff ("" when unchanged).
func (c *Controller) editConfig(edit func([]byte) ([]byte, error), live, after func() error) (string, error) {
	path := c.st.Config.Path
	if path == "" {
		return "", errNoConfigPath
	}
	c.st.serversMu.Lock()
	defer c.st.serversMu.Unlock()
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("config %s: %w", path, err)
	}
	data, err := edit(old)
	if err != nil {
		return "", err
	}
	if live != nil {
		if err := live(); err != nil {
			return "", err
		}
	}
	if string(data) == string(old) {
		return "", nil
	}
	if err := tomledit.WriteFile(path, data); err != nil {
		return "", fmt.Errorf("config %s: %w (the change is live but not saved)", path, err)
	}
	diff := fileDiff(path, old, data)
	if after != nil {
		if err := after(); err != nil {
			return diff, err
		}
	}
	return diff, nil
}

// fileDiff is the unified diff of the config file from old to data, its secrets hidden: a token
// or a password beside the change would show in the diff's context, and never to a person.
func fileDiff(path string, old, data []byte) string {
	return config.Redact(clientconf.Change{Path: path, Old: old, New: data, Exists: old != nil}.Diff(),
		append(config.Secrets(old), config.Secrets(data)...)...)
}

// save runs editConfig audited as action and answers with the settings after it. For a preview
// (dryRun) it only computes the edit: see previewEdit.
func (c *Controller) save(action string, args any, applies, note string, edit func([]byte) ([]byte, error), live, after func() error) (SettingsChange, error) {
	if c.dryRun {
		return c.previewEdit(applies, note, edit)
	}
	end := c.begin(action, args)
	diff, err := c.editConfig(edit, live, after)
	end(err)
	if err != nil {
		return SettingsChange{}, err
	}
	s, err := c.Settings()
	if err != nil {
		return SettingsChange{}, err
	}
	return SettingsChange{Path: s.Path, Diff: diff, Applies: applies, Note: note, Settings: s}, nil
}

// chain chains edits of the file's text.
func chain(edits ...func([]byte) ([]byte, error)) func([]byte) ([]byte, error) {
	return func(data []byte) ([]byte, error) {
		var err error
		for _, e := range edits {
			if data, err = e(data); err != nil {
				return nil, err
			}
		}
		return data, nil
	}
}

// SaveTransports saves which transports start with the hub and where they listen, and applies
// it now: a transport switched on opens, one switched off closes, a new address reopens a running
// one there. Only an address that differs from the saved one moves the live transport (an
// environment override such as MCP_ADDR keeps its address until a new one is chosen). When the hub
// refuses a change (the port is taken, a non-loopback TCP address without a token) the transports
// are put back as they were and nothing is saved.
func (c *Controller) SaveTransports(in []TransportInput) (SettingsChange, error) {
	if c.st.Config.Path == "" {
		return SettingsChange{}, errNoConfigPath
	}
	file, _, err := config.ReadFile(c.st.Config.Path)
	if err != nil {
		return SettingsChange{}, err
	}
	saved := map[string]string{mcp.TransportUnix: file.Unix.Path, mcp.TransportTCP: file.TCP.Addr, mcp.TransportHTTP: file.HTTP.Addr}
	var errs []error
	seen := map[string]bool{}
	for i, t := range in {
		switch {
		case t.Name == mcp.TransportWS:
			errs = append(errs, errors.New("transports: ws: the WebSocket hub always starts (the dashboard runs on it); it has no setting here"))
		case !isFileTransport(t.Name):
			errs = append(errs, fmt.Errorf("transports[%d]: %q is not a transport; use unix, tcp or http", i+1, t.Name))
		case seen[t.Name]:
			errs = append(errs, fmt.Errorf("transports: %s is listed twice", t.Name))
		case t.Addr != "":
			if err := config.ValidateTransportAddr(t.Name, t.Addr); err != nil {
				errs = append(errs, err)
			}
		}
		seen[t.Name] = true
	}
	if err := errors.Join(errs...); err != nil {
		return SettingsChange{}, err
	}
	var edits []func([]byte) ([]byte, error)
	for _, t := range in {
		edits = append(edits, func(b []byte) ([]byte, error) { return config.EditTransport(b, t.Name, t.Enabled, t.Addr) })
	}
	live := func() error {
		ctx, cancel := context.WithTimeout(context.Background(), mcptransport.DrainTimeout+5*time.Second)
		defer cancel()
		type was struct {
			name, addr string
			running    bool
		}
		var undo []was
		rollback := func() {
			for i := len(undo) - 1; i >= 0; i-- {
				u := undo[i]
				_ = c.st.Transports.SetAddr(ctx, u.name, u.addr)
				_ = c.st.Transports.Set(ctx, u.name, u.running)
			}
		}
		for _, t := range in {
			undo = append(undo, was{t.Name, c.st.Transports.ConfigAddr(t.Name), c.st.Transports.Addr(t.Name) != ""})
			if t.Addr != "" && t.Addr != saved[t.Name] {
				if err := c.st.Transports.SetAddr(ctx, t.Name, t.Addr); err != nil {
					rollback()
					return fmt.Errorf("%s: %w; nothing saved", transportField(t.Name), err)
				}
			}
			if err := c.st.Transports.Set(ctx, t.Name, t.Enabled); err != nil {
				rollback()
				return fmt.Errorf("%s.enabled: %w; nothing saved", t.Name, err)
			}
		}
		return nil
	}
	args := struct {
		Transports []TransportInput `json:"transports"`
	}{in}
	return c.save("settings_transports", args, appliesNow, "Switched now, and at every start.", chain(edits...), live, nil)
}

// isFileTransport reports whether the config file starts the transport (the WebSocket hub
// always starts).
func isFileTransport(name string) bool {
	return name == mcp.TransportUnix || name == mcp.TransportTCP || name == mcp.TransportHTTP
}

func transportField(name string) string {
	if name == mcp.TransportUnix {
		return "unix.path"
	}
	return name + ".addr"
}

// SaveToolsets saves the toolsets served to clients (the top-level toolsets key) and switches
// them now (clients get tools/list_changed). The default set is saved as no key at all, so the
// file keeps following the default (ide joins it when an IDE backend is configured).
func (c *Controller) SaveToolsets(names []string) (SettingsChange, error) {
	servers, serversOn := c.serverToolsets()
	sets, err := mcp.ParseToolsets(names, servers...)
	if err != nil {
		return SettingsChange{}, err
	}
	if len(sets) == 0 {
		return SettingsChange{}, errors.New("toolsets: choose at least one toolset (an empty list in the file means the default set)")
	}
	// The servers not named keep their state (Service.SetToolsets), and the key, which names
	// servers too, says so.
	saved := c.toolsetsToSave(append(slices.Clone(sets), serversOn...))
	return c.save("settings_toolsets", struct {
		Toolsets []string `json:"toolsets"`
	}{sets}, appliesNow, "Served now; connected clients were told the tool list changed.",
		func(b []byte) ([]byte, error) { return config.EditToolsets(b, saved) },
		func() error { _, err := c.st.Service.SetToolsets(sets); return err }, nil)
}

// toolsetsToSave is the toolsets key for the toolsets in on: the hub's own sets in the order the
// hub lists them, then the upstream servers among on (the key names servers too: one it leaves
// out is off at the next start), or nil when that is the default (the default sets and every
// server), so the file keeps following the default.
func (c *Controller) toolsetsToSave(on []string) []string {
	var own, servers []string
	for _, n := range mcp.ToolsetNames() {
		if slices.Contains(on, n) {
			own = append(own, n)
		}
	}
	all, _ := c.serverToolsets()
	for _, n := range all {
		if slices.Contains(on, n) {
			servers = append(servers, n)
		}
	}
	if slices.Equal(own, mcp.DefaultToolsets(c.st.Config.IDEConfigured())) && len(servers) == len(all) {
		return nil
	}
	return append(own, servers...)
}

// serverToolsets names the upstream servers' toolsets, and those of them that are on now.
func (c *Controller) serverToolsets() (all, on []string) {
	for _, ts := range c.st.Service.Toolsets() {
		if ts.Upstream {
			all = append(all, ts.Name)
			if ts.Enabled {
				on = append(on, ts.Name)
			}
		}
	}
	return all, on
}

// SaveWorkspace saves the workspace key (an existing absolute directory; "" for the directory
// switchboard starts in), for every start, and moves the running hub there now unless this run's
// folder came from --workspace or SWITCHBOARD_WORKSPACE. A folder the project chooser refuses
// (/, the home directory, one holding it) is refused here too, before the file is written: a
// start would not use it (ResolveProject), and the key must not say otherwise.
func (c *Controller) SaveWorkspace(dir string) (SettingsChange, error) {
	dir = strings.TrimSpace(dir)
	if dir != "" {
		if err := config.ValidateWorkspace(dir); err != nil {
			return SettingsChange{}, err
		}
		if _, err := checkProject(dir, UserHome()); err != nil {
			return SettingsChange{}, fmt.Errorf("workspace: %s", strings.TrimPrefix(err.Error(), "project folder: "))
		}
	}
	args := struct {
		Workspace string `json:"workspace"`
	}{dir}
	edit := func(b []byte) ([]byte, error) { return config.EditWorkspace(b, dir) }
	// The key is the folder of every start, and the running hub moves to it now too (as the
	// header's Project button does) unless this run's folder was given by --workspace or
	// SWITCHBOARD_WORKSPACE, which win over the file.
	if src := c.st.Project().Source; dir == "" || src == ProjectFromFlag || src == ProjectFromEnv {
		return c.save("settings_workspace", args, appliesNextStart, "Used from the next start, in every mode (a --workspace flag or SWITCHBOARD_WORKSPACE still wins); the header's Project button changes the running hub's folder now.",
			edit, nil, nil)
	}
	ch, err := c.save("settings_workspace", args, appliesNow, "The running hub works there now (connected clients' next calls too), and every start uses it (a --workspace flag or SWITCHBOARD_WORKSPACE still wins).",
		edit, nil, nil)
	if err != nil {
		return ch, err
	}
	// The file already says dir: only the running hub moves (the file keeps what the user typed).
	if err := c.moveProjectToConfig(dir); err != nil {
		return SettingsChange{}, fmt.Errorf("saved for the next start, but the running hub keeps its folder: %w", err)
	}
	if ch.Settings, err = c.Settings(); err != nil {
		return SettingsChange{}, err
	}
	return ch, nil
}

// policyEdit turns the form's policy into the config package's edit (origins 0-based).
func policyEdit(in PolicyInput) config.PolicyEdit {
	e := config.PolicyEdit{Default: strings.TrimSpace(in.Default), AskTimeout: strings.TrimSpace(in.AskTimeout), RootsAllow: in.Roots}
	for _, r := range in.Rules {
		e.Rules = append(e.Rules, config.PolicyRule{RuleSpec: policy.RuleSpec{Tool: r.Tool, Args: r.Args, Client: r.Client, Action: r.Action}, Origin: r.Origin - 1})
	}
	return e
}

// SavePolicy saves [policy] (default, ask_timeout, the rules in order) and [roots] allow after
// checking them as the hub does (policy.Compile); the running hub uses them as soon as the file
// is written.
func (c *Controller) SavePolicy(in PolicyInput) (SettingsChange, error) {
	e := policyEdit(in)
	if _, err := e.Compile(); err != nil {
		return SettingsChange{}, err
	}
	args := struct {
		Default    string `json:"default"`
		AskTimeout string `json:"askTimeout"`
		Rules      int    `json:"rules"`
		Roots      int    `json:"roots"`
	}{e.Default, e.AskTimeout, len(e.Rules), len(e.RootsAllow)}
	return c.save("settings_policy", args, appliesNow, "In force now for every client.",
		func(b []byte) ([]byte, error) { return config.EditPolicy(b, e) }, nil,
		func() error {
			if err := c.st.ReloadConfig(); err != nil {
				return fmt.Errorf("saved, but the hub did not load it: %w", err)
			}
			return nil
		})
}

// PolicyWarnings is what `switchboard policy check TOOL` and the Settings view's test warn
// about: a call of tool that the hub never decides by that name (servers_call: it decides the
// server tool the call names; policy.Rewritten), and p's rules that can never match.
func PolicyWarnings(p *policy.Policy, tool string) []string {
	var out []string
	if instead, ok := policy.Rewritten(tool); ok {
		out = append(out, fmt.Sprintf("the hub never decides a call named %s: it decides the server tool the call names; test that tool (%s)", tool, instead))
	}
	return append(out, p.Warnings...)
}

// TestPolicy decides a call against the policy being edited, before it is saved, with the logic
// of `switchboard policy check TOOL --args JSON --client NAME`.
func (c *Controller) TestPolicy(in PolicyTest) (PolicyDecision, error) {
	p, err := policyEdit(in.Policy).Compile()
	if err != nil {
		return PolicyDecision{}, err
	}
	tool := strings.TrimSpace(in.Tool)
	if tool == "" {
		return PolicyDecision{}, errors.New("tool: required; the name of the tool the call is for, such as \"exec\" or \"file_delete\"")
	}
	args := string(in.Args)
	var s string
	if json.Unmarshal(in.Args, &s) == nil { // a string holding the JSON, as typed
		args = s
	}
	raw, err := CallArgs(args)
	if err != nil {
		return PolicyDecision{}, fmt.Errorf("%w; e.g. {\"command\": \"rm\", \"args\": [\"-rf\", \"build\"]}", err)
	}
	d := p.Decide(tool, strings.TrimSpace(in.Client), raw)
	out := PolicyDecision{Decision: string(d.Action), Rule: d.RuleName(), Warnings: PolicyWarnings(p, tool)}
	if d.Rule != nil {
		out.RuleIndex = d.Rule.Index
	}
	return out, nil
}

// SaveML saves [ml] default_backend and judge_backend, the InfluxDB keys and [[ml.backends]],
// checked as the hub builds them, and puts them in force in the running hub once the file is
// written: the next ml_* call and the dashboard's backend list use them (calls in flight finish
// on the backends they started with).
func (c *Controller) SaveML(in MLInput) (SettingsChange, error) {
	e := config.MLEdit{DefaultBackend: strings.TrimSpace(in.DefaultBackend), JudgeBackend: strings.TrimSpace(in.JudgeBackend)}
	var names []string
	for _, b := range in.Backends {
		e.Backends = append(e.Backends, config.MLBackendEdit{MLBackend: config.MLBackend{Name: strings.TrimSpace(b.Name), Kind: b.Kind,
			URL: strings.TrimSpace(b.URL), Model: strings.TrimSpace(b.Model), APIKeyEnv: strings.TrimSpace(b.APIKeyEnv), Endpoint: b.Endpoint}, Origin: b.Origin - 1})
		names = append(names, b.Name)
	}
	// InfluxDB: left out of the body, the file's keys stay; the URL shown with its password
	// redacted and sent back as shown keeps the file's URL.
	file, _, err := config.ReadFile(c.st.Config.Path)
	if err != nil {
		return SettingsChange{}, err
	}
	editML, check := config.EditML, e
	e.InfluxDB = file.ML.InfluxDB
	if in.InfluxDB != nil {
		e.InfluxDB = strings.TrimSpace(*in.InfluxDB)
	}
	e.InfluxURL = file.ML.InfluxURL
	if in.InfluxURL != nil {
		e.InfluxURL = strings.TrimSpace(*in.InfluxURL)
	}
	check.InfluxDB, check.InfluxURL = e.InfluxDB, e.InfluxURL
	if e.InfluxURL == file.ML.InfluxURL || e.InfluxURL == config.RedactURL(file.ML.InfluxURL) {
		editML, check.InfluxURL = config.EditMLKeepingInfluxURL, ""
	}
	if err := check.Validate(); err != nil {
		return SettingsChange{}, err
	}
	ch, err := c.save("settings_ml", struct {
		DefaultBackend string   `json:"defaultBackend"`
		JudgeBackend   string   `json:"judgeBackend"`
		Backends       []string `json:"backends"`
		InfluxURL      string   `json:"influxUrl"`
		InfluxDB       string   `json:"influxDb"`
	}{e.DefaultBackend, e.JudgeBackend, names, config.RedactURL(e.InfluxURL), e.InfluxDB}, appliesNow,
		"In force now: the next ml_* call and the dashboard's backend list use them (calls already running finish on the old ones).",
		func(b []byte) ([]byte, error) { return editML(b, e) }, nil, nil)
	if err != nil {
		return ch, err
	}
	// Also when the file did not change: a hand edit of [ml] may be pending.
	if err := c.applyML(); err != nil {
		return SettingsChange{}, err
	}
	if ch.Settings, err = c.Settings(); err != nil {
		return SettingsChange{}, err
	}
	return ch, nil
}

// applyML puts the file's [ml] in force, as a start would load it (the environment's overrides
// included, as pending() reads it). Under the file's lock: the last of two saves applies the
// file the later one wrote.
func (c *Controller) applyML() error {
	c.st.serversMu.Lock()
	defer c.st.serversMu.Unlock()
	next, err := config.Load(c.st.Config.Path)
	if err == nil {
		err = c.st.SetML(next.ML)
	}
	if err != nil {
		return fmt.Errorf("saved, but the hub did not load it: %w", err)
	}
	return nil
}

// SaveRAG saves the [rag] backend and embedder settings and switches the running hub to them
// before the file is written (Stack.SetRAG, with the file's API key and the environment's
// overrides, as a start would read them): a backend the hub cannot open or reach is refused
// with the key to fix, and nothing is saved. Calls already running finish on the old engine.
func (c *Controller) SaveRAG(in RAGSettings) (SettingsChange, error) {
	r := config.RAG{Backend: strings.TrimSpace(in.Backend), URL: strings.TrimSpace(in.URL), Embedder: strings.TrimSpace(in.Embedder),
		Model: strings.TrimSpace(in.Model), EmbedderURL: strings.TrimSpace(in.EmbedderURL), Collection: strings.TrimSpace(in.Collection), Dir: strings.TrimSpace(in.Dir)}
	errs := []error{config.ValidateRAG(r)}
	if r.Collection != "" {
		if err := rag.ValidateCollection(r.Collection); err != nil {
			errs = append(errs, fmt.Errorf("rag.%w", err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return SettingsChange{}, err
	}
	live := func() error { // under the file's lock: the file's api_key is the one saved beside
		file, _, err := config.ReadFile(c.st.Config.Path)
		if err != nil {
			return err
		}
		next := config.RAGAsSaved(r)
		next.APIKey = file.RAG.APIKey
		if err := c.st.SetRAG(next.WithEnv(c.st.Config.Env)); err != nil {
			return fmt.Errorf("%w; nothing saved", err)
		}
		return nil
	}
	return c.save("settings_rag", struct {
		Backend  string `json:"backend"`
		Embedder string `json:"embedder"`
	}{r.Backend, r.Embedder}, appliesNow, "In force now: the next rag_* call and the Knowledge view use it (an ingest already running finishes where it started).",
		func(b []byte) ([]byte, error) { return config.EditRAG(b, r) }, live, nil)
}

// SetAutostart is the tray's "Start at login": it writes or removes the XDG autostart entry now.
// When the config file sets [desktop] autostart (applied at every desktop start), that key is
// saved too, so the next start does not undo the switch.
func (c *Controller) SetAutostart(on bool) (SettingsChange, error) {
	exe, err := AutostartExe()
	if err != nil {
		return SettingsChange{}, fmt.Errorf("autostart: the running binary's path is unknown (%v); add switchboard to your desktop's startup applications by hand", err)
	}
	edit := func(b []byte) ([]byte, error) {
		if _, set, err := tomledit.Lookup(b, "desktop", "autostart"); err != nil || !set {
			return b, err
		}
		return config.EditAutostart(b, on)
	}
	return c.save(ActionAutostartSet, map[string]bool{"enabled": on}, appliesNow, "The login entry is written (or removed) now.",
		edit, func() error { return autostart.Set(c.st.Config.Env.ConfigHome(), on, exe) }, nil)
}

// ---- the Overview's switches ----

// switchTransport switches a transport now and saves the switch in the config file ([unix],
// [tcp] or [http] enabled), so it stays switched at the next start. The WebSocket hub is not a
// setting (it always starts), and a hub without a config file only switches.
func (c *Controller) switchTransport(ctx context.Context, name string, enabled bool) error {
	live := func() error { return c.st.Transports.Set(ctx, name, enabled) }
	if c.st.Config.Path == "" || !isFileTransport(name) {
		return live()
	}
	_, err := c.editConfig(func(b []byte) ([]byte, error) { return config.EditTransport(b, name, enabled, "") }, live, nil)
	return err
}

// switchToolset switches one toolset now and saves the toolsets that are on as the toolsets key
// (toolsetsToSave: the hub's sets, then the servers). An upstream server's toolset only switches
// while the file has no toolsets key (every server is on by default; a server is kept off with
// its enabled key in the Servers tab); once the key exists it names the servers on, and a
// server's switch saves like any other. Switching the last toolset off only switches (an empty
// list in the file would mean the default set).
func (c *Controller) switchToolset(name string, enabled bool) ([]mcp.ToolsetStatus, error) {
	if c.st.Config.Path == "" {
		return c.st.Service.SetToolset(name, enabled)
	}
	if mcp.ToolsetIndex(name) < 0 {
		servers, _ := c.serverToolsets()
		file, _, err := config.ReadFile(c.st.Config.Path)
		if err != nil || len(file.Toolsets) == 0 || !slices.Contains(servers, name) {
			return c.st.Service.SetToolset(name, enabled) // an unknown name: SetToolset says so
		}
	}
	var on []string
	for _, ts := range c.st.Service.Toolsets() {
		if ts.Name != name && ts.Enabled {
			on = append(on, ts.Name)
		}
	}
	if enabled {
		on = append(on, name)
	}
	if len(on) == 0 {
		return c.st.Service.SetToolset(name, enabled)
	}
	saved := c.toolsetsToSave(on)
	var sets []mcp.ToolsetStatus
	_, err := c.editConfig(func(b []byte) ([]byte, error) { return config.EditToolsets(b, saved) },
		func() error {
			var err error
			sets, err = c.st.Service.SetToolset(name, enabled)
			return err
		}, nil)
	if err != nil {
		return c.st.Service.Toolsets(), err
	}
	return sets, nil
}

// CallArgs reads a call's arguments for a policy check (`switchboard policy check --args`, the
// Settings view's "test a call"): a JSON object, or nothing for a call without arguments.
func CallArgs(args string) (json.RawMessage, error) {
	if strings.TrimSpace(args) == "" {
		return json.RawMessage("{}"), nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal([]byte(args), &obj); err != nil {
		return nil, fmt.Errorf("args: not a JSON object (%v)", err)
	}
	return json.RawMessage(args), nil
}

// ActionAutostartSet is the audited action of every "Start at login" switch (tray, Settings).
const ActionAutostartSet = "autostart_set"

// AutostartExe is the absolute path of the running binary, which the autostart entry starts.
func AutostartExe() (string, error) { return os.Executable() }

package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/internal/code"
	"github.com/switchboard-hub/switchboard/internal/failures"
	"github.com/switchboard-hub/switchboard/internal/process"
	"github.com/switchboard-hub/switchboard/internal/workspace"
	"github.com/switchboard-hub/switchboard/internal/wshub"
	"github.com/switchboard-hub/switchboard/mcp/channel"
	"github.com/switchboard-hub/switchboard/mcp/tool"
)

// Code intelligence (toolset code): code_* over the hub's language-server pool
// (internal/code), and project_* (detect, map, run). One warm server per workspace and language,
// shared by every client; positions are 1-based lines and columns in UTF-8 bytes, or a symbol.

// CodePositionInput is the arguments of code_definition, code_implementations and code_hover:
// a position (path, line, column) or a symbol name.
type CodePositionInput struct {
	Path     string `json:"path,omitempty" jsonschema:"file, relative to the workspace root; with line and column, or with symbol (a symbol declared in this file)" workspace:"path"`
	Line     int    `json:"line,omitempty" jsonschema:"1-based line of the position in path"`
	Column   int    `json:"column,omitempty" jsonschema:"1-based column of the position in path, counted in UTF-8 bytes"`
	Symbol   string `json:"symbol,omitempty" jsonschema:"instead of a position: a declaration's name (Name, Type.Method or pkg.Func), looked up in the workspace, or in path when given (faster)"`
	Language string `json:"language,omitempty" jsonschema:"language server to ask (go, typescript, python, c, rust); only needed for a symbol in a workspace of several languages"`
}

func (in CodePositionInput) target() code.Target {
	return code.Target{Path: in.Path, Line: in.Line, Column: in.Column, Symbol: in.Symbol, Language: in.Language}
}

// CodeReferencesInput is code_references' arguments.
type CodeReferencesInput struct {
	Path               string `json:"path,omitempty" jsonschema:"file, relative to the workspace root; with line and column, or with symbol (a symbol declared in this file)" workspace:"path"`
	Line               int    `json:"line,omitempty" jsonschema:"1-based line of the position in path"`
	Column             int    `json:"column,omitempty" jsonschema:"1-based column of the position in path, counted in UTF-8 bytes"`
	Symbol             string `json:"symbol,omitempty" jsonschema:"instead of a position: a declaration's name (Name, Type.Method or pkg.Func), looked up in the workspace, or in path when given (faster)"`
	Language           string `json:"language,omitempty" jsonschema:"language server to ask (go, typescript, python, c, rust); only needed for a symbol in a workspace of several languages"`
	IncludeDeclaration bool   `json:"includeDeclaration,omitempty" jsonschema:"list the declaration itself among the references"`
}

// CodeCallsInput is code_calls' arguments.
type CodeCallsInput struct {
	Path      string `json:"path,omitempty" jsonschema:"file, relative to the workspace root; with line and column, or with symbol (a symbol declared in this file)" workspace:"path"`
	Line      int    `json:"line,omitempty" jsonschema:"1-based line of the position in path"`
	Column    int    `json:"column,omitempty" jsonschema:"1-based column of the position in path, counted in UTF-8 bytes"`
	Symbol    string `json:"symbol,omitempty" jsonschema:"instead of a position: a declaration's name (Name, Type.Method or pkg.Func), looked up in the workspace, or in path when given (faster)"`
	Language  string `json:"language,omitempty" jsonschema:"language server to ask (go, typescript, python, c, rust); only needed for a symbol in a workspace of several languages"`
	Direction string `json:"direction,omitempty" jsonschema:"incoming (who calls it; the default) or outgoing (what it calls)"`
}

// CodeRenameInput is code_rename's arguments.
type CodeRenameInput struct {
	Path     string `json:"path,omitempty" jsonschema:"file, relative to the workspace root; with line and column, or with symbol (a symbol declared in this file)" workspace:"path"`
	Line     int    `json:"line,omitempty" jsonschema:"1-based line of the position in path"`
	Column   int    `json:"column,omitempty" jsonschema:"1-based column of the position in path, counted in UTF-8 bytes"`
	Symbol   string `json:"symbol,omitempty" jsonschema:"instead of a position: a declaration's name (Name, Type.Method or pkg.Func), looked up in the workspace, or in path when given (faster)"`
	Language string `json:"language,omitempty" jsonschema:"language server to ask (go, typescript, python, c, rust); only needed for a symbol in a workspace of several languages"`
	NewName  string `json:"newName" jsonschema:"the new name"`
	DryRun   bool   `json:"dryRun,omitempty" jsonschema:"only compute and check the change (files and diff); write nothing"`
}

// CodeSymbolsInput is code_symbols' arguments: a file's outline (path) or a workspace search
// (query).
type CodeSymbolsInput struct {
	Path     string `json:"path,omitempty" jsonschema:"a file, relative to the workspace root: its outline" workspace:"path"`
	Query    string `json:"query,omitempty" jsonschema:"search the workspace's declarations for this name (instead of path)"`
	Language string `json:"language,omitempty" jsonschema:"with query: search only this language's server (default every language of the workspace)"`
}

// CodeDiagnosticsInput is code_diagnostics' arguments.
type CodeDiagnosticsInput struct {
	tool.InWorkspace `json:"-"`
	Path             string `json:"path,omitempty" jsonschema:"a file, relative to the workspace root; omitted: the whole workspace" workspace:"path"`
	Language         string `json:"language,omitempty" jsonschema:"for the whole workspace: only this language's server"`
}

// CodeLocation is a place in a file.
type CodeLocation struct {
	Path    string `json:"path" jsonschema:"file relative to the workspace (absolute outside it: the standard library, a dependency)"`
	Line    int    `json:"line" jsonschema:"1-based line"`
	Column  int    `json:"column" jsonschema:"1-based column in UTF-8 bytes"`
	Preview string `json:"preview" jsonschema:"the line's text"`
}

// CodeLocationsOutput is code_definition's and code_implementations' result.
type CodeLocationsOutput struct {
	Locations []CodeLocation `json:"locations" jsonschema:"the places found"`
}

// CodeReferencesOutput is code_references' result.
type CodeReferencesOutput struct {
	Locations []CodeLocation `json:"locations" jsonschema:"the references, by path, line and column (the first 1000)"`
	Count     int            `json:"count" jsonschema:"how many references there are"`
}

// CodeCall is one call in code_calls' result.
type CodeCall struct {
	Name   string `json:"name" jsonschema:"incoming: the caller; outgoing: the callee"`
	Path   string `json:"path" jsonschema:"incoming: where the call is made; outgoing: where the callee is declared"`
	Line   int    `json:"line" jsonschema:"1-based line"`
	Column int    `json:"column" jsonschema:"1-based column in UTF-8 bytes"`
}

// CodeCallsOutput is code_calls' result.
type CodeCallsOutput struct {
	Calls []CodeCall `json:"calls" jsonschema:"the calls"`
}

// CodeHoverOutput is code_hover's result.
type CodeHoverOutput struct {
	Contents string `json:"contents" jsonschema:"signature and documentation as the server shows them (Markdown)"`
}

// CodeSymbol is one declaration in code_symbols' result.
type CodeSymbol struct {
	Name      string `json:"name" jsonschema:"declared name"`
	Kind      string `json:"kind" jsonschema:"function, method, class, struct, interface, variable, ..."`
	Path      string `json:"path" jsonschema:"file relative to the workspace"`
	Line      int    `json:"line" jsonschema:"1-based line of the name"`
	Column    int    `json:"column" jsonschema:"1-based column of the name in UTF-8 bytes"`
	EndLine   int    `json:"endLine" jsonschema:"last line of the declaration"`
	Container string `json:"container,omitempty" jsonschema:"enclosing declaration or package"`
}

// CodeSymbolsOutput is code_symbols' result.
type CodeSymbolsOutput struct {
	Symbols []CodeSymbol `json:"symbols" jsonschema:"declarations found"`
}

// CodeDiagnosticsOutput is code_diagnostics' result.
type CodeDiagnosticsOutput struct {
	Diagnostics []CodeDiagnostic `json:"diagnostics" jsonschema:"problems the language servers report, by path, line and column"`
}

// CodeRenameOutput is code_rename's result.
type CodeRenameOutput struct {
	Files       []string         `json:"files" jsonschema:"files the rename changes (or would, with dryRun)"`
	Diff        string           `json:"diff" jsonschema:"the change as a unified diff"`
	Applied     bool             `json:"applied" jsonschema:"whether the files were written (false with dryRun)"`
	Diagnostics []CodeDiagnostic `json:"diagnostics,omitempty" jsonschema:"problems the rename introduced, from the language server (omitted when none)"`
}

// ProjectDetectInput is project_detect's arguments: none (the caller's workspace).
type ProjectDetectInput struct {
	tool.InWorkspace `json:"-"`
}

// ProjectCommand is one command project_detect found.
type ProjectCommand struct {
	Command string `json:"command" jsonschema:"the command line"`
	Source  string `json:"source" jsonschema:"where it came from, e.g. \"Makefile target test\" or \"package.json scripts.test\""`
}

// ProjectCommands are how a project is built, tested, linted and formatted.
type ProjectCommands struct {
	Build  []ProjectCommand `json:"build" jsonschema:"build commands, the project's own entry points first"`
	Test   []ProjectCommand `json:"test" jsonschema:"test commands"`
	Lint   []ProjectCommand `json:"lint" jsonschema:"lint commands"`
	Format []ProjectCommand `json:"format" jsonschema:"format commands"`
}

// ProjectDetectOutput is project_detect's result.
type ProjectDetectOutput struct {
	Languages       []string        `json:"languages" jsonschema:"languages of the source files, most files first"`
	PackageManagers []string        `json:"packageManagers" jsonschema:"package managers the manifests and lock files name"`
	Commands        ProjectCommands `json:"commands" jsonschema:"build, test, lint and format commands, each with the file it came from"`
	Files           []string        `json:"files" jsonschema:"the manifests read"`
}

// ProjectMapInput is project_map's arguments.
type ProjectMapInput struct {
	tool.InWorkspace `json:"-"`
	MaxDepth         int `json:"maxDepth,omitempty" jsonschema:"levels of directories listed, 1 to 10; default 3"`
}

// ProjectMapEntry is one file or directory of project_map's result.
type ProjectMapEntry struct {
	Path      string `json:"path" jsonschema:"relative to the workspace"`
	Type      string `json:"type" jsonschema:"file or dir"`
	Depth     int    `json:"depth" jsonschema:"level below the workspace root (1 for its children)"`
	Size      int64  `json:"size" jsonschema:"bytes of a file, or of every file beneath a directory"`
	Files     int    `json:"files,omitempty" jsonschema:"files beneath a directory"`
	Language  string `json:"language,omitempty" jsonschema:"a source file's language"`
	Symbols   int    `json:"symbols,omitempty" jsonschema:"declarations in a source file, from its language server"`
	Truncated bool   `json:"truncated,omitempty" jsonschema:"a directory below maxDepth: its entries are counted, not listed"`
}

// ProjectMapOutput is project_map's result.
type ProjectMapOutput struct {
	Tree    string            `json:"tree" jsonschema:"the tree, one entry a line, indented by depth, with sizes and symbol counts"`
	Entries []ProjectMapEntry `json:"entries" jsonschema:"the same entries in tree order (depth first)"`
	Files   int               `json:"files" jsonschema:"files in the workspace (as file_grep sees it)"`
	Dirs    int               `json:"dirs" jsonschema:"directories"`
	Note    string            `json:"note,omitempty" jsonschema:"what was left out"`
}

// ProjectRunInput is project_run's arguments.
type ProjectRunInput struct {
	tool.InWorkspace `json:"-"`
	Action           string `json:"action" jsonschema:"build, test, lint or format"`
	Command          string `json:"command,omitempty" jsonschema:"command line to run instead of the detected one (run by sh -c in the workspace root)"`
	Timeout          int    `json:"timeout,omitempty" jsonschema:"seconds before the command and everything it started is killed, 1 to 600; default 300"`
}

// ProjectRunOutput is project_run's result.
type ProjectRunOutput struct {
	Action   string           `json:"action" jsonschema:"echoed action"`
	Command  string           `json:"command" jsonschema:"the command line run"`
	Source   string           `json:"source" jsonschema:"where the command came from (a manifest, or \"command\" when given)"`
	Process  string           `json:"process" jsonschema:"its process ID (process_list, process_output)"`
	Success  bool             `json:"success" jsonschema:"whether it exited with 0"`
	ExitCode int              `json:"exitCode" jsonschema:"exit code; 128+N when ended by signal N"`
	Duration time.Duration    `json:"duration" jsonschema:"run time in nanoseconds"`
	TimedOut bool             `json:"timedOut,omitempty" jsonschema:"whether the timeout killed it"`
	Output   string           `json:"output" jsonschema:"the last 8 KiB of its output (stdout and stderr interleaved)"`
	Failures []ProjectFailure `json:"failures" jsonschema:"failing tests and compiler or linter errors found in the output"`
}

// CodeEdits is what the writing tools (file_write, file_edit, file_patch) ask of the
// language-server pool: nil when the hub has none.
type CodeEdits interface {
	// Edited tells the servers of the workspace root that paths (relative to it) were just
	// written, and returns the diagnostics the change introduced in them when a server for
	// their language is running there, waiting a bounded time; it returns nil at once for
	// files no running server handles.
	Edited(ctx context.Context, root string, paths []string) []CodeDiagnostic
	// Changed only tells the servers (a deleted or renamed file), waiting for nothing.
	Changed(root string, paths ...string)
}

// CodeState is the hub's language-server pool with what the dashboard shows of it (the last
// project_run results). It is the code group's dependency and the writing tools' CodeEdits.
type CodeState struct {
	pool *code.Pool
	// Wait bounds how long a writing tool waits for diagnostics after an edit
	// (default code.DefaultDiagnosticsWait).
	wait time.Duration

	mu      sync.Mutex
	runs    []ProjectRunSummary
	publish func() // the dashboard feed's, when wired
	stop    chan struct{}
}

// NewCodeState wraps pool; wait bounds the writing tools' wait for diagnostics (0: 2 s).
func NewCodeState(pool *code.Pool, wait time.Duration) *CodeState {
	if wait <= 0 {
		wait = code.DefaultDiagnosticsWait
	}
	return &CodeState{pool: pool, wait: wait}
}

// Pool is the language-server pool.
func (c *CodeState) Pool() *code.Pool { return c.pool }

// maxRuns is how many project_run results the dashboard keeps.
const maxRuns = 10

func (c *CodeState) recordRun(r ProjectRunSummary) {
	c.mu.Lock()
	c.runs = append([]ProjectRunSummary{r}, c.runs...)
	if len(c.runs) > maxRuns {
		c.runs = c.runs[:maxRuns]
	}
	c.mu.Unlock()
	c.notify()
}

// Runs are the last project_run results, newest first.
func (c *CodeState) Runs() []ProjectRunSummary {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]ProjectRunSummary{}, c.runs...)
}

// Edited is CodeEdits.
func (c *CodeState) Edited(ctx context.Context, root string, paths []string) []CodeDiagnostic {
	if c == nil || c.pool == nil || len(paths) == 0 {
		return nil
	}
	c.pool.Changed(root, paths...)
	real, err := filepath.EvalSymlinks(root)
	if err != nil {
		return nil
	}
	running := map[string]bool{}
	for _, st := range c.pool.Status() {
		if st.Workspace == real && (st.State == "ready" || st.State == "busy") {
			running[st.Language] = true
		}
	}
	var ours []string
	for _, p := range paths {
		if l := code.LanguageOf(p); l != "" && running[l] {
			ours = append(ours, p)
		}
	}
	if len(ours) == 0 {
		return nil
	}
	res, err := c.pool.DiagnosticsAfter(ctx, real, ours, c.wait)
	if err != nil {
		return nil
	}
	c.notify()
	return diagnostics(res.Diagnostics)
}

// Changed is CodeEdits.
func (c *CodeState) Changed(root string, paths ...string) {
	if c == nil || c.pool == nil || len(paths) == 0 {
		return
	}
	c.pool.Changed(root, paths...)
}

// notify publishes the feed now (a tool changed what it shows).
func (c *CodeState) notify() {
	if c == nil {
		return
	}
	c.mu.Lock()
	pub := c.publish
	c.mu.Unlock()
	if pub != nil {
		pub()
	}
}

// Feed is the "code" channel's payload now.
func (c *CodeState) Feed() CodeFeed {
	f := CodeFeed{Servers: []CodeServer{}, Files: []CodeFileDiagnostics{}, Runs: c.Runs()}
	for _, st := range c.pool.Status() {
		f.Servers = append(f.Servers, CodeServer{Workspace: st.Workspace, Language: st.Language, Command: st.Command, State: st.State,
			PID: st.PID, Server: st.Server, StartedAt: st.StartedAt, LastUsed: st.LastUsed, Restarts: st.Restarts,
			MemoryBytes: st.MemoryBytes, OpenFiles: st.OpenFiles, Sandbox: st.Sandbox, LastError: st.LastError})
	}
	for _, wd := range c.pool.Published() {
		var cur *CodeFileDiagnostics
		for _, d := range wd.Diagnostics {
			if cur == nil || cur.Path != d.Path {
				f.Files = append(f.Files, CodeFileDiagnostics{Workspace: wd.Workspace, Language: wd.Language, Path: d.Path})
				cur = &f.Files[len(f.Files)-1]
			}
			cur.Diagnostics = append(cur.Diagnostics, diagnostics([]code.Diagnostic{d})...)
		}
	}
	return f
}

// feedInterval is how often the feed looks for changes (server states, memory, diagnostics)
// while the dashboard subscribes.
var feedInterval = 2 * time.Second

// WireFeed publishes the pool on the hub's "code" channel: a snapshot for a dashboard that
// subscribes, and an event whenever what it shows changed (checked every 2 s while someone
// subscribes, and after the tools that change it). StopFeed ends it.
func (c *CodeState) WireFeed(h *wshub.Hub) {
	if h == nil || c == nil {
		return
	}
	var last []byte
	var lastMu sync.Mutex
	publish := func() {
		if !h.HasSubscribers(channel.Code) {
			return
		}
		f := c.Feed()
		b, err := json.Marshal(f)
		if err != nil {
			return
		}
		lastMu.Lock()
		same := string(b) == string(last)
		last = b
		lastMu.Unlock()
		if !same {
			h.Publish(channel.Code, wshub.TypeEvent, f)
		}
	}
	h.SetSnapshotProvider(channel.Code, func(string) (any, bool) { return c.Feed(), true })
	c.mu.Lock()
	c.publish, c.stop = publish, make(chan struct{})
	stop := c.stop
	c.mu.Unlock()
	go func() {
		t := time.NewTicker(feedInterval)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				publish()
			}
		}
	}()
}

// StopFeed ends the feed's checks (Service.Shutdown).
func (c *CodeState) StopFeed() {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stop != nil {
		close(c.stop)
		c.stop, c.publish = nil, nil
	}
}

func diagnostics(ds []code.Diagnostic) []CodeDiagnostic {
	out := make([]CodeDiagnostic, len(ds))
	for i, d := range ds {
		out[i] = CodeDiagnostic{Path: d.Path, Line: d.Line, Column: d.Column, Severity: d.Severity, Message: d.Message, Source: d.Source}
	}
	return out
}

// CodeTools are the code_* and project_* tools (WithCode).
type CodeTools struct {
	Workspaces
	Sessions
	state *CodeState
	procs *process.Service // project_run; nil: it says the hub runs no processes
	// execRules holds a command line to the policy's exec rules (nil: no policy).
	execRules ExecRules
	// inner makes a tool call through the hub's whole chain on behalf of a running call
	// (Service.CallInner): project_run's exec call when a rule asks.
	inner InnerCall
}

// ExecRules decides project_run's command line as the exec calls it amounts to: an error naming
// the rule when one denies it (or asks about a form project_run cannot run), the exec call to
// make through the hub's chain when a rule asks (so the user is asked as for exec), nil and nil
// when exec's rules let it run.
type ExecRules func(req *sdk.CallToolRequest, line string) (*ExecAsk, error)

// ExecAsk is the exec call a rule asks about: project_run makes exactly this call.
type ExecAsk struct {
	Command string
	Args    []string
	Rule    string // the rule that asks, for errors
}

// InnerCall is Service.CallInner.
type InnerCall func(ctx context.Context, parent *sdk.CallToolRequest, name string, args json.RawMessage) (*sdk.CallToolResult, error)

// NewCodeTools is the code group's dependencies: the pool (with the dashboard's record), the
// process service project_run runs its commands in, the policy's exec rules it is held to (nil:
// no policy) and the hub's inner call for the exec calls a rule asks about.
func NewCodeTools(w Workspaces, sess Sessions, state *CodeState, procs *process.Service, execRules ExecRules, inner InnerCall) *CodeTools {
	return &CodeTools{Workspaces: w, Sessions: sess, state: state, procs: procs, execRules: execRules, inner: inner}
}

// CodeGroup declares the group's tools (toolset code) as values that need no hub.
func CodeGroup() tool.Group {
	pos := " Give a position (path, line, column: 1-based, the column in UTF-8 bytes) or a symbol name (Name, Type.Method, pkg.Func)."
	return tool.NewGroup("code",
		tool.Func(sdk.Tool{Name: "code_definition", Annotations: tool.ReadOnly("Go to definition"),
			Description: "Where the symbol at a position is declared, from the workspace's language server (gopls, typescript-language-server, pyright, clangd, rust-analyzer; started on first use and shared by every client)." + pos}, (*CodeTools).definition),
		tool.Func(sdk.Tool{Name: "code_references", Annotations: tool.ReadOnly("Find references"),
			Description: "Every use of the symbol at a position across the workspace: locations (the first 1000) and their count." + pos}, (*CodeTools).references),
		tool.Func(sdk.Tool{Name: "code_implementations", Annotations: tool.ReadOnly("Find implementations"),
			Description: "The types that implement the interface at a position, or the interfaces the type there implements." + pos}, (*CodeTools).implementations),
		tool.Func(sdk.Tool{Name: "code_calls", Annotations: tool.ReadOnly("Call hierarchy"),
			Description: "Who calls the function at a position (direction incoming) or what it calls (outgoing)." + pos}, (*CodeTools).calls),
		tool.Func(sdk.Tool{Name: "code_hover", Annotations: tool.ReadOnly("Hover"),
			Description: "The signature and documentation of the symbol at a position." + pos}, (*CodeTools).hover),
		tool.Func(sdk.Tool{Name: "code_symbols", Annotations: tool.ReadOnly("Symbols"),
			Description: "A file's outline (path) or a search of the workspace's declarations by name (query)."}, (*CodeTools).symbols),
		tool.Func(sdk.Tool{Name: "code_diagnostics", Annotations: tool.ReadOnly("Diagnostics"),
			Description: "Errors and warnings the language servers report for a file (path) or the whole workspace."}, (*CodeTools).diagnostics),
		tool.Func(sdk.Tool{Name: "code_rename", Annotations: tool.Write("Rename symbol", true, false),
			Description: "Rename the symbol at a position everywhere the language server knows it is used, as one patch applied like file_patch: every file changes or none does, each held to the same rules (the hub's own files, the policy's path rules). dryRun returns the files and diff without writing." + pos}, (*CodeTools).rename),
		tool.Func(sdk.Tool{Name: "project_detect", Annotations: tool.ReadOnly("Detect project"),
			Description: "The workspace's languages, package managers and build, test, lint and format commands, each with the file it came from (Makefile, go.mod, package.json, pyproject.toml, Cargo.toml, CMakeLists.txt, ...). Starts no server."}, (*CodeTools).projectDetect),
		tool.Func(sdk.Tool{Name: "project_map", Annotations: tool.ReadOnly("Project map"),
			Description: "The workspace's tree as file_grep sees it (.gitignore honoured), down to maxDepth levels, with sizes, file counts and each source file's number of declarations."}, (*CodeTools).projectMap),
		tool.Func(sdk.Tool{Name: "project_run", Annotations: tool.Write("Run build or tests", true, false),
			Description: "Run the project's detected build, test, lint or format command (or the command given) in the workspace, as a process every client and the dashboard see (process_list), cancellable, under the same policy as exec (a command an exec rule asks about is asked about as that exec call); returns success, exit code, duration, the tail of the output and the failures found in it (failing tests and compiler or linter errors with file and line)."}, (*CodeTools).projectRun),
	)
}

// root is the call's workspace, checked for the pool.
func (g *CodeTools) root(ctx context.Context, req *sdk.CallToolRequest) (*workspace.Root, error) {
	if g.state == nil || g.state.pool == nil {
		return nil, errors.New("code intelligence is not enabled in this hub; enable the code toolset ([code] in the config)")
	}
	return g.WorkspaceFor(ctx, req)
}

// checkPath holds a path argument to the workspace's sandbox (no escape, symlinks inside only)
// and to what the hub leaves out (its own state, the policy's path rules), and returns its
// canonical form.
func (g *CodeTools) checkPath(req *sdk.CallToolRequest, ws *workspace.Root, field, p string) (string, error) {
	if p == "" {
		return "", nil
	}
	c, err := ws.Canonical(p)
	if err != nil {
		return "", fmt.Errorf("%s: %v; give a path inside the workspace %s", field, err, ws.Dir())
	}
	if skip := g.WalkSkip(req, ws); skip != nil && skip(c, false) {
		return "", fmt.Errorf("%s: %s is off limits to %s (the hub's own files, or a path rule in %s)", field, p, req.Params.Name, g.PolicyFile())
	}
	return c, nil
}

// target checks a position's path and builds the pool's target.
func (g *CodeTools) target(ctx context.Context, req *sdk.CallToolRequest, t code.Target) (*workspace.Root, code.Target, error) {
	ws, err := g.root(ctx, req)
	if err != nil {
		return nil, t, err
	}
	if t.Path != "" && t.Symbol != "" && (t.Line != 0 || t.Column != 0) {
		return nil, t, errors.New("symbol: give either a position (path, line, column) or a symbol name (with path: declared in that file), not both")
	}
	if t.Path == "" && strings.TrimSpace(t.Symbol) == "" {
		return nil, t, errors.New("path: required, or symbol; give path with line and column (1-based, the column in UTF-8 bytes), or a symbol name such as \"Type.Method\"")
	}
	if t.Path != "" && t.Symbol == "" && (t.Line == 0 || t.Column == 0) {
		return nil, t, errors.New("line and column: required with path; give the 1-based line and column (in UTF-8 bytes) of the symbol in the file")
	}
	if t.Path, err = g.checkPath(req, ws, "path", t.Path); err != nil {
		return nil, t, err
	}
	return ws, t, nil
}

// The text of a list answer (locations, calls, symbols, diagnostics) is a listing: a count, then
// one `path:line:column: …` line per item, as compilers and grep print them. The structured
// content has the same items; the text is what a model reads, and as a listing it is about half
// the size of their JSON (an answer of 53 references: 4 KB against 8 KB, escaped once more inside
// the JSON-RPC message), which is most of what a large answer costs to carry to the client, and
// of the context it takes.

// listing builds such a text: head (see counted), then item(b, i) for each of n items, each on
// a line of its own that starts with the item's position.
func listing(head string, n int, item func(b *strings.Builder, i int)) *sdk.CallToolResult {
	var b strings.Builder
	b.Grow(len(head) + 80*n) // a typical line: a path, a position and a short text
	b.WriteString(head)
	for i := range n {
		b.WriteByte('\n')
		item(&b, i)
	}
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: b.String()}}}
}

// counted is a listing's head: "no references found", "1 reference", "53 references", with
// how many are listed when that is fewer.
func counted(count, listed int, one, many string) string {
	var h string
	switch count {
	case 0:
		h = "no " + many + " found"
	case 1:
		h = "1 " + one
	default:
		h = strconv.Itoa(count) + " " + many
	}
	if listed < count {
		h += " (the first " + strconv.Itoa(listed) + " below)"
	}
	return h
}

// writePosition writes `path:line:column`.
func writePosition(b *strings.Builder, path string, line, column int) {
	b.WriteString(path)
	b.WriteByte(':')
	b.WriteString(strconv.Itoa(line))
	b.WriteByte(':')
	b.WriteString(strconv.Itoa(column))
}

// locationsText lists locations as `path:line:column: preview`.
func locationsText(ls []CodeLocation, count int, one, many string) *sdk.CallToolResult {
	return listing(counted(count, len(ls), one, many), len(ls), func(b *strings.Builder, i int) {
		l := ls[i]
		writePosition(b, l.Path, l.Line, l.Column)
		if l.Preview != "" {
			b.WriteString(": ")
			b.WriteString(l.Preview)
		}
	})
}

// callsText lists calls as `path:line:column: name`.
func callsText(cs []CodeCall, direction string) *sdk.CallToolResult {
	if direction == "" {
		direction = "incoming"
	}
	return listing(counted(len(cs), len(cs), direction+" call", direction+" calls"), len(cs), func(b *strings.Builder, i int) {
		c := cs[i]
		writePosition(b, c.Path, c.Line, c.Column)
		b.WriteString(": ")
		b.WriteString(c.Name)
	})
}

// symbolsText lists declarations as `path:line:column: kind name (in container; to line N)`.
func symbolsText(ss []CodeSymbol) *sdk.CallToolResult {
	return listing(counted(len(ss), len(ss), "symbol", "symbols"), len(ss), func(b *strings.Builder, i int) {
		s := ss[i]
		writePosition(b, s.Path, s.Line, s.Column)
		b.WriteString(": ")
		b.WriteString(s.Kind)
		b.WriteByte(' ')
		b.WriteString(s.Name)
		var more []string
		if s.Container != "" {
			more = append(more, "in "+s.Container)
		}
		if s.EndLine > s.Line {
			more = append(more, "to line "+strconv.Itoa(s.EndLine))
		}
		if len(more) > 0 {
			b.WriteString(" (" + strings.Join(more, "; ") + ")")
		}
	})
}

// diagnosticsText lists problems as `path:line:column: severity: message (source)`.
func diagnosticsText(ds []CodeDiagnostic) *sdk.CallToolResult {
	return listing(counted(len(ds), len(ds), "problem", "problems"), len(ds), func(b *strings.Builder, i int) {
		d := ds[i]
		writePosition(b, d.Path, d.Line, d.Column)
		b.WriteString(": ")
		b.WriteString(d.Severity)
		b.WriteString(": ")
		b.WriteString(d.Message)
		if d.Source != "" {
			b.WriteString(" (" + d.Source + ")")
		}
	})
}

func locations(ls []code.Location) []CodeLocation {
	out := make([]CodeLocation, len(ls))
	for i, l := range ls {
		out[i] = CodeLocation{Path: l.Path, Line: l.Line, Column: l.Column, Preview: l.Preview}
	}
	return out
}

// hidden reports the workspace paths a call's answer leaves out: what a walk by this tool or by
// file_read leaves out (the hub's own files, paths the policy denies), so an answer never shows
// a line of a file the caller could not read. Paths outside the workspace (absolute: the
// standard library, dependencies) are not the workspace's to hide.
func (g *CodeTools) hidden(req *sdk.CallToolRequest, ws *workspace.Root) func(path string) bool {
	skip := g.WalkSkip(req, ws)
	return func(path string) bool {
		return skip != nil && !filepath.IsAbs(path) && skip(path, false)
	}
}

// visible drops the locations hidden leaves out and says how many it dropped.
func visible(ls []CodeLocation, hidden func(string) bool) ([]CodeLocation, int) {
	out := ls[:0]
	for _, l := range ls {
		if !hidden(l.Path) {
			out = append(out, l)
		}
	}
	return out, len(ls) - len(out)
}

func (g *CodeTools) definition(ctx context.Context, req *sdk.CallToolRequest, in CodePositionInput) (*sdk.CallToolResult, CodeLocationsOutput, error) {
	ws, t, err := g.target(ctx, req, in.target())
	if err != nil {
		return nil, CodeLocationsOutput{}, err
	}
	res, err := g.state.pool.Definition(ctx, ws.Dir(), t)
	if err != nil {
		return nil, CodeLocationsOutput{}, err
	}
	ls, _ := visible(locations(res.Locations), g.hidden(req, ws))
	return locationsText(ls, len(ls), "definition", "definitions"), CodeLocationsOutput{Locations: ls}, nil
}

func (g *CodeTools) implementations(ctx context.Context, req *sdk.CallToolRequest, in CodePositionInput) (*sdk.CallToolResult, CodeLocationsOutput, error) {
	ws, t, err := g.target(ctx, req, in.target())
	if err != nil {
		return nil, CodeLocationsOutput{}, err
	}
	res, err := g.state.pool.Implementations(ctx, ws.Dir(), t)
	if err != nil {
		return nil, CodeLocationsOutput{}, err
	}
	ls, _ := visible(locations(res.Locations), g.hidden(req, ws))
	return locationsText(ls, len(ls), "implementation", "implementations"), CodeLocationsOutput{Locations: ls}, nil
}

func (g *CodeTools) references(ctx context.Context, req *sdk.CallToolRequest, in CodeReferencesInput) (*sdk.CallToolResult, CodeReferencesOutput, error) {
	ws, t, err := g.target(ctx, req, code.Target{Path: in.Path, Line: in.Line, Column: in.Column, Symbol: in.Symbol, Language: in.Language})
	if err != nil {
		return nil, CodeReferencesOutput{}, err
	}
	res, err := g.state.pool.References(ctx, ws.Dir(), t, in.IncludeDeclaration)
	if err != nil {
		return nil, CodeReferencesOutput{}, err
	}
	ls, dropped := visible(locations(res.Locations), g.hidden(req, ws))
	count := res.Count - dropped
	return locationsText(ls, count, "reference", "references"), CodeReferencesOutput{Locations: ls, Count: count}, nil
}

func (g *CodeTools) calls(ctx context.Context, req *sdk.CallToolRequest, in CodeCallsInput) (*sdk.CallToolResult, CodeCallsOutput, error) {
	switch in.Direction {
	case "", "incoming", "outgoing":
	default:
		return nil, CodeCallsOutput{}, fmt.Errorf("direction: %q is not a direction; give incoming (callers) or outgoing (callees)", in.Direction)
	}
	ws, t, err := g.target(ctx, req, code.Target{Path: in.Path, Line: in.Line, Column: in.Column, Symbol: in.Symbol, Language: in.Language})
	if err != nil {
		return nil, CodeCallsOutput{}, err
	}
	res, err := g.state.pool.Calls(ctx, ws.Dir(), t, in.Direction)
	if err != nil {
		return nil, CodeCallsOutput{}, err
	}
	out := CodeCallsOutput{Calls: []CodeCall{}}
	hidden := g.hidden(req, ws)
	for _, c := range res.Calls {
		if !hidden(c.Path) {
			out.Calls = append(out.Calls, CodeCall{Name: c.Name, Path: c.Path, Line: c.Line, Column: c.Column})
		}
	}
	return callsText(out.Calls, in.Direction), out, nil
}

func (g *CodeTools) hover(ctx context.Context, req *sdk.CallToolRequest, in CodePositionInput) (*sdk.CallToolResult, CodeHoverOutput, error) {
	ws, t, err := g.target(ctx, req, in.target())
	if err != nil {
		return nil, CodeHoverOutput{}, err
	}
	res, err := g.state.pool.Hover(ctx, ws.Dir(), t)
	if err != nil {
		return nil, CodeHoverOutput{}, err
	}
	return nil, CodeHoverOutput{Contents: res.Contents}, nil
}

func (g *CodeTools) symbols(ctx context.Context, req *sdk.CallToolRequest, in CodeSymbolsInput) (*sdk.CallToolResult, CodeSymbolsOutput, error) {
	ws, err := g.root(ctx, req)
	if err != nil {
		return nil, CodeSymbolsOutput{}, err
	}
	if in.Path != "" && in.Query != "" {
		return nil, CodeSymbolsOutput{}, errors.New("query: give either path (a file's outline) or query (a workspace search), not both")
	}
	if in.Path == "" && strings.TrimSpace(in.Query) == "" {
		return nil, CodeSymbolsOutput{}, errors.New("path or query: required; give path for a file's outline, or query to search the workspace's declarations by name")
	}
	p, err := g.checkPath(req, ws, "path", in.Path)
	if err != nil {
		return nil, CodeSymbolsOutput{}, err
	}
	res, err := g.state.pool.Symbols(ctx, ws.Dir(), code.SymbolsQuery{Path: p, Query: in.Query, Language: in.Language})
	if err != nil {
		return nil, CodeSymbolsOutput{}, err
	}
	out := CodeSymbolsOutput{Symbols: []CodeSymbol{}}
	hidden := g.hidden(req, ws)
	for _, s := range res.Symbols {
		if !hidden(s.Path) {
			out.Symbols = append(out.Symbols, CodeSymbol{Name: s.Name, Kind: s.Kind, Path: s.Path, Line: s.Line, Column: s.Column, EndLine: s.EndLine, Container: s.Container})
		}
	}
	return symbolsText(out.Symbols), out, nil
}

func (g *CodeTools) diagnostics(ctx context.Context, req *sdk.CallToolRequest, in CodeDiagnosticsInput) (*sdk.CallToolResult, CodeDiagnosticsOutput, error) {
	ws, err := g.root(ctx, req)
	if err != nil {
		return nil, CodeDiagnosticsOutput{}, err
	}
	p, err := g.checkPath(req, ws, "path", in.Path)
	if err != nil {
		return nil, CodeDiagnosticsOutput{}, err
	}
	res, err := g.state.pool.Diagnostics(ctx, ws.Dir(), p, in.Language)
	if err != nil {
		return nil, CodeDiagnosticsOutput{}, err
	}
	out := CodeDiagnosticsOutput{Diagnostics: diagnostics(res.Diagnostics)}
	if skip := g.WalkSkip(req, ws); skip != nil {
		// What the hub leaves out of walks is not reported either.
		kept := out.Diagnostics[:0]
		for _, d := range out.Diagnostics {
			if !skip(d.Path, false) {
				kept = append(kept, d)
			}
		}
		out.Diagnostics = kept
	}
	g.state.notify()
	return diagnosticsText(out.Diagnostics), out, nil
}

// writeSkip is what a writing tool may not change: what code_rename's own rules and
// file_write's path rules leave out, and the hub's own files (WalkSkip with each tool's name).
func (g *CodeTools) writeSkip(req *sdk.CallToolRequest, ws *workspace.Root) func(rel string) error {
	as := func(name string) func(string, bool) bool {
		r := *req
		params := *req.Params
		params.Name = name
		r.Params = &params
		return g.WalkSkip(&r, ws)
	}
	own, write := g.WalkSkip(req, ws), as("file_write")
	return func(rel string) error {
		for _, skip := range []func(string, bool) bool{own, write} {
			if skip != nil && skip(rel, false) {
				return fmt.Errorf("the hub does not let tools change this file (its own state, or a path rule for file_write or code_rename in %s); rename by hand, or edit the rule", g.PolicyFile())
			}
		}
		return nil
	}
}

func (g *CodeTools) rename(ctx context.Context, req *sdk.CallToolRequest, in CodeRenameInput) (*sdk.CallToolResult, CodeRenameOutput, error) {
	if strings.TrimSpace(in.NewName) == "" {
		return nil, CodeRenameOutput{}, errors.New("newName: required; give the symbol's new name")
	}
	ws, t, err := g.target(ctx, req, code.Target{Path: in.Path, Line: in.Line, Column: in.Column, Symbol: in.Symbol, Language: in.Language})
	if err != nil {
		return nil, CodeRenameOutput{}, err
	}
	res, err := g.state.pool.Rename(ctx, ws.Dir(), t, in.NewName, code.RenameOptions{DryRun: in.DryRun, Check: g.writeSkip(req, ws)})
	if err != nil {
		return nil, CodeRenameOutput{}, err
	}
	out := CodeRenameOutput{Files: res.Files, Diff: res.Diff, Applied: res.Applied}
	if res.Applied {
		out.Diagnostics = edited(ctx, g.state, ws, g.WalkSkip(req, ws), res.Files...)
	}
	return nil, out, nil
}

func (g *CodeTools) projectDetect(ctx context.Context, req *sdk.CallToolRequest, _ ProjectDetectInput) (*sdk.CallToolResult, ProjectDetectOutput, error) {
	ws, err := g.WorkspaceFor(ctx, req)
	if err != nil {
		return nil, ProjectDetectOutput{}, err
	}
	pr, err := code.Detect(ws.Dir())
	if err != nil {
		return nil, ProjectDetectOutput{}, err
	}
	return nil, projectDetectOutput(pr), nil
}

func projectDetectOutput(pr code.Project) ProjectDetectOutput {
	cmds := func(cs []code.Command) []ProjectCommand {
		out := make([]ProjectCommand, len(cs))
		for i, c := range cs {
			out[i] = ProjectCommand{Command: c.Command, Source: c.Source}
		}
		return out
	}
	return ProjectDetectOutput{Languages: pr.Languages, PackageManagers: pr.PackageManagers, Files: pr.Files,
		Commands: ProjectCommands{Build: cmds(pr.Commands.Build), Test: cmds(pr.Commands.Test), Lint: cmds(pr.Commands.Lint), Format: cmds(pr.Commands.Format)}}
}

func (g *CodeTools) projectMap(ctx context.Context, req *sdk.CallToolRequest, in ProjectMapInput) (*sdk.CallToolResult, ProjectMapOutput, error) {
	if in.MaxDepth < 0 || in.MaxDepth > 10 {
		return nil, ProjectMapOutput{}, fmt.Errorf("maxDepth: %d is out of range; give 1 to 10 (default 3)", in.MaxDepth)
	}
	ws, err := g.root(ctx, req)
	if err != nil {
		return nil, ProjectMapOutput{}, err
	}
	res, err := g.state.pool.Map(ctx, ws.Dir(), in.MaxDepth)
	if err != nil {
		return nil, ProjectMapOutput{}, err
	}
	out := ProjectMapOutput{Entries: []ProjectMapEntry{}, Files: res.Files, Dirs: res.Dirs, Note: res.Note}
	skip := g.WalkSkip(req, ws)
	var b strings.Builder
	var walk func(n *code.MapNode, depth int)
	walk = func(n *code.MapNode, depth int) {
		if depth > 0 {
			if skip != nil && skip(n.Path, n.Type == "dir") {
				return
			}
			e := ProjectMapEntry{Path: n.Path, Type: n.Type, Depth: depth, Size: n.Size, Files: n.Files, Language: n.Language, Truncated: n.Truncated}
			if n.Symbols != nil {
				e.Symbols = *n.Symbols
			}
			out.Entries = append(out.Entries, e)
			b.WriteString(strings.Repeat("  ", depth-1))
			b.WriteString(n.Name)
			if n.Type == "dir" {
				fmt.Fprintf(&b, "/  (%d files, %s)", n.Files, byteSize(n.Size))
				if n.Truncated {
					b.WriteString(" …")
				}
			} else {
				fmt.Fprintf(&b, "  %s", byteSize(n.Size))
				if n.Symbols != nil {
					fmt.Fprintf(&b, ", %d symbols", *n.Symbols)
				}
			}
			b.WriteByte('\n')
		}
		for _, c := range n.Children {
			walk(c, depth+1)
		}
	}
	if res.Tree != nil {
		walk(res.Tree, 0)
	}
	out.Tree = b.String()
	return nil, out, nil
}

func byteSize(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

const (
	defaultRunSeconds = 300
	runOutputTail     = 8 << 10
	runOutputKept     = 4 << 20 // what failures are read from (the process service keeps the tail)
)

func (g *CodeTools) projectRun(ctx context.Context, req *sdk.CallToolRequest, in ProjectRunInput) (*sdk.CallToolResult, ProjectRunOutput, error) {
	switch in.Action {
	case "build", "test", "lint", "format":
	case "":
		return nil, ProjectRunOutput{}, errors.New("action: required; give build, test, lint or format")
	default:
		return nil, ProjectRunOutput{}, fmt.Errorf("action: %q is not an action; give build, test, lint or format", in.Action)
	}
	if g.procs == nil {
		return nil, ProjectRunOutput{}, errors.New("project_run: this hub runs no processes (the process toolset's service is not configured)")
	}
	secs, err := toolSeconds(in.Timeout, defaultRunSeconds)
	if err != nil {
		return nil, ProjectRunOutput{}, err
	}
	ws, err := g.WorkspaceFor(ctx, req)
	if err != nil {
		return nil, ProjectRunOutput{}, err
	}
	command, source, goJSON := strings.TrimSpace(in.Command), "command", false
	if command == "" {
		pr, err := code.Detect(ws.Dir())
		if err != nil {
			return nil, ProjectRunOutput{}, err
		}
		cs := map[string][]code.Command{"build": pr.Commands.Build, "test": pr.Commands.Test, "lint": pr.Commands.Lint, "format": pr.Commands.Format}[in.Action]
		if len(cs) == 0 {
			return nil, ProjectRunOutput{}, fmt.Errorf("action: no %s command found in this workspace (project_detect shows what was found); give one in command", in.Action)
		}
		command, source = cs[0].Command, cs[0].Source
		// go test's JSON stream names each failing test and its file:line exactly; its
		// human-readable text is rebuilt from it for the output.
		if in.Action == "test" && (command == "go test" || strings.HasPrefix(command, "go test ")) && !strings.Contains(command, "-json") {
			command, goJSON = "go test -json"+strings.TrimPrefix(command, "go test"), true
		}
	}
	var ask *ExecAsk
	if g.execRules != nil {
		if ask, err = g.execRules(req, command); err != nil {
			return nil, ProjectRunOutput{}, err
		}
	}
	var (
		info     process.Info
		timedOut bool
	)
	if ask != nil {
		info, timedOut, err = g.runAsked(ctx, req, command, ask, secs)
	} else {
		var dirFile *os.File
		var dir string
		dirFile, dir, err = ws.OpenDir(".")
		if err != nil {
			return nil, ProjectRunOutput{}, fmt.Errorf("workspace: %w", err)
		}
		info, timedOut, err = runListed(ctx, req, g.procs, g.Sessions, process.StartOptions{Command: "sh", Args: []string{"-c", command}, Dir: dir, DirFile: dirFile},
			secs, "project_run "+in.Action+": "+command)
		dirFile.Close()
	}
	if errors.Is(err, errRunCancelled) {
		return nil, ProjectRunOutput{}, fmt.Errorf("project_run: %w", err)
	}
	if err != nil {
		return nil, ProjectRunOutput{}, err
	}
	id := info.ID
	o, err := g.procs.Output(id, process.OutputQuery{Tail: runOutputKept})
	if err != nil {
		return nil, ProjectRunOutput{}, processError("", err)
	}
	text := o.Text
	parsed := failures.Parse(text, ws.Dir())
	if goJSON {
		text = goTestText(text)
	}
	if len(text) > runOutputTail {
		text = text[len(text)-runOutputTail:]
	}
	out := ProjectRunOutput{Action: in.Action, Command: command, Source: source, Process: info.ID,
		Success: info.ExitCode == 0 && info.Status == process.StatusExited && !timedOut, ExitCode: info.ExitCode,
		Duration: info.Duration, TimedOut: timedOut, Output: text, Failures: make([]ProjectFailure, len(parsed.Failures))}
	for i, f := range parsed.Failures {
		out.Failures[i] = ProjectFailure{Path: f.Path, Line: f.Line, Test: f.Test, Message: f.Message}
	}
	if g.state != nil {
		g.state.recordRun(ProjectRunSummary{Workspace: ws.Dir(), Action: out.Action, Command: out.Command, Source: out.Source,
			Process: out.Process, Success: out.Success, ExitCode: out.ExitCode, Duration: out.Duration, TimedOut: timedOut,
			Finished: time.Now(), Failures: out.Failures, Output: lastBytes(text, 2<<10)})
	}
	return nil, out, nil
}

func lastBytes(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// goTestText is the text go test would have printed, from its -json stream (lines that are not
// JSON, such as build errors, are kept as they are).
func goTestText(stream string) string {
	var b strings.Builder
	for line := range strings.Lines(stream) {
		var ev struct {
			Action string
			Output string
		}
		if strings.HasPrefix(line, "{") && json.Unmarshal([]byte(line), &ev) == nil {
			if ev.Action == "output" || ev.Action == "build-output" {
				b.WriteString(ev.Output)
			}
			continue
		}
		b.WriteString(line)
	}
	return b.String()
}

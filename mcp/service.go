// Package mcp is Switchboard's MCP hub: one Service owns the tool set and serves it to any number
// of clients over stdio, Unix sockets, TCP and Streamable HTTP at once.
//
// Every connection gets its own server session on one shared go-sdk Server, so all clients see
// the same workspace, the same processes and the same WebSocket hub. Tool adapters in this package
// are thin: they validate input, call a domain package under internal/, and map the result to the
// tool's documented output struct (docs/tools.md).
package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/internal/audit"
	"github.com/switchboard-hub/switchboard/internal/fetch"
	"github.com/switchboard-hub/switchboard/internal/listeners"
	"github.com/switchboard-hub/switchboard/internal/metrics"
	"github.com/switchboard-hub/switchboard/internal/policy"
	"github.com/switchboard-hub/switchboard/internal/process"
	"github.com/switchboard-hub/switchboard/internal/rag"
	"github.com/switchboard-hub/switchboard/internal/sessions"
	"github.com/switchboard-hub/switchboard/internal/upstream"
	"github.com/switchboard-hub/switchboard/internal/webview"
	"github.com/switchboard-hub/switchboard/internal/workspace"
	"github.com/switchboard-hub/switchboard/internal/wshub"
	"github.com/switchboard-hub/switchboard/mcp/tool"
)

// ServerName is the implementation name announced to clients.
const ServerName = "switchboard"

// Subsystem registers additional tools at construction. Implementations must be safe for
// concurrent use: every client session calls into the same instance.
type Subsystem interface {
	Name() string
	RegisterTools(server *sdk.Server)
}

// SubsystemWithShutdown is a Subsystem that owns goroutines or connections to release.
type SubsystemWithShutdown interface {
	Subsystem
	Shutdown(ctx context.Context) error
}

// Option configures a Service.
type Option func(*Service) error

// Service is the hub. Create it with New; it is safe for concurrent use.
type Service struct {
	server  *sdk.Server
	version string

	workspaceDir string
	// hubWS is the hub's workspace: where clients without usable roots or relay directory work.
	// nil while the hub has none (WithNoWorkspace, until SetWorkspace). Read it through
	// hubWorkspace; SetWorkspace swaps it under wsMu.
	hubWS       atomic.Pointer[workspace.Root]
	noWorkspace string // why there is no hub workspace and how to choose one (WithNoWorkspace)
	onWorkspace listeners.Set[string]
	logger      *slog.Logger
	audit       *audit.Logger
	sessions    *sessions.Registry
	procs       *process.Service
	hub         *wshub.Hub
	metrics     *metrics.Store
	browser     *webview.Webview
	browserFeed *browserFeed
	subsystems  []Subsystem
	extraGroups []func(*Service) toolGroup // after hubGroups (withToolGroups, tests)
	up          *upstreams                 // the user's other MCP servers (mcp/upstream.go), nil when none
	rag         *rag.Live                  // the engine in force; a Settings save or a hand edit switches it
	ragFeed     *ragFeed

	serverOpts []func(*sdk.ServerOptions)
	opts       optionValues // what the options chose for the parts New builds; only New reads it

	searchOn bool           // file_grep, file_glob (tools_search.go)
	patchOn  bool           // file_patch (tools_patch.go)
	gitOn    bool           // git_* (tools_git.go)
	fetcher  *fetch.Fetcher // web_fetch (tools_web.go)
	notes    *notesState    // memory_*, todo_* (tools_notes.go)

	toolsets *toolsetState // the registered tools and which of them are served (mcp/toolsets.go)

	owners procOwners // which client session started which process
	// startedBy: process id → the *sdk.ServerSession that started it, for the channels a
	// session's scoped hub token may stream (tools_ws.go).
	startedBy sync.Map

	activity *activityLog
	recorder *callRecorder
	callSeq  atomic.Uint64 // audit call IDs pairing "started" lines with outcomes

	// Trust (mcp/policy.go, mcp/roots.go): rules, pending questions, per-session roots.
	policy    *policy.Store
	approvals *policy.Broker
	rounds    roundStates         // multi round-trip state of calls waiting for a client's answers
	roots     sync.Map            // *sdk.ServerSession → *sessionRoots
	pathTools map[string]bool     // tools that work in the caller's workspace (declared; they need a roots client's consent)
	pathArgs  map[string][]string // each tool's declared workspace-path arguments (tool.Add, workspace:"path")
	home      string              // the user's home directory, symlinks resolved ("" when unknown)
	hubState  []string            // the hub's own config, data and runtime directories (WithHubState)
	wsMu      sync.Mutex
	wsCache   map[string]*workspace.Root // root directory → its sandbox

	control atomic.Pointer[ControlFunc] // answers `switchboard` CLI verbs on the Unix socket (SetControl)

	shutdownOnce sync.Once
	shutdownErr  error
}

// optionValues holds what the options chose for the parts of the hub New builds from them (the
// toolsets, the upstream servers); the parts own their state from then on.
type optionValues struct {
	readOnly       bool
	disabled       []string
	toolsetsChosen bool     // WithToolsets was given: serve only toolsets
	toolsets       []string // validated toolset names
	upstreams      *upstream.Manager
	toolSearch     bool // upstream tools behind servers_search / servers_call
}

// WithWorkspaceRoot confines file tools to dir (default: the current directory).
func WithWorkspaceRoot(dir string) Option {
	return func(s *Service) error { s.workspaceDir = dir; return nil }
}

// WithNoWorkspace starts the hub without a workspace of its own (unless WithWorkspaceRoot names
// one): a desktop launch from the home directory, where the process's directory is no project.
// Until SetWorkspace chooses one, a call that would work in the hub's workspace fails with
// reason, which should say how to choose one; clients with usable roots or a relay directory
// keep working in theirs.
func WithNoWorkspace(reason string) Option {
	return func(s *Service) error {
		if reason == "" {
			return errors.New("WithNoWorkspace: the reason is what callers read; give one")
		}
		s.noWorkspace = reason
		return nil
	}
}

// WithProcessService enables the process tools. The Service shuts it down on Shutdown.
func WithProcessService(ps *process.Service) Option {
	return func(s *Service) error { s.procs = ps; return nil }
}

// WithWSHub enables the WebSocket tools and live feeds. The Service shuts it down on Shutdown.
func WithWSHub(h *wshub.Hub) Option {
	return func(s *Service) error { s.hub = h; return nil }
}

// WithRAG enables the RAG tools (rag_query, rag_ingest, rag_collections) on the engine in force
// in l (rag.Hold wraps a single engine). Each call takes the engine for its own length, so a
// switch of l applies from the next call. The Service closes l on Shutdown.
func WithRAG(l *rag.Live) Option {
	return func(s *Service) error { s.rag = l; s.ragFeed = &ragFeed{}; return nil }
}

// WithBrowser enables the browser tools (webview_*) on the shared connection w. The Service
// closes it (and any browser it launched) on Shutdown.
func WithBrowser(w *webview.Webview) Option {
	return func(s *Service) error { s.browser = w; return nil }
}

// WithSubsystem appends a tool plugin; its tools follow the built-in ones.
func WithSubsystem(sub Subsystem) Option {
	return func(s *Service) error { s.subsystems = append(s.subsystems, sub); return nil }
}

// WithMetricsStore sets where metrics events live (default: none until set; metrics tools then
// report that no store is configured).
func WithMetricsStore(m *metrics.Store) Option {
	return func(s *Service) error { s.metrics = m; return nil }
}

// WithAudit sets the audit logger (default: discard).
func WithAudit(a *audit.Logger) Option {
	return func(s *Service) error { s.audit = a; return nil }
}

// WithLogger sets the diagnostics logger (default: discard).
func WithLogger(l *slog.Logger) Option {
	return func(s *Service) error { s.logger = l; return nil }
}

// WithSessionRegistry shares a client registry (default: a new one).
func WithSessionRegistry(r *sessions.Registry) Option {
	return func(s *Service) error { s.sessions = r; return nil }
}

// WithReadOnly registers only tools annotated read-only.
func WithReadOnly(on bool) Option {
	return func(s *Service) error { s.opts.readOnly = on; return nil }
}

// WithDisabledTools removes the named tools after registration. Unknown names are an error, so a
// typo in the config file does not silently leave a tool enabled.
func WithDisabledTools(names ...string) Option {
	return func(s *Service) error { s.opts.disabled = append(s.opts.disabled, names...); return nil }
}

// WithServerOptions lets f amend the go-sdk server options before the server is created (e.g.
// the conformance fixtures' completion and subscription handlers).
func WithServerOptions(f func(*sdk.ServerOptions)) Option {
	return func(s *Service) error { s.serverOpts = append(s.serverOpts, f); return nil }
}

// WithHubState names the hub's own directories (config, data, runtime). A client's root or relay
// directory that is, contains or lies in one of them is never its workspace without consent.
func WithHubState(dirs ...string) Option {
	return func(s *Service) error {
		for _, d := range dirs {
			if d == "" {
				continue
			}
			d = filepath.Clean(d)
			if real, err := filepath.EvalSymlinks(d); err == nil {
				d = real
			}
			s.hubState = append(s.hubState, d)
		}
		return nil
	}
}

// WithVersion sets the version announced to clients.
func WithVersion(v string) Option {
	return func(s *Service) error { s.version = v; return nil }
}

// New builds the Service and registers its tools: the file, directory and language tools, then
// metrics, then each group its options configured (search, patch, git, web, notes, WebSocket with
// a hub, processes with a process service, RAG, browser), then each subsystem's tools in order
// (ML, IDE, …).
func New(opts ...Option) (*Service, error) {
	s := &Service{version: "dev", activity: newActivityLog(500)}
	for _, o := range opts {
		if err := o(s); err != nil {
			return nil, err
		}
	}
	if s.workspaceDir == "" && s.noWorkspace == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, fmt.Errorf("workspace: %w", err)
		}
		s.workspaceDir = wd
	}
	var root *workspace.Root
	if s.workspaceDir != "" {
		var err error
		if root, err = s.openHubWorkspace(s.workspaceDir); err != nil {
			return nil, err
		}
		s.hubWS.Store(root)
	}
	if s.logger == nil {
		s.logger = slog.New(slog.DiscardHandler)
	}
	if s.audit == nil {
		s.audit = audit.Discard()
	}
	if s.sessions == nil {
		s.sessions = sessions.New()
	}
	s.recorder = newCallRecorder(s.metrics, s.logger)
	s.initPolicy()
	if home, err := os.UserHomeDir(); err == nil && filepath.IsAbs(home) {
		if real, err := filepath.EvalSymlinks(home); err == nil {
			home = real
		}
		s.home = filepath.Clean(home)
	}
	// A session's questions end with it: its client can no longer use an answer, and an
	// approval left on the dashboard would let a click run a dead client's call.
	s.sessions.Subscribe(func(c sessions.Change) {
		if c.Kind == "disconnected" {
			s.approvals.Withdraw(c.Session.ID, "withdrawn: the client's session "+c.Session.ID+" ended")
		}
	})
	if s.hub != nil {
		s.approvals.AddPresence(func() bool { return s.hub.HasSubscribers(ChannelApprovals) })
	}

	serverOpts := &sdk.ServerOptions{
		// Instructions: set per initialize by instructionsMiddleware, from the served toolsets.
		Logger:                  slog.New(minLevel{s.logger.Handler(), slog.LevelWarn}),
		Capabilities:            &sdk.ServerCapabilities{Tools: &sdk.ToolCapabilities{ListChanged: true}, Logging: &sdk.LoggingCapabilities{}},
		InitializedHandler:      s.onInitialized,
		RootsListChangedHandler: s.onRootsListChanged,
	}
	for _, f := range s.serverOpts {
		f(serverOpts)
	}
	var servers func() []string
	if m := s.opts.upstreams; m != nil {
		s.up = newUpstreams(m, s.opts.toolSearch)
		s.up.serverOptions(serverOpts)
		servers = m.Names
	}
	s.server = sdk.NewServer(&sdk.Implementation{Name: ServerName, Title: "Switchboard", Version: s.version}, serverOpts)
	s.toolsets = newToolsetState(s.server, s.opts.toolsetsChosen, s.opts.toolsets, servers)
	s.registerGroups()
	for _, sub := range s.subsystems {
		sub.RegisterTools(s.server)
	}
	s.up.registerToolSearch(s.server, s.toolsets)
	if err := s.toolsets.applyToolPolicy(s.opts.readOnly, s.opts.disabled); err != nil {
		return nil, err
	}
	s.toolsets.init()
	s.computePathTools()
	if s.up != nil {
		s.up.wire(s.server, s.toolsets, s, s.hub)
	}
	s.server.AddReceivingMiddleware(s.policyMiddleware) // inside audit: the decision is in the call's audit line
	s.server.AddReceivingMiddleware(s.auditMiddleware, s.instructionsMiddleware)
	if s.up != nil && s.up.toolSearch {
		s.server.AddReceivingMiddleware(s.up.toolSearchMiddleware) // outside audit: it audits the real tool
	}
	s.server.AddReceivingMiddleware(s.recoverMiddleware) // outermost: added last
	s.wireFeeds()
	s.toolsets.wireFeed(s.hub)
	s.wireTrustFeeds()
	s.watchOwnedProcesses()
	s.wireRAGFeed()
	if root != nil {
		s.sweepWorkspace(root)
	}
	return s, nil
}

// openHubWorkspace opens dir as the hub's workspace: the hub's own files stay off limits even
// inside it, and the browser may show its files (and a client's root once a webview call of that
// client has used it, see checkURL); the hub serves every file:// load of the browser from
// these, whatever asked for it (a tool, a link, a frame).
func (s *Service) openHubWorkspace(dir string) (*workspace.Root, error) {
	root, err := workspace.Open(dir)
	if err != nil {
		return nil, err
	}
	root.Protect(s.hubState...)
	if s.browser != nil {
		s.browser.AllowFiles(root)
	}
	return root, nil
}

// hubWorkspace is the hub's workspace, or the error WithNoWorkspace set while there is none.
func (s *Service) hubWorkspace() (*workspace.Root, error) {
	if w := s.hubWS.Load(); w != nil {
		return w, nil
	}
	return nil, errors.New(s.noWorkspace)
}

// hubDir is the hub's workspace directory, "" while there is none.
func (s *Service) hubDir() string {
	if w := s.hubWS.Load(); w != nil {
		return w.Dir()
	}
	return ""
}

// SetWorkspace makes dir the hub's workspace from now on, while the hub runs: the workspace of
// every client without usable roots or relay directory (clients with their own keep them).
// Connections, sessions, processes and transports stay as they are; a call already running
// finishes in the directory it started in. The previous workspace's sandbox stays open among
// the client roots' (a client whose root is that directory keeps using it; Shutdown closes it),
// so nothing running loses its handle. dir must be an existing directory.
func (s *Service) SetWorkspace(dir string) error {
	s.wsMu.Lock()
	old := s.hubWS.Load()
	real := dir
	if r, err := filepath.EvalSymlinks(dir); err == nil {
		real = r
	}
	if old != nil && old.Dir() == real {
		s.wsMu.Unlock()
		return nil
	}
	next, reused := s.wsCache[real]
	if reused {
		delete(s.wsCache, real) // a client's root became the hub's: one sandbox, one owner
	} else {
		var err error
		if next, err = s.openHubWorkspace(real); err != nil {
			s.wsMu.Unlock()
			return fmt.Errorf("workspace: %w", err)
		}
	}
	if old != nil {
		if s.wsCache == nil {
			s.wsCache = map[string]*workspace.Root{}
		}
		s.wsCache[old.Dir()] = old
	}
	s.hubWS.Store(next)
	s.wsMu.Unlock()
	if !reused {
		s.sweepWorkspace(next)
	}
	s.republishRoots()
	s.logger.Info("workspace changed", "dir", next.Dir())
	s.onWorkspace.Notify(next.Dir())
	return nil
}

// OnWorkspaceChange calls f with the new directory after each SetWorkspace that changed it,
// until cancel is called.
func (s *Service) OnWorkspaceChange(f func(dir string)) (cancel func()) { return s.onWorkspace.Add(f) }

// sweepWorkspace removes, in the background, the temp files that writes interrupted by a kill
// left in w (workspace.Root.StartSweep: bounded, owned by w, stopped by its Close in Shutdown).
// In the background because a walk of a large tree would delay the hub's first answer, and
// nothing waits for it: the temp files are hidden from every listing meanwhile.
func (s *Service) sweepWorkspace(w *workspace.Root) {
	w.StartSweep(func(res workspace.SweepResult, err error) {
		switch {
		case err != nil && !errors.Is(err, context.Canceled):
			s.logger.Warn("workspace: sweep of interrupted writes' temp files stopped", "dir", w.Dir(), "entries", res.Entries, "removed", len(res.Removed), "err", err)
		case len(res.Removed) > 0 || res.Partial:
			s.logger.Info("workspace: swept temp files of interrupted writes", "dir", w.Dir(), "removed", res.Removed, "entries", res.Entries, "partial", res.Partial)
		}
	})
}

// SetControl sets what answers ControlMethod requests on the Unix socket (the app's CLI verbs
// against a running hub). Listeners started later use it.
func (s *Service) SetControl(f ControlFunc) { s.control.Store(&f) }

// Control returns the control function set by SetControl, or nil.
func (s *Service) Control() ControlFunc {
	if p := s.control.Load(); p != nil {
		return *p
	}
	return nil
}

// controlLate calls the control function set when the request comes (SetControl may follow the
// listener's start).
func (s *Service) controlLate(ctx context.Context, action string, params json.RawMessage) (any, error) {
	f := s.Control()
	if f == nil {
		return nil, fmt.Errorf("%s: this hub takes no control requests", ControlMethod)
	}
	return f(ctx, action, params)
}

// Server returns the underlying go-sdk server (for in-process clients and tests).
func (s *Service) Server() *sdk.Server { return s.server }

// Sessions returns the client session registry.
func (s *Service) Sessions() *sessions.Registry { return s.sessions }

// Workspace returns the hub's sandbox root, or nil while the hub has none (WithNoWorkspace).
func (s *Service) Workspace() *workspace.Root { return s.hubWS.Load() }

// WorkspaceDir returns the hub's workspace directory, or "" while the hub has none.
func (s *Service) WorkspaceDir() string { return s.hubDir() }

// Processes returns the process service, or nil.
func (s *Service) Processes() *process.Service { return s.procs }

// WSHub returns the WebSocket hub, or nil.
func (s *Service) WSHub() *wshub.Hub { return s.hub }

// Activity returns the most recent tool calls, oldest first.
func (s *Service) Activity() []audit.Entry { return s.activity.list() }

// OnActivity calls fn with each entry the activity feed gets (tool calls, and the dashboard's and
// tray's audited actions, such as autostart_set), on the goroutine that recorded it, until cancel
// is called. fn must not block.
func (s *Service) OnActivity(fn func(audit.Entry)) (cancel func()) { return s.activity.subscribe(fn) }

// Shutdown releases everything the Service owns: subsystems, processes, the hub and the
// workspace handle. Safe to call more than once.
func (s *Service) Shutdown(ctx context.Context) error {
	s.shutdownOnce.Do(func() {
		var errs []error
		if s.up != nil {
			// First: a server's process group ends with the hub, whatever else fails.
			if err := s.up.m.Shutdown(ctx); err != nil {
				errs = append(errs, err)
			}
		}
		for i := len(s.subsystems) - 1; i >= 0; i-- {
			if sd, ok := s.subsystems[i].(SubsystemWithShutdown); ok {
				if err := sd.Shutdown(ctx); err != nil {
					errs = append(errs, fmt.Errorf("subsystem %s: %w", s.subsystems[i].Name(), err))
				}
			}
		}
		if s.browser != nil {
			s.browserFeed.stop()
			_ = s.browser.Close()
		}
		if s.procs != nil {
			if err := s.procs.Shutdown(ctx); err != nil {
				errs = append(errs, fmt.Errorf("processes: %w", err))
			}
		}
		s.recorder.close()
		if s.rag != nil {
			if err := s.rag.Close(); err != nil {
				errs = append(errs, fmt.Errorf("rag: %w", err))
			}
		}
		if s.hub != nil {
			if err := s.hub.Shutdown(ctx); err != nil {
				errs = append(errs, fmt.Errorf("websocket hub: %w", err))
			}
		}
		if err := s.closeRootWorkspaces(); err != nil {
			errs = append(errs, fmt.Errorf("root workspaces: %w", err))
		}
		if w := s.hubWS.Load(); w != nil {
			if err := w.Close(); err != nil {
				errs = append(errs, fmt.Errorf("workspace: %w", err))
			}
		}
		tool.Forget(s.server) // the handlers kept for re-adding switched-off toolsets
		s.shutdownErr = errors.Join(errs...)
	})
	return s.shutdownErr
}

// minLevel drops records below a level. go-sdk logs every connection at Info; our own logs already
// say what matters (transports, audit), so the SDK only gets to speak about warnings and errors.
type minLevel struct {
	slog.Handler
	min slog.Level
}

func (h minLevel) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.min && h.Handler.Enabled(ctx, l)
}

func (h minLevel) WithAttrs(a []slog.Attr) slog.Handler {
	return minLevel{h.Handler.WithAttrs(a), h.min}
}
func (h minLevel) WithGroup(n string) slog.Handler { return minLevel{h.Handler.WithGroup(n), h.min} }

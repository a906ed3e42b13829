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
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/internal/audit"
	"github.com/switchboard-hub/switchboard/internal/fetch"
	"github.com/switchboard-hub/switchboard/internal/handles"
	"github.com/switchboard-hub/switchboard/internal/metrics"
	"github.com/switchboard-hub/switchboard/internal/policy"
	"github.com/switchboard-hub/switchboard/internal/process"
	"github.com/switchboard-hub/switchboard/internal/rag"
	"github.com/switchboard-hub/switchboard/internal/sessions"
	"github.com/switchboard-hub/switchboard/internal/upstream"
	"github.com/switchboard-hub/switchboard/internal/webview"
	"github.com/switchboard-hub/switchboard/internal/workspace"
	"github.com/switchboard-hub/switchboard/internal/wshub"
	"github.com/switchboard-hub/switchboard/mcp/proxy"
	"github.com/switchboard-hub/switchboard/mcp/tool"
	"github.com/switchboard-hub/switchboard/mcp/tools"
	mcptransport "github.com/switchboard-hub/switchboard/mcp/transport"
	"github.com/switchboard-hub/switchboard/mcp/trust"
)

// ServerName is the implementation name announced to clients.
const ServerName = upstream.HubServerName

// Subsystem contributes a tool group with a life of its own (a backend connection, a feed): its
// tools are declared by Tools and bound to the subsystem itself, so the group's handlers are
// the subsystem's methods (tool.Func). Implementations must be safe for concurrent use: every
// client session calls into the same instance.
type Subsystem interface {
	Name() string
	Tools() tool.Group
}

// SubsystemWithShutdown is a Subsystem that owns goroutines or connections to release.
type SubsystemWithShutdown interface {
	Subsystem
	Shutdown(ctx context.Context) error
}

// Option configures a Service.
type Option func(*Service) error

// Service is the hub. Create it with New; it is safe for concurrent use. It composes the hub's
// parts (workspaces, trust, toolsets, upstream servers, connections), each owning its state, and
// is their public face: its exported methods delegate to them.
type Service struct {
	server *sdk.Server
	opts   optionValues // what the options chose for the parts New builds; only New reads it

	// What the whole hub shares: its tool groups, subsystems and parts use these.
	logger     *slog.Logger
	audit      *audit.Logger
	sessions   *sessions.Registry
	procs      *process.Service
	hub        *wshub.Hub
	metrics    *metrics.Store
	browser    *webview.Webview
	rag        *rag.Live         // the engine in force; a Settings save or a hand edit switches it
	notes      *tools.NotesState // memory_*, todo_* (mcp/tools/notes.go)
	code       *tools.CodeState  // code_*, project_* (mcp/code_options.go)
	tasks      *taskRunner       // long calls handed back as tasks (mcp/tasks.go), nil when off
	subsystems []Subsystem

	// The parts, each built in New with only what it uses.
	ws        *trust.Workspaces    // the hub's workspace and the client roots' sandboxes (mcp/trust)
	trust     *trust.Trust         // policy, approvals, each session's workspace (mcp/trust)
	inventory *tool.Inventory      // every tool the hub has, bound: its groups' and the upstream servers'
	toolsets  *toolsetState        // which of the inventory's tools are served (mcp/toolsets.go)
	up        *proxy.Upstreams     // the user's other MCP servers (mcp/proxy/upstream.go), nil when none
	conns     *mcptransport.Server // serves client connections (mcp/transport)

	// The dashboard's feeds and the record of calls (mcp/feeds*.go, mcp/middleware.go).
	browserFeed *browserFeed
	ragFeed     *tools.RAGFeed
	activity    *activityLog
	recorder    *callRecorder

	// Tools modes (mcp/modes.go): the hub's mode and core, results kept as handles, and the
	// composed handler chain inner calls go through (mcp/inner.go).
	modes           atomic.Pointer[modesConfig]
	results         *handles.Store
	resultThreshold int
	chain           sdk.MethodHandler
	callSeq         atomic.Uint64 // audit call IDs pairing "started" lines with outcomes

	owners procOwners // which client session started which process
	// startedBy: process id → the *sdk.ServerSession that started it, for the channels a
	// session's scoped hub token may stream (mcp/tools/ws.go).
	startedBy sync.Map

	control atomic.Pointer[mcptransport.ControlFunc] // answers `switchboard` CLI verbs on the Unix socket (SetControl)

	shutdownOnce sync.Once
	shutdownErr  error
}

// optionValues holds what the options chose for the parts of the hub New builds from them
// (the server, tool groups, workspaces, trust, toolsets, the upstream servers); the parts own
// their state from then on.
type optionValues struct {
	version     string
	serverOpts  []func(*sdk.ServerOptions)
	serverSetup []func(*sdk.Server)
	extraGroups []groupDecl    // after hubGroups (withToolGroups, tests)
	searchOn    bool           // file_grep, file_glob (mcp/tools/search.go)
	patchOn     bool           // file_patch (mcp/tools/patch.go)
	gitOn       bool           // git_* (mcp/tools/git.go)
	fetcher     *fetch.Fetcher // web_fetch (mcp/tools/web.go)

	workspaceDir string
	noWorkspace  string
	hubState     []string
	policy       *policy.Store
	approvals    *policy.Broker

	readOnly       bool
	disabled       []string
	toolsetsChosen bool     // WithToolsets was given: serve only toolsets
	toolsets       []string // toolset names as given (checked by newToolsetState)
	upstreams      *upstream.Manager
	toolSearch     bool          // upstream tools behind servers_search / servers_call
	holdTimeout    time.Duration // how long a held upstream call waits for a 2026-era client's retry (0: proxy's default)

	toolsMode       string   // WithToolsMode ("" : none given)
	toolsCore       []string // WithToolsMode's core
	toolsCoreSet    bool
	resultThreshold int // WithResultHandles
	resultMax       int

	// toolsetsEveryServer: WithDefaultToolsets, whose sets include every upstream server.
	toolsetsEveryServer bool

	tasksOn   bool          // WithTasks
	tasksDir  string        // where finished tasks are kept
	taskAfter time.Duration // a call running longer becomes a task (0: never)
}

// WithWorkspaceRoot confines file tools to dir (default: the current directory).
func WithWorkspaceRoot(dir string) Option {
	return func(s *Service) error { s.opts.workspaceDir = dir; return nil }
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
		s.opts.noWorkspace = reason
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
	return func(s *Service) error { s.rag = l; s.ragFeed = &tools.RAGFeed{}; return nil }
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
	return func(s *Service) error { s.opts.serverOpts = append(s.opts.serverOpts, f); return nil }
}

// WithServerSetup lets f add what is not a tool (prompts, resources) to the go-sdk server once
// it exists (the conformance fixtures). Tools are declared in groups (tool.Group), never here.
func WithServerSetup(f func(*sdk.Server)) Option {
	return func(s *Service) error { s.opts.serverSetup = append(s.opts.serverSetup, f); return nil }
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
			s.opts.hubState = append(s.opts.hubState, d)
		}
		return nil
	}
}

// WithVersion sets the version announced to clients.
func WithVersion(v string) Option {
	return func(s *Service) error { s.opts.version = v; return nil }
}

// New builds the Service and registers its tools: the file, directory and language tools, then
// metrics, then each group its options configured (search, patch, git, web, notes, WebSocket with
// a hub, processes with a process service, RAG, browser), then each subsystem's tools in order
// (ML, IDE, …).
func New(opts ...Option) (*Service, error) {
	s := &Service{activity: newActivityLog(500), opts: optionValues{version: "dev"}}
	for _, o := range opts {
		if err := o(s); err != nil {
			return nil, err
		}
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
	s.ws = trust.NewWorkspaces(s.opts.hubState, s.opts.noWorkspace, s.browser, s.logger)
	dir := s.opts.workspaceDir
	if dir == "" && s.opts.noWorkspace == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, fmt.Errorf("workspace: %w", err)
		}
		dir = wd
	}
	var root *workspace.Root
	if dir != "" {
		var err error
		if root, err = s.ws.OpenHub(dir); err != nil {
			return nil, err
		}
		s.ws.UseHub(root)
	}
	s.recorder = newCallRecorder(s.metrics, s.logger)
	s.trust = trust.New(s.opts.policy, s.opts.approvals, s.ws, s.sessions, hubSessions{s}, s.logger, s.hub)

	serverOpts := &sdk.ServerOptions{
		// Instructions: set per initialize by instructionsMiddleware, from the served toolsets.
		Logger:                  slog.New(minLevel{s.logger.Handler(), slog.LevelWarn}),
		Capabilities:            &sdk.ServerCapabilities{Tools: &sdk.ToolCapabilities{ListChanged: true}, Logging: &sdk.LoggingCapabilities{}},
		InitializedHandler:      s.trust.OnInitialized,
		RootsListChangedHandler: s.trust.OnRootsListChanged,
		SetCacheable:            cacheHints,
	}
	if s.opts.tasksOn {
		// The Tasks extension, announced in initialize and server/discover (mcp/tasks.go).
		serverOpts.Capabilities.AddExtension(TasksExtension, map[string]any{})
	}
	for _, f := range s.opts.serverOpts {
		f(serverOpts)
	}
	var servers func() []string
	if m := s.opts.upstreams; m != nil {
		s.up = proxy.New(m, s.opts.toolSearch)
		s.up.ServerOptions(serverOpts)
		servers = m.Names
	}
	machine, _ := os.Hostname()
	// The description says which machine this hub runs on: a hub that uses this one as its
	// server shows it as "Switchboard hub on <machine>" (upstream.HubDescription).
	s.server = sdk.NewServer(&sdk.Implementation{Name: ServerName, Title: "Switchboard", Version: s.opts.version, Description: upstream.HubDescription(machine)}, serverOpts)
	for _, f := range s.opts.serverSetup {
		f(s.server)
	}
	tr, err := s.newTaskRunner()
	if err != nil {
		return nil, err
	}
	s.tasks = tr
	s.inventory = &tool.Inventory{}
	var ts *toolsetState
	ts, err = newToolsetState(s.server, s.inventory, s.opts.toolsetsChosen, s.opts.toolsets, s.opts.toolsetsEveryServer, servers)
	if err != nil {
		return nil, err
	}
	s.toolsets = ts
	s.registerGroups()
	if s.up != nil && s.up.ToolSearch() {
		s.inventory.Add(proxy.ToolSearchGroup().Bind(proxy.NewToolSearch(s.toolsets))...)
	}
	if err := s.toolsets.applyToolPolicy(s.opts.readOnly, s.opts.disabled); err != nil {
		return nil, err
	}
	if err := s.initModes(); err != nil {
		return nil, err
	}
	s.toolsets.init()
	if s.tasks != nil {
		s.tasks.schemaless = schemalessTools(s.inventory)
	}
	s.trust.ComputePathTools(s.inventory.Tools())
	for _, sub := range s.subsystems {
		if m, ok := sub.(*tools.MLTools); ok {
			m.Start(s.hub, s.metrics, s.logger) // ML's dashboard feed, once the hub's parts exist
		}
	}
	if s.up != nil {
		s.up.Wire(s.server, s.toolsets, s.trust, s.hub)
		s.trust.SetResumes(s.up.Resumes)
		s.up.SetAudit(s.auditBridgedRound)
		s.up.SetHoldTimeout(s.opts.holdTimeout)
		s.up.SetCallers(func(ctx context.Context, req sdk.Request) proxy.Caller {
			id, transport := s.sessionID(ctx, req) // the Sessions view's: a stateless client's identity
			return proxy.Caller{ID: id, Transport: transport}
		})
		s.sessions.Subscribe(func(c sessions.Change) {
			if c.Kind == "disconnected" {
				s.up.EndHeldOf(c.Session.ID, "the client's session "+c.Session.ID+" ended")
			}
		})
	}
	if s.up != nil {
		s.server.AddReceivingMiddleware(s.up.MissingToolMiddleware) // innermost: after the policy, like the call it stands for
	}
	s.server.AddReceivingMiddleware(s.trust.PolicyMiddleware) // inside audit: the decision is in the call's audit line
	s.server.AddReceivingMiddleware(s.grantMiddleware)        // outside the policy: what a grant does not cover is not asked about
	s.server.AddReceivingMiddleware(s.auditMiddleware, s.instructionsMiddleware)
	// Outside the policy and audit, inside modes (it sees the real tool): a held call is decided
	// and audited once, and its retries bring answers to its inner calls (mcp/trust/held.go).
	s.trust.SetHoldsInner(ToolScriptRun, "project_run")
	s.server.AddReceivingMiddleware(s.trust.HoldMiddleware)
	s.server.AddReceivingMiddleware(s.modesMiddleware)   // outside audit: tools_call is audited as the real tool
	s.server.AddReceivingMiddleware(s.recoverMiddleware) // outermost for clients but for tasks
	s.server.AddReceivingMiddleware(s.captureChain)      // keeps the whole chain for inner calls (mcp/inner.go): a script's calls never become tasks of their own
	if s.tasks != nil {
		// Outermost: the whole call, recovery, audit and policy included, runs on the context
		// the task owns, so it can outlive the request.
		s.server.AddReceivingMiddleware(s.tasks.middleware, s.tasks.listenMiddleware)
		s.server.AddSendingMiddleware(s.tasks.sendingMiddleware)
	}
	s.conns = mcptransport.NewServer(s.server, s.sessions, s.trust.Approvals(), s.logger)
	if s.notes != nil {
		// A session's todo list ends with its registry entry: for a stateless client, when its
		// identity leaves (mcp/transport/stateless.go), not after each request.
		s.sessions.Subscribe(func(c sessions.Change) {
			if c.Kind == "disconnected" {
				s.notes.ForgetSession(c.Session.ID)
			}
		})
	}
	s.wireFeeds()
	s.toolsets.wireFeed(s.hub)
	s.trust.WireFeeds(s.hub)
	s.tasks.wireFeed(s.hub)
	s.watchOwnedProcesses()
	if s.hub != nil && s.rag != nil {
		tools.WireRAGFeed(s.hub, s.rag, s.ragFeed)
	}
	if root != nil {
		s.ws.Sweep(root)
	}
	return s, nil
}

// SetWorkspace makes dir the hub's workspace from now on, while the hub runs: the workspace of
// every client without usable roots or relay directory (clients with their own keep them).
// Connections, sessions, processes and transports stay as they are; a call already running
// finishes in the directory it started in. The previous workspace's sandbox stays open among
// the client roots' (a client whose root is that directory keeps using it; Shutdown closes it),
// so nothing running loses its handle. dir must be an existing directory.
func (s *Service) SetWorkspace(dir string) error {
	next, err := s.ws.SetHub(dir)
	if err != nil || next == nil {
		return err
	}
	s.trust.RepublishRoots()
	s.logger.Info("workspace changed", "dir", next.Dir())
	s.ws.NotifyChange(next.Dir())
	return nil
}

// OnWorkspaceChange calls f with the new directory after each SetWorkspace that changed it,
// until cancel is called.
func (s *Service) OnWorkspaceChange(f func(dir string)) (cancel func()) { return s.ws.OnChange(f) }

// SetControl sets what answers transport.ControlMethod requests on the Unix socket (the app's CLI verbs
// against a running hub). Listeners started later use it.
func (s *Service) SetControl(f mcptransport.ControlFunc) { s.control.Store(&f) }

// Control returns the control function set by SetControl, or nil.
func (s *Service) Control() mcptransport.ControlFunc {
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
		return nil, fmt.Errorf("%s: this hub takes no control requests", mcptransport.ControlMethod)
	}
	return f(ctx, action, params)
}

// Server returns the underlying go-sdk server (for in-process clients and tests).
func (s *Service) Server() *sdk.Server { return s.server }

// Sessions returns the client session registry.
func (s *Service) Sessions() *sessions.Registry { return s.sessions }

// Workspace returns the hub's sandbox root, or nil while the hub has none (WithNoWorkspace).
func (s *Service) Workspace() *workspace.Root { return s.ws.Hub() }

// WorkspaceDir returns the hub's workspace directory, or "" while the hub has none.
func (s *Service) WorkspaceDir() string { return s.ws.HubDir() }

// Processes returns the process service, or nil.
func (s *Service) Processes() *process.Service { return s.procs }

// WSHub returns the WebSocket hub, or nil.
func (s *Service) WSHub() *wshub.Hub { return s.hub }

// Activity returns the most recent tool calls as the activity feed has them, oldest first.
func (s *Service) Activity() []ActivityEntry { return s.activity.list() }

// OnActivity calls fn with each entry the activity feed gets (tool calls, and the dashboard's and
// tray's audited actions, such as autostart_set), on the goroutine that recorded it, until cancel
// is called. fn must not block.
func (s *Service) OnActivity(fn func(audit.Entry)) (cancel func()) {
	return s.activity.subscribe(func(e ActivityEntry) { fn(e.Entry) })
}

// Shutdown releases everything the Service owns: subsystems, processes, the hub and the
// workspace handle. Safe to call more than once.
func (s *Service) Shutdown(ctx context.Context) error {
	s.shutdownOnce.Do(func() {
		var errs []error
		if s.tasks != nil {
			// Calls still running as tasks end now (their processes with them) and are kept
			// as cancelled; finished tasks stay on disk for the next start.
			if err := s.tasks.close(ctx); err != nil {
				errs = append(errs, err)
			}
		}
		if s.up != nil {
			// First: a server's process group ends with the hub, whatever else fails. Calls
			// held for 2026-era clients' answers end before it (their questions would keep
			// the servers' sessions open).
			s.up.Close()
			if err := s.up.Manager().Shutdown(ctx); err != nil {
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
		s.code.StopFeed()
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
		if err := s.ws.CloseRoots(); err != nil {
			errs = append(errs, fmt.Errorf("root workspaces: %w", err))
		}
		if w := s.ws.Hub(); w != nil {
			if err := w.Close(); err != nil {
				errs = append(errs, fmt.Errorf("workspace: %w", err))
			}
		}
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

package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/switchboard-hub/switchboard/internal/audit"
	"github.com/switchboard-hub/switchboard/internal/clienttokens"
	"github.com/switchboard-hub/switchboard/internal/code"
	"github.com/switchboard-hub/switchboard/internal/config"
	"github.com/switchboard-hub/switchboard/internal/fetch"
	"github.com/switchboard-hub/switchboard/internal/hublog"
	"github.com/switchboard-hub/switchboard/internal/metrics"
	"github.com/switchboard-hub/switchboard/internal/ml"
	"github.com/switchboard-hub/switchboard/internal/oauthclient/keyring"
	"github.com/switchboard-hub/switchboard/internal/policy"
	"github.com/switchboard-hub/switchboard/internal/process"
	"github.com/switchboard-hub/switchboard/internal/rag"
	"github.com/switchboard-hub/switchboard/internal/upstream"
	"github.com/switchboard-hub/switchboard/internal/webview"
	"github.com/switchboard-hub/switchboard/internal/wshub"
	"github.com/switchboard-hub/switchboard/mcp"
	"github.com/switchboard-hub/switchboard/mcp/ide"
	"github.com/switchboard-hub/switchboard/mcp/tools"
	mcptransport "github.com/switchboard-hub/switchboard/mcp/transport"
)

// Stack is one running hub with everything it owns. Desktop, headless and serve modes all build
// the same Stack, so an agent and the dashboard always look at the same state.
type Stack struct {
	// dashboard is the headless dashboard's URL with its token, once it serves one
	// (SetDashboardURL): what a second launch of the app is sent to (HandOff).
	dashboard atomic.Pointer[string]

	Config     config.Config
	Service    *mcp.Service
	WSHub      *wshub.Hub
	Processes  *process.Service
	IDE        *ide.Subsystem
	Transports *mcp.Transports
	Logger     *slog.Logger
	Audit      *audit.Logger
	// HubLog keeps the hub's own log (Logger's records, info and above, whatever the mode
	// writes to stderr) for the dashboard's Logs view, and in <data_dir>/logs/hub.log.
	HubLog *hublog.Ring
	// note logs to HubLog only: facts a mode already prints its own way on the terminal (where
	// it listens, where the logs are) that the Logs view should show too.
	note    *slog.Logger
	Metrics *metrics.Store
	// Fetcher is web_fetch's: the Settings view changes its allow-list and timeout live.
	Fetcher *fetch.Fetcher
	// Code is the language-server pool ([code]; StateDir <data_dir>/code), closed after the
	// Service.
	Code *code.Pool
	// ClientTokens is each client's own bearer token for the HTTP endpoint (hashed, in
	// <data_dir>/client-tokens.json): the identity of a stateless 2026-07-28 client.
	ClientTokens *clienttokens.Store

	ideOnce   sync.Once
	Policy    *policy.Store
	Approvals *policy.Broker
	// HubAuth is the HTTP endpoint's authorization server and certificate ([http] auth =
	// "oauth"); nil otherwise.
	HubAuth *HubAuth

	stopConfigWatch context.CancelFunc
	stopHubLogFeed  func()       // ends the "hublog" channel's publisher (Close)
	serverStates    serverStates // last state logged per upstream server
	serversMu       sync.Mutex   // one edit of the config file at a time (server list, settings, switches)
	serversLazy     bool         // every server starts on demand (a one-shot hub)
	// OpenURL opens a URL in the user's browser (the desktop sets it: xdg-open); nil: the
	// front end that asked opens it (the dashboard in a browser tab).
	OpenURL func(url string) error
	logins  signIns // sign-ins to remote servers in progress (LoginServer)

	// mlConfig is the [ml] in force (RunningML); Config.ML stays the start's, read without a lock.
	mlMu     sync.Mutex
	mlConfig config.ML

	// rag holds the RAG engine in force: the rag tools, the dashboard's Knowledge view and its
	// feed take it from there for each operation. ragConfig is the [rag] it was built from
	// (RunningRAG); ragMu makes one switch at a time (SetRAG).
	rag       *rag.Live
	ragMu     sync.Mutex
	ragConfig config.RAG

	// The project folder (app/project.go): where the hub's workspace came from, and one change
	// of it at a time (projectOp, held across the change; projectMu, only around the field).
	projectOp       sync.Mutex
	projectMu       sync.Mutex
	projectSource   string
	stopProjectFeed func()
	// fileWorkspace is the config's workspace key as last put in force (under projectOp): a
	// hand edit that changes it moves the running hub (followFileWorkspace).
	fileWorkspace string
}

// serverSpecs is the configured servers as this hub runs them: a one-shot hub starts none
// before a call needs it.
func (st *Stack) serverSpecs(specs []upstream.Spec) []upstream.Spec {
	if !st.serversLazy {
		return specs
	}
	out := make([]upstream.Spec, len(specs))
	for i, sp := range specs {
		sp.Start = upstream.StartOnDemand
		out[i] = sp
	}
	return out
}

// StackOptions tune BuildStack for a mode (the CLI's serve, connect and one-shot hubs, the desktop
// app, the headless dashboard).
type StackOptions struct {
	LogSink io.Writer // diagnostics and audit echo (stderr in serve mode); nil = file only
	Quiet   bool      // LogSink gets warnings and errors only, no audit echo (serve --stdio)
	// AuditEcho also writes each audit line to LogSink (serve on sockets, where the terminal is
	// the operator's console). The desktop app and its headless mode leave the terminal to what
	// a person needs: the audit goes to the audit log only.
	AuditEcho bool
	Extra     []mcp.Option // more options for the Service (development tools' fixtures)
	WithHub   bool         // create the WebSocket hub (and its ws_* tools); started separately
	StartIDE  bool         // start the IDE bridge while the ide toolset is on
	// EagerServers starts the [[servers]] marked eager (the default) with the hub: for hubs that
	// serve clients. One-shot hubs (call, tools, doctor) start a server only when a call needs it.
	EagerServers bool
	// ProjectSource is where cfg.Workspace came from (Project*; app/project.go). ProjectFromNone
	// starts the hub without a workspace when cfg.Workspace is empty (a desktop launch from the
	// home directory with no folder chosen yet) instead of in the current directory;
	// ProjectFromConfig has the folder checked as the project chooser checks one (not used, with
	// a warning, when it is / or the home directory).
	ProjectSource string
	// ClientMetadataHTTP fetches the Client ID Metadata Documents OAuth clients name themselves
	// by ([http] auth = "oauth"); nil: the SSRF-guarded client (web_fetch's rules). Tests set
	// it: their machines cannot reach where real clients publish theirs (Claude Code's is on
	// claude.ai), so they serve a copy of the published document.
	ClientMetadataHTTP *http.Client
}

// BuildStack wires config into a Service with processes, hub, metrics, audit and the IDE bridge.
func BuildStack(cfg config.Config, version string, so StackOptions) (*Stack, error) {
	projectSource := so.ProjectSource
	// A workspace the config file names is checked as a chosen folder is (ResolveProject does
	// the same for the desktop): one saying / or the home directory is not served; the hub
	// starts as if the file named none, and says why once the logger exists.
	var workspaceWarning string
	if projectSource == ProjectFromConfig && cfg.Workspace != "" {
		if workspaceWarning = configWorkspaceProblem(cfg, UserHome()); workspaceWarning != "" {
			cfg.Workspace, projectSource = "", ""
		}
	}
	if cfg.Workspace == "" && projectSource != ProjectFromNone {
		wd, err := os.Getwd()
		if err != nil {
			return nil, fmt.Errorf("workspace: %w", err)
		}
		cfg.Workspace = wd
		projectSource = ProjectFromCwd
	}
	if projectSource == "" || (projectSource == ProjectFromNone && cfg.Workspace != "") {
		projectSource = ProjectFromConfig
	}
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("data dir %s: %w (set data_dir in the config or SWITCHBOARD_DATA_DIR)", cfg.DataDir, err)
	}
	tokens, tokensErr := clienttokens.Open(ClientTokensFile(cfg))
	if tokensErr != nil {
		// A damaged file must not keep the hub from starting: it is moved aside (logged once the
		// logger exists) and every client token is gone: their clients are refused until given
		// new ones.
		_ = os.Rename(ClientTokensFile(cfg), ClientTokensFile(cfg)+".damaged")
		var err error
		if tokens, err = clienttokens.Open(ClientTokensFile(cfg)); err != nil {
			return nil, err
		}
	}
	// One writer per stream: the audit echo and the diagnostics logger share one serialised
	// writer, and each writes whole lines, so neither splits the other's lines.
	var sink io.Writer
	if so.LogSink != nil {
		sink = audit.LineWriter(so.LogSink)
	}
	hubLog, err := hublog.New(hublog.Options{File: filepath.Join(cfg.LogDir(), "hub.log")})
	if err != nil {
		return nil, fmt.Errorf("%w (set data_dir in the config or SWITCHBOARD_DATA_DIR)", err)
	}
	built := false
	defer func() {
		if !built {
			hubLog.Close()
		}
	}()
	auditLog, err := audit.New(audit.Options{
		File:       filepath.Join(cfg.LogDir(), "audit.log"),
		MaxSizeMB:  cfg.Audit.MaxSizeMB,
		MaxBackups: cfg.Audit.MaxBackups,
		Stderr:     auditEcho(so, sink),
		User:       cfg.Env.User,
	})
	if err != nil {
		return nil, err
	}
	// The hub log keeps info and above in every mode; the terminal gets what the mode prints.
	logger := slog.New(hubLog.Handler())
	if sink != nil {
		level := slog.LevelInfo
		if so.Quiet {
			level = slog.LevelWarn
		}
		logger = slog.New(slog.NewMultiHandler(slog.NewTextHandler(sink, &slog.HandlerOptions{Level: level}), hubLog.Handler()))
	}
	if workspaceWarning != "" {
		logger.Warn(workspaceWarning, "using", cfg.Workspace)
	}
	store, err := metrics.Open(cfg.MetricsDir())
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	procs := process.New(process.Options{
		MaxProcesses: cfg.Process.MaxProcesses,
		BufferSize:   cfg.Process.BufferBytes,
		StopGrace:    time.Duration(cfg.Process.StopGraceSeconds) * time.Second,
	})
	pol, err := cfg.CompilePolicy()
	if err != nil {
		_ = procs.Shutdown(context.Background())
		store.Close()
		auditLog.Close()
		return nil, fmt.Errorf("config %s: %w", cfg.Path, err)
	}
	st := &Stack{Config: cfg, Processes: procs, Logger: logger, Audit: auditLog, Metrics: store,
		Policy: policy.NewStore(cfg.Path, pol), Approvals: policy.NewBroker(), HubLog: hubLog, note: slog.New(hubLog.Handler()),
		projectSource: projectSource, fileWorkspace: cfg.Workspace, mlConfig: cfg.ML, ragConfig: cfg.RAG}
	st.logPolicyWarnings(st.Policy.Status())
	fetcher, err := fetch.New(fetch.Options{Allow: cfg.Web.Allow, Timeout: cfg.Web.Timeout.Duration})
	if err != nil {
		_ = procs.Shutdown(context.Background())
		store.Close()
		auditLog.Close()
		return nil, fmt.Errorf("[web] allow / SWITCHBOARD_FETCH_ALLOW: %w", err)
	}
	toolsetsOpt, err := stackToolsets(cfg)
	if err != nil {
		_ = procs.Shutdown(context.Background())
		store.Close()
		auditLog.Close()
		return nil, err
	}
	workspaceOpt := mcp.WithWorkspaceRoot(cfg.Workspace)
	if cfg.Workspace == "" {
		workspaceOpt = mcp.WithNoWorkspace(NoProjectReason)
	}
	st.Fetcher = fetcher
	opts := []mcp.Option{
		workspaceOpt,
		mcp.WithVersion(version),
		mcp.WithLogger(logger),
		mcp.WithAudit(auditLog),
		mcp.WithMetricsStore(store),
		mcp.WithProcessService(procs),
		mcp.WithBrowser(webview.New(webview.Options{BrowserPath: cfg.Browser.Path, Headless: cfg.Browser.Headless, HeadlessSet: true, DataDir: cfg.DataDir,
			Display: cfg.Env.HasDisplay()})),
		mcp.WithReadOnly(cfg.ReadOnly),
		mcp.WithDisabledTools(cfg.DisabledTools...),
		toolsetsOpt,
		mcp.WithPolicy(st.Policy, st.Approvals),
		mcp.WithSearch(),
		mcp.WithPatch(),
		mcp.WithGit(),
		mcp.WithWebFetch(fetcher),
		mcp.WithNotes(cfg.DataDir),
		mcp.WithHubState(hubStateDirs(cfg)...),
	}
	st.rag, err = openRAG(cfg, logger)
	if err != nil {
		_ = procs.Shutdown(context.Background())
		store.Close()
		auditLog.Close()
		return nil, err
	}
	st.rag.OnClosed(st.logRAGClosed)
	opts = append(opts, mcp.WithRAG(st.rag))
	var pub ide.Publisher
	if so.WithHub {
		st.WSHub = wshub.New(wshub.Options{Token: cfg.Hub.Token, Logger: logger})
		opts = append(opts, mcp.WithWSHub(st.WSHub))
		pub = st.WSHub
	}
	st.IDE = ide.New(pub, ide.WithBackendURL(cfg.IDE.URL), ide.WithToken(cfg.IDE.Token), ide.WithWorkspaceRoot(cfg.Workspace), ide.WithLogger(logger),
		ide.WithReconnectInterval(cfg.IDE.ReconnectInterval.Duration), ide.WithMaxReconnectInterval(cfg.IDE.MaxReconnectInterval.Duration),
		ide.WithResponseWait(cfg.IDE.ResponseWait.Duration))
	opts = append(opts, mcp.WithSubsystem(st.IDE))
	mlReg, err := NewMLRegistry(cfg)
	if err != nil {
		_ = procs.Shutdown(context.Background())
		store.Close()
		auditLog.Close()
		return nil, err
	}
	opts = append(opts, mcp.WithML(mlReg, mlOptions(cfg.ML)))
	upOpts := UpstreamOptions(cfg)
	upOpts.Logger, upOpts.Version = logger, version
	// The folders [roots] allow grants, as the policy in force says (it is hot-reloaded).
	upOpts.GrantedDirs = func() []string {
		if p := st.Policy.Policy(); p != nil {
			return p.RootsAllow
		}
		return nil
	}
	ups, err := upstream.New(upOpts)
	if err != nil {
		_ = procs.Shutdown(context.Background())
		store.Close()
		auditLog.Close()
		return nil, err
	}
	opts = append(opts, mcp.WithUpstreams(ups), mcp.WithUpstreamToolSearch(cfg.ServerTools == "search"),
		mcp.WithToolsMode(cfg.ToolsMode, cfg.ToolsCore), mcp.WithResultHandles(cfg.ResultHandleBytes, 0))
	// One warm language server per workspace and language, shared by every client ([code]).
	st.Code = code.NewPool(code.Options{Idle: cfg.Code.IdleTimeout(), Commands: cfg.Code.Servers,
		StateDir: filepath.Join(cfg.DataDir, "code"), Logger: logger})
	opts = append(opts, mcp.WithCode(st.Code))
	// Calls that outlive task_after go on as tasks; finished ones are kept under the data dir.
	opts = append(opts, mcp.WithTasks(filepath.Join(cfg.DataDir, "tasks"), cfg.TaskAfter.Duration))
	opts = append(opts, so.Extra...)
	svc, err := mcp.New(opts...)
	if err != nil {
		_ = st.Code.Close()
		_ = procs.Shutdown(context.Background())
		store.Close()
		auditLog.Close()
		return nil, err
	}
	st.Service = svc
	st.serversLazy = !so.EagerServers
	ups.OnChange(st.logServerChange) // before Sync: the first starts are logged too
	if err := ups.Sync(st.serverSpecs(cfg.Servers)); err != nil {
		_ = svc.Shutdown(context.Background())
		_ = st.Code.Close()
		auditLog.Close()
		return nil, fmt.Errorf("config %s: %w", cfg.Path, err)
	}
	// [http] auth = "oauth": the hub's authorization server and its certificate.
	if st.HubAuth, err = openHubAuth(cfg, st, so.ClientMetadataHTTP); err != nil {
		_ = svc.Shutdown(context.Background())
		_ = st.Code.Close()
		auditLog.Close()
		return nil, fmt.Errorf("config %s: %w", cfg.Path, err)
	}
	// The file is the source of truth: an edit (by hand, by `switchboard servers`, by the
	// dashboard) is applied when the hub sees it, like the policy.
	st.Policy.Subscribe(st.logPolicy)
	// CLI verbs run against this hub (`switchboard servers list`, …) reach its controls on the
	// Unix socket (mcptransport.ControlMethod), in every mode that serves one.
	NewController(st, version)
	wctx, stopWatch := context.WithCancel(context.Background())
	st.stopConfigWatch = stopWatch
	go func() { // ends in Close
		err := config.Watch(wctx, cfg.Path, func(config.Config, error) {
			// Under the file's lock, and read again under it: a Settings save puts some
			// sections in force before it writes them ([rag], the transports), and a read
			// taken before the save ended must not put the old values back meanwhile.
			st.serversMu.Lock()
			defer st.serversMu.Unlock()
			if err := st.ReloadConfig(); err != nil {
				logger.Warn("config: the file on disk is not in force", "path", cfg.Path, "err", err)
			}
		})
		if err != nil {
			logger.Warn("config: changes to the file are not followed", "path", cfg.Path, "err", err)
		}
	}()
	st.ClientTokens = tokens
	svc.SetClientProjects(clientProjects(cfg))
	if tokensErr != nil {
		logger.Warn("client tokens: the file was unreadable and was moved aside; issue clients new tokens (Settings › Client tokens, or switchboard token --client NAME)", "err", tokensErr, "moved_to", ClientTokensFile(cfg)+".damaged")
	}
	oauth := st.HubAuth.resource()
	st.Transports = svc.NewTransports(mcp.TransportConfig{
		UnixPath:  cfg.Unix.Path,
		TCPAddr:   cfg.TCP.Addr,
		HTTPAddr:  cfg.HTTP.Addr,
		HTTPToken: cfg.HTTP.Token,
		HubAddr:   cfg.Hub.Addr,

		HTTPClientTokens: tokens,

		TCPToken:           cfg.TCP.Token,
		TCPRequireToken:    cfg.TCP.RequireToken,
		HTTPAllowedOrigins: cfg.HTTP.AllowedOrigins,
		HTTPOAuth:          oauth.HTTPOAuth,
		HTTPTLS:            oauth.HTTPTLS,
		HTTPTLSOnLoopback:  oauth.HTTPTLSOnLoopback,
	})
	// The bridge dials the backend only while the ide toolset is on: with no backend configured
	// it would retry (and log) forever for tools nobody is served.
	if so.StartIDE && slices.Contains(svc.ActiveToolsets(), "ide") {
		st.startIDE()
	}
	if so.StartIDE {
		svc.OnToolsetsChange(func(sets []mcp.ToolsetStatus) {
			for _, ts := range sets {
				if ts.Name == "ide" && ts.Enabled {
					st.startIDE()
				}
			}
		})
	}
	st.stopHubLogFeed = st.feedHubLog()
	st.stopProjectFeed = st.feedProject()
	st.note.Info("hub started", "version", version, "workspace", cfg.Workspace, "project_from", projectSource, "config", cfg.Path,
		"audit_log", filepath.Join(cfg.LogDir(), "audit.log"), "hub_log", hubLog.File())
	built = true
	return st, nil
}

// startIDE starts the IDE bridge once.
func (st *Stack) startIDE() {
	st.ideOnce.Do(func() { st.IDE.Start(context.Background()) })
}

// auditEcho is where audit lines are echoed besides the audit file: the shared stderr writer
// when the mode asks for it (StackOptions.AuditEcho), never in quiet mode (serve --stdio), where
// stderr carries real warnings only.
func auditEcho(so StackOptions, sink io.Writer) io.Writer {
	if so.Quiet || !so.AuditEcho {
		return nil
	}
	return sink
}

// stackToolsets serves the configured toolsets (the toolsets key, --toolsets,
// SWITCHBOARD_TOOLSETS) — the hub's sets and the [[servers]] by name, checked here against the
// configuration, since the hub learns its servers only once they are synced — or the default:
// all but ide unless an IDE backend URL is configured, and every server.
func stackToolsets(cfg config.Config) (mcp.Option, error) {
	if len(cfg.Toolsets) == 0 {
		return mcp.WithDefaultToolsets(cfg.IDEConfigured()), nil
	}
	if _, err := mcp.ParseToolsets(cfg.Toolsets, configuredServers(cfg)...); err != nil {
		return nil, err
	}
	return mcp.WithToolsets(cfg.Toolsets...), nil
}

// configuredServers names the [[servers]] of cfg, each a toolset of its own.
func configuredServers(cfg config.Config) []string {
	out := make([]string, 0, len(cfg.Servers))
	for _, s := range cfg.Servers {
		out = append(out, s.Name)
	}
	return out
}

// NewMLRegistry builds the inference backends: ollama and openai from the environment, then
// [[ml.backends]] from the config.
func NewMLRegistry(cfg config.Config) (*ml.Registry, error) {
	var bcs []ml.BackendConfig
	for _, b := range cfg.ML.Backends {
		bcs = append(bcs, ml.BackendConfig{Name: b.Name, Kind: b.Kind, URL: b.URL, Model: b.Model, APIKeyEnv: b.APIKeyEnv, Endpoint: b.Endpoint})
	}
	reg, err := ml.NewRegistry(ml.Options{Backends: bcs, Default: cfg.ML.DefaultBackend, OllamaHost: cfg.Env.OllamaHost,
		OpenAIBaseURL: cfg.Env.OpenAIBaseURL, OpenAIAPIKey: cfg.Env.OpenAIAPIKey, Getenv: cfg.Env.Getenv})
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	return reg, nil
}

// mlOptions are the ML tools' options from [ml].
func mlOptions(m config.ML) tools.MLOptions {
	return tools.MLOptions{JudgeBackend: m.JudgeBackend, InfluxURL: m.InfluxURL, InfluxDB: m.InfluxDB, WriteInflux: m.InfluxURL != ""}
}

// RunningML is the [ml] the running hub's ML tools are built from: Config.ML at start, then
// what the Settings view last applied (SetML).
func (st *Stack) RunningML() config.ML {
	st.mlMu.Lock()
	defer st.mlMu.Unlock()
	return st.mlConfig
}

// SetML rebuilds the inference backends from m (with this process's environment, as at start)
// and puts them and ml_status's InfluxDB in force in the running hub; on error nothing changes.
func (st *Stack) SetML(m config.ML) error {
	cfg := st.Config
	cfg.ML = m
	reg, err := NewMLRegistry(cfg)
	if err != nil {
		return err
	}
	st.mlMu.Lock()
	defer st.mlMu.Unlock()
	if err := st.Service.SetML(reg, mlOptions(m)); err != nil {
		return err
	}
	st.mlConfig = m
	return nil
}

// shutdownTimeout bounds a whole shutdown: in-flight calls drain (mcptransport.DrainTimeout), then
// processes get their stop grace.
const shutdownTimeout = mcptransport.DrainTimeout + 5*time.Second

// CloseBounded is Close with shutdownTimeout, logging what failed; for deferred calls at exit.
func (st *Stack) CloseBounded() {
	ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if err := st.Close(ctx); err != nil {
		st.Logger.Error("shutdown", "error", err)
	}
}

// Close stops transports, then the service (processes, hub, IDE bridge), then the audit log.
func (st *Stack) Close(ctx context.Context) error {
	if st.stopConfigWatch != nil {
		st.stopConfigWatch()
	}
	if st.HubAuth != nil {
		// First: the authorizations waiting for the user are withdrawn, so the browsers waiting
		// on them are answered and the HTTP transport drains at once.
		st.HubAuth.Server.Close()
	}
	err := st.Transports.StopAll(ctx)
	if e := st.Service.Shutdown(ctx); e != nil && err == nil {
		err = e
	}
	if st.Code != nil {
		// After the Service: no call uses a server any more. Waits until every server's
		// process group is gone.
		if e := st.Code.Close(); e != nil && err == nil {
			err = e
		}
	}
	st.Metrics.Close() // after the Service: its recorder drains into the store on shutdown
	st.Audit.Close()
	if st.stopHubLogFeed != nil {
		st.stopHubLogFeed()
	}
	if st.stopProjectFeed != nil {
		st.stopProjectFeed()
	}
	st.HubLog.Close() // last: the shutdown's own warnings are in the file
	return err
}

// openRAG opens the RAG engine [rag] describes (ragSpec). Nothing is checked against the
// network at start: a Qdrant server may come up after the hub, and a Qdrant API key that cannot
// be resolved is a warning, not a failed start (a keyring still locked at login must not keep
// the hub down): Qdrant then answers the RAG tools that the key is missing.
func openRAG(cfg config.Config, logger *slog.Logger) (*rag.Live, error) {
	spec, keyErr, err := ragSpec(cfg)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	if keyErr != nil {
		logger.Warn("rag: the Qdrant API key is not available; RAG calls go without it", "err", keyErr)
	}
	l, err := rag.Open(spec)
	if err != nil {
		return nil, fmt.Errorf("config [rag]: %w", err)
	}
	return l, nil
}

// ragSpec is the RAG engine of cfg's [rag]: the backend (the embedded store in cfg.RAGDir(), or
// Qdrant), the embedder (offline, Ollama, OpenAI-compatible) and the default collection. The
// Qdrant API key may be a reference, ${secret:NAME} (the keyring) or ${VAR} (the environment),
// resolved here; keyErr says why one could not be (the spec then has no key). Errors name the key.
func ragSpec(cfg config.Config) (spec rag.Spec, keyErr, err error) {
	r := cfg.RAG
	if spec.Embedder, err = RAGEmbedder(cfg); err != nil {
		return spec, nil, err
	}
	if r.Collection != "" {
		if err := rag.ValidateCollection(r.Collection); err != nil {
			return spec, nil, fmt.Errorf("rag.%w", err)
		}
		spec.Collection = r.Collection
	}
	switch r.Backend {
	case "", "embedded":
		spec.Backend = rag.BackendSpec{Kind: "embedded", Dir: cfg.RAGDir()}
	case "qdrant":
		key, kerr := ResolveRAGAPIKey(cfg.Env, r.APIKey)
		if kerr != nil {
			keyErr, key = fmt.Errorf("rag.api_key: %w", kerr), ""
		}
		spec.Backend = rag.BackendSpec{Kind: "qdrant", URL: r.URL, APIKey: key}
	default:
		return spec, nil, fmt.Errorf("rag.backend: %q is not a backend; use \"embedded\" or \"qdrant\"", r.Backend)
	}
	return spec, keyErr, nil
}

// ragProbeTimeout bounds the check of a new RAG backend at a switch (a Qdrant server's answer).
const ragProbeTimeout = 5 * time.Second

// RunningRAG is the [rag] the running hub's RAG engine is built from: Config.RAG at start, then
// what a Settings save or a hand edit of the file last put in force (SetRAG).
func (st *Stack) RunningRAG() config.RAG {
	st.ragMu.Lock()
	defer st.ragMu.Unlock()
	return st.ragConfig
}

// SetRAG switches the running hub's RAG engine to r, with this process's environment and data
// directory, as at start. A store already open on the same directory is kept (only the
// embedder or the default collection change); a new backend is checked first: the embedded
// store's directory must be writable, a Qdrant server must answer and take the key. Calls
// running on the old engine finish there, and its backend is closed once they have ended (the
// hub log says so); the next rag_* call, the Knowledge view and its feed use the new one. On
// error the engine in force stays, and the error names the key to fix.
func (st *Stack) SetRAG(r config.RAG) error { return st.switchRAG(r, nil, nil) }

// switchRAG is SetRAG. apiKey, when not nil, is the key itself for r.APIKey's reference (a key
// the keyring does not hold yet); ready, when not nil, runs once the new engine is checked and
// before it is put in force: its error leaves the engine in force.
func (st *Stack) switchRAG(r config.RAG, apiKey *string, ready func() error) error {
	st.ragMu.Lock()
	defer st.ragMu.Unlock()
	if r == st.ragConfig && apiKey == nil {
		return nil // in force already (a save of what a hand edit put in force, say)
	}
	cfg := st.Config
	cfg.RAG = r
	spec, keyErr, err := ragSpec(cfg)
	if err != nil {
		return err
	}
	if apiKey != nil && spec.Backend.Kind == "qdrant" {
		spec.Backend.APIKey, keyErr = *apiKey, nil
	}
	if keyErr != nil {
		st.Logger.Warn("rag: the Qdrant API key is not available; RAG calls go without it", "err", keyErr)
	}
	ctx, cancel := context.WithTimeout(context.Background(), ragProbeTimeout)
	defer cancel()
	next, err := st.rag.Prepare(ctx, spec)
	if err != nil {
		return ragSwitchError(spec.Backend, err)
	}
	if ready != nil {
		if err := ready(); err != nil {
			next.Discard()
			return err
		}
	}
	if err := next.Commit(); err != nil {
		return err
	}
	st.ragConfig = r
	i := next.Info()
	st.Logger.Info("rag: switched", "backend", i.Backend, "location", i.Location, "embedder", i.Embedder, "model", i.Model, "collection", i.Collection)
	return nil
}

// ragSwitchError names the [rag] key behind a backend that could not be opened or checked.
func ragSwitchError(b rag.BackendSpec, err error) error {
	var refused *rag.RefusedError
	switch {
	case errors.Is(err, rag.ErrClosed):
		return err
	case b.Kind != "qdrant":
		return fmt.Errorf("rag.dir: %w; set rag.dir to a directory Switchboard can write (empty: <data_dir>/rag)", err)
	case errors.As(err, &refused):
		return fmt.Errorf("rag.api_key: %w", err)
	case strings.HasPrefix(err.Error(), "url: "): // rag.NewQdrant's: the address does not parse
		return fmt.Errorf("rag.%w", err)
	}
	return fmt.Errorf("rag.url: %w", err)
}

// logRAGClosed notes in the hub log that a RAG backend the hub switched away from is closed (once
// the calls that ran on it have ended).
func (st *Stack) logRAGClosed(c rag.Closed) {
	if c.Err != nil {
		st.Logger.Warn("rag: closing the previous store", "backend", c.Backend, "location", c.Location, "err", c.Err)
		return
	}
	st.Logger.Info("rag: closed the previous store", "backend", c.Backend, "location", c.Location)
}

// RAGEmbedder is the embedder of cfg's [rag]; an embedder URL left empty is the environment's.
func RAGEmbedder(cfg config.Config) (rag.Embedder, error) {
	c, env := cfg.RAG, cfg.Env
	orEnv := func(v, fromEnv string) string {
		if v == "" {
			return fromEnv
		}
		return v
	}
	switch c.Embedder {
	case "", "offline":
		return rag.Offline{}, nil
	case "ollama":
		return rag.NewOllama(orEnv(c.EmbedderURL, env.OllamaHost), c.Model), nil
	case "openai":
		return rag.NewOpenAI(orEnv(c.EmbedderURL, env.OpenAIBaseURL), env.OpenAIAPIKey, c.Model), nil
	}
	return nil, fmt.Errorf("rag.embedder: %q is not an embedder; use \"offline\", \"ollama\" or \"openai\"", c.Embedder)
}

// hubStateDirs are the hub's own directories: its config file's directory, its data directory
// and the Unix socket's directory. A client's root or relay directory that touches one of them is
// its workspace only with the user's consent.
func hubStateDirs(cfg config.Config) []string {
	var dirs []string
	if cfg.Path != "" {
		dirs = append(dirs, filepath.Dir(cfg.Path))
	}
	dirs = append(dirs, cfg.DataDir)
	if cfg.Unix.Path != "" {
		dirs = append(dirs, filepath.Dir(cfg.Unix.Path))
	}
	return dirs
}

// UpstreamOptions are the upstream-server manager's options from the config, the same for the
// hub and for the CLI verbs that run a server without one (doctor, servers approve): the
// approvals, each server's state directory and how ${...} values resolve.
func UpstreamOptions(cfg config.Config) upstream.Options {
	return upstream.Options{
		ApprovalsFile: ApprovalsFile(cfg),
		StateDir:      filepath.Join(cfg.DataDir, "servers", "state"),
		Workspace:     cfg.Workspace,
		Secret:        KeyringLookup(cfg.Env),
		Getenv:        cfg.Env.Lookup,
		Reserved:      mcp.ToolsetNames(),
		// Grants of the remote servers the hub signed in to live in the keyring; web_fetch's
		// allow-list ([web] allow, SWITCHBOARD_FETCH_ALLOW) opens internal hosts to their
		// OAuth metadata too.
		OAuthStore: keyring.Store{Bus: SessionBus(cfg.Env)},
		OAuthAllow: slices.Clone(cfg.Web.Allow),
		GrantedDirs: func() []string {
			p, err := cfg.CompilePolicy()
			if err != nil {
				return nil
			}
			return p.RootsAllow
		},
	}
}

// clientProjects is each client's [clients.NAME] project.
func clientProjects(cfg config.Config) map[string]string {
	out := map[string]string{}
	for name, c := range cfg.Clients {
		if c.Project != "" {
			out[name] = c.Project
		}
	}
	return out
}

// ClientTokensFile is where the hub keeps its clients' own tokens (digests only).
func ClientTokensFile(cfg config.Config) string {
	return filepath.Join(cfg.DataDir, "client-tokens.json")
}

// ApprovalsFile is where the user's approvals of servers (commands and tools) are kept: in the
// hub's data directory, out of reach of its tools and of a repository's files.
func ApprovalsFile(cfg config.Config) string {
	return filepath.Join(cfg.DataDir, "servers", "approvals.json")
}

// SetDashboardURL records the URL (with its token) the headless dashboard serves this hub at.
func (st *Stack) SetDashboardURL(url string) { st.dashboard.Store(&url) }

// DashboardURL is the headless dashboard's URL, "" when this hub serves none.
func (st *Stack) DashboardURL() string {
	if p := st.dashboard.Load(); p != nil {
		return *p
	}
	return ""
}

// toolsModeOf is the tools mode and core a configuration puts in force: tools_mode and
// tools_core, or for server_tools = "search" without a tools_mode the search mode with every hub
// toolset as the core (what that key listed before modes existed: the hub's own tools).
func toolsModeOf(cfg config.Config) (mode string, core []string) {
	mode, core = cfg.ToolsMode, cfg.ToolsCore
	if mode == "" && cfg.ServerTools == "search" {
		mode = mcp.ToolsModeSearch
		if core == nil {
			core = mcp.ToolsetNames()
		}
	}
	if mode == "" {
		mode = mcp.ToolsModeFull
	}
	return mode, core
}

// followFileToolsMode puts the file's tools_mode and tools_core in force, unless a flag
// (--tools-mode) chose the mode for this run.
func (st *Stack) followFileToolsMode(cfg config.Config) error {
	for _, f := range st.Config.Flags {
		if f.Key == "tools_mode" {
			return nil
		}
	}
	mode, core := toolsModeOf(cfg)
	if cur, curCore := st.Service.ToolsMode(); cur == mode && (core == nil || slices.Equal(curCore, core)) {
		return nil
	}
	return st.Service.SetToolsMode(mode, core)
}

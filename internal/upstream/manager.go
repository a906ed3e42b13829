package upstream

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/internal/listeners"
	"github.com/switchboard-hub/switchboard/internal/oauthclient"
)

// Hooks connect the servers to the hub's clients. Every hook is optional; a request hook that is
// nil is refused with an error the server sees.
type Hooks struct {
	// Sampling, Elicit and Roots answer the requests a server sends its client. They run while
	// one of the server's calls is in flight (or not): the hook decides which client answers.
	// For a server on protocol 2026-07-28 or later the questions come back inside the call
	// (input_required, rounds.go), and the hook gets the context of the call (CallTool's,
	// GetPrompt's, ReadResource's) that caused them; a 2025-era server's request gets a context
	// of its own.
	Sampling func(ctx context.Context, server string, req *sdk.CreateMessageRequest) (*sdk.CreateMessageResult, error)
	Elicit   func(ctx context.Context, server string, req *sdk.ElicitRequest) (*sdk.ElicitResult, error)
	Roots    func(ctx context.Context, server string) (*sdk.ListRootsResult, error)
	// Log, Progress and ResourceUpdated carry the server's notifications.
	Log             func(server string, p *sdk.LoggingMessageParams)
	Progress        func(server string, p *sdk.ProgressNotificationParams)
	ResourceUpdated func(server string, p *sdk.ResourceUpdatedNotificationParams)
}

// Backoff is how restarts are spaced: Min doubling per consecutive failure up to Max; a run
// that lasted Reset or longer starts again from Min.
type Backoff struct {
	Min, Max, Reset time.Duration
}

// Options configure a Manager.
type Options struct {
	// ApprovalsFile keeps approvals and pins ("" = in memory only).
	ApprovalsFile string
	// Workspace is a stdio server's default working directory; a confined server may read and
	// write it.
	Workspace string
	// StateDir holds each local server's own directory (StateDir/<name>): its working files,
	// caches and temporary files, writable inside its sandbox ("" : none).
	StateDir string
	// GrantedDirs are the folders the hub grants clients without asking ([roots] allow): a
	// confined server may read and write them too. Called at each start.
	GrantedDirs func() []string
	// Secret resolves ${secret:NAME}; Getenv resolves ${VAR} (the app passes config.Env.Lookup;
	// nil: no variable is set).
	Secret SecretLookup
	Getenv func(string) (string, bool)
	Logger *slog.Logger
	Hooks  Hooks
	// LogLines is each server's log size in lines (default 1000).
	LogLines int
	// StartTimeout bounds a start: process up and initialize answered (default 60 s, for an
	// `npx -y` that downloads its package first).
	StartTimeout time.Duration
	Backoff      Backoff // default 1 s … 30 s, reset after 60 s
	// Version is announced to servers as the client's version.
	Version string
	// Reserved names no server may take (the hub's own toolsets).
	Reserved []string
	// OAuthStore keeps the grants of the remote servers the hub signed in to (the keyring);
	// nil: remote servers get no OAuth (only their configured headers).
	OAuthStore oauthclient.Store
	// OAuthAllow are hosts the user trusts beyond a server's own when its OAuth metadata points
	// the hub at an internal address (SWITCHBOARD_FETCH_ALLOW).
	OAuthAllow []string
	// ClientMetadataURL is the hub's Client ID Metadata Document ("" : not used).
	ClientMetadataURL string
}

// Manager supervises every configured server. It is safe for concurrent use.
type Manager struct {
	opts      Options
	approvals *approvals

	mu      sync.Mutex
	servers map[string]*server
	order   []string
	closed  bool

	onChange listeners.Set[string]
	nextID   atomic.Uint32
	// stopReaper ends the goroutine that reaps the orphans the hub inherits as a subreaper.
	stopReaper chan struct{}
	reaperDone chan struct{}
	// workspace is Options.Workspace until SetWorkspace changes it (the hub's workspace moved).
	workspace atomic.Pointer[string]
}

// New returns a Manager with no servers; Sync gives it its list.
func New(opts Options) (*Manager, error) {
	if opts.Getenv == nil {
		opts.Getenv = func(string) (string, bool) { return "", false }
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.StartTimeout <= 0 {
		opts.StartTimeout = 60 * time.Second
	}
	if opts.Backoff.Min <= 0 {
		opts.Backoff.Min = time.Second
	}
	if opts.Backoff.Max < opts.Backoff.Min {
		opts.Backoff.Max = max(30*time.Second, opts.Backoff.Min)
	}
	if opts.Backoff.Reset <= 0 {
		opts.Backoff.Reset = time.Minute
	}
	if opts.Version == "" {
		opts.Version = "dev"
	}
	a, err := loadApprovals(opts.ApprovalsFile)
	if err != nil {
		return nil, err
	}
	// A server's process that leaves its group becomes the hub's child, not init's, so the
	// hub can still end it (killOrphans). Process-wide and idempotent.
	subreaper := becomeSubreaper() == nil
	if !subreaper {
		opts.Logger.Warn("servers: cannot become a child subreaper; a server's process that leaves its process group may outlive it")
	}
	m := &Manager{opts: opts, approvals: a, servers: map[string]*server{}, stopReaper: make(chan struct{})}
	m.workspace.Store(&opts.Workspace)
	if subreaper {
		m.reaperDone = make(chan struct{})
		go func() {
			defer close(m.reaperDone)
			reapStrays(m.stopReaper, 10*time.Second)
		}()
	}
	return m, nil
}

// Workspace is the default working directory of stdio servers ("" : the hub's own).
func (m *Manager) Workspace() string { return *m.workspace.Load() }

// SetWorkspace changes the default working directory of stdio servers (the hub's workspace
// moved). Each running or starting stdio server whose directory follows it (no cwd, or a
// relative one) restarts there, so its files are the new project's; the others, idle on-demand
// servers and remote servers are left as they are. It returns the names it restarted.
func (m *Manager) SetWorkspace(dir string) []string {
	if prev := m.workspace.Swap(&dir); *prev == dir {
		return nil
	}
	m.mu.Lock()
	var follow []string
	for _, name := range m.order {
		s := m.servers[name]
		if s == nil || s.spec.URL != "" || filepath.IsAbs(s.spec.Cwd) {
			continue
		}
		s.mu.Lock()
		live := s.state == StateRunning || s.state == StateStarting || s.state == StateBackoff
		s.mu.Unlock()
		if live {
			follow = append(follow, name)
		}
	}
	m.mu.Unlock()
	var restarted []string
	for _, name := range follow {
		if err := m.restart(name, "restart: the hub's workspace changed to "+dir); err == nil {
			restarted = append(restarted, name)
		}
	}
	return restarted
}

// SetHooks connects the Manager to the hub's clients. Call it before Sync: a server started
// earlier keeps the hooks it started with until its next start.
func (m *Manager) SetHooks(h Hooks) {
	m.mu.Lock()
	m.opts.Hooks = h
	m.mu.Unlock()
}

// OnChange registers f to run (with the server's name) after any change of a server's state or
// of what it offers, until cancel. f runs outside the Manager's locks.
func (m *Manager) OnChange(f func(name string)) (cancel func()) { return m.onChange.Add(f) }

func (m *Manager) notify(name string) { m.onChange.Notify(name) }

// Await waits until ok reports true, checking it now and after every change (OnChange), or until
// ctx ends (its error is returned).
func (m *Manager) Await(ctx context.Context, ok func() bool) error {
	changed := make(chan struct{}, 1)
	defer m.OnChange(func(string) {
		select {
		case changed <- struct{}{}:
		default:
		}
	})()
	for !ok() {
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// Sync makes the running servers match specs: new ones start, removed ones stop (and lose their
// approval), changed ones restart. Invalid specs change nothing.
func (m *Manager) Sync(specs []Spec) error {
	if err := ValidateAll(specs, m.opts.Reserved); err != nil {
		return err
	}
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return errors.New("servers: the hub is shutting down")
	}
	var stop []*server
	var start []*server
	var removed []string
	want := map[string]bool{}
	order := make([]string, 0, len(specs))
	for _, sp := range specs {
		want[sp.Name] = true
		order = append(order, sp.Name)
		old := m.servers[sp.Name]
		if old != nil && sameSpec(old.spec, sp) {
			continue
		}
		if old != nil {
			stop = append(stop, old)
		}
		s := newServer(m, sp)
		m.servers[sp.Name] = s
		start = append(start, s)
	}
	for name, s := range m.servers {
		if !want[name] {
			stop = append(stop, s)
			delete(m.servers, name)
			removed = append(removed, name)
		}
	}
	m.order = order
	m.mu.Unlock()
	for _, s := range stop {
		s.stop()
	}
	for _, name := range removed {
		if err := m.approvals.forget(name); err != nil {
			m.opts.Logger.Warn("servers: forgetting approval", "server", name, "err", err)
		}
		m.notify(name)
	}
	for _, s := range start {
		s.start()
		m.notify(s.spec.Name)
	}
	return nil
}

// Shutdown stops every server (closing stdin, then SIGTERM, then SIGKILL of its process group)
// and waits for them, or for ctx.
func (m *Manager) Shutdown(ctx context.Context) error {
	m.mu.Lock()
	if !m.closed && m.reaperDone != nil {
		close(m.stopReaper)
		defer func() { <-m.reaperDone }()
	}
	m.closed = true
	all := make([]*server, 0, len(m.servers))
	for _, s := range m.servers {
		all = append(all, s)
	}
	m.mu.Unlock()
	done := make(chan struct{})
	go func() {
		var wg sync.WaitGroup
		for _, s := range all {
			wg.Go(s.stop)
		}
		wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("servers: shutdown: %w", ctx.Err())
	}
}

func (m *Manager) get(name string) (*server, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.servers[name]
	if s == nil {
		names := slices.Clone(m.order)
		if len(names) == 0 {
			return nil, fmt.Errorf("server %q: not configured (no [[servers]] in the config)", name)
		}
		return nil, fmt.Errorf("server %q: not configured; configured: %s", name, strings.Join(names, ", "))
	}
	return s, nil
}

// Names lists the configured servers in config order.
func (m *Manager) Names() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.order)
}

// Statuses reports every server in config order.
func (m *Manager) Statuses() []Status {
	m.mu.Lock()
	all := make([]*server, 0, len(m.order))
	for _, n := range m.order {
		all = append(all, m.servers[n])
	}
	m.mu.Unlock()
	out := make([]Status, 0, len(all))
	for _, s := range all {
		out = append(out, s.status(m.approvals))
	}
	return out
}

// Status reports one server.
func (m *Manager) Status(name string) (Status, error) {
	s, err := m.get(name)
	if err != nil {
		return Status{}, err
	}
	return s.status(m.approvals), nil
}

// Logs returns a server's last n log lines (all kept when n <= 0).
func (m *Manager) Logs(name string, n int) ([]LogLine, error) {
	s, err := m.get(name)
	if err != nil {
		return nil, err
	}
	return s.log.tail(n), nil
}

// FollowLogs calls f with each new log line of a server until cancel.
func (m *Manager) FollowLogs(name string, f func(LogLine)) (cancel func(), err error) {
	s, err := m.get(name)
	if err != nil {
		return nil, err
	}
	return s.log.subscribe(f), nil
}

// Restart stops and starts a server now (its restart count is not increased).
func (m *Manager) Restart(name string) error { return m.restart(name, "restart asked by the user") }

// restart is Restart with why in the server's log.
func (m *Manager) restart(name, why string) error {
	m.mu.Lock()
	old := m.servers[name]
	if old == nil || m.closed {
		m.mu.Unlock()
		_, err := m.get(name)
		return err
	}
	s := newServer(m, old.spec)
	s.log = old.log
	m.servers[name] = s
	m.mu.Unlock()
	old.stop()
	s.log.add("hub", why)
	s.start()
	m.notify(name)
	return nil
}

// ApproveCommand records that the user approved sp's command (CommandHash) for the server of
// its name, and starts the server if it is configured so and was waiting for that. It may
// come before the server is configured (a form that approves the entry it is about to write):
// the approval holds for exactly that command.
func (m *Manager) ApproveCommand(sp Spec) error {
	if err := sp.Validate(m.opts.Reserved); err != nil {
		return err
	}
	if err := m.approvals.approveCommand(sp.Name, sp.CommandHash(), sp.CommandLine(), time.Now()); err != nil {
		return err
	}
	m.mu.Lock()
	s := m.servers[sp.Name]
	m.mu.Unlock()
	if s != nil {
		if s.spec.CommandHash() == sp.CommandHash() {
			s.log.add("hub", "command approved by the user: "+sp.CommandLine())
		}
		select {
		case s.approved <- struct{}{}:
		default:
		}
		m.notify(sp.Name)
	}
	return nil
}

// Spec returns a configured server's spec.
func (m *Manager) Spec(name string) (Spec, error) {
	s, err := m.get(name)
	if err != nil {
		return Spec{}, err
	}
	return s.spec, nil
}

// Mask replaces the secrets a server was given by their references (${secret:NAME}) in text
// the server produced, before the hub shows it (a tool's result or error).
func (m *Manager) Mask(name, text string) string {
	s, err := m.get(name)
	if err != nil {
		return text
	}
	return s.log.masked(text)
}

// Approve takes a server out of quarantine and pins the tools it offers now; with tools named,
// it pins only those (a held new or changed tool). The server must have listed its tools: an
// idle on-demand server is started first, waiting up to ctx.
func (m *Manager) Approve(ctx context.Context, name string, tools ...string) (Status, error) {
	s, err := m.get(name)
	if err != nil {
		return Status{}, err
	}
	if !s.spec.IsEnabled() {
		return Status{}, fmt.Errorf("server %q is disabled; enable it first (`switchboard servers enable %s`) so its tools can be listed", name, name)
	}
	if !m.approvals.commandApproved(name, s.spec.CommandHash()) {
		return Status{}, fmt.Errorf("server %q: its command is not approved, so it has not run and has no tools to pin; approve the command first (`switchboard servers approve %s` shows it)", name, name)
	}
	if _, err := s.waitSession(ctx); err != nil {
		return Status{}, fmt.Errorf("server %q: approve needs its tool list: %w", name, err)
	}
	s.mu.Lock()
	offered := slices.Clone(s.tools)
	s.mu.Unlock()
	pins := map[string]pinnedTool{}
	now := time.Now()
	for _, t := range offered {
		if len(tools) > 0 && !slices.Contains(tools, t.Name) {
			continue
		}
		pins[t.Name] = pinnedTool{Hash: ToolHash(t), Definition: PinnedDefinition(t), PinnedAt: now.UTC().Format(time.RFC3339)}
	}
	for _, want := range tools {
		if _, ok := pins[want]; !ok {
			var have []string
			for _, t := range offered {
				have = append(have, t.Name)
			}
			return Status{}, fmt.Errorf("server %q offers no tool %q; it offers: %s", name, want, strings.Join(have, ", "))
		}
	}
	if err := m.approvals.approve(name, pins, now); err != nil {
		return Status{}, err
	}
	s.catVer.Add(1)
	pinned := "1 tool"
	if len(pins) != 1 {
		pinned = fmt.Sprintf("%d tools", len(pins))
	}
	s.log.add("hub", "approved by the user: "+pinned+" pinned")
	m.notify(name)
	return s.status(m.approvals), nil
}

// waitSession returns the running server's session, starting an on-demand server and waiting
// while it starts (bounded by ctx and the start timeout). A server in backoff, failed or
// disabled is an error at once: a call never hangs on a server that is down.
func (s *server) waitSession(ctx context.Context) (*sdk.ClientSession, error) {
	deadline := time.NewTimer(s.m.opts.StartTimeout + time.Second)
	defer deadline.Stop()
	for {
		s.mu.Lock()
		state, cs, ch := s.state, s.session, s.changed
		if state == StateIdle && !s.wanted {
			s.wanted = true
			select {
			case s.want <- struct{}{}:
			default:
			}
		}
		lastErr, next := s.lastErr, s.next
		s.mu.Unlock()
		switch state {
		case StateRunning:
			if cs != nil {
				return cs, nil
			}
		case StateDisabled:
			return nil, fmt.Errorf("server %q is disabled", s.spec.Name)
		case StateUnapproved:
			if s.m.approvals.commandApproved(s.spec.Name, s.spec.CommandHash()) {
				break // approved a moment ago: its supervisor is waking up to start it
			}
			return nil, fmt.Errorf("server %q does not run: its command (%s) is not approved; approve it on the dashboard's Servers view or with `switchboard servers approve %s`", s.spec.Name, s.spec.CommandLine(), s.spec.Name)
		case StateStopped:
			return nil, fmt.Errorf("server %q: the hub is shutting down", s.spec.Name)
		case StateSignin:
			return nil, errors.New(oauthclient.SignInMessage(s.spec.Name))
		case StateBackoff:
			return nil, fmt.Errorf("server %q is down (%s); the hub restarts it in %s", s.spec.Name, lastErr, time.Until(next).Round(100*time.Millisecond))
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-deadline.C:
			return nil, fmt.Errorf("server %q did not start within %s", s.spec.Name, s.m.opts.StartTimeout)
		case <-ch:
		}
	}
}

// Catalogue is what a server offers clients now: its approved tools (by exposed name), its
// resources, templates and prompts, and its instructions. A quarantined or stopped server
// offers nothing.
type Catalogue struct {
	Server       string
	Running      bool
	Tools        []OfferedTool
	Resources    []*sdk.Resource
	Templates    []*sdk.ResourceTemplate
	Prompts      []*sdk.Prompt
	Instructions string
}

// approved reports whether a tool's offered definition is the pinned one (judge without the
// status it builds: this runs on every call).
func approved(t *sdk.Tool, p toolPin, sa *serverApproval) bool {
	if sa == nil {
		return false
	}
	pin, ok := sa.Tools[t.Name]
	return ok && pin.Hash == p.hash
}

// CatalogueVersion changes whenever what the server offers may have changed (a new list, an
// approval, a restart), so a caller can skip rebuilding from an unchanged Catalogue.
func (m *Manager) CatalogueVersion(name string) uint64 {
	s, err := m.get(name)
	if err != nil {
		return 0
	}
	return uint64(s.id)<<32 | s.catVer.Load()
}

// OfferedTool is an approved tool: its upstream definition and the name clients see.
type OfferedTool struct {
	Exposed string
	Tool    *sdk.Tool
}

// Catalogue returns what a server offers clients now. A server that is down keeps its last
// catalogue, so clients do not see its tools vanish and reappear at every restart; calls then
// fail with the reason.
func (m *Manager) Catalogue(name string) (Catalogue, error) {
	s, err := m.get(name)
	if err != nil {
		return Catalogue{Server: name}, err
	}
	c := Catalogue{Server: name}
	sa := m.approvals.server(name)
	s.mu.Lock()
	defer s.mu.Unlock()
	c.Running = s.state == StateRunning
	if sa == nil || !s.spec.IsEnabled() {
		return c, nil
	}
	for _, t := range s.tools {
		if approved(t, s.pins[t.Name], sa) {
			c.Tools = append(c.Tools, OfferedTool{Exposed: ExposedName(name, t.Name), Tool: t})
		}
	}
	c.Resources = slices.Clone(s.resources)
	c.Templates = slices.Clone(s.templates)
	c.Prompts = slices.Clone(s.prompts)
	c.Instructions = s.instr
	return c, nil
}

// begin counts a call in flight and returns the server's session.
func (m *Manager) begin(ctx context.Context, name string) (*server, *sdk.ClientSession, func(), error) {
	s, err := m.get(name)
	if err != nil {
		return nil, nil, nil, err
	}
	cs, err := s.waitSession(ctx)
	if err != nil {
		return nil, nil, nil, err
	}
	// Not announced (OnChange): a status snapshot per call would cost more than the call. The
	// counts show in the next status.
	s.mu.Lock()
	s.inflight++
	s.calls++
	s.mu.Unlock()
	return s, cs, func() {
		s.mu.Lock()
		s.inflight--
		s.mu.Unlock()
	}, nil
}

// CallTool calls an approved tool by its upstream name with the client's raw arguments. A
// progress token, when given, is passed on so the server's progress reaches Hooks.Progress.
// When the server dies during the call, the call ends at once with the reason.
func (m *Manager) CallTool(ctx context.Context, name, tool string, args json.RawMessage, progressToken any) (*sdk.CallToolResult, error) {
	s, cs, end, err := m.begin(ctx, name)
	if err != nil {
		return nil, err
	}
	defer end()
	s.mu.Lock()
	var def *sdk.Tool
	for _, t := range s.tools {
		if t.Name == tool {
			def = t
		}
	}
	pin := s.pins[tool]
	direct := s.direct
	if s.session != cs {
		direct = nil
	}
	s.mu.Unlock()
	if def == nil {
		return nil, fmt.Errorf("server %q no longer offers %q", name, tool)
	}
	if h, ok := m.approvals.pinned(name, tool); !ok || h != pin.hash {
		st := judge(name, def, pin, m.approvals.server(name)).State
		return nil, fmt.Errorf("%s: held (%s): its definition is not the one approved; approve it on the dashboard's Servers view or with `switchboard servers approve %s %s`", ExposedName(name, tool), st, name, tool)
	}
	var res *sdk.CallToolResult
	if direct != nil {
		res, err = callToolDirect(ctx, direct, tool, args, progressToken)
	} else {
		params := &sdk.CallToolParams{Name: tool, Arguments: rawArgs(args)}
		if progressToken != nil {
			params.SetProgressToken(progressToken)
		}
		res, err = m.callToolRounds(ctx, name, cs, params)
	}
	if err != nil {
		return nil, s.maskErr(s.callError(ctx, cs, err))
	}
	s.maskResult(res)
	return res, nil
}

// maskResult replaces the secrets the server was given by their references in the text of its
// result, before any client, log or audit line sees it.
func (s *server) maskResult(res *sdk.CallToolResult) {
	if res == nil {
		return
	}
	s.log.mu.Lock()
	none := len(s.log.masks) == 0
	s.log.mu.Unlock()
	if none {
		return
	}
	for _, c := range res.Content {
		if t, ok := c.(*sdk.TextContent); ok {
			t.Text = s.log.masked(t.Text)
		}
	}
	if res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			if m := s.log.masked(string(b)); m != string(b) {
				res.StructuredContent = json.RawMessage(m)
			}
		}
	}
}

func (s *server) maskErr(err error) error {
	if err == nil {
		return nil
	}
	if m := s.log.masked(err.Error()); m != err.Error() {
		return errors.New(m)
	}
	return err
}

// callError explains a failed upstream request: the server going away during it is said as
// such, with how it ended.
func (s *server) callError(ctx context.Context, cs *sdk.ClientSession, err error) error {
	if ctx.Err() != nil {
		return err
	}
	var ns *oauthclient.NeedsSignIn
	if errors.As(err, &ns) || s.signInReason() != "" {
		return errors.New(oauthclient.SignInMessage(s.spec.Name))
	}
	var scope *oauthclient.NeedsScope
	if errors.As(err, &scope) {
		return scope // this call needs more access; the server serves the rest
	}
	var rpcErr *jsonrpc.Error
	if errors.As(err, &rpcErr) {
		return fmt.Errorf("server %q: %w", s.spec.Name, err)
	}
	// Not an answer from the server: the connection broke. Give the supervisor a moment to
	// record how the process ended.
	deadline := time.NewTimer(500 * time.Millisecond)
	defer deadline.Stop()
	for {
		s.mu.Lock()
		gone, why, ch := s.session != cs, s.lastErr, s.changed
		s.mu.Unlock()
		if gone && why != "" {
			return fmt.Errorf("server %q went away during the call: %s; the hub restarts it", s.spec.Name, why)
		}
		select {
		case <-ch:
			continue
		case <-deadline.C:
		}
		if gone || errors.Is(err, sdk.ErrConnectionClosed) {
			return fmt.Errorf("server %q went away during the call (%v); the hub restarts it", s.spec.Name, err)
		}
		return fmt.Errorf("server %q: %w", s.spec.Name, err)
	}
}

// ReadResource reads a resource from the server that offers it.
func (m *Manager) ReadResource(ctx context.Context, name string, params *sdk.ReadResourceParams) (*sdk.ReadResourceResult, error) {
	s, cs, end, err := m.begin(ctx, name)
	if err != nil {
		return nil, err
	}
	defer end()
	res, err := m.readResourceRounds(ctx, name, cs, params)
	if err != nil {
		return nil, s.callError(ctx, cs, err)
	}
	return res, nil
}

// GetPrompt gets a prompt by its upstream name.
func (m *Manager) GetPrompt(ctx context.Context, name string, params *sdk.GetPromptParams) (*sdk.GetPromptResult, error) {
	s, cs, end, err := m.begin(ctx, name)
	if err != nil {
		return nil, err
	}
	defer end()
	res, err := m.getPromptRounds(ctx, name, cs, params)
	if err != nil {
		return nil, s.callError(ctx, cs, err)
	}
	return res, nil
}

// Complete asks the server for argument completions.
func (m *Manager) Complete(ctx context.Context, name string, params *sdk.CompleteParams) (*sdk.CompleteResult, error) {
	s, cs, end, err := m.begin(ctx, name)
	if err != nil {
		return nil, err
	}
	defer end()
	res, err := cs.Complete(ctx, params)
	if err != nil {
		return nil, s.callError(ctx, cs, err)
	}
	return res, nil
}

// Subscribe and Unsubscribe pass resource subscriptions on.
func (m *Manager) Subscribe(ctx context.Context, name, uri string) error {
	s, cs, end, err := m.begin(ctx, name)
	if err != nil {
		return err
	}
	defer end()
	if err := cs.Subscribe(ctx, &sdk.SubscribeParams{URI: uri}); err != nil {
		return s.callError(ctx, cs, err)
	}
	return nil
}

// Unsubscribe ends the subscription to uri on server name that Subscribe started.
func (m *Manager) Unsubscribe(ctx context.Context, name, uri string) error {
	s, cs, end, err := m.begin(ctx, name)
	if err != nil {
		return err
	}
	defer end()
	if err := cs.Unsubscribe(ctx, &sdk.UnsubscribeParams{URI: uri}); err != nil {
		return s.callError(ctx, cs, err)
	}
	return nil
}

// SetLogLevel sets every running server's logging level.
func (m *Manager) SetLogLevel(ctx context.Context, level sdk.LoggingLevel) {
	m.mu.Lock()
	all := make([]*server, 0, len(m.servers))
	for _, s := range m.servers {
		all = append(all, s)
	}
	m.mu.Unlock()
	for _, s := range all {
		s.mu.Lock()
		cs := s.session
		s.mu.Unlock()
		if cs != nil {
			_ = cs.SetLoggingLevel(ctx, &sdk.SetLoggingLevelParams{Level: level})
		}
	}
}

// newClient is the client the hub is to one server: it advertises what the hub can route to
// its own clients (roots, sampling, elicitation) and passes notifications to the hooks.
func (m *Manager) newClient(s *server) *sdk.Client {
	name := s.spec.Name
	m.mu.Lock()
	h := m.opts.Hooks
	m.mu.Unlock()
	opts := &sdk.ClientOptions{
		Logger: slog.New(slog.DiscardHandler),
		// The hub answers a 2026-era server's input_required itself (rounds.go), with the
		// context of the call that caused it.
		MultiRoundTrip: &sdk.MultiRoundTripOptions{Disabled: true},
		CreateMessageHandler: func(ctx context.Context, req *sdk.CreateMessageRequest) (*sdk.CreateMessageResult, error) {
			if h.Sampling == nil {
				return nil, errors.New("sampling: no client of the hub can answer")
			}
			return h.Sampling(ctx, name, req)
		},
		ElicitationHandler: func(ctx context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			if h.Elicit == nil {
				return nil, errors.New("elicitation: no client of the hub can answer")
			}
			return h.Elicit(ctx, name, req)
		},
		ToolListChangedHandler:     func(context.Context, *sdk.ToolListChangedRequest) { s.relist(true, false, false) },
		ResourceListChangedHandler: func(context.Context, *sdk.ResourceListChangedRequest) { s.relist(false, true, false) },
		PromptListChangedHandler:   func(context.Context, *sdk.PromptListChangedRequest) { s.relist(false, false, true) },
		LoggingMessageHandler: func(_ context.Context, req *sdk.LoggingMessageRequest) {
			if h.Log != nil {
				h.Log(name, req.Params)
			}
		},
		ProgressNotificationHandler: func(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
			if h.Progress != nil {
				h.Progress(name, req.Params)
			}
		},
		ResourceUpdatedHandler: func(_ context.Context, req *sdk.ResourceUpdatedNotificationRequest) {
			if h.ResourceUpdated != nil {
				h.ResourceUpdated(name, req.Params)
			}
		},
	}
	c := sdk.NewClient(&sdk.Implementation{Name: "switchboard", Title: "Switchboard", Version: m.opts.Version}, opts)
	// roots/list is answered with the calling client's workspace, not a fixed list.
	c.AddReceivingMiddleware(func(next sdk.MethodHandler) sdk.MethodHandler {
		return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
			if method == "roots/list" {
				if h.Roots == nil {
					return &sdk.ListRootsResult{Roots: []*sdk.Root{}}, nil
				}
				return h.Roots(ctx, name)
			}
			return next(ctx, method, req)
		}
	})
	return c
}

func shortHash(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:3])
}

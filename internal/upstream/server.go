package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/internal/oauthclient"
	"github.com/switchboard-hub/switchboard/internal/procgroup"
	"github.com/switchboard-hub/switchboard/internal/sandbox"
)

// server is one configured upstream server and its supervisor. The Manager owns it; its run
// goroutine owns the process and the client session and ends when stop is called.
type server struct {
	m    *Manager
	spec Spec
	log  *logRing

	mu        sync.Mutex
	state     string
	since     time.Time
	pid       int
	restarts  int
	next      time.Time
	lastErr   string
	lastErrAt time.Time
	session   *sdk.ClientSession
	direct    *stdioConn    // session's connection when tools/call may go around go-sdk (callToolDirect)
	changed   chan struct{} // closed and replaced at every state change: waiters re-check
	wanted    bool          // a call asked an on-demand server to start
	info      string
	hub       *HubInfo // the server is another Switchboard hub (its serverInfo says so)
	instr     string
	tools     []*sdk.Tool        // everything the server offers, approved or not
	pins      map[string]toolPin // each offered tool's hash and flags, computed once per listing
	resources []*sdk.Resource
	templates []*sdk.ResourceTemplate
	prompts   []*sdk.Prompt
	inflight  int
	calls     int64
	sandbox   SandboxStatus // how the last start was confined

	// id tells servers of the same name apart (a restart or a config change makes a new one);
	// catVer counts changes of what it offers (CatalogueVersion).
	id     uint32
	catVer atomic.Uint64

	// signIn holds why the server needs the user to sign in (set by its OAuth transport), and
	// signedIn wakes a server waiting in StateSignin; endSession ends the running session
	// (the transport found the grant gone mid-session).
	signIn     atomic.Pointer[string]
	signedIn   chan struct{}
	endSession atomic.Pointer[func()]
	oauth      atomic.Pointer[oauthclient.Transport] // the current connection's, when it signs in

	want     chan struct{} // wakes an idle on-demand server
	approved chan struct{} // wakes a server waiting for its command's approval
	cancel   context.CancelFunc
	done     chan struct{}
}

func newServer(m *Manager, spec Spec) *server {
	s := &server{m: m, spec: spec, log: newLogRing(m.opts.LogLines), changed: make(chan struct{}), want: make(chan struct{}, 1), approved: make(chan struct{}, 1), signedIn: make(chan struct{}, 1), since: time.Now(), id: m.nextID.Add(1)}
	switch {
	case !spec.IsEnabled():
		s.state = StateDisabled
	case !m.approvals.commandApproved(spec.Name, spec.CommandHash()):
		s.state = StateUnapproved
	case spec.StartMode() == StartOnDemand:
		s.state = StateIdle
	default:
		s.state = StateStarting
	}
	return s
}

// setState records a state change and wakes everything waiting on one.
func (s *server) setStateLocked(state string) {
	if s.state != state {
		s.state = state
		s.since = time.Now()
	}
	close(s.changed)
	s.changed = make(chan struct{})
}

func (s *server) setState(state string) {
	s.mu.Lock()
	s.setStateLocked(state)
	s.mu.Unlock()
	s.m.notify(s.spec.Name)
}

func (s *server) fail(err error) {
	s.mu.Lock()
	s.lastErr = err.Error()
	s.lastErrAt = time.Now()
	s.mu.Unlock()
	s.log.add("hub", err.Error())
}

// start runs the supervisor until stop.
func (s *server) start() {
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	s.done = make(chan struct{})
	go func() {
		defer close(s.done)
		// The kernel delivers a child's parent-death signal (procgroup.Attr) when the thread that
		// started it exits, not the process (golang/go#27505). Keeping this goroutine on one
		// thread while it owns the process means the signal fires only if the hub dies.
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		s.run(ctx)
	}()
}

// stop ends the supervisor: the session is closed and the process group terminated (stdin
// closed, then SIGTERM, then SIGKILL), and waits for it.
func (s *server) stop() {
	if s.cancel == nil {
		return
	}
	s.cancel()
	<-s.done
}

// run starts the server (at once, or when a call wants an on-demand one) and restarts it with
// backoff whenever it ends, until ctx ends.
func (s *server) run(ctx context.Context) {
	if !s.spec.IsEnabled() {
		return
	}
	failures := 0
	hash := s.spec.CommandHash()
	for {
		// Nothing of a server runs, is resolved or is sent before the user approved its command
		// as configured (an edit of the command puts it back here).
		for !s.m.approvals.commandApproved(s.spec.Name, hash) {
			s.setState(StateUnapproved)
			select {
			case <-ctx.Done():
				s.setState(StateStopped)
				return
			case <-s.approved:
			}
		}
		if s.spec.StartMode() == StartOnDemand {
			s.mu.Lock()
			wanted := s.wanted
			s.mu.Unlock()
			if !wanted {
				s.setState(StateIdle)
				select {
				case <-ctx.Done():
					s.setState(StateStopped)
					return
				case <-s.want:
				}
			}
		}
		s.setState(StateStarting)
		began := time.Now()
		err := s.runOnce(ctx)
		if ctx.Err() != nil {
			s.setState(StateStopped)
			return
		}
		if why := s.signInReason(); why != "" {
			// Only the user can fix it: wait for a sign-in instead of retrying.
			s.mu.Lock()
			s.lastErr, s.lastErrAt = oauthclient.SignInMessage(s.spec.Name), time.Now()
			s.mu.Unlock()
			s.log.add("hub", "needs the user to sign in: "+why)
			s.setState(StateSignin)
			select {
			case <-ctx.Done():
				s.setState(StateStopped)
				return
			case <-s.signedIn:
			}
			s.signIn.Store(nil)
			failures = 0
			continue
		}
		if err != nil {
			s.fail(err)
		}
		if time.Since(began) >= s.m.opts.Backoff.Reset {
			failures = 0
		}
		delay := s.m.opts.Backoff.Min << min(failures, 16)
		if delay > s.m.opts.Backoff.Max || delay <= 0 {
			delay = s.m.opts.Backoff.Max
		}
		failures++
		s.mu.Lock()
		s.restarts++
		s.next = time.Now().Add(delay)
		s.setStateLocked(StateBackoff)
		s.mu.Unlock()
		s.m.notify(s.spec.Name)
		s.log.add("hub", fmt.Sprintf("restarting in %s", delay.Round(time.Millisecond)))
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			s.setState(StateStopped)
			return
		case <-t.C:
		}
	}
}

// runOnce starts the server once, serves until it ends, and says why it ended.
func (s *server) runOnce(ctx context.Context) error {
	var (
		transport sdk.Transport
		p         *proc
		err       error
	)
	switch s.spec.Kind() {
	case TransportStdio:
		p, transport, err = s.startProcess()
		if err != nil {
			return err
		}
		defer p.stop(ctx.Err() != nil)
	default:
		hc, err := s.httpClient()
		if err != nil {
			return err
		}
		if s.spec.Kind() == TransportSSE {
			transport = &sdk.SSEClientTransport{Endpoint: s.spec.URL, HTTPClient: hc}
		} else {
			transport = &sdk.StreamableClientTransport{Endpoint: s.spec.URL, HTTPClient: hc, MaxRetries: -1}
		}
	}
	// The session lives as long as this run: its context is not the call's, and the connect
	// must not get a context of its own that ends when Connect returns (the SSE transport's
	// event stream lives in it). A start that takes too long, or a process that exits while
	// starting, ends the session's context instead.
	sctx, cancelSession := context.WithCancel(ctx)
	defer cancelSession()
	s.signIn.Store(nil)
	var timedOut atomic.Bool
	timer := time.AfterFunc(s.m.opts.StartTimeout, func() { timedOut.Store(true); cancelSession() })
	if p != nil {
		go func() {
			select {
			case <-p.ended:
				cancelSession()
			case <-sctx.Done():
			}
		}()
	}
	client := s.m.newClient(s)
	cs, err := client.Connect(sctx, transport, nil)
	if err == nil {
		err = s.refreshOnStart(sctx, cs, transport)
	}
	timer.Stop()
	if err != nil {
		if cs != nil {
			cs.Close()
		}
		if p != nil {
			// The process is the likelier cause than the protocol: say how it ended.
			select {
			case <-p.ended:
				return fmt.Errorf("start: %s", p.exitText(s.log))
			case <-time.After(100 * time.Millisecond):
			}
		}
		if timedOut.Load() {
			return fmt.Errorf("start: not ready within %s%s", s.m.opts.StartTimeout, lastLine(s.log))
		}
		return fmt.Errorf("start: %w%s", err, lastLine(s.log))
	}
	defer cs.Close()
	end := func() { go cs.Close() }
	s.endSession.Store(&end)
	defer s.endSession.Store(nil)
	if s.signInReason() != "" { // refused between listing and now
		return nil
	}
	s.log.add("hub", "running: "+s.info)
	s.setState(StateRunning)

	sessionEnded := make(chan error, 1)
	go func() { sessionEnded <- cs.Wait() }()
	var ended <-chan struct{}
	if p != nil {
		ended = p.ended
	}
	var why error
	select {
	case <-ctx.Done():
	case <-ended:
		why = fmt.Errorf("%s", p.exitText(s.log))
	case err := <-sessionEnded:
		why = fmt.Errorf("connection ended: %v%s", orNil(err), lastLine(s.log))
	}
	s.mu.Lock()
	if why != nil {
		// Recorded with the session's end, so a call that failed with it reads the reason.
		s.lastErr, s.lastErrAt = why.Error(), time.Now()
	}
	s.session, s.direct = nil, nil
	s.setStateLocked(s.state)
	s.mu.Unlock()
	return why
}

// refreshOnStart records what the server announced and lists what it offers.
func (s *server) refreshOnStart(ctx context.Context, cs *sdk.ClientSession, transport sdk.Transport) error {
	ir := cs.InitializeResult()
	s.mu.Lock()
	s.session = cs
	if t, ok := transport.(*stdioTransport); ok && ir != nil && ir.ProtocolVersion < newProtocol {
		s.direct = t.conn.Load()
	}
	if ir != nil {
		if ir.ServerInfo != nil {
			s.info = strings.TrimSpace(ir.ServerInfo.Name + " " + ir.ServerInfo.Version)
		}
		s.hub = hubOf(ir.ServerInfo)
		s.instr = ir.Instructions
	}
	s.mu.Unlock()
	if err := s.refresh(ctx, cs, true, true, true); err != nil {
		s.mu.Lock()
		s.session, s.direct = nil, nil
		s.mu.Unlock()
		return err
	}
	return nil
}

func orNil(err error) string {
	if err == nil {
		return "closed by the server"
	}
	return err.Error()
}

func lastLine(l *logRing) string {
	if s := l.lastStderr(); s != "" {
		return "; last stderr line: " + s
	}
	return ""
}

// refresh lists what the server offers (the parts asked for) and publishes it.
func (s *server) refresh(ctx context.Context, cs *sdk.ClientSession, tools, resources, prompts bool) error {
	ctx, cancel := context.WithTimeout(ctx, s.m.opts.StartTimeout)
	defer cancel()
	ir := cs.InitializeResult()
	caps := &sdk.ServerCapabilities{}
	if ir != nil && ir.Capabilities != nil {
		caps = ir.Capabilities
	}
	var (
		ts  []*sdk.Tool
		rs  []*sdk.Resource
		rts []*sdk.ResourceTemplate
		ps  []*sdk.Prompt
	)
	if tools && caps.Tools != nil {
		for t, err := range cs.Tools(ctx, nil) {
			if err != nil {
				return fmt.Errorf("tools/list: %w", err)
			}
			ts = append(ts, t)
		}
	}
	if resources && caps.Resources != nil {
		for r, err := range cs.Resources(ctx, nil) {
			if err != nil {
				return fmt.Errorf("resources/list: %w", err)
			}
			rs = append(rs, r)
		}
		for r, err := range cs.ResourceTemplates(ctx, nil) {
			if err != nil {
				return fmt.Errorf("resources/templates/list: %w", err)
			}
			rts = append(rts, r)
		}
	}
	if prompts && caps.Prompts != nil {
		for p, err := range cs.Prompts(ctx, nil) {
			if err != nil {
				return fmt.Errorf("prompts/list: %w", err)
			}
			ps = append(ps, p)
		}
	}
	s.mu.Lock()
	if tools {
		s.tools = ts
		s.pins = make(map[string]toolPin, len(ts))
		for _, t := range ts {
			s.pins[t.Name] = toolPin{hash: ToolHash(t), flags: Flags(t)}
		}
	}
	if resources {
		s.resources, s.templates = rs, rts
	}
	if prompts {
		s.prompts = ps
	}
	s.catVer.Add(1)
	s.mu.Unlock()
	s.m.notify(s.spec.Name)
	return nil
}

// relist re-reads one part after the server said it changed (notifications/*/list_changed).
func (s *server) relist(tools, resources, prompts bool) {
	s.mu.Lock()
	cs := s.session
	s.mu.Unlock()
	if cs == nil {
		return
	}
	// Off the session's reader goroutine: a request from inside a notification handler would
	// wait for a reply that goroutine has to read.
	go func() {
		if err := s.refresh(context.Background(), cs, tools, resources, prompts); err != nil {
			s.log.add("hub", "re-listing after list_changed: "+err.Error())
		}
	}()
}

// secretLookup resolves ${secret:NAME} for this server and masks each value it hands out
// wherever the hub shows the server's output (its log, its tools' results and errors).
func (s *server) secretLookup() SecretLookup {
	if s.m.opts.Secret == nil {
		return nil
	}
	return func(name string) (string, error) {
		v, err := s.m.opts.Secret(name)
		if err == nil {
			s.log.mask(name, v)
		}
		return v, err
	}
}

// signInReason is why the server waits for the user to sign in, or "".
func (s *server) signInReason() string {
	if p := s.signIn.Load(); p != nil {
		return *p
	}
	return ""
}

// needSignIn is the OAuth transport's word that only the user can get the server going again:
// the session ends and the supervisor waits in StateSignin.
func (s *server) needSignIn(reason string) {
	if !s.signIn.CompareAndSwap(nil, &reason) {
		return
	}
	if end := s.endSession.Load(); end != nil {
		(*end)()
	}
}

// usesOAuth reports whether the hub signs in to the server: a remote one with no Authorization
// header of its own, when the hub has a grant store.
func (s *server) usesOAuth() bool {
	return s.m.opts.OAuthStore != nil && s.spec.Kind() != TransportStdio && !hasHeader(s.spec.Headers, "Authorization")
}

// httpClient is an HTTP client that adds the configured headers (expanded at each start) and,
// for a server the hub signs in to, its OAuth token.
func (s *server) httpClient() (*http.Client, error) {
	h := http.Header{}
	for k, v := range s.spec.Headers {
		val, err := Expand(v, s.m.opts.Getenv, s.secretLookup())
		if err != nil {
			return nil, fmt.Errorf("headers: %s: %w", k, err)
		}
		h.Set(k, val)
	}
	origin, err := url.Parse(s.spec.URL)
	if err != nil {
		return nil, fmt.Errorf("url: %w", err)
	}
	var rt http.RoundTripper = headerTransport{h: h, host: origin.Host, scheme: origin.Scheme, next: s.spec.pinTransport(http.DefaultTransport.(*http.Transport))}
	if s.usesOAuth() {
		hc, err := oauthHTTP(s.spec, s.spec.URL, s.m.opts.OAuthAllow)
		if err != nil {
			return nil, err
		}
		ot := &oauthclient.Transport{Server: s.spec.Name, URL: s.spec.URL, Store: s.m.opts.OAuthStore, HTTP: hc, Base: rt, OnSignIn: s.needSignIn}
		s.oauth.Store(ot)
		rt = ot
	}
	return &http.Client{
		Transport: inputParamsTransport{next: rt},
		// The configured headers (tokens, API keys) are for the configured origin only: a
		// redirect elsewhere is refused rather than followed with or without them.
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if !sameOrigin(req.URL, origin) {
				return fmt.Errorf("server %q: refused a redirect from %s to another origin (%s://%s): the configured headers stay with their origin; set url to the new address if you trust it", s.spec.Name, origin.Host, req.URL.Scheme, req.URL.Host)
			}
			if len(via) >= 10 {
				return errors.New("stopped after 10 redirects")
			}
			return nil
		},
	}, nil
}

// sameOrigin compares scheme and host (with port), as browsers do.
func sameOrigin(a, b *url.URL) bool {
	return strings.EqualFold(a.Scheme, b.Scheme) && strings.EqualFold(a.Host, b.Host)
}

// headerTransport adds the configured headers to requests for the configured origin, and to no
// other (a second guard behind CheckRedirect).
type headerTransport struct {
	h            http.Header
	scheme, host string
	next         http.RoundTripper
}

func (t headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if !strings.EqualFold(r.URL.Scheme, t.scheme) || !strings.EqualFold(r.URL.Host, t.host) {
		return t.next.RoundTrip(r)
	}
	r = r.Clone(r.Context())
	for k, v := range t.h {
		r.Header[k] = v
	}
	return t.next.RoundTrip(r)
}

// serverMarkEnv marks every process of a local server (its environment is inherited), so the
// hub finds the ones that left the server's process group (killOrphans).
const serverMarkEnv = "SWITCHBOARD_SERVER"

// proc is a started server process: the leader of its own process group.
type proc struct {
	cmd     *exec.Cmd
	stdin   *os.File
	ended   chan struct{} // closed when the leader has exited (waitErr is set)
	exited  chan struct{} // closed after that, once the rest of its group is gone too
	waitErr error
	log     *logRing
}

// startProcess starts the server in its own process group with pipes the hub owns (so Wait
// never waits on a grandchild holding them) and its stderr into the log.
func (s *server) startProcess() (*proc, sdk.Transport, error) {
	stateDir := ""
	if s.m.opts.StateDir != "" {
		stateDir = filepath.Join(s.m.opts.StateDir, s.spec.Name)
	}
	getenv := s.m.opts.Getenv
	if stateDir != "" {
		getenv = func(k string) (string, bool) {
			if k == StateDirEnv {
				return stateDir, true
			}
			return s.m.opts.Getenv(k)
		}
	}
	configured := make(map[string]string, len(s.spec.Env))
	for k, v := range s.spec.Env {
		val, err := Expand(v, getenv, s.secretLookup())
		if err != nil {
			return nil, nil, fmt.Errorf("env: %s: %w", k, err)
		}
		configured[k] = val
	}
	dir, ws := s.spec.Cwd, s.m.Workspace()
	if dir == "" {
		dir = ws
	} else if !filepath.IsAbs(dir) && ws != "" {
		dir = filepath.Join(ws, dir)
	}
	if dir == "" && stateDir != "" {
		dir = stateDir // no project yet: the server works in its own directory
	}
	path, err := exec.LookPath(s.spec.Command)
	if err != nil {
		return nil, nil, fmt.Errorf("command: %q not found on PATH (%v); install it or give its full path", s.spec.Command, err)
	}
	if path, err = filepath.Abs(path); err != nil {
		return nil, nil, fmt.Errorf("command: %w", err)
	}
	if stateDir != "" {
		if err := makeStateDir(stateDir); err != nil {
			return nil, nil, err
		}
	}
	c := s.confine(path, dir, stateDir)
	env := serverEnv(os.Environ(), s.spec.EnvPassthrough, stateDir, c.status.Mode == SandboxConfined, configured)
	mark := fmt.Sprintf("%d.%s.%d", os.Getpid(), s.spec.Name, s.id)
	env = append(env, serverMarkEnv+"="+mark)
	var cmd *exec.Cmd
	if c.status.Mode == SandboxOff {
		cmd = exec.Command(path, s.spec.Args...)
		cmd.Env = env
	} else {
		var st sandbox.Status
		if cmd, st, err = sandbox.Command(c.policy, env, path, s.spec.Args...); err != nil {
			return nil, nil, err
		}
		c.status.Detail = st.Detail
		if !st.Confined {
			c.status.Mode = SandboxUnconfined
		}
	}
	s.mu.Lock()
	s.sandbox = c.status
	s.mu.Unlock()
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		outR.Close()
		outW.Close()
		return nil, nil, err
	}
	cmd.Dir = dir
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	cmd.SysProcAttr = procgroup.Attr() // own group; killed if the hub dies (see start)
	err = cmd.Start()
	// The child has its copies; the hub keeps only its ends, so EOF means the server is gone.
	inR.Close()
	outW.Close()
	errW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		errR.Close()
		return nil, nil, fmt.Errorf("start %s: %w", s.spec.Command, err)
	}
	p := &proc{cmd: cmd, stdin: inW, ended: make(chan struct{}), exited: make(chan struct{}), log: s.log}
	s.mu.Lock()
	s.pid = cmd.Process.Pid
	s.mu.Unlock()
	s.log.add("hub", fmt.Sprintf("started %s (pid %d, %s: %s)", s.spec.CommandLine(), cmd.Process.Pid, c.status.Mode, c.status.Detail))
	go s.log.readLines(errR, "stderr")
	go func() {
		p.waitErr = cmd.Wait()
		close(p.ended)
		// Whatever the leader left behind in its group goes with it, and the server counts as
		// stopped once all of it is gone. A SIGKILL is delivered when its target next runs, so
		// on a busy machine a killed grandchild can still be running when kill returns. Zombies
		// do not count (procgroup's rule): reaping a reparented grandchild is its new parent's
		// business.
		_ = procgroup.Signal(cmd.Process.Pid, syscall.SIGKILL)
		gone, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		if err := procgroup.WaitGone(gone, cmd.Process.Pid); err != nil {
			s.log.add("hub", fmt.Sprintf("process group %d still has processes 5 s after SIGKILL", cmd.Process.Pid))
		}
		cancel()
		if n := killOrphans(mark, cmd.Process.Pid, 5*time.Second); n > 0 {
			s.log.add("hub", fmt.Sprintf("ended %d process(es) of the server that had left its process group", n))
		}
		close(p.exited)
		errR.Close()
	}()
	junk := func(line string) {
		if len(line) > 2000 {
			line = line[:2000] + "…"
		}
		s.log.add("stdout", "not JSON-RPC, ignored: "+line)
	}
	return p, &stdioTransport{r: outR, w: inW, junk: junk}, nil
}

// stop ends the process group: when the hub is stopping the server (graceful), stdin is closed
// first (how MCP servers are told to exit), then SIGTERM, then SIGKILL; after a crash, SIGKILL
// at once for whatever the leader left running.
func (p *proc) stop(graceful bool) {
	pgid := p.cmd.Process.Pid
	if graceful {
		_ = p.stdin.Close()
		if p.wait(2 * time.Second) {
			return
		}
		_ = procgroup.Signal(pgid, syscall.SIGTERM)
		if p.wait(2 * time.Second) {
			return
		}
	}
	_ = procgroup.Signal(pgid, syscall.SIGKILL)
	<-p.exited
	_ = p.stdin.Close()
}

func (p *proc) wait(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.exited:
		return true
	case <-t.C:
		return false
	}
}

// exitText says how the process ended, for the log and for the error an in-flight call gets.
func (p *proc) exitText(l *logRing) string {
	<-p.ended
	var ee *exec.ExitError
	var why string
	if errors.As(p.waitErr, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			why = fmt.Sprintf("killed by signal %d (%s)", int(ws.Signal()), ws.Signal())
		} else {
			why = fmt.Sprintf("exited with status %d", ee.ExitCode())
		}
	} else if p.waitErr != nil {
		why = p.waitErr.Error()
	} else {
		why = "exited with status 0"
	}
	return "the server process " + why + lastLine(l)
}

// snapshot is the server's status.
func (s *server) status(a *approvals) Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := Status{
		Name: s.spec.Name, Transport: s.spec.Kind(), Command: s.spec.CommandLine(), Enabled: s.spec.IsEnabled(),
		Start: s.spec.StartMode(), State: s.state, Since: stamp(s.since), Restarts: s.restarts,
		LastError: s.lastErr, LastErrorAt: stamp(s.lastErrAt), ServerInfo: s.info, Instructions: s.instr,
		Resources: len(s.resources), Templates: len(s.templates), Prompts: len(s.prompts),
		InFlight: s.inflight, Calls: s.calls, Tools: []ToolStatus{},
		CommandHash: s.spec.CommandHash(), Cwd: s.spec.Cwd, Env: envNames(s.spec),
		Sandbox: s.sandbox, OAuth: s.usesOAuth(), Hub: s.hub,
	}
	if t := s.oauth.Load(); t != nil && s.state == StateRunning {
		st.SignedIn = t.SignedIn()
	}
	st.CommandApproved = a.commandApproved(s.spec.Name, st.CommandHash)
	if st.Sandbox.Mode == "" {
		st.Sandbox = plannedSandbox(s.spec)
	}
	if s.state == StateRunning || s.state == StateStarting {
		st.PID = s.pid
	}
	if s.state == StateBackoff {
		st.NextRestart = stamp(s.next)
	}
	sa := a.server(s.spec.Name)
	st.Approved = sa != nil
	for _, t := range s.tools {
		ts := judge(s.spec.Name, t, s.pins[t.Name], sa)
		if ts.State == ToolNew || ts.State == ToolChanged {
			st.Held++
		}
		if len(ts.Flags) > 0 {
			st.Flagged++
		}
		st.Tools = append(st.Tools, ts)
	}
	return st
}

// toolPin is what judging a tool needs, computed when the server lists it.
type toolPin struct {
	hash  string
	flags []string
}

// judge decides a tool's state against the server's approval.
func judge(server string, t *sdk.Tool, p toolPin, sa *serverApproval) ToolStatus {
	ts := ToolStatus{Name: t.Name, Exposed: ExposedName(server, t.Name), Description: t.Description, Flags: slices.Clone(p.flags)}
	if ts.Flags == nil {
		ts.Flags = []string{}
	}
	ts.ReadOnly = t.Annotations != nil && t.Annotations.ReadOnlyHint
	switch pin, ok := pinOf(sa, t.Name); {
	case sa == nil:
		ts.State = ToolQuarantined
	case !ok:
		ts.State = ToolNew
	case pin.Hash != p.hash:
		ts.State = ToolChanged
		ts.Diff = DefinitionDiff(pin.Definition, PinnedDefinition(t))
	default:
		ts.State = ToolApproved
	}
	return ts
}

func pinOf(sa *serverApproval, name string) (pinnedTool, bool) {
	if sa == nil {
		return pinnedTool{}, false
	}
	p, ok := sa.Tools[name]
	return p, ok
}

// ExposedName is the name clients see for a server's tool: <server>__<tool>, with characters
// model providers refuse in tool names replaced by '_' and cut to 64 characters (the strictest
// provider limit), a short hash of the original keeping cut names apart.
func ExposedName(server, tool string) string {
	var b strings.Builder
	for _, r := range tool {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	name := server + NameSeparator + b.String()
	if len(name) <= maxToolName && b.String() == tool {
		return name
	}
	sum := shortHash(tool)
	if len(name)+len(sum)+1 > maxToolName {
		name = name[:maxToolName-len(sum)-1]
	}
	return name + "_" + sum
}

const maxToolName = 64

// rawArgs passes a client's arguments through unchanged (no decode and re-encode).
func rawArgs(b json.RawMessage) any {
	if len(b) == 0 {
		return map[string]any{}
	}
	return b
}

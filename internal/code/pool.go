// Package code is the hub's code intelligence: one warm language server per workspace and
// language, shared by every client that works there (Pool), and the operations the code tools
// offer on top of it — definition, references, implementations, calls, hover, symbols,
// diagnostics (also right after an edit), rename through the same atomic patch path as
// file_patch — plus what needs no server: project detection, the project map and the failures
// parser for build and test output. Positions are 1-based lines and columns in UTF-8 bytes;
// paths are relative to the workspace. The protocol client is internal/lsp.
package code

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/switchboard-hub/switchboard/internal/lsp"
	"github.com/switchboard-hub/switchboard/internal/procgroup"
	"github.com/switchboard-hub/switchboard/internal/sandbox"
	"github.com/switchboard-hub/switchboard/internal/search"
)

// DefaultIdle is how long a server nobody used lives on ([code] idle).
const DefaultIdle = 10 * time.Minute

// Options configure a Pool.
type Options struct {
	// Idle is how long a server that no call used is kept before it is stopped: 0 means
	// DefaultIdle, a negative value never.
	Idle time.Duration
	// Commands override a language's server command line ([code.servers]).
	Commands map[string][]string
	// SearchDirs are searched for servers after PATH (before the default install places).
	SearchDirs []string
	// StateDir holds each server's own writable directory (caches, temporary files):
	// <StateDir>/<language>-<hash of the workspace>. Empty: a directory under the system's
	// temporary directory.
	StateDir string
	// Unconfined starts servers without the Landlock sandbox (tests of the sandbox itself
	// compare; the product always confines where the kernel can).
	Unconfined bool
	// StartTimeout bounds a server's start and initialize handshake (default 2 minutes).
	StartTimeout time.Duration
	// Logger gets the pool's own events (starts, exits, restarts). Nil: discarded.
	Logger *slog.Logger
	// Environ is the environment the servers' allow-listed one is taken from (nil: the hub's).
	Environ []string
}

// Pool runs language servers, one per (workspace, language), started on first use, shared by
// every caller, started again after a crash at the next call, and stopped when idle or when
// the pool closes. Every server is a child of the hub in a process group of its own, confined
// with Landlock (internal/sandbox), and is ended with the hub.
type Pool struct {
	opts Options
	log  *slog.Logger

	// cfgMu guards opts.Idle and opts.Commands, which Configure changes while the pool runs
	// (the Settings view, an edit of the config file); reconf wakes the reaper to re-read Idle.
	cfgMu  sync.RWMutex
	reconf chan struct{}

	mu       sync.Mutex
	servers  map[key]*server
	restarts map[key]int
	watchers map[string]*watcher
	closed   bool

	texts textCache // workspace files answers pointed into (textcache.go)

	stop chan struct{}
	done chan struct{}
}

type key struct{ root, lang string }

// NewPool starts a pool; Close stops it and every server it started.
func NewPool(o Options) *Pool {
	if o.Idle == 0 {
		o.Idle = DefaultIdle
	}
	if o.StartTimeout <= 0 {
		o.StartTimeout = 2 * time.Minute
	}
	if o.StateDir == "" {
		o.StateDir = filepath.Join(os.TempDir(), fmt.Sprintf("switchboard-code-%d", os.Getuid()))
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	o.Commands = cloneCommands(o.Commands)
	p := &Pool{opts: o, log: log, servers: map[key]*server{}, restarts: map[key]int{}, watchers: map[string]*watcher{},
		reconf: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go p.reap()
	return p
}

// Close stops every server (shutdown request, then SIGTERM, then SIGKILL of its group) and
// the workspace watchers, and waits until their processes are gone.
func (p *Pool) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	servers := make([]*server, 0, len(p.servers))
	for _, s := range p.servers {
		servers = append(servers, s)
	}
	watchers := p.watchers
	p.watchers = map[string]*watcher{}
	p.mu.Unlock()
	close(p.stop)
	<-p.done
	var wg sync.WaitGroup
	for _, s := range servers {
		wg.Go(func() { s.shutdown() })
	}
	wg.Wait()
	for _, w := range watchers {
		w.close()
	}
	return nil
}

// ErrClosed is returned by calls on a closed pool.
var ErrClosed = errors.New("code intelligence is shut down")

// Configure changes the idle time and the per-language commands of a running pool (see
// Options: idle 0 is DefaultIdle, negative never). The idle time applies at once, to the
// servers running too (one now unused for longer is stopped at the reaper's next look); a
// command applies from the next start of that language's server: a running server keeps the
// process it has, as restarting it would drop its warm state under a caller.
func (p *Pool) Configure(idle time.Duration, commands map[string][]string) {
	if idle == 0 {
		idle = DefaultIdle
	}
	p.cfgMu.Lock()
	p.opts.Idle, p.opts.Commands = idle, cloneCommands(commands)
	p.cfgMu.Unlock()
	select {
	case p.reconf <- struct{}{}:
	default:
	}
}

// Config is the idle time and the commands in force (Configure's values).
func (p *Pool) Config() (idle time.Duration, commands map[string][]string) {
	p.cfgMu.RLock()
	defer p.cfgMu.RUnlock()
	return p.opts.Idle, cloneCommands(p.opts.Commands)
}

// command is lang's configured command line (nil: the default one).
func (p *Pool) command(lang string) []string {
	p.cfgMu.RLock()
	defer p.cfgMu.RUnlock()
	return p.opts.Commands[lang]
}

func cloneCommands(m map[string][]string) map[string][]string {
	out := make(map[string][]string, len(m))
	for k, v := range m {
		out[k] = slices.Clone(v)
	}
	return out
}

// reap stops servers idle for longer than Idle, and watchers of workspaces without servers. It
// looks every quarter of Idle (between 10 ms and 30 s), and again at once after Configure.
func (p *Pool) reap() {
	defer close(p.done)
	for {
		idleAfter, _ := p.Config()
		wait := min(max(idleAfter/4, 10*time.Millisecond), 30*time.Second)
		if idleAfter < 0 {
			wait = 30 * time.Second // never idle: only a Configure changes anything
		}
		t := time.NewTimer(wait)
		select {
		case <-p.stop:
			t.Stop()
			return
		case <-p.reconf:
			t.Stop()
			continue
		case <-t.C:
		}
		if idleAfter < 0 {
			continue
		}
		var idle []*server
		p.mu.Lock()
		for k, s := range p.servers {
			if s.idleFor() > idleAfter {
				idle = append(idle, s)
				delete(p.servers, k)
			}
		}
		p.mu.Unlock()
		for _, s := range idle {
			p.log.Info("code: stopping an idle language server", "language", s.key.lang, "workspace", s.key.root, "pid", s.getPID())
			s.shutdown()
		}
		p.dropUnusedWatchers()
	}
}

// server is one language server process and its connection.
type server struct {
	pool *Pool
	key  key
	argv []string

	ready    chan struct{} // closed when started (client set) or failed (startErr set)
	exited   chan struct{} // closed when its process group is gone
	startErr error
	client   *lsp.Client
	pid      int
	sandbox  string
	started  time.Time
	stateDir string

	mu       sync.Mutex
	lastUsed time.Time
	inUse    int
	stopping bool
	exitText string
	log      logRing
}

// get returns the running server for (root, lang), starting it if there is none or the last
// one ended.
func (p *Pool) get(ctx context.Context, root, lang string) (*server, error) {
	k := key{root, lang}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, ErrClosed
	}
	s := p.servers[k]
	if s != nil && s.dead() {
		delete(p.servers, k)
		p.restarts[k]++
		p.log.Warn("code: language server ended; starting it again", "language", lang, "workspace", root, "why", s.exitReason())
		s = nil
	}
	if s == nil {
		argv, err := Locate(lang, p.command(lang), p.opts.SearchDirs)
		if err != nil {
			p.mu.Unlock()
			return nil, err
		}
		s = &server{pool: p, key: k, argv: argv, ready: make(chan struct{}), exited: make(chan struct{}), lastUsed: time.Now()}
		p.servers[k] = s
		go s.run()
	}
	s.acquire()
	p.mu.Unlock()
	p.ensureWatcher(root)
	select {
	case <-s.ready:
	case <-ctx.Done():
		s.release()
		return nil, context.Cause(ctx)
	}
	if s.startErr != nil {
		s.release()
		p.mu.Lock()
		if p.servers[k] == s {
			delete(p.servers, k)
		}
		p.mu.Unlock()
		return nil, s.startErr
	}
	return s, nil
}

// getPID is the server's process id (0 before it started).
func (s *server) getPID() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pid
}

func (s *server) acquire() {
	s.mu.Lock()
	s.inUse++
	s.lastUsed = time.Now()
	s.mu.Unlock()
}

func (s *server) release() {
	s.mu.Lock()
	s.inUse--
	s.lastUsed = time.Now()
	s.mu.Unlock()
}

// idleFor is how long nobody used the server (0 while a call uses it or it is starting).
func (s *server) idleFor() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.inUse > 0 {
		return 0
	}
	return time.Since(s.lastUsed)
}

// dead reports whether the server failed to start or its process ended.
func (s *server) dead() bool {
	select {
	case <-s.exited:
		return true
	default:
	}
	select {
	case <-s.ready:
	default:
		return false
	}
	if s.startErr != nil {
		return true
	}
	// The connection ends with the process, before its group is waited for; and a process
	// killed a moment ago may not have closed its output yet.
	select {
	case <-s.client.Done():
		return true
	default:
		return !procgroup.Running(s.getPID())
	}
}

func (s *server) exitReason() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.exitText != "" {
		return s.exitText
	}
	if s.startErr != nil {
		return s.startErr.Error()
	}
	return "running"
}

// run starts the process, initializes it and owns it until it ends. The goroutine stays on
// one OS thread for the process's whole life: the parent-death signal (procgroup.Attr) is tied
// to the thread that started the child.
func (s *server) run() {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	defer close(s.exited)
	cmd, conn, err := s.spawn()
	if err != nil {
		s.startErr = err
		close(s.ready)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.pool.opts.StartTimeout)
	def, _ := defFor(s.key.lang)
	client, err := lsp.Start(ctx, conn, lsp.Options{
		Root:                  s.key.root,
		InitializationOptions: def.initOptions,
		Settings: func(section string) any {
			if v, ok := def.settings[section]; ok {
				return v
			}
			return nil
		},
		Log: func(text string) { s.log.add("server", text) },
	})
	cancel()
	if err != nil {
		_ = procgroup.Signal(cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
		s.waitGroupGone()
		s.startErr = fmt.Errorf("%s: starting %s failed: %v%s", s.key.lang, filepath.Base(s.argv[0]), err, s.log.tail(5))
		close(s.ready)
		return
	}
	s.client = client
	s.started = time.Now()
	if def.openAll {
		s.openAll()
	}
	s.pool.log.Info("code: language server started", "language", s.key.lang, "workspace", s.key.root, "pid", s.pid, "server", client.ServerName())
	close(s.ready)
	werr := cmd.Wait()
	client.Close()
	s.waitGroupGone()
	s.mu.Lock()
	stopping := s.stopping
	if !stopping {
		s.exitText = exitText(werr)
	}
	s.mu.Unlock()
	if !stopping {
		s.log.add("hub", "ended: "+s.exitText)
		s.pool.log.Warn("code: language server ended", "language", s.key.lang, "workspace", s.key.root, "pid", s.pid, "why", s.exitText+s.log.tail(5))
	}
}

// maxPrimeFiles bounds the files opened on a server that knows only open files.
const maxPrimeFiles = 300

// openAll opens the workspace's source files of the server's language on it (or gives it their
// current text), and waits until the server has checked those it was sent.
func (s *server) openAll() {
	r, err := os.OpenRoot(s.key.root)
	if err != nil {
		return
	}
	defer r.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	n := 0
	mark := s.client.Mark()
	var uris []string
	var versions []int
	_ = search.Walk(ctx, r, search.WalkOptions{Skip: func(rel string, isDir bool) bool {
		return isDir && skipDir(path.Base(rel))
	}}, func(rel string, _ *os.Root, name string, isDir bool) error {
		if isDir || LanguageOf(name) != s.key.lang {
			return nil
		}
		abs := filepath.Join(s.key.root, filepath.FromSlash(rel))
		text, err := readDocument(s.key.root, abs)
		if err != nil {
			return nil
		}
		v, sent, err := s.client.Sync(ctx, lsp.URI(abs), languageID(s.key.lang, abs), text)
		if err != nil {
			return err
		}
		if sent {
			uris = append(uris, lsp.URI(abs))
			versions = append(versions, v)
		}
		if n++; n >= maxPrimeFiles {
			return search.ErrStop
		}
		return nil
	})
	// A file is in the server's index once it has been built, which its first diagnostics say.
	for i, u := range uris {
		if !s.client.WaitDiagnostics(ctx, u, mark, versions[i]) {
			break
		}
	}
}

// waitGroupGone kills what the leader left in its group and waits (5 s at most) until it is gone.
func (s *server) waitGroupGone() {
	_ = procgroup.Signal(s.pid, syscall.SIGKILL)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := procgroup.WaitGone(ctx, s.pid); err != nil {
		s.log.add("hub", err.Error())
	}
}

func exitText(err error) string {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return fmt.Sprintf("killed by signal %d (%s)", int(ws.Signal()), ws.Signal())
		}
		return fmt.Sprintf("exited with status %d", ee.ExitCode())
	}
	if err != nil {
		return err.Error()
	}
	return "exited with status 0"
}

// shutdown stops the server: the shutdown request and exit notification, then SIGTERM, then
// SIGKILL of its process group, and waits until the group is gone.
func (s *server) shutdown() {
	s.mu.Lock()
	s.stopping = true
	s.exitText = "stopped"
	s.mu.Unlock()
	<-s.ready
	if s.startErr != nil {
		<-s.exited
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	_ = s.client.Shutdown(ctx)
	cancel()
	if s.waitExit(2 * time.Second) {
		return
	}
	_ = procgroup.Signal(s.pid, syscall.SIGTERM)
	if s.waitExit(2 * time.Second) {
		return
	}
	_ = procgroup.Signal(s.pid, syscall.SIGKILL)
	<-s.exited
}

func (s *server) waitExit(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-s.exited:
		return true
	case <-t.C:
		return false
	}
}

// pipeConn joins the server's stdout (read) and stdin (write) into one stream.
type pipeConn struct {
	io.Reader
	io.WriteCloser
	r io.Closer
}

func (c pipeConn) Close() error {
	err := c.WriteCloser.Close()
	if e := c.r.Close(); err == nil {
		err = e
	}
	return err
}

// spawn starts the server's process, confined, in a process group of its own.
func (s *server) spawn() (*exec.Cmd, io.ReadWriteCloser, error) {
	p := s.pool
	sum := sha256.Sum256([]byte(s.key.root))
	s.stateDir = filepath.Join(p.opts.StateDir, s.key.lang+"-"+hex.EncodeToString(sum[:6]))
	for _, d := range stateSubdirs {
		if err := os.MkdirAll(filepath.Join(s.stateDir, d[1]), 0o700); err != nil {
			return nil, nil, fmt.Errorf("%s: state directory: %w", s.key.lang, err)
		}
	}
	environ := p.opts.Environ
	if environ == nil {
		environ = os.Environ()
	}
	env := serverEnv(environ, s.stateDir)
	var cmd *exec.Cmd
	if p.opts.Unconfined {
		cmd = exec.Command(s.argv[0], s.argv[1:]...)
		cmd.Env = env
		s.sandbox = "unconfined (Options.Unconfined)"
	} else {
		pol := policyFor(s.argv[0], s.key.root, s.stateDir)
		var st sandbox.Status
		var err error
		if cmd, st, err = sandbox.Command(pol, env, s.argv[0], s.argv[1:]...); err != nil {
			return nil, nil, err
		}
		s.sandbox = st.Detail
	}
	cmd.Dir = s.key.root
	cmd.SysProcAttr = procgroup.Attr()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, nil, fmt.Errorf("%s: start %s: %w", s.key.lang, s.argv[0], err)
	}
	s.mu.Lock()
	s.pid = cmd.Process.Pid
	s.mu.Unlock()
	s.log.add("hub", fmt.Sprintf("started %s (pid %d, %s)", strings.Join(s.argv, " "), s.pid, s.sandbox))
	go s.log.readLines(stderr, "stderr")
	return cmd, pipeConn{Reader: stdout, WriteCloser: stdin, r: stdout}, nil
}

// stateSubdirs are the server's private directories and the variables that point there.
var stateSubdirs = [][2]string{
	{"TMPDIR", "tmp"},
	{"XDG_CACHE_HOME", "cache"},
	{"XDG_CONFIG_HOME", "config"},
	{"XDG_DATA_HOME", "data"},
	{"XDG_STATE_HOME", "state"},
	{"npm_config_cache", "npm"},
}

// envNames are passed on to servers as the hub has them: where programs and the user are,
// the locale, the toolchains' own settings, proxies and certificates. The hub's tokens and
// API keys are not among them.
var envNames = []string{
	"PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "TZ", "LANG", "LANGUAGE",
	"GOROOT", "GOPATH", "GOBIN", "GOFLAGS", "GOPROXY", "GOPRIVATE", "GONOPROXY", "GONOSUMDB", "GOSUMDB",
	"GOTOOLCHAIN", "GOMODCACHE", "GOWORK", "GOOS", "GOARCH", "CGO_ENABLED", "CC", "CXX",
	"NODE_PATH", "NODE_OPTIONS", "VIRTUAL_ENV", "PYTHONPATH", "CONDA_PREFIX", "CARGO_HOME", "RUSTUP_HOME",
	"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy",
	"SSL_CERT_FILE", "SSL_CERT_DIR", "NODE_EXTRA_CA_CERTS",
}

func serverEnv(environ []string, stateDir string) []string {
	var env []string
	for _, kv := range environ {
		k, _, ok := strings.Cut(kv, "=")
		if ok && (slices.Contains(envNames, k) || strings.HasPrefix(k, "LC_")) {
			env = append(env, kv)
		}
	}
	for _, d := range stateSubdirs {
		env = append(env, d[0]+"="+filepath.Join(stateDir, d[1]))
	}
	return env
}

// homeToolDirs are where toolchains install programs and libraries under the home: readable
// (a server installed with them must start; gopls reads the module cache).
var homeToolDirs = []string{
	"go", ".nvm", ".volta", ".fnm", ".bun", ".deno", ".cargo", ".rustup", ".pyenv", ".local/bin",
	".local/lib", ".local/pipx", ".local/share/pnpm", ".local/share/uv", ".local/share/mise",
	".asdf", ".npm-global", ".linuxbrew", ".sdkman",
}

// policyFor is what a server may touch: the system and toolchains (read), its own install
// location (read), the project the workspace lies in when it is a sub-directory of one (read),
// the workspace and its state directory (read-write), no TCP.
func policyFor(program, root, stateDir string) sandbox.Policy {
	read := slices.Clone(sandbox.SystemRead())
	read = append(read, installDirs(program)...)
	if home, err := os.UserHomeDir(); err == nil && home != "" {
		for _, d := range homeToolDirs {
			read = append(read, filepath.Join(home, d))
		}
	}
	read = append(read, goDirs()...)
	if p := projectAbove(root); p != "" {
		read = append(read, p)
	}
	write := append(slices.Clone(sandbox.SystemWrite()), root, stateDir)
	return sandbox.Policy{Read: existing(read), Write: existing(write), NoNetwork: true}
}

// projectMarkers name the files that make a directory a project's root.
var projectMarkers = []string{"go.mod", "go.work", "package.json", "tsconfig.json", "pyproject.toml", "setup.py",
	"Cargo.toml", "compile_commands.json", "CMakeLists.txt", ".git"}

// projectAbove is the nearest directory above root that is a project's root, readable by the
// server (a workspace that is a sub-directory of a Go module needs its go.mod), or "" when there
// is none below the home (the home itself and / are never granted).
func projectAbove(root string) string {
	home, _ := os.UserHomeDir()
	for dir := filepath.Dir(root); dir != "/" && dir != "." && (home == "" || dir != home && !strings.HasPrefix(home, dir+"/")); dir = filepath.Dir(dir) {
		for _, m := range projectMarkers {
			if _, err := os.Lstat(filepath.Join(dir, m)); err == nil {
				return dir
			}
		}
	}
	return ""
}

// installDirs are a program's directory and, through symlinks, the package it belongs to (the
// outermost node_modules above it, for npm-installed servers).
func installDirs(program string) []string {
	out := []string{filepath.Dir(program)}
	if real, err := filepath.EvalSymlinks(program); err == nil {
		out = append(out, filepath.Dir(real))
		parts := strings.Split(real, string(filepath.Separator))
		if i := slices.Index(parts, "node_modules"); i > 0 {
			out = append(out, string(filepath.Separator)+filepath.Join(parts[:i+1]...))
		}
	}
	return out
}

// goDirs are the Go toolchain's root and module cache, which gopls reads through `go list`.
var goDirs = sync.OnceValue(func() []string {
	out, err := exec.Command("go", "env", "GOROOT", "GOMODCACHE").Output()
	if err != nil {
		return nil
	}
	return strings.Fields(string(out))
})

func existing(paths []string) []string {
	var out []string
	for _, p := range paths {
		if p == "" || !filepath.IsAbs(p) {
			continue
		}
		p = filepath.Clean(p)
		if _, err := os.Stat(p); err != nil || slices.Contains(out, p) {
			continue
		}
		out = append(out, p)
	}
	return out
}

// ServerStatus is one language server as the dashboard and doctor show it.
type ServerStatus struct {
	Workspace string `json:"workspace"`
	Language  string `json:"language"`
	Command   string `json:"command"`
	// State: starting, ready, busy (indexing), ended (crashed or failed: started again at the
	// next call) or stopped.
	State       string    `json:"state"`
	PID         int       `json:"pid,omitempty"`
	Server      string    `json:"server,omitempty"` // name and version it reported
	StartedAt   time.Time `json:"startedAt,omitzero"`
	LastUsed    time.Time `json:"lastUsed"`
	Restarts    int       `json:"restarts"`
	MemoryBytes int64     `json:"memoryBytes"` // resident memory of its whole process group
	OpenFiles   int       `json:"openFiles"`
	Sandbox     string    `json:"sandbox"`
	LastError   string    `json:"lastError,omitempty"`
	Log         []string  `json:"log,omitempty"` // its last lines (stderr, log messages)
}

// Status lists the pool's servers, by workspace and language.
func (p *Pool) Status() []ServerStatus {
	p.mu.Lock()
	var out []ServerStatus
	for k, s := range p.servers {
		out = append(out, s.status(p.restarts[k]))
	}
	p.mu.Unlock()
	slices.SortFunc(out, func(a, b ServerStatus) int {
		return strings.Compare(a.Workspace+"\x00"+a.Language, b.Workspace+"\x00"+b.Language)
	})
	return out
}

func (s *server) status(restarts int) ServerStatus {
	st := ServerStatus{Workspace: s.key.root, Language: s.key.lang, Command: strings.Join(s.argv, " "),
		Restarts: restarts, Log: s.log.lines()}
	s.mu.Lock()
	st.LastUsed, st.PID = s.lastUsed, s.pid
	s.mu.Unlock()
	select {
	case <-s.ready:
	default:
		st.State = "starting"
		return st
	}
	st.Sandbox = s.sandbox
	if s.startErr != nil {
		st.State, st.LastError = "ended", s.startErr.Error()
		return st
	}
	st.StartedAt = s.started
	st.Server = serverLabel(s.client.ServerName(), s.client.ServerVersion())
	if s.dead() {
		st.State, st.LastError, st.PID = "ended", s.exitReason(), 0
		return st
	}
	st.State = "ready"
	if s.client.Busy() {
		st.State = "busy"
	}
	st.OpenFiles = len(s.client.OpenDocuments())
	st.MemoryBytes = groupRSS(s.pid)
	return st
}

// serverLabel is a server's name and version as it reported them, the version shortened: gopls
// reports its whole build information as a JSON object, whose "Version" is what a person wants.
func serverLabel(name, version string) string {
	version = strings.TrimSpace(version)
	if strings.HasPrefix(version, "{") {
		var info struct{ Version string }
		if json.Unmarshal([]byte(version), &info) == nil && info.Version != "" {
			version = info.Version
		} else {
			version = ""
		}
	}
	if len(version) > 40 {
		version = version[:40] + "…"
	}
	return strings.TrimSpace(name + " " + version)
}

// groupRSS is the resident memory of the live processes of group pgid (from /proc).
func groupRSS(pgid int) int64 {
	var total int64
	for _, pid := range procgroup.Members(pgid) {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
		if err != nil {
			continue
		}
		for line := range strings.SplitSeq(string(b), "\n") {
			if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
				f := strings.Fields(rest)
				if len(f) > 0 {
					kb, _ := strconv.ParseInt(f[0], 10, 64)
					total += kb * 1024
				}
			}
		}
	}
	return total
}

// logRing keeps a server's last lines.
type logRing struct {
	mu  sync.Mutex
	buf []string
}

const logLines = 50

func (l *logRing) add(src, text string) {
	text = strings.TrimRight(text, "\n")
	if len(text) > 500 {
		text = text[:500] + "…"
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, src+": "+text)
	if len(l.buf) > logLines {
		l.buf = slices.Clone(l.buf[len(l.buf)-logLines:])
	}
}

func (l *logRing) lines() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.buf)
}

// tail is the last n lines of stderr, for an error message ("" when none).
func (l *logRing) tail(n int) string {
	var out []string
	for _, s := range l.lines() {
		if rest, ok := strings.CutPrefix(s, "stderr: "); ok {
			out = append(out, rest)
		}
	}
	if len(out) == 0 {
		return ""
	}
	if len(out) > n {
		out = out[len(out)-n:]
	}
	return "; its last output: " + strings.Join(out, " | ")
}

func (l *logRing) readLines(r io.Reader, src string) {
	buf := make([]byte, 0, 4096)
	tmp := make([]byte, 4096)
	for {
		n, err := r.Read(tmp)
		buf = append(buf, tmp[:n]...)
		for {
			i := slices.Index(buf, '\n')
			if i < 0 {
				break
			}
			l.add(src, string(buf[:i]))
			buf = buf[i+1:]
		}
		if len(buf) > 8192 {
			l.add(src, string(buf))
			buf = buf[:0]
		}
		if err != nil {
			if len(buf) > 0 {
				l.add(src, string(buf))
			}
			return
		}
	}
}

// Package process runs and supervises external processes for the hub: long-running ones started
// with Start (output captured into a bounded ring, stdin writable, stoppable as a process group)
// and short synchronous ones run with Exec.
//
// Every process runs in its own process group (its own session in PTY mode), so stopping it also
// reaches the children and grandchildren it spawned. Every started process is reaped; no zombies
// are left behind by this package.
package process

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/switchboard-hub/switchboard/internal/listeners"
	"github.com/switchboard-hub/switchboard/internal/procgroup"
)

// Status is the lifecycle state of a process.
type Status string

// The statuses; every status but StatusRunning is final.
const (
	StatusRunning Status = "running"
	StatusExited  Status = "exited"  // ended on its own (any exit code, or a signal nobody here sent)
	StatusStopped Status = "stopped" // ended after Stop
	StatusKilled  Status = "killed"  // ended after Kill
	StatusFailed  Status = "failed"  // reserved: a start that fails leaves no record (see Start)
)

// Output streams as they appear in chunks and events.
const (
	StreamStdout = "stdout"
	StreamStderr = "stderr"
	StreamPTY    = "pty"
)

// Event kinds.
const (
	EventStarted = "started"
	EventOutput  = "output"
	EventExited  = "exited"
)

// Errors callers can test for with errors.Is.
var (
	ErrNotFound   = errors.New("no such process")
	ErrNotRunning = errors.New("process is not running")
	ErrLimit      = errors.New("too many running processes")
	ErrClosed     = errors.New("process service is shut down")
	ErrNoCommand  = errors.New("command is required")
	ErrBadEnv     = errors.New("env entries must be KEY=VALUE with a non-empty key and no NUL bytes")
)

// Options configures a Service. Zero values take the documented defaults.
type Options struct {
	MaxProcesses int           // concurrently running processes, default 32
	BufferSize   int           // output kept per process (the tail), default 4 MiB
	StopGrace    time.Duration // SIGTERM to SIGKILL grace for Stop and Shutdown, default 5s
	MaxExited    int           // ended process records kept, oldest evicted first, default 100
	BaseEnv      []string      // environment every process starts from, default StripSecrets(os.Environ())
}

const (
	defaultMaxProcesses = 32
	defaultBufferSize   = 4 << 20
	defaultStopGrace    = 5 * time.Second
	defaultMaxExited    = 100

	// drainWait bounds how long a process's exit waits for its output pipes to reach EOF. A
	// background grandchild that inherited stdout keeps the pipe open; its later output is still
	// captured, but the exit is not held hostage to it.
	drainWait = 250 * time.Millisecond

	// inputTimeout bounds a stdin write to a process that is not reading its input.
	inputTimeout = 5 * time.Second

	readBufferSize = 32 << 10
)

// StartOptions describes a process to start.
type StartOptions struct {
	Command string
	Args    []string
	Dir     string // absolute working directory, validated by the caller; empty = inherit
	// DirFile, when set, is an open handle on the directory the caller checked: the child starts
	// in exactly that directory even if Dir's path is swapped (for a symlink) after the check.
	// Dir is then only the name recorded in Info. The caller keeps ownership (close it after Start).
	DirFile *os.File
	Env     []string // extra KEY=VALUE entries on top of Options.BaseEnv
	PTY     bool     // run on a pseudo-terminal (one combined "pty" stream)
	Cols    uint16   // PTY width, default 80
	Rows    uint16   // PTY height, default 24
}

// Info is a snapshot of one process. Its JSON keys are process_list's (docs/tools.md) plus the
// extras the dashboard shows.
type Info struct {
	ID           string        `json:"id"`
	Command      string        `json:"command"`
	Args         []string      `json:"args"`
	Dir          string        `json:"dir"`
	Status       Status        `json:"status"`
	PID          int           `json:"pid"`
	ExitCode     int           `json:"exitCode"`
	StartedAt    time.Time     `json:"startedAt"`
	EndedAt      time.Time     `json:"endedAt,omitzero"`
	Duration     time.Duration `json:"duration"`
	PTY          bool          `json:"pty"`
	OutputBytes  int64         `json:"outputBytes"`
	DroppedBytes int64         `json:"droppedBytes"`
	Error        string        `json:"error,omitempty"`
}

// Chunk is a run of output from one stream. Offset is the global byte offset of Data[0] in the
// process's combined output.
type Chunk struct {
	Stream string `json:"stream"`
	Offset int64  `json:"offset"`
	Data   []byte `json:"data"`
}

// Event reports a change: a process started, produced output (Chunk set) or ended.
type Event struct {
	Kind  string
	Info  Info
	Chunk *Chunk
}

// Service owns a table of processes. It is safe for concurrent use.
type Service struct {
	opts Options

	// life is cancelled by Shutdown; Exec runs derive from it.
	life     context.Context
	shutdown context.CancelFunc
	wg       sync.WaitGroup // monitor and reader goroutines, running Execs

	mu       sync.Mutex
	procs    map[string]*proc
	exited   []string           // IDs of ended processes, oldest end first, for eviction
	live     map[*proc]struct{} // processes whose output readers are still open (even if evicted)
	starting int                // Starts past the cap check but not yet in procs
	nextID   int64
	closed   bool
	// launches counts Starts and Execs in flight; Shutdown waits for it after setting closed, so
	// nothing adds to wg once Shutdown waits on it.
	launches sync.WaitGroup

	listeners listeners.Set[Event] // Notify takes no lock: it runs for every output chunk
}

// proc is one supervised process.
type proc struct {
	id      string
	seq     int64 // start order, for List
	command string
	args    []string
	dir     string
	isPTY   bool
	started time.Time

	cmd   *exec.Cmd
	pgid  int
	stdin *os.File // pipe write end, or the PTY master; nil once closed
	pty   *os.File // PTY master (also stdin), nil in pipe mode
	reads []*os.File

	inputMu sync.Mutex // serialises writes so concurrent inputs do not interleave

	// emitMu orders output and exit events: held while appending to the ring and notifying, so
	// listeners see offsets in order and the exit after the last drained output. Only capture
	// goroutines take it, so a listener may call back into Get or Output.
	emitMu sync.Mutex

	mu        sync.Mutex // guards the fields below
	status    Status
	exitCode  int
	ended     time.Time
	errText   string
	requested Status // StatusStopped or StatusKilled once Stop/Kill asked
	ring      *outputRing

	done        chan struct{} // closed after the process is reaped and its status final
	readersDone chan struct{} // closed when every output reader has returned
}

// New returns a Service with opts applied over the defaults.
func New(opts Options) *Service {
	if opts.MaxProcesses <= 0 {
		opts.MaxProcesses = defaultMaxProcesses
	}
	if opts.BufferSize <= 0 {
		opts.BufferSize = defaultBufferSize
	}
	if opts.StopGrace <= 0 {
		opts.StopGrace = defaultStopGrace
	}
	if opts.MaxExited <= 0 {
		opts.MaxExited = defaultMaxExited
	}
	if opts.BaseEnv == nil {
		// The hub's own tokens and API keys never reach processes agents start.
		opts.BaseEnv = StripSecrets(os.Environ())
	}
	life, cancel := context.WithCancel(context.Background())
	return &Service{opts: opts, life: life, shutdown: cancel, procs: map[string]*proc{}, live: map[*proc]struct{}{}}
}

// Subscribe registers fn for every event and returns a function that removes it. fn runs
// synchronously on a capture goroutine: it must be quick and must never block. Chunk data passed
// to fn is its own copy and may be retained.
func (s *Service) Subscribe(fn func(Event)) (cancel func()) { return s.listeners.Add(fn) }

func (s *Service) hasListeners() bool { return s.listeners.Len() > 0 }

func (s *Service) emit(ev Event) { s.listeners.Notify(ev) }

// Start launches a process and begins capturing its output. The process outlives ctx (which only
// bounds the start itself); end it with Stop or Kill. A command that cannot be started (unknown
// command, missing directory) returns an error and leaves no record, like a validation error: the
// caller never learns an ID, so no record may carry one.
func (s *Service) Start(ctx context.Context, o StartOptions) (Info, error) {
	if err := ctx.Err(); err != nil {
		return Info{}, fmt.Errorf("start process %q: %w", o.Command, err)
	}
	if strings.TrimSpace(o.Command) == "" {
		return Info{}, ErrNoCommand
	}
	if err := checkPlatform(); err != nil {
		return Info{}, fmt.Errorf("start process %q: %w", o.Command, err)
	}
	env, err := mergeEnv(s.opts.BaseEnv, withPWD(o.Dir, o.Env))
	if err != nil {
		return Info{}, err
	}

	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return Info{}, fmt.Errorf("start process %q: %w", o.Command, ErrClosed)
	}
	if n := s.runningLocked() + s.starting; n >= s.opts.MaxProcesses {
		s.mu.Unlock()
		return Info{}, fmt.Errorf("start process %q: %w (%d of %d running)", o.Command, ErrLimit, n, s.opts.MaxProcesses)
	}
	// Counting the start as running keeps concurrent Starts from overshooting the cap.
	s.starting++
	s.nextID++
	s.launches.Add(1)
	defer s.launches.Done()
	p := &proc{
		id:          "proc-" + strconv.FormatInt(s.nextID, 10),
		seq:         s.nextID,
		command:     o.Command,
		args:        append([]string{}, o.Args...),
		dir:         o.Dir,
		isPTY:       o.PTY,
		status:      StatusRunning,
		ring:        newOutputRing(s.opts.BufferSize),
		done:        make(chan struct{}),
		readersDone: make(chan struct{}),
	}
	s.mu.Unlock()

	// Holding emitMu until the "started" event is out keeps the capture goroutines' output and
	// the monitor's exit behind it, and behind the record's insertion into the table.
	p.emitMu.Lock()
	defer p.emitMu.Unlock()
	launchErr := s.launch(p, env, o)

	s.mu.Lock()
	s.starting--
	if launchErr == nil {
		s.procs[p.id] = p
	}
	s.mu.Unlock()

	if launchErr != nil {
		// No record and no event: the caller gets the error and no ID, so a record would carry
		// an ID nobody was ever told about.
		return Info{}, launchErr
	}
	info := p.info()
	s.emit(Event{Kind: EventStarted, Info: info})
	return info, nil
}

// launch starts p's OS process and its capture goroutines.
func (s *Service) launch(p *proc, env []string, o StartOptions) error {
	wd, err := workDir(o.Dir, o.DirFile)
	if err != nil {
		return fmt.Errorf("start process %q: %w", o.Command, err)
	}
	defer runtime.KeepAlive(o.DirFile) // its descriptor must stay open until the child has chdir'd
	cmd := exec.Command(o.Command, o.Args...)
	cmd.Dir = wd
	cmd.Env = env
	if err := cmd.Err; err != nil {
		return startError(o.Command, err)
	}

	if o.PTY {
		cols, rows := o.Cols, o.Rows
		if cols == 0 {
			cols = 80
		}
		if rows == 0 {
			rows = 24
		}
		pollable, err := startPTY(cmd, cols, rows)
		if err != nil {
			return err
		}
		p.pty, p.stdin = pollable, pollable
		p.reads = []*os.File{pollable}
	} else {
		cmd.SysProcAttr = procgroup.GroupAttr()
		files, err := pipeFiles(cmd)
		if err != nil {
			return fmt.Errorf("start process %q: %w", o.Command, err)
		}
		if err := cmd.Start(); err != nil {
			files.closeAll()
			return startError(o.Command, err)
		}
		// The child holds its own copies; the parent keeps only its ends.
		files.closeChildEnds()
		p.stdin = files.stdinW
		p.reads = []*os.File{files.stdoutR, files.stderrR}
	}

	p.cmd = cmd
	p.pgid = cmd.Process.Pid
	p.started = time.Now()

	s.mu.Lock()
	s.live[p] = struct{}{}
	s.mu.Unlock()

	var readers sync.WaitGroup
	streams := []string{StreamStdout, StreamStderr}
	if p.isPTY {
		streams = []string{StreamPTY}
	}
	for i, f := range p.reads {
		readers.Add(1)
		s.wg.Go(func() {
			defer readers.Done()
			s.capture(p, streams[i], f)
		})
	}
	s.wg.Go(func() {
		readers.Wait()
		s.mu.Lock()
		delete(s.live, p)
		s.mu.Unlock()
		close(p.readersDone)
	})
	s.wg.Go(func() { s.monitor(p) })
	return nil
}

// checkDir verifies a working directory up front: a failed chdir in the child surfaces as a bare
// ENOENT that reads like a missing command.
func checkDir(dir string) error {
	if dir == "" {
		return nil
	}
	st, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("working directory: %w", err)
	}
	if !st.IsDir() {
		return fmt.Errorf("working directory %q is not a directory", dir)
	}
	return nil
}

// startError turns exec's lookup and start failures into one clear message.
func startError(command string, err error) error {
	if errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("start process %q: command not found (not in PATH and not an existing file): %w", command, err)
	}
	if errors.Is(err, os.ErrPermission) {
		return fmt.Errorf("start process %q: permission denied (is it executable?): %w", command, err)
	}
	return fmt.Errorf("start process %q: %w", command, err)
}

// capture copies one output stream into the ring until EOF or until the file is closed.
func (s *Service) capture(p *proc, stream string, f *os.File) {
	defer f.Close()
	buf := make([]byte, readBufferSize)
	for {
		n, err := f.Read(buf)
		if n > 0 {
			s.appendOutput(p, stream, buf[:n])
		}
		if err != nil {
			// EOF on a pipe; EIO on a PTY master once the terminal side is gone; ErrClosed when
			// Shutdown forces the reader out. All mean: nothing more will come.
			return
		}
	}
}

func (s *Service) appendOutput(p *proc, stream string, data []byte) {
	p.emitMu.Lock()
	defer p.emitMu.Unlock()
	p.mu.Lock()
	off := p.ring.End()
	p.ring.Write(stream, data)
	p.mu.Unlock()
	if !s.hasListeners() {
		return
	}
	ev := Event{Kind: EventOutput, Info: p.info(), Chunk: &Chunk{Stream: stream, Offset: off, Data: slices.Clone(data)}}
	s.emit(ev)
}

// monitor reaps p, lets its output drain, records the final status and announces the exit.
func (s *Service) monitor(p *proc) {
	waitErr := p.cmd.Wait()
	ended := time.Now()

	select {
	case <-p.readersDone:
	case <-time.After(drainWait):
	}

	p.inputMu.Lock()
	if !p.isPTY && p.stdin != nil {
		_ = p.stdin.Close()
		p.stdin = nil
	}
	p.inputMu.Unlock()

	p.emitMu.Lock()
	p.mu.Lock()
	p.ended = ended
	p.exitCode = exitCode(p.cmd.ProcessState, waitErr)
	switch p.requested {
	case StatusStopped, StatusKilled:
		p.status = p.requested
	default:
		p.status = StatusExited
	}
	p.mu.Unlock()
	info := p.info()
	s.emit(Event{Kind: EventExited, Info: info})
	p.emitMu.Unlock()

	s.retire(p)
	close(p.done)
}

// exitCode reports the code a shell would show: the exit status, or 128+signal for a process
// ended by a signal.
func exitCode(ps *os.ProcessState, waitErr error) int {
	if ps == nil {
		if waitErr != nil {
			return -1
		}
		return 0
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}

// retire files an ended process for eviction and evicts the oldest beyond MaxExited.
func (s *Service) retire(p *proc) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.exited = append(s.exited, p.id)
	for len(s.exited) > s.opts.MaxExited {
		old := s.exited[0]
		s.exited = s.exited[1:]
		delete(s.procs, old)
	}
}

// runningLocked counts processes in the table that have not ended.
func (s *Service) runningLocked() int {
	return len(s.procs) - len(s.exited)
}

func (p *proc) info() Info {
	p.mu.Lock()
	defer p.mu.Unlock()
	in := Info{
		ID:           p.id,
		Command:      p.command,
		Args:         p.args,
		Dir:          p.dir,
		Status:       p.status,
		PTY:          p.isPTY,
		ExitCode:     p.exitCode,
		StartedAt:    p.started,
		EndedAt:      p.ended,
		OutputBytes:  p.ring.End(),
		DroppedBytes: p.ring.Start(),
		Error:        p.errText,
	}
	if p.cmd != nil && p.cmd.Process != nil {
		in.PID = p.cmd.Process.Pid
	}
	if p.ended.IsZero() {
		in.Duration = time.Since(p.started)
	} else {
		in.Duration = p.ended.Sub(p.started)
	}
	return in
}

func (s *Service) lookup(id string) (*proc, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.procs[id]
	if !ok {
		return nil, fmt.Errorf("process %q: %w", id, ErrNotFound)
	}
	return p, nil
}

// Get returns the current snapshot of process id.
func (s *Service) Get(id string) (Info, error) {
	p, err := s.lookup(id)
	if err != nil {
		return Info{}, err
	}
	return p.info(), nil
}

// List returns every known process (or only running ones), oldest start first.
func (s *Service) List(runningOnly bool) []Info {
	s.mu.Lock()
	ps := make([]*proc, 0, len(s.procs))
	for _, p := range s.procs {
		ps = append(ps, p)
	}
	s.mu.Unlock()
	slices.SortFunc(ps, func(a, b *proc) int { return cmp.Compare(a.seq, b.seq) })
	out := make([]Info, 0, len(ps))
	for _, p := range ps {
		in := p.info()
		if runningOnly && in.Status != StatusRunning {
			continue
		}
		out = append(out, in)
	}
	return out
}

// OutputQuery selects part of a process's kept output.
type OutputQuery struct {
	Since int64 // global byte offset to read from; 0 = from the oldest kept byte
	Tail  int   // at most the last Tail bytes; 0 = no limit
}

// Output is a read of a process's kept output.
type Output struct {
	Text      string  // the selected output as one string, streams interleaved as they arrived
	Chunks    []Chunk // the same bytes split by stream
	Next      int64   // offset to pass as Since to continue after this read
	Dropped   int64   // bytes lost before the oldest kept byte
	Truncated bool    // the requested range began in output that was already dropped
}

// Output returns kept output of process id. Reading is allowed after the process ended, until its
// record is evicted.
func (s *Service) Output(id string, q OutputQuery) (Output, error) {
	p, err := s.lookup(id)
	if err != nil {
		return Output{}, err
	}
	if q.Since < 0 || q.Tail < 0 {
		return Output{}, fmt.Errorf("process %q output: since and tail must not be negative", id)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	start, end := p.ring.Start(), p.ring.End()
	from := min(max(q.Since, start), end)
	if q.Tail > 0 {
		from = max(from, end-int64(q.Tail))
	}
	data, chunks := p.ring.Read(from)
	return Output{Text: string(data), Chunks: chunks, Next: end, Dropped: start, Truncated: q.Since < start}, nil
}

// Input writes data to the process's stdin (its terminal in PTY mode). It fails if the process
// has ended, or if the process does not read its input within a few seconds.
func (s *Service) Input(id string, data []byte) error {
	p, err := s.lookup(id)
	if err != nil {
		return err
	}
	p.inputMu.Lock()
	defer p.inputMu.Unlock()
	p.mu.Lock()
	st := p.status
	p.mu.Unlock()
	if st != StatusRunning || p.stdin == nil {
		return fmt.Errorf("process %q input: %w (status %s)", id, ErrNotRunning, st)
	}
	_ = p.stdin.SetWriteDeadline(time.Now().Add(inputTimeout))
	if _, err := p.stdin.Write(data); err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return fmt.Errorf("process %q input: the process did not read its input within %s", id, inputTimeout)
		}
		return fmt.Errorf("process %q input: %w", id, err)
	}
	return nil
}

// CloseInput closes the process's stdin so it sees end of file. In PTY mode it sends the
// terminal's end-of-file character instead, since closing the terminal would hang it up.
func (s *Service) CloseInput(id string) error {
	p, err := s.lookup(id)
	if err != nil {
		return err
	}
	if p.isPTY {
		return s.Input(id, []byte{4}) // ^D: EOF at the start of a line in canonical mode
	}
	p.inputMu.Lock()
	defer p.inputMu.Unlock()
	if p.stdin == nil {
		return fmt.Errorf("process %q input: %w", id, ErrNotRunning)
	}
	err = p.stdin.Close()
	p.stdin = nil
	if err != nil {
		return fmt.Errorf("process %q close input: %w", id, err)
	}
	return nil
}

// Resize changes the terminal size of a PTY process.
func (s *Service) Resize(id string, cols, rows uint16) error {
	p, err := s.lookup(id)
	if err != nil {
		return err
	}
	if !p.isPTY {
		return fmt.Errorf("process %q resize: not started with a terminal", id)
	}
	if err := setWinsize(p.pty, cols, rows); err != nil {
		return fmt.Errorf("process %q resize: %w", id, err)
	}
	return nil
}

// Wait blocks until process id has ended (returning its final snapshot) or ctx is done.
func (s *Service) Wait(ctx context.Context, id string) (Info, error) {
	p, err := s.lookup(id)
	if err != nil {
		return Info{}, err
	}
	select {
	case <-p.done:
		return p.info(), nil
	case <-ctx.Done():
		return p.info(), fmt.Errorf("wait for process %q: %w", id, ctx.Err())
	}
}

// Stop asks the process group to terminate (SIGTERM) and escalates to SIGKILL after StopGrace,
// or at once if ctx ends first. It returns once the process has been reaped and nothing is left
// in its group. Stopping a process that already ended returns its snapshot and ErrNotRunning.
func (s *Service) Stop(ctx context.Context, id string) (Info, error) {
	p, err := s.lookup(id)
	if err != nil {
		return Info{}, err
	}
	if !p.request(StatusStopped) {
		return p.info(), fmt.Errorf("stop process %q: %w (status %s)", id, ErrNotRunning, p.info().Status)
	}
	if err := s.terminate(ctx, p, s.opts.StopGrace); err != nil {
		return p.info(), fmt.Errorf("stop process %q: %w", id, err)
	}
	return p.info(), nil
}

// Kill sends SIGKILL to the process group at once and returns after the process is reaped.
func (s *Service) Kill(id string) (Info, error) {
	p, err := s.lookup(id)
	if err != nil {
		return Info{}, err
	}
	if !p.request(StatusKilled) {
		return p.info(), fmt.Errorf("kill process %q: %w (status %s)", id, ErrNotRunning, p.info().Status)
	}
	p.signal(syscall.SIGKILL)
	<-p.done
	awaitGroupGone(p.pgid)
	return p.info(), nil
}

// request records that Stop or Kill is ending p; false if p is no longer running. A Kill after a
// Stop upgrades the reason; a Stop after a Kill does not downgrade it.
func (p *proc) request(reason Status) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.status != StatusRunning {
		return false
	}
	if p.requested != StatusKilled {
		p.requested = reason
	}
	return true
}

// terminate sends SIGTERM to p's group, waits up to grace for the leader to be reaped and the
// group to empty, then sends SIGKILL and waits for the reap. If ctx ends during the grace period
// the SIGKILL goes out at once: the process is never left half-stopped.
func (s *Service) terminate(ctx context.Context, p *proc, grace time.Duration) error {
	p.signal(syscall.SIGTERM)
	timer := time.NewTimer(grace)
	defer timer.Stop()
	// Until the leader is reaped, wait on done; after that, descendants that ignore SIGTERM may
	// linger in the group, and only polling can tell when they are gone.
	var poll <-chan time.Time
	done := p.done
	var ctxErr error
wait:
	for {
		select {
		case <-done:
			if !procgroup.Alive(p.pgid) {
				return nil
			}
			done = nil
			ticker := time.NewTicker(20 * time.Millisecond)
			defer ticker.Stop()
			poll = ticker.C
		case <-poll:
			if !procgroup.Alive(p.pgid) {
				return nil
			}
		case <-timer.C:
			break wait
		case <-ctx.Done():
			ctxErr = ctx.Err()
			break wait
		}
	}
	p.signal(syscall.SIGKILL)
	<-p.done
	awaitGroupGone(p.pgid)
	return ctxErr
}

// signal sends sig to p's process group and, should the group be unreachable while the leader
// is not yet reaped (it moved itself to another group), to the leader directly. Once the leader
// is reaped its PID may be reused, so it is never signalled alone then.
func (p *proc) signal(sig syscall.Signal) {
	if err := procgroup.Signal(p.pgid, sig); err == nil {
		return
	}
	select {
	case <-p.done:
	default:
		_ = killPID(p.pgid, sig)
	}
}

// awaitGroupGone gives the kernel a moment to finish off the rest of a group after SIGKILL (the
// leader is reaped, descendants may still be dying), so callers see a clean process table.
// Bounded: a process stuck in uninterruptible sleep cannot hold the caller.
func awaitGroupGone(pgid int) {
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	_ = procgroup.WaitGone(ctx, pgid) // past the limit the caller goes on: see above
}

// Shutdown stops every running process (SIGTERM, then SIGKILL after StopGrace or when ctx ends),
// reaps them all, cancels running Execs and waits for every goroutine the Service started. Start
// and Exec fail afterwards.
func (s *Service) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.shutdown()
	s.launches.Wait() // no Start or Exec is half-way now, and none can begin

	s.mu.Lock()
	ps := make([]*proc, 0, len(s.procs))
	for _, p := range s.procs {
		ps = append(ps, p)
	}
	s.mu.Unlock()

	var errs []error
	var errMu sync.Mutex
	var stops sync.WaitGroup
	for _, p := range ps {
		if !p.request(StatusStopped) {
			continue
		}
		stops.Go(func() {
			if err := s.terminate(ctx, p, s.opts.StopGrace); err != nil {
				errMu.Lock()
				errs = append(errs, fmt.Errorf("stop process %q: %w", p.id, err))
				errMu.Unlock()
			}
		})
	}
	stops.Wait()

	// Every leader is reaped. Readers still open mean a descendant holds an output pipe (possibly
	// of a record already evicted): end what is left of the group and close our ends so the
	// readers return.
	s.mu.Lock()
	live := make([]*proc, 0, len(s.live))
	for p := range s.live {
		live = append(live, p)
	}
	s.mu.Unlock()
	for _, p := range live {
		if procgroup.Alive(p.pgid) {
			_ = procgroup.Signal(p.pgid, syscall.SIGKILL)
			awaitGroupGone(p.pgid)
		}
		for _, f := range p.reads {
			_ = f.Close()
		}
	}
	s.wg.Wait()
	return errors.Join(errs...)
}

// mergeEnv appends extra KEY=VALUE entries to base; a later entry for the same key wins (exec
// de-duplicates keeping the last).
func mergeEnv(base, extra []string) ([]string, error) {
	for _, kv := range extra {
		k, _, ok := strings.Cut(kv, "=")
		if !ok || k == "" || strings.ContainsRune(kv, 0) {
			return nil, fmt.Errorf("env entry %q: %w", kv, ErrBadEnv)
		}
	}
	env := make([]string, 0, len(base)+len(extra))
	env = append(env, base...)
	return append(env, extra...), nil
}

package process

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/switchboard-hub/switchboard/internal/procgroup"
)

// ExecOptions describes a short synchronous command.
type ExecOptions struct {
	Command   string
	Args      []string
	Dir       string        // absolute working directory, validated by the caller; empty = inherit
	DirFile   *os.File      // open handle on the checked directory; the child starts there (see StartOptions.DirFile)
	Env       []string      // extra KEY=VALUE entries on top of Options.BaseEnv
	Timeout   time.Duration // default 60s; on expiry the whole process group is killed
	MaxOutput int           // bytes kept per stream, default 1 MiB (head and tail, middle elided)
	Stdin     string        // fed to the command's stdin; empty = /dev/null
}

// ExecResult is the outcome of a command that ran. A non-zero exit is a result, not an error.
type ExecResult struct {
	ExitCode  int // exit status, or 128+signal when a signal ended it (137 after a timeout)
	Stdout    string
	Stderr    string
	Duration  time.Duration
	TimedOut  bool // the timeout expired and the group was killed
	Truncated bool // a stream exceeded MaxOutput and its middle was elided
}

const (
	defaultExecTimeout   = 60 * time.Second
	defaultExecMaxOutput = 1 << 20

	// execWaitDelay bounds how long Exec waits for output pipes (and the stdin copy) after the
	// command exited: a descendant that escaped the group could hold them open forever.
	execWaitDelay = time.Second
)

var errExecTimeout = errors.New("exec timeout")

// Exec runs a command to completion in its own process group and returns its exit code and
// output. When the timeout expires, ctx ends or the Service shuts down, the whole group is
// killed; only the timeout yields a result (TimedOut), the others an error. Failing to start is
// an error. Descendants still in the group when the command exits are killed too.
func (s *Service) Exec(ctx context.Context, o ExecOptions) (ExecResult, error) {
	if strings.TrimSpace(o.Command) == "" {
		return ExecResult{}, ErrNoCommand
	}
	if err := checkPlatform(); err != nil {
		return ExecResult{}, fmt.Errorf("exec %q: %w", o.Command, err)
	}
	env, err := mergeEnv(s.opts.BaseEnv, withPWD(o.Dir, o.Env))
	if err != nil {
		return ExecResult{}, err
	}
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = defaultExecTimeout
	}
	maxOut := o.MaxOutput
	if maxOut <= 0 {
		maxOut = defaultExecMaxOutput
	}

	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return ExecResult{}, fmt.Errorf("exec %q: %w", o.Command, ErrClosed)
	}
	s.launches.Add(1)
	s.mu.Unlock()
	defer s.launches.Done()

	runCtx, cancel := context.WithTimeoutCause(ctx, timeout, errExecTimeout)
	defer cancel()
	stopOnShutdown := context.AfterFunc(s.life, cancel)
	defer stopOnShutdown()

	wd, err := workDir(o.Dir, o.DirFile)
	if err != nil {
		return ExecResult{}, fmt.Errorf("exec %q: %w", o.Command, err)
	}
	defer runtime.KeepAlive(o.DirFile) // its descriptor must stay open until the child has chdir'd
	cmd := exec.CommandContext(runCtx, o.Command, o.Args...)
	cmd.Dir = wd
	cmd.Env = env
	cmd.SysProcAttr = procgroup.GroupAttr()
	cmd.Cancel = func() error { return procgroup.Signal(cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = execWaitDelay // bounds the stdin copy if the command never reads it
	if o.Stdin != "" {
		cmd.Stdin = strings.NewReader(o.Stdin)
	}
	// Our own pipes rather than exec's: Wait then returns when the command exits, not when the
	// last descendant closes stdout, and the leftovers can be killed right away.
	stdoutR, stdoutW, err := os.Pipe()
	if err != nil {
		return ExecResult{}, fmt.Errorf("exec %q: stdout pipe: %w", o.Command, err)
	}
	stderrR, stderrW, err := os.Pipe()
	if err != nil {
		closeFiles(stdoutR, stdoutW)
		return ExecResult{}, fmt.Errorf("exec %q: stderr pipe: %w", o.Command, err)
	}
	cmd.Stdout, cmd.Stderr = stdoutW, stderrW

	began := time.Now()
	err = cmd.Start()
	closeFiles(stdoutW, stderrW) // the child has its copies
	if err != nil {
		closeFiles(stdoutR, stderrR)
		return ExecResult{}, startError(o.Command, err)
	}
	stdout, stderr := newCappedBuffer(maxOut), newCappedBuffer(maxOut)
	var readers sync.WaitGroup
	readers.Go(func() { drainInto(stdout, stdoutR) })
	readers.Go(func() { drainInto(stderr, stderrR) })

	waitErr := cmd.Wait()
	pgid := cmd.Process.Pid
	if procgroup.Alive(pgid) {
		// A synchronous command leaves nothing behind: background descendants still in its group
		// are killed (long-running work belongs in Start).
		_ = procgroup.Signal(pgid, syscall.SIGKILL)
		awaitGroupGone(pgid)
	}
	readersDone := make(chan struct{})
	go func() { readers.Wait(); close(readersDone) }()
	select {
	case <-readersDone:
	case <-time.After(execWaitDelay):
		// A descendant that left the group still holds a pipe; stop reading.
		closeFiles(stdoutR, stderrR)
		<-readersDone
	}

	res := ExecResult{
		ExitCode:  exitCode(cmd.ProcessState, waitErr),
		Stdout:    stdout.String(),
		Stderr:    stderr.String(),
		Duration:  time.Since(began),
		Truncated: stdout.Truncated() || stderr.Truncated(),
	}
	if runCtx.Err() != nil {
		if errors.Is(context.Cause(runCtx), errExecTimeout) {
			res.TimedOut = true
			return res, nil
		}
		if s.life.Err() != nil {
			return res, fmt.Errorf("exec %q: %w", o.Command, ErrClosed)
		}
		return res, fmt.Errorf("exec %q: %w", o.Command, ctx.Err())
	}
	return res, nil
}

// drainInto copies f into b until EOF or until f is closed, then closes f.
func drainInto(b *cappedBuffer, f *os.File) {
	defer f.Close()
	buf := make([]byte, readBufferSize)
	for {
		n, err := f.Read(buf)
		if n > 0 {
			_, _ = b.Write(buf[:n])
		}
		if err != nil {
			return
		}
	}
}

func closeFiles(files ...*os.File) {
	for _, f := range files {
		_ = f.Close()
	}
}

// cappedBuffer is an io.Writer that keeps the first and last halves of its budget and counts
// what falls in between, so a chatty command cannot exhaust memory yet its opening lines and its
// final error both survive.
type cappedBuffer struct {
	head    []byte
	headMax int
	tail    *outputRing
}

func newCappedBuffer(max int) *cappedBuffer {
	headMax := max / 2
	return &cappedBuffer{headMax: headMax, tail: newOutputRing(max - headMax)}
}

func (b *cappedBuffer) Write(p []byte) (int, error) {
	n := len(p)
	if room := b.headMax - len(b.head); room > 0 {
		k := min(room, len(p))
		b.head = append(b.head, p[:k]...)
		p = p[k:]
	}
	b.tail.Write("", p)
	return n, nil
}

// Truncated reports whether bytes were elided.
func (b *cappedBuffer) Truncated() bool { return b.tail.Start() > 0 }

// String returns the kept output, with a marker where bytes were elided.
func (b *cappedBuffer) String() string {
	tail, _ := b.tail.Read(0)
	if !b.Truncated() {
		return string(b.head) + string(tail)
	}
	omitted := strconv.FormatInt(b.tail.Start(), 10)
	return string(b.head) + "\n[... " + omitted + " bytes omitted ...]\n" + string(tail)
}

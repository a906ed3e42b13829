//go:build unix

package process

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-hub/switchboard/internal/procgroup"
	"github.com/switchboard-hub/switchboard/internal/testutil"
)

// newTestService returns a Service that is shut down (and checked to shut down cleanly, which
// also proves every capture goroutine ended) when the test ends.
func newTestService(t *testing.T, opts Options) *Service {
	t.Helper()
	s := New(opts)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
	})
	return s
}

func mustStart(t *testing.T, s *Service, o StartOptions) Info {
	t.Helper()
	info, err := s.Start(context.Background(), o)
	if err != nil {
		t.Fatalf("Start(%q %q): %v", o.Command, o.Args, err)
	}
	return info
}

func shell(script string) StartOptions {
	return StartOptions{Command: "sh", Args: []string{"-c", script}}
}

func mustWait(t *testing.T, s *Service, id string) Info {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	info, err := s.Wait(ctx, id)
	if err != nil {
		t.Fatalf("Wait(%s): %v", id, err)
	}
	return info
}

func mustOutput(t *testing.T, s *Service, id string, q OutputQuery) Output {
	t.Helper()
	out, err := s.Output(id, q)
	if err != nil {
		t.Fatalf("Output(%s): %v", id, err)
	}
	return out
}

// waitForOutput waits until the process's output contains want and returns it.
func waitForOutput(t *testing.T, s *Service, id, want string) string {
	t.Helper()
	var text string
	testutil.Eventually(t, "output containing "+strconv.Quote(want), func() bool {
		text = mustOutput(t, s, id, OutputQuery{}).Text
		return strings.Contains(text, want)
	})
	return text
}

// pidsIn parses one PID per line.
func pidsIn(t *testing.T, text string, want int) []int {
	t.Helper()
	var pids []int
	for _, f := range strings.Fields(text) {
		if n, err := strconv.Atoi(f); err == nil {
			pids = append(pids, n)
		}
	}
	if len(pids) < want {
		t.Fatalf("want %d PIDs in output %q", want, text)
	}
	return pids
}

func TestStdoutAndStderrAreCapturedSeparately(t *testing.T) {
	s := newTestService(t, Options{})
	info := mustStart(t, s, shell("echo out1; echo err1 >&2; sleep 0.05; echo out2"))
	if info.ID == "" || info.PID <= 0 || info.Status != StatusRunning {
		t.Fatalf("Start info = %+v", info)
	}
	final := mustWait(t, s, info.ID)
	if final.Status != StatusExited || final.ExitCode != 0 {
		t.Fatalf("final = %+v, want exited 0", final)
	}
	out := mustOutput(t, s, info.ID, OutputQuery{})
	got := map[string]string{}
	for _, c := range out.Chunks {
		got[c.Stream] += string(c.Data)
	}
	if got[StreamStdout] != "out1\nout2\n" || got[StreamStderr] != "err1\n" {
		t.Fatalf("streams = %q, want stdout %q and stderr %q", got, "out1\nout2\n", "err1\n")
	}
	if len(out.Text) != len("out1\nout2\nerr1\n") || out.Next != int64(len(out.Text)) {
		t.Fatalf("Text %q Next %d", out.Text, out.Next)
	}
	if final.OutputBytes != out.Next || final.DroppedBytes != 0 {
		t.Fatalf("OutputBytes %d DroppedBytes %d, want %d and 0", final.OutputBytes, final.DroppedBytes, out.Next)
	}
}

func TestStdinRoundTrip(t *testing.T) {
	s := newTestService(t, Options{})
	info := mustStart(t, s, StartOptions{Command: "cat"})
	if err := s.Input(info.ID, []byte("hello\n")); err != nil {
		t.Fatal(err)
	}
	waitForOutput(t, s, info.ID, "hello\n")
	if err := s.Input(info.ID, []byte("world\n")); err != nil {
		t.Fatal(err)
	}
	waitForOutput(t, s, info.ID, "hello\nworld\n")
	if err := s.CloseInput(info.ID); err != nil {
		t.Fatal(err)
	}
	final := mustWait(t, s, info.ID)
	if final.Status != StatusExited || final.ExitCode != 0 {
		t.Fatalf("cat after EOF: %+v", final)
	}
	err := s.Input(info.ID, []byte("late"))
	if !errors.Is(err, ErrNotRunning) {
		t.Fatalf("Input after exit: %v, want ErrNotRunning", err)
	}
}

func TestExitCodes(t *testing.T) {
	s := newTestService(t, Options{})
	tests := []struct {
		script string
		want   int
	}{
		{"exit 0", 0},
		{"exit 3", 3},
		{"exit 255", 255},
		{"kill -KILL $$", 128 + 9},
		{"kill -TERM $$", 128 + 15},
	}
	for _, tt := range tests {
		t.Run(tt.script, func(t *testing.T) {
			info := mustStart(t, s, shell(tt.script))
			final := mustWait(t, s, info.ID)
			if final.Status != StatusExited || final.ExitCode != tt.want {
				t.Fatalf("status %s exit %d, want exited %d", final.Status, final.ExitCode, tt.want)
			}
			if final.EndedAt.IsZero() || final.Duration <= 0 || final.Duration != final.EndedAt.Sub(final.StartedAt) {
				t.Fatalf("times: started %v ended %v duration %v", final.StartedAt, final.EndedAt, final.Duration)
			}
		})
	}
}

func TestStartFailures(t *testing.T) {
	dir := t.TempDir()
	notExec := filepath.Join(dir, "script.sh")
	if err := os.WriteFile(notExec, []byte("#!/bin/sh\necho hi\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := newTestService(t, Options{})
	tests := []struct {
		name    string
		opts    StartOptions
		wantErr string
	}{
		{"unknown command", StartOptions{Command: "no-such-command-xyz"}, "command not found"},
		{"missing path", StartOptions{Command: "./nope", Dir: dir}, "command not found"},
		{"not executable", StartOptions{Command: notExec}, "permission denied"},
		{"missing dir", StartOptions{Command: "true", Dir: filepath.Join(dir, "gone")}, "gone"},
		{"empty command", StartOptions{Command: "  "}, "command is required"},
		{"bad env", StartOptions{Command: "true", Env: []string{"NOEQUALS"}}, "KEY=VALUE"},
		{"empty env key", StartOptions{Command: "true", Env: []string{"=x"}}, "KEY=VALUE"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(s.List(false))
			info, err := s.Start(context.Background(), tt.opts)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want it to mention %q", err, tt.wantErr)
			}
			// No record either way: the caller got no ID, so nothing may list one.
			if after := s.List(false); len(after) != before || info.ID != "" {
				t.Fatalf("failed start left a record: info %+v, list %+v", info, after)
			}
			if running := s.List(true); len(running) != 0 {
				t.Fatalf("failed start listed as running: %+v", running)
			}
		})
	}
}

func TestEnvAndDir(t *testing.T) {
	s := newTestService(t, Options{BaseEnv: []string{"PATH=" + os.Getenv("PATH"), "BASE=base", "OVER=old"}})
	dir := t.TempDir()
	info := mustStart(t, s, StartOptions{Command: "sh", Args: []string{"-c", `echo "$BASE $OVER $EXTRA"; pwd`}, Dir: dir, Env: []string{"EXTRA=x y", "OVER=new"}})
	mustWait(t, s, info.ID)
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := "base new x y\n" + real + "\n"
	if got := mustOutput(t, s, info.ID, OutputQuery{}).Text; got != want {
		t.Fatalf("output %q, want %q", got, want)
	}
	if info.Dir != dir {
		t.Fatalf("Info.Dir = %q, want %q", info.Dir, dir)
	}
}

func TestStopReachesGrandchildren(t *testing.T) {
	s := newTestService(t, Options{StopGrace: 2 * time.Second})
	// The leader starts a subshell running sleep (a grandchild) and a direct child, prints their
	// PIDs and waits.
	info := mustStart(t, s, shell(`sh -c 'sleep 300' & echo $!; sleep 300 & echo $!; wait`))
	text := waitForOutput(t, s, info.ID, "\n")
	testutil.Eventually(t, "two PIDs", func() bool {
		text = mustOutput(t, s, info.ID, OutputQuery{}).Text
		return strings.Count(text, "\n") >= 2
	})
	pids := append(pidsIn(t, text, 2), info.PID)
	// The subshell forks its sleep (dash execs the last command, so find it via the group).
	for _, pid := range pids {
		if !procgroup.Running(pid) {
			t.Fatalf("pid %d not running before Stop", pid)
		}
	}

	final, err := s.Stop(context.Background(), info.ID)
	if err != nil {
		t.Fatal(err)
	}
	if final.Status != StatusStopped || final.ExitCode != 128+15 {
		t.Fatalf("after Stop: %+v, want stopped with 143", final)
	}
	for _, pid := range pids {
		if procgroup.Running(pid) {
			t.Errorf("pid %d survived Stop", pid)
		}
	}
	if procgroup.Alive(info.PID) {
		t.Errorf("process group %d still has live members", info.PID)
	}
	if _, err := s.Stop(context.Background(), info.ID); !errors.Is(err, ErrNotRunning) {
		t.Fatalf("second Stop: %v, want ErrNotRunning", err)
	}
}

func TestStopEscalatesToKill(t *testing.T) {
	s := newTestService(t, Options{StopGrace: 200 * time.Millisecond})
	t.Run("leader ignores SIGTERM", func(t *testing.T) {
		info := mustStart(t, s, shell(`trap '' TERM; echo ready; while :; do sleep 0.05; done`))
		waitForOutput(t, s, info.ID, "ready")
		final, err := s.Stop(context.Background(), info.ID)
		if err != nil {
			t.Fatal(err)
		}
		if final.Status != StatusStopped || final.ExitCode != 128+9 {
			t.Fatalf("after Stop: %+v, want stopped with 137", final)
		}
		if procgroup.Running(info.PID) {
			t.Fatal("leader survived")
		}
	})
	t.Run("grandchild ignores SIGTERM after the leader exits", func(t *testing.T) {
		info := mustStart(t, s, shell(`sh -c 'trap "" TERM; echo $$; while :; do sleep 0.05; done' & wait`))
		text := waitForOutput(t, s, info.ID, "\n")
		grandchild := pidsIn(t, text, 1)[0]
		final, err := s.Stop(context.Background(), info.ID)
		if err != nil {
			t.Fatal(err)
		}
		if final.Status != StatusStopped {
			t.Fatalf("after Stop: %+v", final)
		}
		if procgroup.Running(grandchild) {
			t.Fatalf("grandchild %d ignoring SIGTERM survived Stop", grandchild)
		}
	})
	t.Run("ctx ends during grace", func(t *testing.T) {
		slow := newTestService(t, Options{StopGrace: time.Minute})
		info := mustStart(t, slow, shell(`trap '' TERM; echo ready; while :; do sleep 0.05; done`))
		waitForOutput(t, slow, info.ID, "ready")
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		final, err := slow.Stop(ctx, info.ID)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Stop err = %v, want deadline exceeded", err)
		}
		if final.Status != StatusStopped || procgroup.Running(info.PID) {
			t.Fatalf("process not ended when ctx expired: %+v", final)
		}
	})
}

func TestKill(t *testing.T) {
	s := newTestService(t, Options{})
	info := mustStart(t, s, shell(`trap '' TERM; sleep 300 & echo $!; wait`))
	child := pidsIn(t, waitForOutput(t, s, info.ID, "\n"), 1)[0]
	final, err := s.Kill(info.ID)
	if err != nil {
		t.Fatal(err)
	}
	if final.Status != StatusKilled || final.ExitCode != 137 {
		t.Fatalf("after Kill: %+v", final)
	}
	if procgroup.Running(info.PID) || procgroup.Running(child) {
		t.Fatal("Kill left a process of the group running")
	}
	if _, err := s.Kill(info.ID); !errors.Is(err, ErrNotRunning) {
		t.Fatalf("second Kill: %v", err)
	}
}

func TestUnknownID(t *testing.T) {
	s := newTestService(t, Options{})
	calls := map[string]func() error{
		"Get":    func() error { _, err := s.Get("proc-99"); return err },
		"Output": func() error { _, err := s.Output("proc-99", OutputQuery{}); return err },
		"Input":  func() error { return s.Input("proc-99", []byte("x")) },
		"Stop":   func() error { _, err := s.Stop(context.Background(), "proc-99"); return err },
		"Kill":   func() error { _, err := s.Kill("proc-99"); return err },
		"Wait":   func() error { _, err := s.Wait(context.Background(), "proc-99"); return err },
	}
	for name, call := range calls {
		if err := call(); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "proc-99") {
			t.Errorf("%s: %v, want ErrNotFound naming the id", name, err)
		}
	}
}

func TestLargeOutputStaysBounded(t *testing.T) {
	const total = 120_000_000
	const budget = 1 << 20
	s := newTestService(t, Options{BufferSize: budget})
	info := mustStart(t, s, StartOptions{Command: "sh", Args: []string{"-c", "head -c " + strconv.Itoa(total) + " /dev/zero; echo END"}})
	final := mustWait(t, s, info.ID)
	if final.ExitCode != 0 {
		t.Fatalf("exit %d", final.ExitCode)
	}
	if final.OutputBytes != total+4 || final.DroppedBytes != total+4-budget {
		t.Fatalf("OutputBytes %d DroppedBytes %d", final.OutputBytes, final.DroppedBytes)
	}
	out := mustOutput(t, s, info.ID, OutputQuery{})
	if len(out.Text) != budget || out.Dropped != total+4-budget || !strings.HasSuffix(out.Text, "\x00END\n") || !out.Truncated {
		t.Fatalf("len(Text) %d Dropped %d Truncated %v suffix %q", len(out.Text), out.Dropped, out.Truncated, out.Text[len(out.Text)-8:])
	}
	p, _ := s.lookup(info.ID)
	p.mu.Lock()
	capacity := p.ring.Cap()
	p.mu.Unlock()
	if capacity > budget {
		t.Fatalf("ring holds %d bytes of memory, budget %d", capacity, budget)
	}
}

func TestOutputQueries(t *testing.T) {
	s := newTestService(t, Options{BufferSize: 8})
	info := mustStart(t, s, shell("printf 01234567"))
	mustWait(t, s, info.ID)
	small := mustStart(t, s, shell("printf 0123456789abcdef"))
	mustWait(t, s, small.ID)

	tests := []struct {
		name          string
		id            string
		q             OutputQuery
		want          string
		next, dropped int64
		truncated     bool
	}{
		{"all", info.ID, OutputQuery{}, "01234567", 8, 0, false},
		{"since", info.ID, OutputQuery{Since: 3}, "34567", 8, 0, false},
		{"since end", info.ID, OutputQuery{Since: 8}, "", 8, 0, false},
		{"since beyond end", info.ID, OutputQuery{Since: 50}, "", 8, 0, false},
		{"tail", info.ID, OutputQuery{Tail: 3}, "567", 8, 0, false},
		{"tail larger than kept", info.ID, OutputQuery{Tail: 100}, "01234567", 8, 0, false},
		{"since and tail", info.ID, OutputQuery{Since: 2, Tail: 3}, "567", 8, 0, false},
		{"dropped head", small.ID, OutputQuery{}, "89abcdef", 16, 8, true},
		{"since into dropped", small.ID, OutputQuery{Since: 4}, "89abcdef", 16, 8, true},
		{"since kept", small.ID, OutputQuery{Since: 12}, "cdef", 16, 8, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := mustOutput(t, s, tt.id, tt.q)
			if out.Text != tt.want || out.Next != tt.next || out.Dropped != tt.dropped || out.Truncated != tt.truncated {
				t.Fatalf("got %q next %d dropped %d truncated %v; want %q %d %d %v",
					out.Text, out.Next, out.Dropped, out.Truncated, tt.want, tt.next, tt.dropped, tt.truncated)
			}
		})
	}
	if _, err := s.Output(info.ID, OutputQuery{Since: -1}); err == nil {
		t.Fatal("negative since accepted")
	}
}

// TestOutputFollow reads a live process incrementally with Next, the way a client tails it.
func TestOutputFollow(t *testing.T) {
	s := newTestService(t, Options{})
	// The client reads again whenever the process reports output or its exit.
	changed := make(chan struct{}, 1)
	defer s.Subscribe(func(Event) {
		select {
		case changed <- struct{}{}:
		default:
		}
	})()
	info := mustStart(t, s, shell(`for i in 1 2 3 4 5; do echo line$i; sleep 0.02; done`))
	var got strings.Builder
	var next int64
	for {
		out := mustOutput(t, s, info.ID, OutputQuery{Since: next})
		if out.Truncated || (len(out.Chunks) > 0 && out.Chunks[0].Offset != next) {
			t.Fatalf("read from %d: %+v", next, out)
		}
		got.WriteString(out.Text)
		next = out.Next
		in, _ := s.Get(info.ID)
		if in.Status != StatusRunning && next == in.OutputBytes {
			break
		}
		testutil.Receive(t, changed, "more output or the exit")
	}
	if want := "line1\nline2\nline3\nline4\nline5\n"; got.String() != want {
		t.Fatalf("followed output %q, want %q", got.String(), want)
	}
}

func TestMaxProcesses(t *testing.T) {
	s := newTestService(t, Options{MaxProcesses: 2})
	a := mustStart(t, s, StartOptions{Command: "sleep", Args: []string{"300"}})
	mustStart(t, s, StartOptions{Command: "sleep", Args: []string{"300"}})
	_, err := s.Start(context.Background(), StartOptions{Command: "sleep", Args: []string{"300"}})
	if !errors.Is(err, ErrLimit) || !strings.Contains(err.Error(), "2 of 2") {
		t.Fatalf("third Start: %v, want ErrLimit", err)
	}
	if _, err := s.Kill(a.ID); err != nil {
		t.Fatal(err)
	}
	mustStart(t, s, StartOptions{Command: "sleep", Args: []string{"300"}})
}

// TestMaxProcessesConcurrent: racing Starts never exceed the cap.
func TestMaxProcessesConcurrent(t *testing.T) {
	s := newTestService(t, Options{MaxProcesses: 3})
	var wg sync.WaitGroup
	var mu sync.Mutex
	started, limited := 0, 0
	for range 10 {
		wg.Go(func() {
			_, err := s.Start(context.Background(), StartOptions{Command: "sleep", Args: []string{"300"}})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				started++
			case errors.Is(err, ErrLimit):
				limited++
			default:
				t.Errorf("Start: %v", err)
			}
		})
	}
	wg.Wait()
	if started != 3 || limited != 7 || len(s.List(true)) != 3 {
		t.Fatalf("started %d limited %d running %d; want 3, 7, 3", started, limited, len(s.List(true)))
	}
}

func TestExitedRecordsAreEvicted(t *testing.T) {
	s := newTestService(t, Options{MaxExited: 2})
	var ids []string
	for range 3 {
		info := mustStart(t, s, StartOptions{Command: "true"})
		mustWait(t, s, info.ID)
		ids = append(ids, info.ID)
	}
	running := mustStart(t, s, StartOptions{Command: "sleep", Args: []string{"300"}})
	list := s.List(false)
	var got []string
	for _, in := range list {
		got = append(got, in.ID)
	}
	want := []string{ids[1], ids[2], running.ID}
	if !slices.Equal(got, want) {
		t.Fatalf("List = %v, want %v (oldest exited evicted, sorted by start)", got, want)
	}
	if _, err := s.Get(ids[0]); !errors.Is(err, ErrNotFound) {
		t.Fatalf("evicted record: %v", err)
	}
	if ids[0] == ids[1] || !strings.HasPrefix(ids[0], "proc-") {
		t.Fatalf("ids %v", ids)
	}
}

func TestEvents(t *testing.T) {
	s := newTestService(t, Options{})
	var mu sync.Mutex
	var events []Event
	cancel := s.Subscribe(func(ev Event) {
		mu.Lock()
		events = append(events, ev)
		mu.Unlock()
	})
	defer cancel()
	// A second subscriber that calls back into the Service must not deadlock it.
	cancel2 := s.Subscribe(func(ev Event) {
		if ev.Kind == EventOutput {
			_, _ = s.Output(ev.Info.ID, OutputQuery{Tail: 1})
			_, _ = s.Get(ev.Info.ID)
		}
	})
	defer cancel2()

	info := mustStart(t, s, shell("echo a; echo b >&2; echo c; exit 4"))
	mustWait(t, s, info.ID)

	mu.Lock()
	defer mu.Unlock()
	if len(events) < 3 || events[0].Kind != EventStarted || events[len(events)-1].Kind != EventExited {
		t.Fatalf("events %+v: want started, output..., exited", events)
	}
	if last := events[len(events)-1].Info; last.ExitCode != 4 || last.Status != StatusExited {
		t.Fatalf("exit event info %+v", last)
	}
	var next int64
	var text string
	for _, ev := range events[1 : len(events)-1] {
		if ev.Kind != EventOutput || ev.Chunk == nil || ev.Chunk.Offset != next || ev.Info.ID != info.ID {
			t.Fatalf("output event %+v, want a chunk at offset %d", ev, next)
		}
		next += int64(len(ev.Chunk.Data))
		text += string(ev.Chunk.Data)
	}
	if text != mustOutput(t, s, info.ID, OutputQuery{}).Text {
		t.Fatalf("events carried %q, buffer holds %q", text, mustOutput(t, s, info.ID, OutputQuery{}).Text)
	}

	// After cancel, no more events reach the listener.
	cancel()
	n := len(events)
	mu.Unlock()
	mustWait(t, s, mustStart(t, s, StartOptions{Command: "true"}).ID)
	mu.Lock()
	if len(events) != n {
		t.Fatalf("listener called after cancel")
	}
}

func TestFailedStartEvent(t *testing.T) {
	s := newTestService(t, Options{})
	var got []Event
	var mu sync.Mutex
	defer s.Subscribe(func(ev Event) { mu.Lock(); got = append(got, ev); mu.Unlock() })()
	_, err := s.Start(context.Background(), StartOptions{Command: "no-such-command-xyz"})
	if err == nil {
		t.Fatal("want error")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 0 {
		t.Fatalf("events %+v, want none for a start that never happened", got)
	}
}

func TestWaitTimeout(t *testing.T) {
	s := newTestService(t, Options{})
	info := mustStart(t, s, StartOptions{Command: "sleep", Args: []string{"300"}})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	got, err := s.Wait(ctx, info.ID)
	if !errors.Is(err, context.DeadlineExceeded) || got.Status != StatusRunning {
		t.Fatalf("Wait = %+v, %v; want running and deadline exceeded", got, err)
	}
}

func TestPTY(t *testing.T) {
	s := newTestService(t, Options{})
	t.Run("sees a terminal", func(t *testing.T) {
		script := `if test -t 0 && test -t 1; then echo tty-yes; else echo tty-no; fi; stty size`
		term := mustStart(t, s, StartOptions{Command: "sh", Args: []string{"-c", script}, PTY: true, Cols: 100, Rows: 30})
		pipe := mustStart(t, s, shell(script))
		if !term.PTY || pipe.PTY {
			t.Fatalf("PTY flags: %v %v", term.PTY, pipe.PTY)
		}
		mustWait(t, s, term.ID)
		mustWait(t, s, pipe.ID)
		out := mustOutput(t, s, term.ID, OutputQuery{})
		if !strings.Contains(out.Text, "tty-yes") || !strings.Contains(out.Text, "30 100") {
			t.Fatalf("PTY output %q, want tty-yes and size 30 100", out.Text)
		}
		for _, c := range out.Chunks {
			if c.Stream != StreamPTY {
				t.Fatalf("PTY chunk on stream %q", c.Stream)
			}
		}
		if got := mustOutput(t, s, pipe.ID, OutputQuery{}).Text; !strings.Contains(got, "tty-no") {
			t.Fatalf("pipe output %q, want tty-no", got)
		}
	})
	t.Run("input and resize", func(t *testing.T) {
		info := mustStart(t, s, StartOptions{Command: "sh", Args: []string{"-c", `read line; echo "got:$line"; read x; stty size`}, PTY: true})
		if err := s.Input(info.ID, []byte("hello\n")); err != nil {
			t.Fatal(err)
		}
		waitForOutput(t, s, info.ID, "got:hello")
		if err := s.Resize(info.ID, 120, 40); err != nil {
			t.Fatal(err)
		}
		if err := s.Input(info.ID, []byte("\n")); err != nil {
			t.Fatal(err)
		}
		final := mustWait(t, s, info.ID)
		if final.ExitCode != 0 {
			t.Fatalf("exit %d", final.ExitCode)
		}
		waitForOutput(t, s, info.ID, "40 120")
	})
	t.Run("stop", func(t *testing.T) {
		info := mustStart(t, s, StartOptions{Command: "sh", Args: []string{"-c", `sleep 300 & echo $!; wait`}, PTY: true})
		child := pidsIn(t, waitForOutput(t, s, info.ID, "\n"), 1)[0]
		final, err := s.Stop(context.Background(), info.ID)
		if err != nil || final.Status != StatusStopped {
			t.Fatalf("Stop: %+v, %v", final, err)
		}
		if procgroup.Running(child) {
			t.Fatal("child of the PTY session survived Stop")
		}
	})
}

func TestShutdown(t *testing.T) {
	s := New(Options{StopGrace: 200 * time.Millisecond})
	plain := mustStart(t, s, StartOptions{Command: "sleep", Args: []string{"300"}})
	stubborn := mustStart(t, s, shell(`trap '' TERM; echo ready; while :; do sleep 0.05; done`))
	// The leader exits at once but leaves a background child holding stdout open.
	orphaning := mustStart(t, s, shell(`sleep 300 & echo $!`))
	waitForOutput(t, s, stubborn.ID, "ready")
	orphan := pidsIn(t, waitForOutput(t, s, orphaning.ID, "\n"), 1)[0]
	if got := mustWait(t, s, orphaning.ID); got.Status != StatusExited {
		t.Fatalf("orphaning leader: %+v", got)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{plain.ID, stubborn.ID} {
		in, _ := s.Get(id)
		if in.Status != StatusStopped || procgroup.Running(in.PID) {
			t.Errorf("%s after Shutdown: %+v", id, in)
		}
	}
	if procgroup.Running(orphan) {
		t.Errorf("background child %d holding the output pipe survived Shutdown", orphan)
	}
	if _, err := s.Start(context.Background(), StartOptions{Command: "true"}); !errors.Is(err, ErrClosed) {
		t.Fatalf("Start after Shutdown: %v", err)
	}
	if _, err := s.Exec(context.Background(), ExecOptions{Command: "true"}); !errors.Is(err, ErrClosed) {
		t.Fatalf("Exec after Shutdown: %v", err)
	}
}

func TestInfoJSONKeys(t *testing.T) {
	s := newTestService(t, Options{})
	info := mustStart(t, s, StartOptions{Command: "true"})
	running := jsonKeys(t, info)
	final := jsonKeys(t, mustWait(t, s, info.ID))
	for _, k := range []string{"id", "command", "args", "dir", "status", "pid", "exitCode", "startedAt", "duration", "pty", "outputBytes", "droppedBytes"} {
		if !running[k] || !final[k] {
			t.Errorf("key %q missing", k)
		}
	}
	if running["endedAt"] || !final["endedAt"] || running["error"] {
		t.Errorf("endedAt/error presence: running %v final %v", running, final)
	}
}

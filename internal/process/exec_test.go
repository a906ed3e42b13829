//go:build unix

package process

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-hub/switchboard/internal/procgroup"
	"github.com/switchboard-hub/switchboard/internal/testutil"
)

func TestExec(t *testing.T) {
	s := newTestService(t, Options{BaseEnv: []string{"PATH=" + os.Getenv("PATH"), "BASE=b"}})
	dir := t.TempDir()
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		opts       ExecOptions
		wantCode   int
		wantStdout string
		wantStderr string
	}{
		{"success", ExecOptions{Command: "echo", Args: []string{"hi", "there"}}, 0, "hi there\n", ""},
		{"non-zero exit is a result", ExecOptions{Command: "sh", Args: []string{"-c", "echo out; echo err >&2; exit 3"}}, 3, "out\n", "err\n"},
		{"signal", ExecOptions{Command: "sh", Args: []string{"-c", "kill -KILL $$"}}, 137, "", ""},
		{"stdin", ExecOptions{Command: "cat", Stdin: "line1\nline2"}, 0, "line1\nline2", ""},
		{"no stdin reads EOF", ExecOptions{Command: "cat"}, 0, "", ""},
		{"env", ExecOptions{Command: "sh", Args: []string{"-c", `echo "$BASE$EXTRA"`}, Env: []string{"EXTRA=x"}}, 0, "bx\n", ""},
		{"dir", ExecOptions{Command: "pwd", Dir: dir}, 0, real + "\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := s.Exec(context.Background(), tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if res.ExitCode != tt.wantCode || res.Stdout != tt.wantStdout || res.Stderr != tt.wantStderr || res.TimedOut || res.Truncated {
				t.Fatalf("got %+v; want code %d stdout %q stderr %q", res, tt.wantCode, tt.wantStdout, tt.wantStderr)
			}
			if res.Duration <= 0 {
				t.Fatalf("duration %v", res.Duration)
			}
		})
	}
}

func TestExecErrors(t *testing.T) {
	s := newTestService(t, Options{})
	tests := []struct {
		name string
		opts ExecOptions
		want string
	}{
		{"unknown command", ExecOptions{Command: "no-such-command-xyz"}, "command not found"},
		{"empty command", ExecOptions{}, "command is required"},
		{"missing dir", ExecOptions{Command: "true", Dir: "/nonexistent/dir"}, "working directory"},
		{"bad env", ExecOptions{Command: "true", Env: []string{"X"}}, "KEY=VALUE"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := s.Exec(context.Background(), tt.opts)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to mention %q", err, tt.want)
			}
		})
	}
}

func TestExecTimeoutKillsGroup(t *testing.T) {
	s := newTestService(t, Options{})
	res, err := s.Exec(context.Background(), ExecOptions{
		Command: "sh", Args: []string{"-c", `trap '' TERM; sleep 300 & echo $!; sleep 300`},
		Timeout: 300 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	if !res.TimedOut || res.ExitCode != 137 {
		t.Fatalf("got %+v, want timed out with 137", res)
	}
	child := pidsIn(t, res.Stdout, 1)[0]
	if procgroup.Running(child) {
		t.Fatalf("background child %d survived the timeout", child)
	}
}

func TestExecCancel(t *testing.T) {
	s := newTestService(t, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	res, err := s.Exec(ctx, ExecOptions{Command: "sh", Args: []string{"-c", `sleep 300 & echo $!; wait`}})
	if !errors.Is(err, context.Canceled) || res.TimedOut {
		t.Fatalf("got %+v, %v; want context.Canceled", res, err)
	}
	if child := pidsIn(t, res.Stdout, 1)[0]; procgroup.Running(child) {
		t.Fatalf("child %d survived cancellation", child)
	}
}

// TestExecKillsLeftovers: a background child still in the group when the command exits is
// killed, and Exec does not wait for the pipe it holds.
func TestExecKillsLeftovers(t *testing.T) {
	s := newTestService(t, Options{})
	res, err := s.Exec(context.Background(), ExecOptions{Command: "sh", Args: []string{"-c", `sleep 300 & echo $!`}})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("got %+v, %v", res, err)
	}
	if child := pidsIn(t, res.Stdout, 1)[0]; procgroup.Running(child) {
		t.Fatalf("leftover child %d still running", child)
	}
}

func TestExecTruncates(t *testing.T) {
	s := newTestService(t, Options{})
	res, err := s.Exec(context.Background(), ExecOptions{
		Command:   "sh",
		Args:      []string{"-c", `i=0; while [ $i -lt 200 ]; do echo line$i; i=$((i+1)); done; echo tail >&2`},
		MaxOutput: 100,
	})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Truncated || !strings.HasPrefix(res.Stdout, "line0\nline1\n") || !strings.HasSuffix(res.Stdout, "line199\n") ||
		!strings.Contains(res.Stdout, "bytes omitted") || res.Stderr != "tail\n" {
		t.Fatalf("got stdout %q stderr %q truncated %v", res.Stdout, res.Stderr, res.Truncated)
	}
	// Kept bytes stay within the budget; only the marker line is extra.
	if kept := len(res.Stdout) - len("\n[... 1790 bytes omitted ...]\n"); kept != 100 {
		t.Fatalf("kept %d bytes of stdout, want 100 (stdout %q)", kept, res.Stdout)
	}
}

func TestExecDuringShutdown(t *testing.T) {
	s := New(Options{})
	errc := make(chan error, 1)
	// The command says when it runs (the marker file), so the shutdown comes during the Exec.
	marker := filepath.Join(t.TempDir(), "started")
	go func() {
		_, err := s.Exec(context.Background(), ExecOptions{Command: "sh", Args: []string{"-c", "echo > " + marker + "; exec sleep 300"}})
		errc <- err
	}()
	testutil.Eventually(t, "the Exec's command to start", func() bool { _, err := os.Stat(marker); return err == nil })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; !errors.Is(err, ErrClosed) {
		t.Fatalf("Exec during Shutdown: %v, want ErrClosed", err)
	}
}

// Package git runs the system git for the git_* tools: argument vectors only (never a shell),
// every user value checked before it reaches the command line (refs against git's ref rules and
// a revision allow-list, paths only after "--" and as literal pathspecs), no pager, editor,
// credential prompt, hook or fsmonitor, and an environment without the hub's secrets. Results
// are parsed into structs. It imports nothing from MCP.
package git

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Runner runs git commands.
type Runner struct {
	Bin     string
	Timeout time.Duration
	// Ceiling: git never looks for a repository above this directory (GIT_CEILING_DIRECTORIES),
	// so a workspace inside a larger repository does not reach it.
	Ceiling string
	baseEnv []string
}

// MaxOutput caps what one git command may print before it is cut (diffs).
const MaxOutput = 512 << 10

// ErrNoGit is returned when git is not installed.
var ErrNoGit = errors.New("git is not installed (Debian: apt-get install git)")

// New finds git on PATH. ceiling is the workspace root.
func New(ceiling string) (*Runner, error) {
	bin, err := exec.LookPath("git")
	if err != nil {
		return nil, ErrNoGit
	}
	return &Runner{Bin: bin, Timeout: 30 * time.Second, Ceiling: ceiling, baseEnv: SafeEnv(os.Environ())}, nil
}

// secretName says whether an environment variable may hold a secret of the hub or its clients.
func secretName(k string) bool {
	u := strings.ToUpper(k)
	switch {
	case strings.HasPrefix(u, "SWITCHBOARD_"), strings.HasPrefix(u, "OPENAI_"), strings.HasPrefix(u, "ANTHROPIC_"),
		strings.HasSuffix(u, "_TOKEN"), strings.HasSuffix(u, "_KEY"), strings.HasSuffix(u, "_API_KEY"),
		strings.HasSuffix(u, "_SECRET"), strings.HasSuffix(u, "_PASSWORD"), strings.Contains(u, "CREDENTIAL"),
		u == "MCP_ADDR":
		return true
	}
	return false
}

// SafeEnv returns env without secrets and without any GIT_* variable (GIT_DIR, GIT_CONFIG_*
// and friends would redirect or reconfigure git), then git's settings for unattended use.
func SafeEnv(env []string) []string {
	out := make([]string, 0, len(env)+16)
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if secretName(k) || strings.HasPrefix(strings.ToUpper(k), "GIT_") ||
			k == "PAGER" || k == "EDITOR" || k == "VISUAL" || k == "SSH_ASKPASS" || k == "LESS" || k == "LC_ALL" {
			continue
		}
		out = append(out, kv)
	}
	cfg := [][2]string{
		{"core.pager", "cat"},
		{"core.fsmonitor", "false"},    // a repo's fsmonitor setting names a program to run
		{"core.hooksPath", os.DevNull}, // hooks would run code written into .git/hooks
		{"color.ui", "false"},
		{"log.showSignature", "false"},
		{"commit.gpgSign", "false"},
		{"core.quotePath", "false"},
	}
	out = append(out,
		"GIT_TERMINAL_PROMPT=0", "GIT_ASKPASS=", "SSH_ASKPASS=", "GIT_PAGER=cat", "PAGER=cat",
		"GIT_EDITOR=true", "EDITOR=true", "VISUAL=true", "GIT_SEQUENCE_EDITOR=true",
		"GIT_CONFIG_NOSYSTEM=1", "GIT_OPTIONAL_LOCKS=0", "GIT_LITERAL_PATHSPECS=1", "LC_ALL=C",
		fmt.Sprintf("GIT_CONFIG_COUNT=%d", len(cfg)))
	for i, c := range cfg {
		out = append(out, fmt.Sprintf("GIT_CONFIG_KEY_%d=%s", i, c[0]), fmt.Sprintf("GIT_CONFIG_VALUE_%d=%s", i, c[1]))
	}
	return out
}

// Error is a git command that failed; Stderr is git's message.
type Error struct {
	Args   []string
	Code   int
	Stderr string
}

func (e *Error) Error() string {
	msg := strings.TrimSpace(e.Stderr)
	if msg == "" {
		msg = fmt.Sprintf("exit status %d", e.Code)
	}
	return "git " + e.Args[0] + ": " + msg
}

// run executes git in dir with args and optional stdin. Output beyond limit bytes is cut and
// reported by truncated.
func (r *Runner) run(ctx context.Context, dir string, stdin []byte, limit int, args ...string) (out []byte, truncated bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, r.Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, r.Bin, args...)
	cmd.Dir = dir
	cmd.Env = append(r.baseEnv[:len(r.baseEnv):len(r.baseEnv)], "GIT_CEILING_DIRECTORIES="+filepath.Dir(r.Ceiling))
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	stdout := &capWriter{limit: limit}
	var stderr capWriter
	stderr.limit = 64 << 10
	cmd.Stdout, cmd.Stderr = stdout, &stderr
	cmd.WaitDelay = 2 * time.Second
	err = cmd.Run()
	if err != nil {
		if ctx.Err() != nil {
			return nil, false, fmt.Errorf("git %s: %w", args[0], ctx.Err())
		}
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return stdout.buf.Bytes(), stdout.cut, &Error{Args: args, Code: ee.ExitCode(), Stderr: stderr.buf.String()}
		}
		return nil, false, fmt.Errorf("git %s: %w", args[0], err)
	}
	return stdout.buf.Bytes(), stdout.cut, nil
}

// capWriter keeps the first limit bytes and drops the rest (so git never blocks on a pipe).
type capWriter struct {
	buf   bytes.Buffer
	limit int
	cut   bool
}

func (w *capWriter) Write(p []byte) (int, error) {
	if room := w.limit - w.buf.Len(); room < len(p) {
		w.cut = true
		if room > 0 {
			w.buf.Write(p[:room])
		}
		return len(p), nil
	}
	return w.buf.Write(p)
}

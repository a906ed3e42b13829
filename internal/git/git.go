// Package git runs the system git for the git_* tools: argument vectors only (never a shell),
// every user value checked before it reaches the command line (refs against git's ref rules and
// a revision allow-list, paths only after "--" and as literal pathspecs), and an environment
// without the hub's secrets. The repository is treated as hostile, since an agent can write
// any file in it: git runs with a git dir, work tree and object directory the hub located and
// verified inside the workspace (repo.go), and with a configuration the hub builds from an
// allow-list instead of the repository's own (config.go), so no config, include, attributes
// file or hook in the repository can make git run a program or leave the workspace. Results
// are parsed into structs. It imports nothing from MCP.
package git

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"
)

// Runner runs git commands.
type Runner struct {
	Bin     string
	Timeout time.Duration
	// Ceiling is the workspace root: the repository is looked for no higher, and its git dir,
	// work tree and everything they point at must resolve inside it.
	Ceiling string
	// TempDir holds each call's scratch directory (the hub's config file for git); "" means
	// os.TempDir(). It must lie outside the workspace.
	TempDir string
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
// and friends would redirect or reconfigure git), then git's settings for unattended use: no
// system or global config file, no system attributes file, no prompt, pager or editor.
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
	return append(out,
		"GIT_TERMINAL_PROMPT=0", "GIT_ASKPASS=", "SSH_ASKPASS=", "GIT_PAGER=cat", "PAGER=cat",
		"GIT_EDITOR=true", "EDITOR=true", "VISUAL=true", "GIT_SEQUENCE_EDITOR=true",
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull, "GIT_ATTR_NOSYSTEM=1",
		"GIT_OPTIONAL_LOCKS=0", "GIT_LITERAL_PATHSPECS=1", "LC_ALL=C")
}

// Error is a git command that failed; Stderr is git's message.
type Error struct {
	Args   []string
	Code   int
	Stderr string
}

// Error is git's subcommand and its message, or the exit status when git printed nothing.
func (e *Error) Error() string {
	msg := strings.TrimSpace(e.Stderr)
	if msg == "" {
		msg = fmt.Sprintf("exit status %d", e.Code)
	}
	return "git " + e.Args[0] + ": " + msg
}

// exec runs git in dir with env, args and optional stdin. Output beyond limit bytes is cut
// and reported by truncated. Callers build env: Repo.git for repository commands,
// listConfig for reading config files.
func (r *Runner) exec(ctx context.Context, dir string, env []string, stdin []byte, limit int, args ...string) (out []byte, truncated bool, err error) {
	stdout := &capWriter{limit: limit}
	err = r.execTo(ctx, dir, env, stdin, stdout, args...)
	var ge *Error
	if err != nil && !errors.As(err, &ge) {
		return nil, false, err
	}
	return stdout.buf.Bytes(), stdout.cut, err
}

// execTo is exec with stdout streamed to w.
func (r *Runner) execTo(ctx context.Context, dir string, env []string, stdin []byte, w io.Writer, args ...string) error {
	ctx, cancel := context.WithTimeout(ctx, r.Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, r.Bin, args...)
	cmd.Dir = dir
	cmd.Env = env
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stderr capWriter
	stderr.limit = 64 << 10
	cmd.Stdout, cmd.Stderr = w, &stderr
	cmd.WaitDelay = 2 * time.Second
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("git %s: %w", args[0], ctx.Err())
		}
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return &Error{Args: args, Code: ee.ExitCode(), Stderr: stderr.buf.String()}
		}
		return fmt.Errorf("git %s: %w", args[0], err)
	}
	return nil
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

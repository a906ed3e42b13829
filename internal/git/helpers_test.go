package git

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// run is plain git for setting up test repositories (init, config, commits): the scrubbed
// environment, but none of Open's confinement, so tests can also write hostile settings.
func (r *Runner) run(ctx context.Context, dir string, stdin []byte, limit int, args ...string) ([]byte, bool, error) {
	env := append(SafeEnv(os.Environ()), "GIT_CEILING_DIRECTORIES="+filepath.Dir(dir))
	return r.exec(ctx, dir, env, stdin, limit, args...)
}

// needGit fails under CI=true and skips elsewhere when git is missing, and gives the test a
// HOME of its own (no ~/.gitconfig of the machine's user).
func needGit(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("git not installed (build/setup-deps.sh installs it)")
		}
		t.Skip("git not installed")
	}
	t.Setenv("HOME", t.TempDir())
}

package git

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// newRepo makes a real repository with two commits in a temp dir and a Runner confined to it.
func newRepo(t *testing.T) (*Runner, string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("git not installed (build/setup-deps.sh installs it)")
		}
		t.Skip("git not installed")
	}
	dir := t.TempDir()
	t.Setenv("HOME", dir)
	t.Setenv("GIT_AUTHOR_NAME", "x") // stripped by SafeEnv: identity comes from the repo config
	r, err := New(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	mustRun := func(args ...string) {
		t.Helper()
		if _, _, err := r.run(ctx, dir, nil, 1<<20, args...); err != nil {
			t.Fatalf("git %v: %v", args, err)
		}
	}
	mustRun("init", "-q", "-b", "main")
	mustRun("config", "user.name", "Ada Lovelace")
	mustRun("config", "user.email", "ada@example.com")
	write(t, dir, "a.txt", "one\n")
	mustRun("add", "a.txt")
	mustRun("commit", "-qm", "first commit")
	write(t, dir, "a.txt", "one\ntwo\n")
	write(t, dir, "b.txt", "bee\n")
	mustRun("add", "-A")
	mustRun("commit", "-qm", "second commit\n\nwith a body")
	return r, dir
}

func write(t *testing.T, dir, name, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestOperations(t *testing.T) {
	r, dir := newRepo(t)
	ctx := context.Background()

	log, err := r.Log(ctx, dir, LogOptions{})
	if err != nil || len(log) != 2 || log[0].Subject != "second commit" || log[0].Author != "Ada Lovelace" || log[1].Subject != "first commit" {
		t.Fatalf("log = %+v, %v", log, err)
	}
	if l, _ := r.Log(ctx, dir, LogOptions{Paths: []string{"b.txt"}}); len(l) != 1 {
		t.Errorf("log for b.txt: %+v", l)
	}
	if l, _ := r.Log(ctx, dir, LogOptions{Ref: "HEAD~1"}); len(l) != 1 || l[0].Subject != "first commit" {
		t.Errorf("log HEAD~1: %+v", l)
	}

	show, err := r.Show(ctx, dir, "HEAD")
	if err != nil || show.Commit.Body != "with a body" || !strings.Contains(show.Diff, "+two") || len(show.Files) != 2 {
		t.Fatalf("show = %+v, %v", show, err)
	}

	write(t, dir, "a.txt", "one\ntwo\nthree\n")
	write(t, dir, "new/c.txt", "sea\n")
	if err := os.Remove(filepath.Join(dir, "b.txt")); err != nil {
		t.Fatal(err)
	}
	st, err := r.Status(ctx, dir)
	if err != nil || st.Branch != "main" || st.Clean || len(st.Files) != 3 {
		t.Fatalf("status = %+v, %v", st, err)
	}
	got := map[string]string{}
	for _, f := range st.Files {
		got[f.Path] = f.Status
	}
	if got["a.txt"] != "modified" || got["b.txt"] != "deleted" || got["new/c.txt"] != "untracked" {
		t.Errorf("statuses = %v", got)
	}

	d, err := r.Diff(ctx, dir, DiffOptions{})
	if err != nil || !strings.Contains(d.Diff, "+three") || len(d.Files) != 2 {
		t.Fatalf("diff = %+v, %v", d, err)
	}
	if err := r.Add(ctx, dir, []string{"a.txt", "new/c.txt"}); err != nil {
		t.Fatal(err)
	}
	d, _ = r.Diff(ctx, dir, DiffOptions{Staged: true})
	if len(d.Files) != 2 || d.Files[0].Path != "a.txt" || d.Files[0].Added != 1 {
		t.Errorf("staged diff files = %+v", d.Files)
	}
	d, _ = r.Diff(ctx, dir, DiffOptions{Ref: "HEAD~1..HEAD"})
	if !strings.Contains(d.Diff, "+bee") {
		t.Errorf("range diff = %q", d.Diff)
	}

	c, err := r.Commit(ctx, dir, "-- third: message with --option-like text\n\n--exec=evil")
	if err != nil || c.Subject != "-- third: message with --option-like text" || c.Branch != "main" || c.Files != 2 {
		t.Fatalf("commit = %+v, %v", c, err)
	}
	if _, err := r.Commit(ctx, dir, "again"); err == nil || !strings.Contains(err.Error(), "nothing") {
		t.Errorf("empty commit err = %v", err)
	}

	if err := r.CreateBranch(ctx, dir, "feature/x"); err != nil {
		t.Fatal(err)
	}
	if err := r.Checkout(ctx, dir, "feature/x"); err != nil {
		t.Fatal(err)
	}
	bs, err := r.Branches(ctx, dir)
	if err != nil || len(bs) != 2 || !bs[0].Current || bs[0].Name != "feature/x" {
		t.Fatalf("branches = %+v, %v", bs, err)
	}
}

// Hostile values in every field: options, config injection, rev syntax that runs or reads
// things, paths leaving the workspace. None may reach git as an option or succeed.
func TestInjectionRefused(t *testing.T) {
	r, dir := newRepo(t)
	ctx := context.Background()
	marker := filepath.Join(t.TempDir(), "pwned")
	hostileRefs := []string{
		"--output=" + marker, "-c", "-ccore.pager=touch " + marker, "--exec=touch " + marker,
		"--upload-pack=touch " + marker, "-p", "--all", "HEAD --output=x", "HEAD\n--output=x",
		"HEAD:a.txt", ":/first", "HEAD^{/first}", "@{yesterday}", "main@{1.day.ago}",
		"a b", "refs/heads/.hidden", "x.lock", "$(touch " + marker + ")", "`id`", "HEAD;id", "..",
	}
	for _, ref := range hostileRefs {
		if _, err := r.Log(ctx, dir, LogOptions{Ref: ref}); err == nil {
			t.Errorf("git_log ref %q accepted", ref)
		} else if !strings.HasPrefix(err.Error(), "ref: ") {
			t.Errorf("git_log ref %q: error does not name the field: %v", ref, err)
		}
		if _, err := r.Diff(ctx, dir, DiffOptions{Ref: ref}); err == nil {
			t.Errorf("git_diff ref %q accepted", ref)
		}
		if _, err := r.Show(ctx, dir, ref); err == nil {
			t.Errorf("git_show ref %q accepted", ref)
		}
		if err := r.CreateBranch(ctx, dir, ref); err == nil {
			t.Errorf("git_branch create %q accepted", ref)
		}
		if err := r.Checkout(ctx, dir, ref); err == nil {
			t.Errorf("git_branch checkout %q accepted", ref)
		}
	}
	// Unknown but well-formed refs are a clear error.
	if _, err := r.Show(ctx, dir, "no-such-branch"); err == nil || !strings.Contains(err.Error(), `ref: unknown revision "no-such-branch"`) {
		t.Errorf("unknown ref err = %v", err)
	}
	// Paths that look like options are file names (after "--", literal pathspecs).
	write(t, dir, "--output=x", "odd name\n")
	if err := r.Add(ctx, dir, []string{"--output=x"}); err != nil {
		t.Errorf("add a file named like an option: %v", err)
	}
	// Pathspec magic is literal: ":(top)" and globs do not expand.
	if err := r.Add(ctx, dir, []string{":(top)"}); err == nil {
		t.Error("pathspec magic was interpreted")
	}
	if err := CheckPaths("paths", []string{"../../etc/passwd"}, dir, dir); err == nil {
		t.Error("path outside the workspace accepted")
	}
	if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("an injected command ran")
	}
}

// Hooks and fsmonitor written into the repository do not run; the environment has no secrets.
func TestNoCodeExecutionOrSecrets(t *testing.T) {
	r, dir := newRepo(t)
	ctx := context.Background()
	marker := filepath.Join(t.TempDir(), "ran")
	write(t, dir, ".git/hooks/pre-commit", "#!/bin/sh\ntouch "+marker+"\n")
	os.Chmod(filepath.Join(dir, ".git/hooks/pre-commit"), 0o755)
	if _, _, err := r.run(ctx, dir, nil, 1<<20, "config", "core.fsmonitor", "touch "+marker+"; false"); err != nil {
		t.Fatal(err)
	}
	write(t, dir, "c.txt", "x\n")
	if _, err := r.Status(ctx, dir); err != nil {
		t.Fatal(err)
	}
	if err := r.Add(ctx, dir, []string{"c.txt"}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Commit(ctx, dir, "c"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("a hook or fsmonitor command ran")
	}

	env := SafeEnv([]string{"PATH=/bin", "SWITCHBOARD_TOKEN=s", "OPENAI_API_KEY=s", "GITHUB_TOKEN=s", "AWS_SECRET_ACCESS_KEY=s", "MY_KEY=s",
		"GIT_DIR=/tmp/evil", "GIT_CONFIG_PARAMETERS='core.pager=evil'", "HOME=/home/x", "PAGER=less"})
	joined := strings.Join(env, "\n")
	for _, bad := range []string{"SWITCHBOARD_TOKEN", "OPENAI_API_KEY", "GITHUB_TOKEN", "AWS_SECRET", "MY_KEY", "GIT_DIR", "GIT_CONFIG_PARAMETERS", "PAGER=less"} {
		if strings.Contains(joined, bad) {
			t.Errorf("environment keeps %s", bad)
		}
	}
	for _, good := range []string{"PATH=/bin", "HOME=/home/x", "GIT_TERMINAL_PROMPT=0", "GIT_PAGER=cat", "GIT_EDITOR=true", "GIT_CONFIG_NOSYSTEM=1"} {
		if !strings.Contains(joined, good) {
			t.Errorf("environment lacks %s", good)
		}
	}
}

// A workspace inside a larger repository does not reach the outer repository.
func TestCeiling(t *testing.T) {
	_, outer := newRepo(t)
	inner := filepath.Join(outer, "sub", "ws")
	if err := os.MkdirAll(inner, 0o755); err != nil {
		t.Fatal(err)
	}
	r, err := New(inner)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Status(context.Background(), inner); err == nil || !strings.HasPrefix(err.Error(), "path: not inside a git repository") {
		t.Fatalf("status above the workspace: %v", err)
	}
}

func TestCheckRevision(t *testing.T) {
	for _, ok := range []string{"HEAD", "HEAD~2", "HEAD^", "HEAD^2", "main", "feature/x", "v1.2.3", "origin/main", "@{upstream}", "main@{1}",
		"0123abcd", "HEAD~1..HEAD", "main...feature/x", "main..", "HEAD^{commit}"} {
		if err := CheckRevision("ref", ok, true); err != nil {
			t.Errorf("%q refused: %v", ok, err)
		}
	}
}

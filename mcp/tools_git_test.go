package mcp

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func gitInit(t *testing.T, dir string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("git not installed (build/setup-deps.sh installs it)")
		}
		t.Skip("git not installed")
	}
	t.Setenv("HOME", t.TempDir())
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"config", "user.name", "Test Bot"}, {"config", "user.email", "bot@example.com"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
}

func TestGitTools(t *testing.T) {
	s := newTestService(t, WithGit())
	ws := s.Workspace().Dir()
	repo := filepath.Join(ws, "proj")
	if err := os.MkdirAll(repo, 0o755); err != nil {
		t.Fatal(err)
	}
	gitInit(t, repo)
	writeTree(t, repo, map[string]string{"main.go": "package main\n", "README.md": "# proj\n"})
	cs := connect(t, s)

	var st GitStatusOutput
	mustCall(t, cs, "git_status", map[string]any{"path": "proj"}, &st)
	if st.Branch != "main" || st.Commit != "" || len(st.Files) != 2 || st.Files[0].Status != "untracked" {
		t.Fatalf("status = %+v", st)
	}
	var add GitAddOutput
	mustCall(t, cs, "git_add", map[string]any{"path": "proj", "paths": []string{"."}}, &add)
	if len(add.Staged) != 2 || add.Staged[0].Index != "A" {
		t.Fatalf("add = %+v", add)
	}
	var c GitCommitOutput
	mustCall(t, cs, "git_commit", map[string]any{"path": "proj", "message": "initial import\n\nTwo files."}, &c)
	if len(c.Hash) != 40 || c.Subject != "initial import" || c.Branch != "main" || c.Files != 2 {
		t.Fatalf("commit = %+v", c)
	}
	writeTree(t, repo, map[string]string{"main.go": "package main\n\nfunc main() {}\n"})
	var d GitDiffOutput
	mustCall(t, cs, "git_diff", map[string]any{"path": "proj"}, &d)
	if !strings.Contains(d.Diff, "+func main() {}") || len(d.Files) != 1 || d.Files[0].Added != 2 {
		t.Fatalf("diff = %+v", d)
	}
	mustCall(t, cs, "git_add", map[string]any{"path": "proj", "paths": []string{"main.go"}}, nil)
	mustCall(t, cs, "git_diff", map[string]any{"path": "proj", "staged": true, "paths": []string{"main.go"}}, &d)
	if len(d.Files) != 1 || d.Files[0].Path != "main.go" {
		t.Fatalf("staged diff = %+v", d)
	}
	mustCall(t, cs, "git_commit", map[string]any{"path": "proj", "message": "add main"}, &c)

	var log GitLogOutput
	mustCall(t, cs, "git_log", map[string]any{"path": "proj", "max_count": 5}, &log)
	if len(log.Commits) != 2 || log.Commits[0].Subject != "add main" || log.Commits[0].Author != "Test Bot" || log.Commits[1].Subject != "initial import" {
		t.Fatalf("log = %+v", log)
	}
	var show GitShowOutput
	mustCall(t, cs, "git_show", map[string]any{"path": "proj", "ref": "HEAD~1"}, &show)
	if show.Commit.Body != "Two files." || len(show.Files) != 2 {
		t.Fatalf("show = %+v", show)
	}
	var br GitBranchOutput
	mustCall(t, cs, "git_branch", map[string]any{"path": "proj", "create": "feature/login", "checkout": "feature/login"}, &br)
	if br.Current != "feature/login" || len(br.Branches) != 2 || br.Created != "feature/login" {
		t.Fatalf("branch = %+v", br)
	}
	mustCall(t, cs, "git_diff", map[string]any{"path": "proj", "ref": "main...feature/login"}, &d)

	outside := t.TempDir()
	for _, tc := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"git_status", map[string]any{"path": ".."}, "path:"},
		{"git_status", map[string]any{"path": "."}, "path: not inside a git repository"},
		{"git_show", map[string]any{"path": "proj", "ref": "nope"}, `ref: unknown revision "nope"`},
		{"git_show", map[string]any{"path": "proj", "ref": "--output=" + filepath.Join(outside, "x")}, "ref: "},
		{"git_log", map[string]any{"path": "proj", "ref": "-c core.pager=sh"}, "ref: "},
		{"git_log", map[string]any{"path": "proj", "ref": "--exec=sh"}, "ref: "},
		{"git_diff", map[string]any{"path": "proj", "ref": "--upload-pack=sh"}, "ref: "},
		{"git_diff", map[string]any{"path": "proj", "paths": []string{"../../../etc/passwd"}}, "paths: "},
		{"git_log", map[string]any{"path": "proj", "max_count": 100000}, "max_count: "},
		{"git_branch", map[string]any{"path": "proj", "create": "-D"}, "create: "},
		{"git_branch", map[string]any{"path": "proj", "create": "main"}, "create: branch \"main\" already exists"},
		{"git_branch", map[string]any{"path": "proj", "checkout": "--orphan=x"}, "checkout: "},
		{"git_add", map[string]any{"path": "proj", "paths": []string{filepath.Join(outside, "f")}}, "paths: "},
		{"git_add", map[string]any{"path": "proj", "paths": []string{}}, "paths: empty"},
		{"git_commit", map[string]any{"path": "proj", "message": " "}, "message: empty"},
		{"git_commit", map[string]any{"path": "proj", "message": "nothing staged"}, "git commit: "},
	} {
		if e := call(t, cs, tc.tool, tc.args, nil); !strings.HasPrefix(e, tc.want) {
			t.Errorf("%s %v: error %q, want prefix %q", tc.tool, tc.args, e, tc.want)
		}
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Errorf("something was written outside: %v", ents)
	}
}

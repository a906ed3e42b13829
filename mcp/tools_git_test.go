package mcp

import (
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-hub/switchboard/mcp/tools"
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

// gitProject is a hub with the git tools over a workspace holding the repository proj with files.
func gitProject(t *testing.T, files map[string]string) (repo string, cs *sdk.ClientSession) {
	t.Helper()
	s := newTestService(t, WithGit())
	repo = filepath.Join(s.Workspace().Dir(), "proj")
	if err := os.MkdirAll(repo, 0o755); err != nil {
		t.Fatal(err)
	}
	gitInit(t, repo)
	writeTree(t, repo, files)
	return repo, connect(t, s)
}

func TestGitTools(t *testing.T) {
	repo, cs := gitProject(t, map[string]string{"main.go": "package main\n", "README.md": "# proj\n"})

	var st tools.GitStatusOutput
	mustCall(t, cs, "git_status", map[string]any{"path": "proj"}, &st)
	if st.Branch != "main" || st.Commit != "" || len(st.Files) != 2 || st.Files[0].Status != "untracked" {
		t.Fatalf("status = %+v", st)
	}
	var add tools.GitAddOutput
	mustCall(t, cs, "git_add", map[string]any{"path": "proj", "paths": []string{"."}}, &add)
	if len(add.Staged) != 2 || add.Staged[0].Index != "A" {
		t.Fatalf("add = %+v", add)
	}
	var c tools.GitCommitOutput
	mustCall(t, cs, "git_commit", map[string]any{"path": "proj", "message": "initial import\n\nTwo files."}, &c)
	if len(c.Hash) != 40 || c.Subject != "initial import" || c.Branch != "main" || c.Files != 2 {
		t.Fatalf("commit = %+v", c)
	}
	writeTree(t, repo, map[string]string{"main.go": "package main\n\nfunc main() {}\n"})
	var d tools.GitDiffOutput
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

	var log tools.GitLogOutput
	mustCall(t, cs, "git_log", map[string]any{"path": "proj", "max_count": 5}, &log)
	if len(log.Commits) != 2 || log.Commits[0].Subject != "add main" || log.Commits[0].Author != "Test Bot" || log.Commits[1].Subject != "initial import" {
		t.Fatalf("log = %+v", log)
	}
	var show tools.GitShowOutput
	mustCall(t, cs, "git_show", map[string]any{"path": "proj", "ref": "HEAD~1"}, &show)
	if show.Commit.Body != "Two files." || len(show.Files) != 2 {
		t.Fatalf("show = %+v", show)
	}
	var br tools.GitBranchOutput
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

// gitQuote quotes a value for a git config file (";" and "#" would start a comment).
func gitQuote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

// An agent writes a hostile .git/config, attributes and include file with file_write, then
// drives every git_* tool over MCP: each call works and no program from the repository runs.
func TestGitHostileRepositoryThroughTools(t *testing.T) {
	_, cs := gitProject(t, map[string]string{"a.txt": "one\n", "b.md": "bee\n"})
	mustCall(t, cs, "git_add", map[string]any{"path": "proj", "paths": []string{"."}}, nil)
	mustCall(t, cs, "git_commit", map[string]any{"path": "proj", "message": "initial"}, nil)
	mustCall(t, cs, "git_branch", map[string]any{"path": "proj", "create": "other"}, nil)

	bin, markers := t.TempDir(), t.TempDir()
	evil := filepath.Join(bin, "evil")
	if err := os.WriteFile(evil, []byte("#!/bin/sh\ntouch \""+markers+"/$1\"\nexec cat\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	hooks := filepath.Join(bin, "hooks")
	for _, h := range []string{"pre-commit", "post-commit", "post-checkout", "reference-transaction"} {
		writeTree(t, hooks, map[string]string{h: "#!/bin/sh\ntouch \"" + markers + "/hook-" + h + "\"\n"})
		os.Chmod(filepath.Join(hooks, h), 0o755)
	}
	run := func(family string) string { return gitQuote(evil + " " + family) }
	write := func(path, content string) {
		t.Helper()
		mustCall(t, cs, "file_write", map[string]any{"path": path, "content": content}, nil)
	}
	write("proj/.git/config", `[core]
	repositoryformatversion = 0
	filemode = true
	bare = false
	fsmonitor = `+run("fsmonitor")+`
	pager = `+run("pager")+`
	hooksPath = `+gitQuote(hooks)+`
	sshCommand = `+run("ssh")+`
[user]
	name = Test Bot
	email = bot@example.com
[include]
	path = evil.cfg
[filter "evil"]
	clean = `+run("filter-clean")+`
	smudge = `+run("filter-smudge")+`
	required = true
[diff]
	external = `+run("ext-diff")+`
[diff "evil"]
	textconv = `+run("textconv")+`
[gpg]
	program = `+run("gpg")+`
[commit]
	gpgSign = true
[log]
	showSignature = true
[credential]
	helper = `+run("credential")+`
[alias]
	status = `+gitQuote("!"+evil+" alias")+`
`)
	write("proj/.git/evil.cfg", "[filter \"evilinclude\"]\n\tclean = "+run("filter-include")+"\n\tsmudge = "+run("smudge-include")+"\n")
	write("proj/.gitattributes", "*.txt filter=evil diff=evil\n*.inc filter=evilinclude\n")
	write("proj/.git/info/attributes", "*.md filter=evil diff=evil\n")
	write("proj/a.txt", "one\ntwo\n")
	write("proj/b.md", "bee\nhive\n")
	write("proj/c.inc", "included\n")

	var st tools.GitStatusOutput
	mustCall(t, cs, "git_status", map[string]any{"path": "proj"}, &st)
	if len(st.Files) != 4 {
		t.Fatalf("status = %+v", st)
	}
	var d tools.GitDiffOutput
	mustCall(t, cs, "git_diff", map[string]any{"path": "proj"}, &d)
	if !strings.Contains(d.Diff, "+two") || !strings.Contains(d.Diff, "+hive") {
		t.Fatalf("diff = %+v", d)
	}
	mustCall(t, cs, "git_add", map[string]any{"path": "proj", "paths": []string{"."}}, nil)
	mustCall(t, cs, "git_diff", map[string]any{"path": "proj", "staged": true}, &d)
	var c tools.GitCommitOutput
	mustCall(t, cs, "git_commit", map[string]any{"path": "proj", "message": "hostile config, inert"}, &c)
	if c.Files != 4 {
		t.Fatalf("commit = %+v", c)
	}
	var log tools.GitLogOutput
	mustCall(t, cs, "git_log", map[string]any{"path": "proj"}, &log)
	mustCall(t, cs, "git_show", map[string]any{"path": "proj", "ref": "HEAD"}, nil)
	mustCall(t, cs, "git_branch", map[string]any{"path": "proj", "checkout": "other"}, nil)
	mustCall(t, cs, "git_branch", map[string]any{"path": "proj", "checkout": "main"}, nil)
	if ents, _ := os.ReadDir(markers); len(ents) != 0 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Fatalf("programs named by the repository ran: %v", names)
	}
}

// Repositories that point git outside the workspace are refused with the culprit and the fix;
// nothing outside is read or written.
func TestGitEscapesRefusedThroughTools(t *testing.T) {
	s := newTestService(t, WithGit())
	ws := s.Workspace().Dir()
	cs := connect(t, s)

	// Another repository outside the workspace, and a directory next to it.
	other := filepath.Join(t.TempDir(), "other")
	if err := os.MkdirAll(other, 0o755); err != nil {
		t.Fatal(err)
	}
	gitInit(t, other)
	writeTree(t, other, map[string]string{"private.txt": "private history\n"})
	for _, args := range [][]string{{"add", "."}, {"commit", "-qm", "private commit"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = other
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	headBefore, _ := os.ReadFile(filepath.Join(other, ".git", "refs", "heads", "main"))
	outsideDir := t.TempDir()

	// A .git file naming the outside repository.
	mustCall(t, cs, "file_write", map[string]any{"path": "evil/.git", "content": "gitdir: " + filepath.Join(other, ".git") + "\n"}, nil)
	mustCall(t, cs, "file_write", map[string]any{"path": "evil/x.txt", "content": "x\n"}, nil)
	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{"git_log", map[string]any{"path": "evil"}},
		{"git_show", map[string]any{"path": "evil", "ref": "HEAD"}},
		{"git_status", map[string]any{"path": "evil"}},
		{"git_add", map[string]any{"path": "evil", "paths": []string{"x.txt"}}},
		{"git_commit", map[string]any{"path": "evil", "message": "write into the other repository"}},
		{"git_branch", map[string]any{"path": "evil", "create": "planted"}},
	} {
		e := call(t, cs, tc.tool, tc.args, nil)
		if !strings.HasPrefix(e, "path: evil/.git points git at") || !strings.Contains(e, "outside the workspace") || strings.Contains(e, "private commit") {
			t.Errorf("%s through a .git file: %q", tc.tool, e)
		}
	}
	if after, _ := os.ReadFile(filepath.Join(other, ".git", "refs", "heads", "main")); string(after) != string(headBefore) {
		t.Error("the outside repository's branch moved")
	}
	if _, err := os.Stat(filepath.Join(other, ".git", "refs", "heads", "planted")); err == nil {
		t.Error("a branch was created in the outside repository")
	}

	// core.worktree naming a directory outside.
	repo := filepath.Join(ws, "proj")
	if err := os.MkdirAll(repo, 0o755); err != nil {
		t.Fatal(err)
	}
	gitInit(t, repo)
	cfg, err := os.ReadFile(filepath.Join(repo, ".git", "config"))
	if err != nil {
		t.Fatal(err)
	}
	mustCall(t, cs, "file_write", map[string]any{"path": "proj/.git/config", "content": string(cfg) + "[core]\n\tworktree = " + outsideDir + "\n"}, nil)
	for _, tool := range []string{"git_status", "git_diff"} {
		if e := call(t, cs, tool, map[string]any{"path": "proj"}, nil); !strings.HasPrefix(e, "path: core.worktree in proj/.git/config") || !strings.Contains(e, "git config --unset core.worktree") {
			t.Errorf("%s with core.worktree outside: %q", tool, e)
		}
	}
	if e := call(t, cs, "git_add", map[string]any{"path": "proj", "paths": []string{"."}}, nil); !strings.Contains(e, "core.worktree") {
		t.Errorf("git_add with core.worktree outside: %q", e)
	}
	if ents, _ := os.ReadDir(outsideDir); len(ents) != 0 {
		t.Errorf("written outside: %v", ents)
	}
}

package git

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// plain runs git without the hub's confinement, to build test fixtures.
func plain(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(SafeEnv(os.Environ()), "GIT_CEILING_DIRECTORIES="+filepath.Dir(dir), "GIT_CONFIG_COUNT=1",
		"GIT_CONFIG_KEY_0=protocol.file.allow", "GIT_CONFIG_VALUE_0=always")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v in %s: %v\n%s", args, dir, err, out)
	}
	return strings.TrimSpace(string(out))
}

// initRepo makes a repository with one commit in dir (created if needed).
func initRepo(t *testing.T, dir string, extra ...string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	plain(t, dir, append([]string{"init", "-q", "-b", "main"}, extra...)...)
	plain(t, dir, "config", "user.name", "Test")
	plain(t, dir, "config", "user.email", "test@example.com")
	write(t, dir, "f.txt", "in "+filepath.Base(dir)+"\n")
	plain(t, dir, "add", "f.txt")
	plain(t, dir, "commit", "-qm", "first in "+filepath.Base(dir))
}

// workspace returns a fresh workspace directory (symlinks resolved) and a Runner confined to it.
func workspace(t *testing.T) (*Runner, string) {
	t.Helper()
	needGit(t)
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	r, err := New(ws)
	if err != nil {
		t.Fatal(err)
	}
	return r, ws
}

// snapshot lists every file under dir with its content, to prove nothing outside changed.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := os.ReadFile(p)
			out[p] = string(b)
		}
		return nil
	})
	return out
}

func wantPathErr(t *testing.T, what string, err error, parts ...string) {
	t.Helper()
	var fe *FieldError
	if !errors.As(err, &fe) || fe.Field != "path" {
		t.Errorf("%s: error %v, want a path field error", what, err)
		return
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("%s: error %q does not mention %q", what, err, p)
		}
	}
}

// core.worktree pointing outside: every operation is refused and nothing outside changes.
func TestWorkTreeOutsideRefused(t *testing.T) {
	r, ws := workspace(t)
	outside := t.TempDir()
	write(t, outside, "secret.txt", "secret\n")
	initRepo(t, filepath.Join(ws, "proj"))
	proj := filepath.Join(ws, "proj")
	plain(t, proj, "branch", "other")
	before := snapshot(t, outside)
	for _, wt := range []string{outside, "../../../" + filepath.Base(outside), filepath.Join(ws, "elsewhere")} {
		os.MkdirAll(filepath.Join(ws, "elsewhere"), 0o755)
		plain(t, proj, "config", "--file", ".git/config", "core.worktree", wt)
		ctx := context.Background()
		_, err := r.Status(ctx, proj)
		wantPathErr(t, "status with core.worktree="+wt, err, "core.worktree", "git config --unset core.worktree")
		wantPathErr(t, "add", r.Add(ctx, proj, []string{"."}), "core.worktree")
		_, err = r.Diff(ctx, proj, DiffOptions{})
		wantPathErr(t, "diff", err, "core.worktree")
		wantPathErr(t, "checkout", r.Checkout(ctx, proj, "other"), "core.worktree")
	}
	if after := snapshot(t, outside); len(after) != len(before) || after[filepath.Join(outside, "secret.txt")] != "secret\n" {
		t.Errorf("outside changed: %v", after)
	}
	// The work tree itself is allowed, absolute or relative.
	for _, wt := range []string{proj, ".."} {
		plain(t, proj, "config", "--file", ".git/config", "core.worktree", wt)
		if _, err := r.Status(context.Background(), proj); err != nil {
			t.Errorf("core.worktree=%s: %v", wt, err)
		}
	}
}

// A .git file or symlink naming another repository outside the workspace is refused: git_log
// cannot read its history and git_commit cannot write into it.
func TestGitDirOutsideRefused(t *testing.T) {
	r, ws := workspace(t)
	ctx := context.Background()
	outsideBase := t.TempDir()
	other := filepath.Join(outsideBase, "other")
	initRepo(t, other)
	head := plain(t, other, "rev-parse", "HEAD")

	proj := filepath.Join(ws, "proj")
	write(t, proj, ".git", "gitdir: "+filepath.Join(other, ".git")+"\n")
	write(t, proj, "f.txt", "staged?\n")
	_, err := r.Log(ctx, proj, LogOptions{})
	wantPathErr(t, "log through a .git file", err, "proj/.git points git at", "outside the workspace", "delete the .git file")
	_, err = r.Show(ctx, proj, "HEAD")
	wantPathErr(t, "show", err, "outside the workspace")
	wantPathErr(t, "add", r.Add(ctx, proj, []string{"f.txt"}), "outside the workspace")
	_, err = r.Commit(ctx, proj, "into the other repository")
	wantPathErr(t, "commit", err, "outside the workspace")

	// A symlink named .git.
	os.Remove(filepath.Join(proj, ".git"))
	if err := os.Symlink(filepath.Join(other, ".git"), filepath.Join(proj, ".git")); err != nil {
		t.Fatal(err)
	}
	_, err = r.Log(ctx, proj, LogOptions{})
	wantPathErr(t, "log through a .git symlink", err, "proj/.git is a symlink that leads outside the workspace")

	// A relative gitdir that leaves through a symlink and comes back with "..": textually it
	// names ws/inner/.git (a real repository), physically outsideBase/other/.git.
	os.Remove(filepath.Join(proj, ".git"))
	initRepo(t, filepath.Join(ws, "inner"))
	if err := os.Symlink(filepath.Join(outsideBase, "sub"), filepath.Join(proj, "lnk")); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(outsideBase, "sub"), 0o755)
	write(t, proj, ".git", "gitdir: lnk/../other/.git\n")
	_, err = r.Log(ctx, proj, LogOptions{})
	wantPathErr(t, "log through lnk/..", err, "outside the workspace")

	if got := plain(t, other, "rev-parse", "HEAD"); got != head {
		t.Errorf("the outside repository moved: %s -> %s", head, got)
	}
	// Malformed .git files are refused with the expected format.
	for _, content := range []string{"", "gitdir:", "gitdir: ", "not a gitdir line\n", "gitdir: a\nb\n"} {
		write(t, proj, ".git", content)
		_, err := r.Log(ctx, proj, LogOptions{})
		wantPathErr(t, "log with .git = "+content, err, "proj/.git")
	}
}

// A linked worktree whose commondir points outside is refused; one inside works, and shares
// refs with its main repository.
func TestCommonDirConfined(t *testing.T) {
	r, ws := workspace(t)
	ctx := context.Background()
	main := filepath.Join(ws, "main")
	initRepo(t, main)
	plain(t, main, "worktree", "add", "-q", "-b", "side", filepath.Join(ws, "wt"))
	wt := filepath.Join(ws, "wt")
	write(t, wt, "side.txt", "side\n")
	if err := r.Add(ctx, wt, []string{"side.txt"}); err != nil {
		t.Fatal(err)
	}
	c, err := r.Commit(ctx, wt, "on side")
	if err != nil || c.Branch != "side" {
		t.Fatalf("commit in a linked worktree: %+v, %v", c, err)
	}
	if got := plain(t, main, "rev-parse", "side"); got != c.Hash {
		t.Errorf("side in the main repository = %s, want %s", got, c.Hash)
	}
	// Checking out a branch another worktree has is refused, as git does.
	if err := r.Checkout(ctx, main, "side"); err == nil || !strings.Contains(err.Error(), "already checked out") {
		t.Errorf("checkout of a branch checked out elsewhere: %v", err)
	}

	other := filepath.Join(t.TempDir(), "other")
	initRepo(t, other)
	write(t, filepath.Join(main, ".git", "worktrees", "wt"), "commondir", filepath.Join(other, ".git")+"\n")
	_, err = r.Log(ctx, wt, LogOptions{})
	wantPathErr(t, "log with commondir outside", err, "main/.git/worktrees/wt/commondir points git at", "outside the workspace")
}

// Object directories borrowed through objects/info/alternates must be in the workspace.
func TestAlternatesConfined(t *testing.T) {
	r, ws := workspace(t)
	ctx := context.Background()
	src := filepath.Join(ws, "src")
	initRepo(t, src)
	plain(t, ws, "clone", "-q", "--shared", src, filepath.Join(ws, "shared"))
	shared := filepath.Join(ws, "shared")
	if cs, err := r.Log(ctx, shared, LogOptions{}); err != nil || len(cs) != 1 {
		t.Fatalf("log of a clone sharing objects inside the workspace: %+v, %v", cs, err)
	}
	// Relative alternates are relative to the objects directory.
	write(t, filepath.Join(shared, ".git", "objects", "info"), "alternates", "../../../src/.git/objects\n")
	if _, err := r.Log(ctx, shared, LogOptions{}); err != nil {
		t.Fatalf("relative alternates inside: %v", err)
	}

	other := filepath.Join(t.TempDir(), "other")
	initRepo(t, other)
	for _, alt := range []string{filepath.Join(other, ".git", "objects"), "# comment\n\n" + `"` + filepath.Join(other, ".git", "objects") + `"`, "../../../../../../../../../../../../" + filepath.Join(other, ".git", "objects")} {
		write(t, filepath.Join(shared, ".git", "objects", "info"), "alternates", alt+"\n")
		_, err := r.Log(ctx, shared, LogOptions{})
		wantPathErr(t, "alternates "+alt, err, "shared/.git/objects/info/alternates lists", "outside the workspace", "git repack -a -d")
	}
	// An alternate inside whose own alternates lead out is refused too.
	write(t, filepath.Join(shared, ".git", "objects", "info"), "alternates", filepath.Join(src, ".git", "objects")+"\n")
	write(t, filepath.Join(src, ".git", "objects", "info"), "alternates", filepath.Join(other, ".git", "objects")+"\n")
	_, err := r.Log(ctx, shared, LogOptions{})
	wantPathErr(t, "alternates of alternates", err, "src/.git/objects/info/alternates lists")
}

// Symlinks inside .git that lead out (refs, objects fan-out, index, config) are refused;
// ones that stay inside work.
func TestGitDirSymlinksConfined(t *testing.T) {
	r, ws := workspace(t)
	ctx := context.Background()
	proj := filepath.Join(ws, "proj")
	initRepo(t, proj)
	git := filepath.Join(proj, ".git")
	outside := t.TempDir()

	move := func(rel string) (restore func()) {
		t.Helper()
		src, dst := filepath.Join(git, rel), filepath.Join(outside, strings.ReplaceAll(rel, "/", "_"))
		if err := os.Rename(src, dst); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(dst, src); err != nil {
			t.Fatal(err)
		}
		return func() {
			os.Remove(src)
			if err := os.Rename(dst, src); err != nil {
				t.Fatal(err)
			}
		}
	}
	oid := plain(t, proj, "rev-parse", "HEAD")
	for _, rel := range []string{"refs/heads", "refs", "objects/" + oid[:2], "index", "config", "HEAD", "logs"} {
		restore := move(rel)
		_, err := r.Status(ctx, proj)
		wantPathErr(t, "status with "+rel+" linked outside", err, "proj/.git/"+rel+" is a symlink that leads outside the workspace")
		restore()
	}
	if _, err := r.Status(ctx, proj); err != nil {
		t.Fatal(err)
	}
	// A .git directory that is a symlink to a repository elsewhere in the workspace is fine.
	if err := os.Rename(git, filepath.Join(ws, "proj.git")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../proj.git", git); err != nil {
		t.Fatal(err)
	}
	if cs, err := r.Log(ctx, proj, LogOptions{}); err != nil || len(cs) != 1 {
		t.Fatalf("log through an inside .git symlink: %+v, %v", cs, err)
	}
}

// Submodules: the hub never runs git inside one (that git would read the submodule's own
// config). Status and diff still report a moved submodule; git_add leaves submodules out and
// says why when one is named.
func TestSubmoduleConfigInert(t *testing.T) {
	r, ws := workspace(t)
	ctx := context.Background()
	k := newEvilKit(t)
	src := filepath.Join(t.TempDir(), "subsrc")
	initRepo(t, src)
	proj := filepath.Join(ws, "proj")
	initRepo(t, proj)
	plain(t, proj, "submodule", "add", "-q", src, "sm")
	plain(t, proj, "commit", "-qm", "add submodule")
	plain(t, proj, "branch", "other")
	sm := filepath.Join(proj, "sm")
	write(t, sm, "g.txt", "moved\n")
	plain(t, sm, "add", "g.txt")
	plain(t, sm, "-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-qm", "move the submodule")

	// Now make the submodule hostile: its config runs programs, its attributes select them,
	// and .gitmodules asks for a full dirty check.
	appendFile(t, filepath.Join(proj, ".git", "modules", "sm", "config"), "[core]\n\tfsmonitor = "+k.cmd("sub-fsmonitor")+
		"\n[filter \"e\"]\n\tclean = "+k.cmd("sub-clean")+"\n\tsmudge = "+k.cmd("sub-smudge")+"\n")
	write(t, sm, ".gitattributes", "* filter=e\n")
	write(t, sm, "f.txt", "dirty in the submodule\n")
	appendFile(t, filepath.Join(proj, ".gitmodules"), "\tignore = none\n")
	write(t, proj, "f.txt", "changed\n")

	st, err := r.Status(ctx, proj)
	if err != nil {
		t.Fatal(err)
	}
	var smStatus string
	for _, f := range st.Files {
		if f.Path == "sm" {
			smStatus = f.Worktree
		}
	}
	if smStatus != "M" {
		t.Errorf("status does not report the moved submodule: %+v", st.Files)
	}
	if d, err := r.Diff(ctx, proj, DiffOptions{}); err != nil || !strings.Contains(d.Diff, "Subproject commit") {
		t.Errorf("diff = %+v, %v", d, err)
	}
	var fe *FieldError
	if err := r.Add(ctx, proj, []string{"sm"}); !errors.As(err, &fe) || !strings.Contains(err.Error(), `"sm" is a submodule`) {
		t.Errorf("add sm: %v", err)
	}
	if err := r.Add(ctx, proj, []string{"."}); err != nil {
		t.Fatal(err)
	}
	c, err := r.Commit(ctx, proj, "top-level change only")
	if err != nil || c.Files != 2 { // f.txt and .gitmodules; not sm
		t.Fatalf("commit = %+v, %v", c, err)
	}
	if err := r.Checkout(ctx, proj, "other"); err != nil {
		t.Fatal(err)
	}
	if err := r.Checkout(ctx, proj, "main"); err != nil {
		t.Fatal(err)
	}
	// The submodule itself, as a repository: its .git file and core.worktree stay inside.
	if _, err := r.Status(ctx, sm); err != nil {
		t.Fatalf("status inside the submodule: %v", err)
	}
	if err := r.Add(ctx, sm, []string{"f.txt"}); err != nil {
		t.Fatal(err)
	}
	if ran := k.ran(); len(ran) != 0 {
		t.Fatalf("the submodule's configuration ran: %v", ran)
	}
	// Control: plain git status in the superproject runs them.
	write(t, sm, "f.txt", "dirty again\n")
	plainNoFail(proj, "status")
	if ran := k.ran(); !slices.Contains(ran, "sub-fsmonitor") {
		t.Errorf("control: plain git status did not run the submodule's fsmonitor (ran %v)", ran)
	}
}

func plainNoFail(dir string, args ...string) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = SafeEnv(os.Environ())
	_ = cmd.Run()
}

// Repository formats: sha256 works; unknown versions and extensions are refused, as git does.
func TestRepositoryFormat(t *testing.T) {
	r, ws := workspace(t)
	ctx := context.Background()
	sha := filepath.Join(ws, "sha256")
	initRepo(t, sha, "--object-format=sha256")
	write(t, sha, "g.txt", "g\n")
	if err := r.Add(ctx, sha, []string{"g.txt"}); err != nil {
		t.Fatal(err)
	}
	c, err := r.Commit(ctx, sha, "sha256 commit")
	if err != nil || len(c.Hash) != 64 {
		t.Fatalf("commit in a sha256 repository: %+v, %v", c, err)
	}
	plain(t, sha, "config", "--file", ".git/config", "extensions.refStorage", "reftable")
	_, err = r.Log(ctx, sha, LogOptions{})
	wantPathErr(t, "unknown extension", err, "extensions.refstorage", "use git in a terminal")
	plain(t, sha, "config", "--file", ".git/config", "--unset", "extensions.refStorage")
	plain(t, sha, "config", "--file", ".git/config", "core.repositoryformatversion", "2")
	_, err = r.Log(ctx, sha, LogOptions{})
	wantPathErr(t, "version 2", err, "core.repositoryformatversion")
}

// A bare repository can be read; work-tree operations say there is no work tree.
func TestBareRepository(t *testing.T) {
	r, ws := workspace(t)
	ctx := context.Background()
	src := filepath.Join(ws, "src")
	initRepo(t, src)
	plain(t, ws, "clone", "-q", "--bare", src, filepath.Join(ws, "bare.git"))
	bare := filepath.Join(ws, "bare.git")
	if cs, err := r.Log(ctx, bare, LogOptions{}); err != nil || len(cs) != 1 {
		t.Fatalf("log of a bare repository: %+v, %v", cs, err)
	}
	_, err := r.Status(ctx, bare)
	wantPathErr(t, "status of a bare repository", err, "without a work tree")
}

// The hub's scratch directory holds the config git runs with; it must not be writable
// through the workspace.
func TestScratchOutsideWorkspace(t *testing.T) {
	r, ws := workspace(t)
	initRepo(t, filepath.Join(ws, "proj"))
	r.TempDir = filepath.Join(ws, "tmp")
	os.MkdirAll(r.TempDir, 0o755)
	if _, err := r.Status(context.Background(), filepath.Join(ws, "proj")); err == nil || !strings.Contains(err.Error(), "set TMPDIR") {
		t.Fatalf("scratch inside the workspace: %v", err)
	}
	if ents, _ := os.ReadDir(r.TempDir); len(ents) != 0 {
		t.Errorf("scratch directory left behind: %v", ents)
	}
	// And the normal scratch directory is removed after each call.
	r.TempDir = t.TempDir()
	if _, err := r.Status(context.Background(), filepath.Join(ws, "proj")); err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(r.TempDir); len(ents) != 0 {
		t.Errorf("scratch directory left behind: %v", ents)
	}
}

// Nested repositories whose .git leads outside: git would read that repository's HEAD (and
// git_diff would print it as the submodule commit), so status, diff and add refuse them.
func TestNestedRepositoryOutsideRefused(t *testing.T) {
	r, ws := workspace(t)
	ctx := context.Background()
	other := filepath.Join(t.TempDir(), "other")
	initRepo(t, other)
	secret := plain(t, other, "rev-parse", "HEAD")
	proj := filepath.Join(ws, "proj")
	initRepo(t, proj)

	// An untracked nested repository: git add . would record the outside HEAD.
	write(t, proj, "nest/.git", "gitdir: "+filepath.Join(other, ".git")+"\n")
	err := r.Add(ctx, proj, []string{"."})
	wantPathErr(t, "add . with a nested .git outside", err, "proj/nest/.git points git at", "outside the workspace")
	if err := r.Add(ctx, proj, []string{"f.txt"}); err != nil {
		t.Errorf("add of a path that does not contain it: %v", err)
	}

	// A submodule in the index whose checkout's .git now leads outside.
	plain(t, proj, "update-index", "--add", "--cacheinfo", "160000,"+secret+",sub")
	plain(t, proj, "commit", "-qm", "submodule")
	write(t, proj, "sub/.git", "gitdir: "+filepath.Join(other, ".git")+"\n")
	_, err = r.Status(ctx, proj)
	wantPathErr(t, "status", err, "proj/sub/.git points git at")
	d, err := r.Diff(ctx, proj, DiffOptions{Ref: "HEAD"})
	wantPathErr(t, "diff", err, "proj/sub/.git points git at")
	if strings.Contains(d.Diff, secret) {
		t.Error("the outside HEAD was printed")
	}
	// Staged diffs and history do not look into the checkout.
	if _, err := r.Diff(ctx, proj, DiffOptions{Staged: true}); err != nil {
		t.Error(err)
	}
	if _, err := r.Log(ctx, proj, LogOptions{}); err != nil {
		t.Error(err)
	}
}

package git

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// A hostile agent can write any file in the workspace, .git/config and attributes included.
// These tests write every family of program-running setting git has into a real repository,
// run every operation the git_* tools use, and check that no program ran. A control run of
// plain git on the same repository proves the settings are live (so a typo cannot make the
// test pass vacuously).

// evilKit is a program that records that it ran: `evil <family>` creates markers/<family>
// and then behaves like cat (so a filter passes content through).
type evilKit struct {
	bin, markers string
}

func newEvilKit(t *testing.T) evilKit {
	t.Helper()
	k := evilKit{bin: t.TempDir(), markers: t.TempDir()}
	script := fmt.Sprintf("#!/bin/sh\ntouch %q/\"$1\"\nexec cat\n", k.markers)
	if err := os.WriteFile(filepath.Join(k.bin, "evil"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	// gpg.program takes no argument of ours: git passes gpg's own options.
	gpg := fmt.Sprintf("#!/bin/sh\ntouch %q/gpg\nexit 1\n", k.markers)
	if err := os.WriteFile(filepath.Join(k.bin, "gpg"), []byte(gpg), 0o755); err != nil {
		t.Fatal(err)
	}
	return k
}

// cmd is a config value that runs the program for family, quoted for a git config file
// (unquoted, ";" would start a comment).
func (k evilKit) cmd(family string) string {
	return configQuote(filepath.Join(k.bin, "evil") + " " + family)
}

func configQuote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

// hook writes an executable hook script into dir.
func (k evilKit) hook(t *testing.T, dir, name, family string) {
	t.Helper()
	write(t, dir, name, fmt.Sprintf("#!/bin/sh\ntouch %q\n", filepath.Join(k.markers, family)))
	if err := os.Chmod(filepath.Join(dir, name), 0o755); err != nil {
		t.Fatal(err)
	}
}

func (k evilKit) ran() []string {
	ents, _ := os.ReadDir(k.markers)
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

func appendFile(t *testing.T, name, content string) {
	t.Helper()
	f, err := os.OpenFile(name, os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(content); err != nil {
		t.Fatal(err)
	}
}

// hostileRepo makes a repository whose config, include files, worktree config, attributes
// (in-tree and .git/info) and hooks select a program for every family git has. Branch
// "other" differs in every filtered file, so checking it out smudges them.
func hostileRepo(t *testing.T) (*Runner, string, evilKit) {
	t.Helper()
	r, dir := newRepo(t)
	ctx := context.Background()
	mustRun := func(args ...string) {
		t.Helper()
		if out, _, err := r.run(ctx, dir, nil, 1<<20, args...); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	k := newEvilKit(t)
	// Attributes in the tree select drivers for each kind of file.
	write(t, dir, ".gitattributes", "*.txt filter=evil diff=evil merge=evil\n*.dat filter=evilproc\n*.inc filter=evilinclude\n*.wt filter=evilwt\n*.if filter=evilincludeif\n")
	for _, f := range []string{"x.dat", "y.md", "z.inc", "w.wt", "v.if"} {
		write(t, dir, f, f+" one\n")
	}
	mustRun("add", "-A")
	mustRun("commit", "-qm", "attributes and filtered files")
	mustRun("checkout", "-q", "-b", "other")
	for _, f := range []string{"a.txt", "x.dat", "y.md", "z.inc", "w.wt", "v.if"} {
		write(t, dir, f, f+" on other\n")
	}
	mustRun("commit", "-qam", "other side")
	mustRun("checkout", "-q", "main")

	git := filepath.Join(dir, ".git")
	// .git/info/attributes: not in the tree, read from the git dir.
	write(t, git, "info/attributes", "*.md filter=evilinfo\n")
	// Include files (relative to the config file), one unconditional, one conditional.
	write(t, git, "evil-include.cfg", fmt.Sprintf("[filter \"evilinclude\"]\n\tclean = %s\n\tsmudge = %s\n[core]\n\thooksPath = %s\n",
		k.cmd("filter-include"), k.cmd("smudge-include"), configQuote(filepath.Join(git, "evilhooks"))))
	write(t, git, "evil-includeif.cfg", fmt.Sprintf("[filter \"evilincludeif\"]\n\tclean = %s\n\tsmudge = %s\n",
		k.cmd("filter-includeif"), k.cmd("smudge-includeif")))
	appendFile(t, filepath.Join(git, "config"), fmt.Sprintf(`[core]
	repositoryformatversion = 1
	fsmonitor = %[1]s
	pager = %[2]s
	editor = %[3]s
	sshCommand = %[4]s
	askPass = %[5]s
	gitProxy = %[6]s
	alternateRefsCommand = %[7]s
[extensions]
	worktreeConfig = true
[include]
	path = evil-include.cfg
[includeIf "gitdir:**"]
	path = evil-includeif.cfg
[filter "evil"]
	clean = %[8]s
	smudge = %[9]s
	required = true
[filter "evilproc"]
	process = %[10]s
[filter "evilinfo"]
	clean = %[11]s
	smudge = %[12]s
[diff]
	external = %[13]s
[diff "evil"]
	textconv = %[14]s
	command = %[15]s
[merge "evil"]
	driver = %[16]s
[pager]
	log = %[2]s
	show = %[2]s
	diff = %[2]s
	status = %[2]s
	branch = %[2]s
[sequence]
	editor = %[3]s
[credential]
	helper = %[17]s
[gpg]
	program = %[18]s
[gpg "ssh"]
	program = %[18]s
[commit]
	gpgSign = true
[tag]
	gpgSign = true
[log]
	showSignature = true
[alias]
	status = %[19]s
	log = %[19]s
	st = %[19]s
[remote "origin"]
	url = ext::sh -c touch%% %[20]s
	uploadpack = %[21]s
	receivepack = %[21]s
[protocol "ext"]
	allow = always
[trace2]
	eventTarget = %[22]s
[uploadpack]
	packObjectsHook = %[21]s
`, k.cmd("fsmonitor"), k.cmd("pager"), k.cmd("editor"), k.cmd("ssh"), k.cmd("askpass"), k.cmd("gitproxy"),
		k.cmd("alternaterefs"), k.cmd("filter-clean"), k.cmd("filter-smudge"), k.cmd("filter-process"),
		k.cmd("filter-info"), k.cmd("smudge-info"), k.cmd("ext-diff"), k.cmd("textconv"), k.cmd("diff-command"),
		k.cmd("merge-driver"), configQuote("!"+filepath.Join(k.bin, "evil")+" credential"), configQuote(filepath.Join(k.bin, "gpg")),
		configQuote("!"+filepath.Join(k.bin, "evil")+" alias"), filepath.Join(k.markers, "ext-transport"), k.cmd("uploadpack"),
		configQuote(filepath.Join(k.markers, "trace2"))))
	// config.worktree, read because extensions.worktreeConfig is set.
	write(t, git, "config.worktree", fmt.Sprintf("[core]\n\tfsmonitor = %s\n[filter \"evilwt\"]\n\tclean = %s\n\tsmudge = %s\n",
		k.cmd("fsmonitor-worktree"), k.cmd("filter-worktree"), k.cmd("smudge-worktree")))
	// Hooks in .git/hooks and in the hooksPath the include sets.
	for _, h := range []string{"pre-commit", "prepare-commit-msg", "commit-msg", "post-commit", "post-checkout", "reference-transaction", "post-index-change", "pre-auto-gc"} {
		k.hook(t, filepath.Join(git, "hooks"), h, "hook-"+h)
		k.hook(t, filepath.Join(git, "evilhooks"), h, "hookspath-"+h)
	}
	// The user's global config and attributes are no safer: HOME may be the workspace.
	home := os.Getenv("HOME")
	write(t, home, ".gitconfig", fmt.Sprintf("[filter \"evilglobal\"]\n\tclean = %s\n[core]\n\tfsmonitor = %s\n", k.cmd("filter-global"), k.cmd("fsmonitor-global")))
	write(t, home, ".config/git/attributes", "*.txt filter=evilglobal\n")
	return r, dir, k
}

// Every operation of the git_* tools on the hostile repository works and runs no program.
func TestHostileConfigRunsNothing(t *testing.T) {
	r, dir, k := hostileRepo(t)
	ctx := context.Background()
	touchAll := func(what string) {
		for _, f := range []string{"a.txt", "b.txt", "x.dat", "y.md", "z.inc", "w.wt", "v.if"} {
			write(t, dir, f, f+" "+what+"\n")
		}
	}
	touchAll("changed in the work tree")
	write(t, dir, "new.txt", "new\n")

	st, err := r.Status(ctx, dir)
	if err != nil || len(st.Files) != 10 { // 7 modified; new.txt, ~/.gitconfig and ~/.config/git/attributes untracked (HOME is the repository)
		t.Fatalf("status = %+v, %v", st, err)
	}
	if d, err := r.Diff(ctx, dir, DiffOptions{}); err != nil || !strings.Contains(d.Diff, "+a.txt changed") || len(d.Files) != 7 {
		t.Fatalf("diff = %+v, %v", d, err)
	}
	if _, err := r.Diff(ctx, dir, DiffOptions{Ref: "HEAD~1"}); err != nil {
		t.Fatal(err)
	}
	if cs, err := r.Log(ctx, dir, LogOptions{Ref: "main"}); err != nil || len(cs) != 3 {
		t.Fatalf("log = %+v, %v", cs, err)
	}
	if _, err := r.Show(ctx, dir, "HEAD"); err != nil {
		t.Fatal(err)
	}
	if err := r.Add(ctx, dir, []string{"."}); err != nil {
		t.Fatal(err)
	}
	if d, err := r.Diff(ctx, dir, DiffOptions{Staged: true}); err != nil || len(d.Files) != 10 {
		t.Fatalf("staged diff = %+v, %v", d, err)
	}
	c, err := r.Commit(ctx, dir, "work tree changes")
	if err != nil || c.Files != 10 || c.Branch != "main" {
		t.Fatalf("commit = %+v, %v", c, err)
	}
	if err := r.CreateBranch(ctx, dir, "feature"); err != nil {
		t.Fatal(err)
	}
	if err := r.Checkout(ctx, dir, "other"); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "y.md")); string(b) != "y.md on other\n" {
		t.Errorf("checkout other: y.md = %q", b)
	}
	if err := r.Checkout(ctx, dir, "main"); err != nil {
		t.Fatal(err)
	}
	if bs, err := r.Branches(ctx, dir); err != nil || len(bs) != 3 {
		t.Fatalf("branches = %+v, %v", bs, err)
	}
	if ran := k.ran(); len(ran) != 0 {
		t.Fatalf("programs from the repository's configuration ran: %v", ran)
	}

	// Control: plain git on the same repository runs them, so the settings above are live.
	touchAll("changed for the control run")
	for _, args := range [][]string{{"status"}, {"diff"}, {"diff", "--no-ext-diff"}, {"add", "."}, {"commit", "-qm", "control"}} {
		_, _, _ = r.run(ctx, dir, nil, 1<<20, args...)
	}
	ran := k.ran()
	for _, want := range []string{"fsmonitor-worktree", "filter-clean", "filter-process", "filter-info", "filter-include", "filter-includeif",
		"filter-worktree", "ext-diff", "textconv", "hookspath-pre-commit", "gpg"} {
		if !slices.Contains(ran, want) {
			t.Errorf("control: plain git did not run %s (ran %v); the hostile setup is not live", want, ran)
		}
	}
}

// The user's identity still comes from ~/.gitconfig, through the allow-list.
func TestGlobalIdentityKept(t *testing.T) {
	r, dir := newRepo(t)
	ctx := context.Background()
	if _, _, err := r.run(ctx, dir, nil, 1<<20, "config", "--unset", "user.name"); err != nil {
		t.Fatal(err)
	}
	write(t, os.Getenv("HOME"), ".gitconfig", "[user]\n\tname = Global Person\n\temail = global@example.com\n")
	write(t, dir, "g.txt", "g\n")
	if err := r.Add(ctx, dir, []string{"g.txt"}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Commit(ctx, dir, "by the global identity"); err != nil {
		t.Fatal(err)
	}
	cs, err := r.Log(ctx, dir, LogOptions{MaxCount: 1})
	if err != nil || cs[0].Author != "Global Person" || cs[0].Email != "ada@example.com" {
		t.Fatalf("log = %+v, %v (name from ~/.gitconfig, email from the repository)", cs, err)
	}
}

// Upstream tracking (branch.*.remote/merge, remote.*.fetch) is copied; status still reports
// ahead/behind.
func TestUpstreamKept(t *testing.T) {
	r, dir := newRepo(t)
	ctx := context.Background()
	for _, args := range [][]string{
		{"update-ref", "refs/remotes/origin/main", "HEAD~1"},
		{"config", "remote.origin.url", "https://example.com/x.git"},
		{"config", "remote.origin.fetch", "+refs/heads/*:refs/remotes/origin/*"},
		{"config", "branch.main.remote", "origin"},
		{"config", "branch.main.merge", "refs/heads/main"},
	} {
		if _, _, err := r.run(ctx, dir, nil, 1<<20, args...); err != nil {
			t.Fatal(err)
		}
	}
	st, err := r.Status(ctx, dir)
	if err != nil || st.Upstream != "origin/main" || st.Ahead != 1 {
		t.Fatalf("status = %+v, %v", st, err)
	}
	if bs, err := r.Branches(ctx, dir); err != nil || bs[0].Upstream != "origin/main" {
		t.Fatalf("branches = %+v, %v", bs, err)
	}
}

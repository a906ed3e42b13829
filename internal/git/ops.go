package git

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// FileStatus is one changed path in the working tree or index.
type FileStatus struct {
	Path     string `json:"path"`
	OrigPath string `json:"orig_path,omitempty"`
	Index    string `json:"index"`    // X of git's XY: M A D R C U or "."
	Worktree string `json:"worktree"` // Y of git's XY
	Status   string `json:"status"`   // modified, added, deleted, renamed, copied, untracked, conflicted, type changed
}

// Status is the state of a repository.
type Status struct {
	Branch   string       `json:"branch"` // "" when detached
	Commit   string       `json:"commit"` // "" before the first commit
	Upstream string       `json:"upstream,omitempty"`
	Ahead    int          `json:"ahead"`
	Behind   int          `json:"behind"`
	Files    []FileStatus `json:"files"`
	Clean    bool         `json:"clean"`
}

func describe(x, y byte) string {
	c := x
	if c == '.' {
		c = y
	}
	switch c {
	case 'M':
		return "modified"
	case 'A':
		return "added"
	case 'D':
		return "deleted"
	case 'R':
		return "renamed"
	case 'C':
		return "copied"
	case 'T':
		return "type changed"
	case 'U':
		return "conflicted"
	}
	return "changed"
}

// Status runs git status (porcelain v2) in dir.
func (r *Runner) Status(ctx context.Context, dir string) (Status, error) {
	return with(ctx, r, dir, (*Repo).Status)
}

// with opens the repository containing dir, runs op on it and closes it.
func with[T any](ctx context.Context, r *Runner, dir string, op func(*Repo, context.Context) (T, error)) (T, error) {
	p, err := r.Open(ctx, dir)
	if err != nil {
		var zero T
		return zero, err
	}
	defer p.Close()
	return op(p, ctx)
}

// submoduleFlag keeps status and diff from running git inside submodules: a dirty check
// there would read the submodule's own config (its filters, fsmonitor, ...). Submodule
// commits that differ are still reported.
const submoduleFlag = "--ignore-submodules=dirty"

// Status runs git status (porcelain v2).
func (p *Repo) Status(ctx context.Context) (Status, error) {
	if p.WorkTree == "" {
		return Status{}, bareErr(p)
	}
	if _, err := p.checkNested(ctx, nil, false); err != nil {
		return Status{}, notRepo(err)
	}
	out, _, err := p.git(ctx, nil, 8<<20, "status", "--porcelain=v2", "--branch", "-z", "--untracked-files=all", submoduleFlag)
	if err != nil {
		return Status{}, notRepo(err)
	}
	st := Status{Files: []FileStatus{}}
	recs := strings.Split(string(out), "\x00")
	for i := 0; i < len(recs); i++ {
		rec := recs[i]
		switch {
		case strings.HasPrefix(rec, "# branch.oid "):
			if v := strings.TrimPrefix(rec, "# branch.oid "); v != "(initial)" {
				st.Commit = v
			}
		case strings.HasPrefix(rec, "# branch.head "):
			if v := strings.TrimPrefix(rec, "# branch.head "); v != "(detached)" {
				st.Branch = v
			}
		case strings.HasPrefix(rec, "# branch.upstream "):
			st.Upstream = strings.TrimPrefix(rec, "# branch.upstream ")
		case strings.HasPrefix(rec, "# branch.ab "):
			f := strings.Fields(strings.TrimPrefix(rec, "# branch.ab "))
			if len(f) == 2 {
				st.Ahead, _ = strconv.Atoi(strings.TrimPrefix(f[0], "+"))
				st.Behind, _ = strconv.Atoi(strings.TrimPrefix(f[1], "-"))
			}
		case strings.HasPrefix(rec, "1 "):
			f := strings.SplitN(rec, " ", 9)
			if len(f) == 9 {
				st.Files = append(st.Files, FileStatus{Path: f[8], Index: f[1][:1], Worktree: f[1][1:], Status: describe(f[1][0], f[1][1])})
			}
		case strings.HasPrefix(rec, "2 "):
			f := strings.SplitN(rec, " ", 10)
			if len(f) == 10 {
				fs := FileStatus{Path: f[9], Index: f[1][:1], Worktree: f[1][1:], Status: describe(f[1][0], f[1][1])}
				if i+1 < len(recs) {
					fs.OrigPath = recs[i+1]
					i++
				}
				st.Files = append(st.Files, fs)
			}
		case strings.HasPrefix(rec, "u "):
			f := strings.SplitN(rec, " ", 11)
			if len(f) == 11 {
				st.Files = append(st.Files, FileStatus{Path: f[10], Index: f[1][:1], Worktree: f[1][1:], Status: "conflicted"})
			}
		case strings.HasPrefix(rec, "? "):
			st.Files = append(st.Files, FileStatus{Path: rec[2:], Index: "?", Worktree: "?", Status: "untracked"})
		}
	}
	st.Clean = len(st.Files) == 0
	return st, nil
}

func notRepo(err error) error {
	var ge *Error
	if errors.As(err, &ge) && strings.Contains(ge.Stderr, "not a git repository") {
		return &FieldError{"path", "not inside a git repository within the workspace; give the repository directory (git init it first)"}
	}
	return err
}

// FileChange is a path with its line counts in a diff.
type FileChange struct {
	Path    string `json:"path"`
	Added   int    `json:"added"`
	Removed int    `json:"removed"`
	Binary  bool   `json:"binary,omitempty"`
}

// DiffResult is a diff and its per-file counts.
type DiffResult struct {
	Diff      string       `json:"diff"`
	Files     []FileChange `json:"files"`
	Truncated bool         `json:"truncated"`
}

// DiffOptions select a diff.
type DiffOptions struct {
	Staged bool
	Ref    string // revision or range; "" = working tree against the index (or HEAD with Staged)
	Paths  []string
}

var diffFlags = []string{"--no-color", "--no-ext-diff", "--no-textconv", "-M", submoduleFlag}

// Diff runs git diff in dir. Revisions are checked before they reach the command line.
func (r *Runner) Diff(ctx context.Context, dir string, o DiffOptions) (DiffResult, error) {
	return with(ctx, r, dir, func(p *Repo, ctx context.Context) (DiffResult, error) { return p.Diff(ctx, o) })
}

// Diff runs git diff.
func (p *Repo) Diff(ctx context.Context, o DiffOptions) (DiffResult, error) {
	if p.WorkTree == "" && !o.Staged && o.Ref == "" {
		return DiffResult{}, bareErr(p)
	}
	if !o.Staged && p.WorkTree != "" { // against the work tree: submodule HEADs are read
		if _, err := p.checkNested(ctx, o.Paths, false); err != nil {
			return DiffResult{}, notRepo(err)
		}
	}
	args := append([]string{"diff"}, diffFlags...)
	if o.Staged {
		args = append(args, "--cached")
	}
	var revs []string
	if o.Ref != "" {
		if err := CheckRevision("ref", o.Ref, true); err != nil {
			return DiffResult{}, err
		}
		if err := p.verifyRange(ctx, "ref", o.Ref); err != nil {
			return DiffResult{}, err
		}
		revs = []string{o.Ref}
	}
	tail := append(append(revs, "--"), o.Paths...)
	out, cut, err := p.git(ctx, nil, MaxOutput, append(args, tail...)...)
	if err != nil {
		return DiffResult{}, notRepo(err)
	}
	num, _, err := p.git(ctx, nil, 8<<20, append(append(append([]string{"diff"}, diffFlags...), stagedFlag(o.Staged)...), append([]string{"--numstat", "-z"}, tail...)...)...)
	if err != nil {
		return DiffResult{}, notRepo(err)
	}
	return DiffResult{Diff: string(out), Files: parseNumstat(num), Truncated: cut}, nil
}

func stagedFlag(on bool) []string {
	if on {
		return []string{"--cached"}
	}
	return nil
}

// parseNumstat reads `--numstat -z`: "added\tremoved\tpath\0" or, for renames,
// "added\tremoved\t\0old\0new\0".
func parseNumstat(b []byte) []FileChange {
	out := []FileChange{}
	recs := strings.Split(string(b), "\x00")
	for i := 0; i < len(recs); i++ {
		rec := recs[i]
		if rec == "" {
			continue
		}
		rec = strings.TrimLeft(rec, "\n")
		f := strings.SplitN(rec, "\t", 3)
		if len(f) != 3 {
			continue
		}
		fc := FileChange{Path: f[2]}
		if f[0] == "-" {
			fc.Binary = true
		} else {
			fc.Added, _ = strconv.Atoi(f[0])
			fc.Removed, _ = strconv.Atoi(f[1])
		}
		if f[2] == "" && i+2 < len(recs) { // rename: old, new follow
			fc.Path = recs[i+2]
			i += 2
		}
		out = append(out, fc)
	}
	return out
}

// verifyRange checks that every revision in a rev or range names a commit.
func (p *Repo) verifyRange(ctx context.Context, field, rev string) error {
	sides := []string{rev}
	for _, sep := range []string{"...", ".."} {
		if a, b, ok := strings.Cut(rev, sep); ok {
			sides = []string{a, b}
			break
		}
	}
	for _, s := range sides {
		if s == "" {
			continue
		}
		if _, err := p.ResolveCommit(ctx, field, s); err != nil {
			return err
		}
	}
	return nil
}

// ResolveCommit returns the full hash of a revision in the repository containing dir, or an
// "unknown revision" field error.
func (r *Runner) ResolveCommit(ctx context.Context, dir, field, rev string) (string, error) {
	return with(ctx, r, dir, func(p *Repo, ctx context.Context) (string, error) { return p.ResolveCommit(ctx, field, rev) })
}

// ResolveCommit returns the full hash of a revision, or an "unknown revision" field error.
func (p *Repo) ResolveCommit(ctx context.Context, field, rev string) (string, error) {
	if err := CheckRevision(field, rev, false); err != nil {
		return "", err
	}
	out, _, err := p.git(ctx, nil, 4096, "rev-parse", "--verify", "--quiet", "--end-of-options", rev+"^{commit}")
	if err != nil {
		var ge *Error
		if errors.As(err, &ge) && ge.Code == 1 {
			return "", &FieldError{field, fmt.Sprintf("unknown revision %q; list branches with git_branch and commits with git_log", rev)}
		}
		return "", notRepo(err)
	}
	return strings.TrimSpace(string(out)), nil
}

// Commit is one commit's metadata.
type Commit struct {
	Hash    string `json:"hash"`
	Author  string `json:"author"`
	Email   string `json:"email"`
	Date    string `json:"date"` // ISO 8601 (author date)
	Subject string `json:"subject"`
	Body    string `json:"body,omitempty"`
}

const logFormat = "--format=%H%x00%an%x00%ae%x00%aI%x00%s%x00%b%x00%x1e"

func parseLog(b []byte, withBody bool) []Commit {
	out := []Commit{}
	for _, rec := range bytes.Split(b, []byte{0x1e}) {
		rec = bytes.TrimLeft(rec, "\n")
		f := strings.Split(string(rec), "\x00")
		if len(f) < 6 {
			continue
		}
		c := Commit{Hash: f[0], Author: f[1], Email: f[2], Date: f[3], Subject: f[4]}
		if withBody {
			c.Body = strings.TrimSpace(f[5])
		}
		out = append(out, c)
	}
	return out
}

// LogOptions select commits.
type LogOptions struct {
	MaxCount int
	Ref      string
	Paths    []string
}

// MaxLog is the largest max_count.
const MaxLog = 500

// Log lists commits of the repository containing dir, newest first.
func (r *Runner) Log(ctx context.Context, dir string, o LogOptions) ([]Commit, error) {
	return with(ctx, r, dir, func(p *Repo, ctx context.Context) ([]Commit, error) { return p.Log(ctx, o) })
}

// Log lists commits, newest first.
func (p *Repo) Log(ctx context.Context, o LogOptions) ([]Commit, error) {
	if o.MaxCount <= 0 {
		o.MaxCount = 20
	}
	if o.MaxCount > MaxLog {
		return nil, &FieldError{"max_count", fmt.Sprintf("%d is over the limit of %d", o.MaxCount, MaxLog)}
	}
	args := []string{"log", "--no-color", "-n", strconv.Itoa(o.MaxCount), logFormat, "--end-of-options"}
	if o.Ref != "" {
		if err := CheckRevision("ref", o.Ref, true); err != nil {
			return nil, err
		}
		if err := p.verifyRange(ctx, "ref", o.Ref); err != nil {
			return nil, err
		}
		args = append(args, o.Ref)
	}
	args = append(append(args, "--"), o.Paths...)
	out, _, err := p.git(ctx, nil, 16<<20, args...)
	if err != nil {
		var ge *Error
		if errors.As(err, &ge) && strings.Contains(ge.Stderr, "does not have any commits") {
			return []Commit{}, nil
		}
		return nil, notRepo(err)
	}
	return parseLog(out, false), nil
}

// ShowResult is a commit with its diff.
type ShowResult struct {
	Commit    Commit       `json:"commit"`
	Diff      string       `json:"diff"`
	Files     []FileChange `json:"files"`
	Truncated bool         `json:"truncated"`
}

// Show returns a commit's metadata, full message and patch from the repository containing dir.
func (r *Runner) Show(ctx context.Context, dir, ref string) (ShowResult, error) {
	return with(ctx, r, dir, func(p *Repo, ctx context.Context) (ShowResult, error) { return p.Show(ctx, ref) })
}

// Show returns a commit's metadata, full message and patch.
func (p *Repo) Show(ctx context.Context, ref string) (ShowResult, error) {
	if ref == "" {
		ref = "HEAD"
	}
	hash, err := p.ResolveCommit(ctx, "ref", ref)
	if err != nil {
		return ShowResult{}, err
	}
	meta, _, err := p.git(ctx, nil, 1<<20, "log", "-1", "--no-color", logFormat, hash, "--")
	if err != nil {
		return ShowResult{}, err
	}
	cs := parseLog(meta, true)
	if len(cs) != 1 {
		return ShowResult{}, fmt.Errorf("git log: unexpected output for %s", hash)
	}
	show := append([]string{"show"}, diffFlags...)
	out, cut, err := p.git(ctx, nil, MaxOutput, append(show, "--format=", "--patch", hash, "--")...)
	if err != nil {
		return ShowResult{}, err
	}
	num, _, err := p.git(ctx, nil, 8<<20, append(show, "--format=", "--numstat", "-z", hash, "--")...)
	if err != nil {
		return ShowResult{}, err
	}
	return ShowResult{Commit: cs[0], Diff: strings.TrimLeft(string(out), "\n"), Files: parseNumstat(num), Truncated: cut}, nil
}

// Branch is a local branch.
type Branch struct {
	Name     string `json:"name"`
	Commit   string `json:"commit"`
	Upstream string `json:"upstream,omitempty"`
	Current  bool   `json:"current"`
}

// Branches lists the local branches of the repository containing dir.
func (r *Runner) Branches(ctx context.Context, dir string) ([]Branch, error) {
	return with(ctx, r, dir, (*Repo).Branches)
}

// Branches lists local branches.
func (p *Repo) Branches(ctx context.Context) ([]Branch, error) {
	out, _, err := p.git(ctx, nil, 4<<20, "for-each-ref", "--format=%(refname:short)%00%(objectname)%00%(upstream:short)%00%(HEAD)", "refs/heads/")
	if err != nil {
		return nil, notRepo(err)
	}
	bs := []Branch{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Split(line, "\x00")
		if len(f) != 4 {
			continue
		}
		bs = append(bs, Branch{Name: f[0], Commit: f[1], Upstream: f[2], Current: f[3] == "*"})
	}
	return bs, nil
}

// CreateBranch creates name at HEAD in the repository containing dir.
func (r *Runner) CreateBranch(ctx context.Context, dir, name string) error {
	_, err := with(ctx, r, dir, func(p *Repo, ctx context.Context) (struct{}, error) { return struct{}{}, p.CreateBranch(ctx, name) })
	return err
}

// CreateBranch creates name at HEAD.
func (p *Repo) CreateBranch(ctx context.Context, name string) error {
	if err := CheckRefName("create", name); err != nil {
		return err
	}
	if _, _, err := p.git(ctx, nil, 4096, "check-ref-format", "--branch", name); err != nil {
		return &FieldError{"create", fmt.Sprintf("%q is not a valid branch name (git check-ref-format)", name)}
	}
	if _, _, err := p.git(ctx, nil, 4096, "branch", "--end-of-options", name); err != nil {
		var ge *Error
		if errors.As(err, &ge) && strings.Contains(ge.Stderr, "already exists") {
			return &FieldError{"create", fmt.Sprintf("branch %q already exists; pass it as checkout to switch to it", name)}
		}
		return notRepo(err)
	}
	return nil
}

// Checkout switches the repository containing dir to a branch (or detaches at a commit).
func (r *Runner) Checkout(ctx context.Context, dir, rev string) error {
	_, err := with(ctx, r, dir, func(p *Repo, ctx context.Context) (struct{}, error) { return struct{}{}, p.Checkout(ctx, rev) })
	return err
}

// Checkout switches to a branch (or detaches at a commit). Without --recurse-submodules and
// with diff.ignoreSubmodules=dirty it does not run git inside submodules.
func (p *Repo) Checkout(ctx context.Context, rev string) error {
	if _, err := p.ResolveCommit(ctx, "checkout", rev); err != nil {
		return err
	}
	if p.WorkTree == "" {
		return bareErr(p)
	}
	if _, _, err := p.git(ctx, nil, 64<<10, "checkout", "--quiet", "--no-guess", rev, "--"); err != nil {
		var ge *Error
		if errors.As(err, &ge) {
			return &FieldError{"checkout", strings.TrimSpace(ge.Stderr)}
		}
		return err
	}
	return nil
}

// Add stages paths in the repository containing dir.
func (r *Runner) Add(ctx context.Context, dir string, paths []string) error {
	_, err := with(ctx, r, dir, func(p *Repo, ctx context.Context) (struct{}, error) { return struct{}{}, p.Add(ctx, paths) })
	return err
}

// Add stages paths. Submodules (gitlinks in the index) under them are left out: for each one
// git add runs `git status` inside the submodule to see whether it is dirty, and that git
// reads the submodule's own config and attributes, which the hub does not control. Naming a
// submodule itself is refused with that reason.
func (p *Repo) Add(ctx context.Context, paths []string) error {
	if len(paths) == 0 {
		return &FieldError{"paths", `empty; list the files to stage, or ["."] for everything`}
	}
	if p.WorkTree == "" {
		return bareErr(p)
	}
	links, err := p.checkNested(ctx, paths, true)
	if err != nil {
		return notRepo(err)
	}
	for _, u := range paths {
		top := u
		if !filepath.IsAbs(u) {
			top = filepath.Join(p.Dir, u)
		}
		rel, err := filepath.Rel(p.WorkTree, top)
		if err != nil {
			continue // not in the work tree: git reports it
		}
		if links[filepath.ToSlash(rel)] {
			return &FieldError{"paths", fmt.Sprintf("%q is a submodule; git_add does not stage submodule commits, because git would run inside the submodule under the submodule's own configuration (stage it with git in a terminal)", u)}
		}
	}
	// Magic pathspecs for this one command: every given path literal, every submodule excluded.
	args := []string{"add", "--"}
	for _, u := range paths {
		args = append(args, ":(literal)"+u)
	}
	for _, l := range sortedKeys(links) {
		args = append(args, ":(top,literal,exclude)"+l)
	}
	if _, _, err := p.gitEnv(ctx, []string{"GIT_LITERAL_PATHSPECS=0"}, nil, 64<<10, args...); err != nil {
		var ge *Error
		if errors.As(err, &ge) && strings.Contains(ge.Stderr, "did not match any files") {
			return &FieldError{"paths", strings.TrimSpace(ge.Stderr)}
		}
		return notRepo(err)
	}
	return nil
}

// gitlinks returns the submodules (index entries of mode 160000) under paths (relative to
// Dir; nil for the whole work tree), by their path from the top of the work tree.
func (p *Repo) gitlinks(ctx context.Context, paths []string) (map[string]bool, error) {
	cwd, paths := p.scope(paths)
	links := map[string]bool{}
	w := &recordWriter{fn: func(rec []byte) {
		// "mode oid stage\tpath"
		if meta, path, ok := bytes.Cut(rec, []byte{'\t'}); ok && bytes.HasPrefix(meta, []byte("160000 ")) {
			links[string(path)] = true
		}
	}}
	args := append([]string{"ls-files", "--stage", "-z", "--full-name", "--"}, paths...)
	if err := p.r.execTo(ctx, cwd, p.env, nil, w, args...); err != nil {
		return nil, err
	}
	w.flush()
	return links, nil
}

// checkNested refuses nested repositories under paths whose .git leads outside the workspace
// (a .git file or symlink): git reads their HEAD to compare or record a submodule commit, and
// would print it. Submodules in the index are checked; with untracked, so are the untracked
// repositories git add would record as submodules. It returns the submodules in the index.
func (p *Repo) checkNested(ctx context.Context, paths []string, untracked bool) (map[string]bool, error) {
	indexed, err := p.gitlinks(ctx, paths)
	if err != nil {
		return nil, err
	}
	links := maps.Clone(indexed)
	if untracked {
		w := &recordWriter{fn: func(rec []byte) {
			// Untracked repositories are listed as "dir/"; everything else is a file.
			if len(rec) > 1 && rec[len(rec)-1] == '/' {
				links[string(rec[:len(rec)-1])] = true
			}
		}}
		cwd, paths := p.scope(paths)
		args := append([]string{"ls-files", "--others", "--exclude-standard", "-z", "--full-name", "--"}, paths...)
		if err := p.r.execTo(ctx, cwd, p.env, nil, w, args...); err != nil {
			return nil, err
		}
		w.flush()
	}
	for _, l := range sortedKeys(links) {
		d := filepath.Join(p.WorkTree, filepath.FromSlash(l))
		dotgit := filepath.Join(d, ".git")
		if _, err := os.Lstat(dotgit); err != nil {
			continue // not checked out: git reads nothing there
		}
		if _, err := p.gitDirAt(d, dotgit); err != nil {
			return nil, err
		}
	}
	return indexed, nil
}

// scope turns paths relative to Dir into a directory to run in and pathspecs; no paths means
// the whole work tree.
func (p *Repo) scope(paths []string) (string, []string) {
	if len(paths) == 0 {
		return p.WorkTree, []string{"."}
	}
	return p.Dir, paths
}

// recordWriter streams NUL-terminated records to fn, so a huge listing costs no memory.
type recordWriter struct {
	fn      func([]byte)
	partial []byte
}

func (w *recordWriter) Write(b []byte) (int, error) {
	n := len(b)
	for len(b) > 0 {
		i := bytes.IndexByte(b, 0)
		if i < 0 {
			if len(w.partial) < 1<<16 { // a path is at most PATH_MAX; longer is no record of ours
				w.partial = append(w.partial, b...)
			}
			break
		}
		w.fn(append(w.partial, b[:i]...))
		w.partial = w.partial[:0]
		b = b[i+1:]
	}
	return n, nil
}

func (w *recordWriter) flush() {
	if len(w.partial) > 0 {
		w.fn(w.partial)
		w.partial = nil
	}
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// bareErr refuses a work-tree operation on a repository without one.
func bareErr(p *Repo) error {
	return &FieldError{"path", fmt.Sprintf("%s is a git directory without a work tree; give the directory of a checkout", p.c.show(p.GitDir))}
}

// CommitResult is a new commit.
type CommitResult struct {
	Hash    string `json:"hash"`
	Branch  string `json:"branch"`
	Subject string `json:"subject"`
	Files   int    `json:"files"`
}

// Commit records the index of the repository containing dir with message.
func (r *Runner) Commit(ctx context.Context, dir, message string) (CommitResult, error) {
	return with(ctx, r, dir, func(p *Repo, ctx context.Context) (CommitResult, error) { return p.Commit(ctx, message) })
}

// Commit records the index with message (read from stdin, never parsed as options).
func (p *Repo) Commit(ctx context.Context, message string) (CommitResult, error) {
	if strings.TrimSpace(message) == "" {
		return CommitResult{}, &FieldError{"message", "empty; describe the change"}
	}
	if strings.IndexByte(message, 0) >= 0 {
		return CommitResult{}, &FieldError{"message", "contains a NUL byte"}
	}
	if _, _, err := p.git(ctx, []byte(message), 64<<10, "commit", "--quiet", "--cleanup=strip", "--file=-"); err != nil {
		var ge *Error
		if errors.As(err, &ge) {
			s := ge.Stderr
			if strings.TrimSpace(s) == "" {
				s = "nothing staged to commit; stage files with git_add first"
			}
			if strings.Contains(s, "Please tell me who you are") || strings.Contains(s, "empty ident") {
				s = "git has no author identity; set user.name and user.email in ~/.gitconfig or the repository's config"
			}
			return CommitResult{}, fmt.Errorf("git commit: %s", strings.TrimSpace(s))
		}
		return CommitResult{}, notRepo(err)
	}
	out, _, err := p.git(ctx, nil, 1<<20, "log", "-1", "--no-color", logFormat, "HEAD", "--")
	if err != nil {
		return CommitResult{}, err
	}
	cs := parseLog(out, false)
	if len(cs) != 1 {
		return CommitResult{}, errors.New("git log: no commit after commit")
	}
	res := CommitResult{Hash: cs[0].Hash, Subject: cs[0].Subject}
	if st, err := p.Status(ctx); err == nil {
		res.Branch = st.Branch
	}
	if num, _, err := p.git(ctx, nil, 8<<20, "show", "--format=", "--numstat", "-z", "--no-ext-diff", "--no-textconv", "HEAD", "--"); err == nil {
		res.Files = len(parseNumstat(num))
	}
	return res, nil
}

package git

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Repo is a repository that Open located and verified: its git dir, common dir, object
// directories and work tree all resolve inside the workspace, and every git command runs
// with them given explicitly (GIT_DIR, GIT_WORK_TREE, ...) so nothing in the repository can
// point git elsewhere. Git reads no configuration file the repository controls: see
// config.go for what it reads instead. Close removes the hub's scratch directory.
type Repo struct {
	r         *Runner
	c         confine
	Dir       string // directory the call named; git runs there, so paths are relative to it
	WorkTree  string // "" for a bare repository
	GitDir    string
	CommonDir string
	shadow    string   // hub-owned stand-in for the common dir (see buildShadow)
	env       []string // environment of every git command on this repository
}

// pathErr is a refusal about the repository the "path" field led to.
func pathErr(format string, a ...any) error {
	return &FieldError{"path", fmt.Sprintf(format, a...)}
}

// Open finds the repository that contains dir, without looking above the workspace
// (r.Ceiling), checks that everything git would touch stays inside the workspace, and
// prepares the configuration git will run with. The caller must Close the Repo.
func (r *Runner) Open(ctx context.Context, dir string) (*Repo, error) {
	if r.Ceiling == "" {
		return nil, errors.New("git: Runner.Ceiling is empty; set it to the workspace root")
	}
	rootDir, err := filepath.EvalSymlinks(r.Ceiling)
	if err != nil {
		return nil, fmt.Errorf("git: workspace root %s: %w", r.Ceiling, err)
	}
	c := confine{dir: rootDir}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, pathErr("%q: %v", dir, err)
	}
	// The caller resolved dir against the workspace already; resolve it again here so this
	// package's guarantee does not depend on that.
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	start, err := c.resolve(abs)
	if err != nil {
		if errors.Is(err, errOutside) {
			return nil, pathErr("%q is outside the workspace; give a directory inside it", dir)
		}
		return nil, pathErr("%q: %v", dir, err)
	}
	p := &Repo{r: r, c: c, Dir: start}
	if err := p.locate(); err != nil {
		return nil, err
	}
	if err := p.findCommonDir(); err != nil {
		return nil, err
	}
	if err := p.checkLinks(); err != nil {
		return nil, err
	}
	if err := p.checkAlternates(); err != nil {
		return nil, err
	}
	if err := p.configure(ctx); err != nil {
		p.Close()
		return nil, err
	}
	return p, nil
}

// Close removes the hub's scratch directory. It is safe to call more than once.
func (p *Repo) Close() error {
	if p.shadow == "" {
		return nil
	}
	err := os.RemoveAll(p.shadow)
	p.shadow = ""
	return err
}

// locate walks from Dir up to the workspace root, as git's discovery does, and stops at the
// first directory holding a .git entry (a directory, a "gitdir:" file or a symlink) that
// is a repository, or that is itself a git directory (a bare repository).
func (p *Repo) locate() error {
	for d := p.Dir; ; d = filepath.Dir(d) {
		dotgit := filepath.Join(d, ".git")
		if _, err := os.Lstat(dotgit); err == nil {
			gd, err := p.gitDirAt(d, dotgit)
			if err != nil {
				return err
			}
			if gd != "" {
				p.GitDir, p.WorkTree = gd, d
				return nil
			}
		} else if !errors.Is(err, fs.ErrNotExist) {
			return pathErr("%s: %v", p.c.show(dotgit), err)
		}
		if isGitDir(d) {
			p.GitDir = d
			return nil
		}
		if _, ok := p.c.below(d); !ok || d == p.c.dir {
			break
		}
	}
	return pathErr("not inside a git repository within the workspace; give the repository directory (git init it first)")
}

// gitDirAt returns the git directory a .git entry stands for, "" when it is a directory that
// is not a repository (git keeps looking upwards then), or an error when it points outside
// the workspace or at something that is not a repository.
func (p *Repo) gitDirAt(d, dotgit string) (string, error) {
	name := p.c.show(dotgit)
	real, err := p.c.resolve(dotgit)
	if errors.Is(err, errOutside) {
		return "", pathErr("%s is a symlink that leads outside the workspace; the git_* tools only use repositories inside it (replace the link with the repository itself)", name)
	}
	if err != nil {
		return "", pathErr("%s: %v", name, err)
	}
	st, err := os.Stat(real)
	if err != nil {
		return "", pathErr("%s: %v", name, err)
	}
	if st.IsDir() {
		if !isGitDir(real) {
			return "", nil
		}
		return real, nil
	}
	b, err := readSmall(real, maxPointerFile)
	if err != nil {
		return "", pathErr("%s: %v", name, err)
	}
	target, err := parseGitFile(b)
	if err != nil {
		return "", pathErr("%s is not a valid .git file: it %v; it should read \"gitdir: <path to the repository's git directory>\"", name, err)
	}
	joined := target
	if !filepath.IsAbs(target) {
		joined = d + string(filepath.Separator) + target // not Join: ".." is resolved physically, as git does
	}
	gd, err := p.c.resolve(joined)
	if errors.Is(err, errOutside) {
		return "", pathErr("%s points git at %q, outside the workspace; the git_* tools only use repositories inside it (delete the .git file, or move that repository into the workspace and point gitdir there)", name, target)
	}
	if err != nil {
		return "", pathErr("%s points git at %q, which does not exist in the workspace; fix the gitdir line or delete the .git file", name, target)
	}
	if !isGitDir(gd) {
		return "", pathErr("%s points git at %q, which is not a git directory; fix the gitdir line or delete the .git file", name, target)
	}
	return gd, nil
}

// isGitDir mirrors git's is_git_directory: a HEAD file, and objects/ and refs/ here or in
// the directory a commondir file names (checked later by findCommonDir).
func isGitDir(d string) bool {
	if st, err := os.Stat(filepath.Join(d, "HEAD")); err != nil || !st.Mode().IsRegular() {
		return false
	}
	if _, err := os.Lstat(filepath.Join(d, "commondir")); err == nil {
		return true
	}
	for _, sub := range []string{"objects", "refs"} {
		if st, err := os.Stat(filepath.Join(d, sub)); err != nil || !st.IsDir() {
			return false
		}
	}
	return true
}

// findCommonDir follows a linked worktree's commondir file (or takes the git dir itself) and
// checks the result is a repository inside the workspace.
func (p *Repo) findCommonDir() error {
	p.CommonDir = p.GitDir
	f := filepath.Join(p.GitDir, "commondir")
	if _, err := os.Lstat(f); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	name := p.c.show(f)
	b, err := readSmall(f, maxPointerFile)
	if err != nil {
		return pathErr("%s: %v", name, err)
	}
	target, err := parseCommonDir(b)
	if err != nil {
		return pathErr("%s %v; it should hold the path of the main repository's git directory", name, err)
	}
	joined := target
	if !filepath.IsAbs(target) {
		joined = p.GitDir + string(filepath.Separator) + target
	}
	cd, err := p.c.resolve(joined)
	if errors.Is(err, errOutside) {
		return pathErr("%s points git at %q, outside the workspace; the git_* tools only use repositories inside it (remove this worktree with git worktree remove, or move the main repository into the workspace)", name, target)
	}
	if err != nil {
		return pathErr("%s points git at %q, which does not exist in the workspace; fix or delete the worktree", name, target)
	}
	for _, sub := range []string{"objects", "refs"} {
		if st, err := os.Stat(filepath.Join(cd, sub)); err != nil || !st.IsDir() {
			return pathErr("%s points git at %q, which is not a git directory (no %s/); fix or delete the worktree", name, target, sub)
		}
	}
	p.CommonDir = cd
	return nil
}

// checkLinks refuses symlinks inside the git directories that lead out of the workspace:
// git follows them when it reads and writes the index, HEAD, refs, logs and objects (ref and
// object writes create files inside whatever directory a link names). Loose refs and logs
// are walked; objects only to the fan-out directories, where new objects are written.
func (p *Repo) checkLinks() error {
	dirs := []string{p.GitDir}
	if p.CommonDir != p.GitDir {
		dirs = append(dirs, p.CommonDir)
	}
	check := func(path string) error {
		if _, err := p.c.resolve(path); errors.Is(err, errOutside) {
			return pathErr("%s is a symlink that leads outside the workspace; git would read or write through it (replace the link with the real file or directory)", p.c.show(path))
		}
		return nil
	}
	shallow := func(dir string) error {
		ents, err := os.ReadDir(dir)
		if err != nil {
			return nil // absent directories are git's business
		}
		for _, e := range ents {
			if e.Type()&fs.ModeSymlink != 0 {
				if err := check(filepath.Join(dir, e.Name())); err != nil {
					return err
				}
			}
		}
		return nil
	}
	deep := func(dir string) error {
		return filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			if d.Type()&fs.ModeSymlink != 0 {
				return check(path)
			}
			return nil
		})
	}
	for _, d := range dirs {
		if err := shallow(d); err != nil {
			return err
		}
		for _, sub := range []string{"refs", "logs"} {
			if err := deep(filepath.Join(d, sub)); err != nil {
				return err
			}
		}
		for _, sub := range []string{"objects", "objects/pack", "objects/info", "info"} {
			if err := shallow(filepath.Join(d, sub)); err != nil {
				return err
			}
		}
	}
	return nil
}

// maxAlternateDepth is git's own limit on alternates of alternates.
const maxAlternateDepth = 5

// checkAlternates refuses an object directory borrowed from outside the workspace
// (objects/info/alternates, followed recursively as git does): git would read that
// repository's objects, and git_show would print them.
func (p *Repo) checkAlternates() error {
	objects, err := p.c.resolve(filepath.Join(p.CommonDir, "objects"))
	if err != nil {
		return pathErr("%s/objects: %v", p.c.show(p.CommonDir), err)
	}
	seen := map[string]bool{objects: true}
	var walk func(dir string, depth int) error
	walk = func(dir string, depth int) error {
		f := filepath.Join(dir, "info", "alternates")
		if _, err := os.Lstat(f); errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		name := p.c.show(f)
		b, err := readSmall(f, 1<<20)
		if err != nil {
			return pathErr("%s: %v", name, err)
		}
		entries, err := parseAlternates(b)
		if err != nil {
			return pathErr("%s: %v; fix or delete it", name, err)
		}
		for _, e := range entries {
			joined := e
			if !filepath.IsAbs(e) {
				joined = dir + string(filepath.Separator) + e
			}
			// git normalises the joined path textually (strbuf_normalize_path) before use.
			alt, err := p.c.resolve(filepath.Clean(joined))
			if errors.Is(err, errOutside) {
				return pathErr("%s lists %q, an object directory outside the workspace; make the repository self-contained (git repack -a -d, then delete %s)", name, e, name)
			}
			if err != nil {
				continue // git skips a missing alternate with a warning
			}
			if seen[alt] || depth >= maxAlternateDepth {
				continue
			}
			seen[alt] = true
			if err := walk(alt, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	return walk(objects, 0)
}

// configure reads the repository's and the user's config through the allow-list, checks
// core.worktree, builds the hub's stand-in common dir and the environment git runs with.
func (p *Repo) configure(ctx context.Context) error {
	shadow, err := os.MkdirTemp(p.r.TempDir, "switchboard-git-")
	if err != nil {
		return fmt.Errorf("git: scratch directory: %w", err)
	}
	p.shadow = shadow
	if real, err := filepath.EvalSymlinks(shadow); err != nil {
		return fmt.Errorf("git: scratch directory: %w", err)
	} else if _, inside := p.c.below(real); inside {
		// The agent could rewrite the hub's config file between Open and the git command.
		return fmt.Errorf("git: the temporary directory %s is inside the workspace; set TMPDIR to a directory outside it", filepath.Dir(real))
	}

	cfgPath := filepath.Join(p.CommonDir, "config")
	var repoCfg []configEntry
	if _, err := os.Lstat(cfgPath); err == nil {
		if _, err := readSmall(cfgPath, 4<<20); err != nil {
			return pathErr("%s: %v", p.c.show(cfgPath), err)
		}
		out, err := p.r.listConfig(ctx, shadow, "--file", cfgPath, "--no-includes")
		if err != nil {
			return pathErr("%s cannot be read: %v; fix or remove the offending line", p.c.show(cfgPath), err)
		}
		repoCfg = parseConfigList(out)
	}
	format, err := checkFormat(repoCfg, p.c.show(cfgPath))
	if err != nil {
		return pathErr("%v", err)
	}
	if err := p.checkWorkTreeConfig(repoCfg, cfgPath); err != nil {
		return err
	}
	// The user's own identity and ignore file still apply; nothing else of ~/.gitconfig does.
	// A missing or unreadable ~/.gitconfig just contributes nothing.
	var userCfg []configEntry
	if out, err := p.r.listConfig(ctx, shadow, "--global", "--includes"); err == nil {
		userCfg = parseConfigList(out)
	}

	if err := p.buildShadow(format); err != nil {
		return err
	}
	pairs := allowedConfig(userCfg, true)
	pairs = append(pairs, allowedConfig(repoCfg, false)...)
	pairs = append(pairs, hubConfig...)
	env := append(p.r.baseEnv[:len(p.r.baseEnv):len(p.r.baseEnv)],
		"GIT_DIR="+p.GitDir,
		"GIT_COMMON_DIR="+shadow,
		"GIT_OBJECT_DIRECTORY="+filepath.Join(p.CommonDir, "objects"),
		"GIT_CEILING_DIRECTORIES="+filepath.Dir(p.c.dir))
	if p.WorkTree != "" {
		env = append(env, "GIT_WORK_TREE="+p.WorkTree)
	}
	p.env = append(env, configEnv(pairs)...)
	return nil
}

// checkWorkTreeConfig refuses core.worktree unless it names the work tree the hub found: git
// would otherwise read and write files wherever it points. (The hub passes GIT_WORK_TREE, which
// wins over core.worktree; refusing instead of silently overriding keeps a repository set up
// this way from being misread.)
func (p *Repo) checkWorkTreeConfig(cfg []configEntry, cfgPath string) error {
	var wt string
	found := false
	for _, e := range cfg {
		if e.Key == "core.worktree" {
			wt, found = e.Value, true
		}
	}
	if !found {
		return nil
	}
	name := p.c.show(cfgPath)
	if p.WorkTree == "" {
		return pathErr("%s is a git directory whose core.worktree names a work tree (%q); give the work tree's directory as path", p.c.show(p.GitDir), wt)
	}
	joined := wt
	if !filepath.IsAbs(wt) {
		joined = p.GitDir + string(filepath.Separator) + wt
	}
	real, err := p.c.resolve(joined)
	switch {
	case errors.Is(err, errOutside):
		return pathErr("core.worktree in %s is %q, outside the workspace; git would read and write files there. Remove it (git config --unset core.worktree) so the work tree is the directory that holds .git", name, wt)
	case err != nil:
		return pathErr("core.worktree in %s is %q, which does not exist in the workspace; remove it (git config --unset core.worktree)", name, wt)
	case real != p.WorkTree:
		return pathErr("core.worktree in %s is %q, not %s, the directory that holds .git; remove it (git config --unset core.worktree) or give that work tree as path", name, wt, p.c.show(p.WorkTree))
	}
	return nil
}

// buildShadow makes the hub's stand-in for the common dir. GIT_COMMON_DIR is where git reads
// "config", "info/attributes" and "hooks" from; pointing it here means it reads the hub's
// config file and finds no attributes file and no hooks, whatever the repository holds. The
// entries git must share with the real repository (refs, logs, packed-refs, objects, shallow,
// worktrees, info/exclude) are symlinks to it; writes to refs and logs go through them (git
// creates lock files next to the ref, inside the linked directory).
func (p *Repo) buildShadow(f repoFormat) error {
	if err := os.WriteFile(filepath.Join(p.shadow, "config"), f.file(p.WorkTree == ""), 0o600); err != nil {
		return fmt.Errorf("git: scratch config: %w", err)
	}
	if p.WorkTree != "" {
		// git creates logs/refs/heads/<branch> through the link; a dangling link would fail.
		if err := os.Mkdir(filepath.Join(p.CommonDir, "logs"), 0o777); err != nil && !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("git: %s/logs: %w", p.c.show(p.CommonDir), err)
		}
	}
	for _, name := range []string{"refs", "logs", "packed-refs", "objects", "shallow", "worktrees"} {
		if err := os.Symlink(filepath.Join(p.CommonDir, name), filepath.Join(p.shadow, name)); err != nil {
			return fmt.Errorf("git: scratch directory: %w", err)
		}
	}
	if err := os.Mkdir(filepath.Join(p.shadow, "info"), 0o700); err != nil {
		return fmt.Errorf("git: scratch directory: %w", err)
	}
	if err := os.Symlink(filepath.Join(p.CommonDir, "info", "exclude"), filepath.Join(p.shadow, "info", "exclude")); err != nil {
		return fmt.Errorf("git: scratch directory: %w", err)
	}
	return nil
}

// listConfig runs `git config --list --null` with extra selection arguments, outside any
// repository (in the scratch directory, discovery stopped above it) and with the user's
// global config reachable, so it lists exactly the file asked for. Listing parses a file; it
// runs nothing.
func (r *Runner) listConfig(ctx context.Context, scratch string, sel ...string) ([]byte, error) {
	env := make([]string, 0, len(r.baseEnv)+4)
	for _, kv := range r.baseEnv {
		if !strings.HasPrefix(kv, "GIT_CONFIG_GLOBAL=") {
			env = append(env, kv)
		}
	}
	env = append(env, "GIT_CEILING_DIRECTORIES="+filepath.Dir(scratch))
	env = append(env, configEnv(nil)...)
	args := append([]string{"config"}, sel...)
	out, _, err := r.exec(ctx, scratch, env, nil, 8<<20, append(args, "--null", "--list")...)
	if err != nil {
		var ge *Error
		if errors.As(err, &ge) {
			return nil, errors.New(strings.TrimSpace(ge.Stderr))
		}
		return nil, err
	}
	return out, nil
}

// git runs git on the repository, in Dir, with the verified locations and the hub's config.
func (p *Repo) git(ctx context.Context, stdin []byte, limit int, args ...string) ([]byte, bool, error) {
	return p.r.exec(ctx, p.Dir, p.env, stdin, limit, args...)
}

// gitEnv is git with extra environment variables (later entries win).
func (p *Repo) gitEnv(ctx context.Context, extra []string, stdin []byte, limit int, args ...string) ([]byte, bool, error) {
	env := append(p.env[:len(p.env):len(p.env)], extra...)
	return p.r.exec(ctx, p.Dir, env, stdin, limit, args...)
}

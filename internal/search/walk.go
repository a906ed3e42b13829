// Package search finds files and text in a directory tree the way ripgrep does: .gitignore,
// .ignore and .git/info/exclude rules are honoured, hidden files and directories are skipped,
// symlinks are not followed, binary files are not searched. file_grep and file_glob are built on
// it, and so is rag_ingest's choice of files (internal/rag), so that every tool that walks the
// workspace counts the same files. It imports nothing from MCP.
//
// Confinement: a walk starts from an os.Root opened on the search directory and descends with
// one os.Root per directory (openat relative to the parent's handle), so a directory swapped for
// a symlink during the walk cannot lead the walk out of the tree.
package search

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"

	"github.com/switchboard-hub/switchboard/internal/workspace"
)

// WalkOptions select what a walk visits.
type WalkOptions struct {
	// IncludeIgnored visits files that ignore rules exclude and hidden files (names starting
	// with "."). The .git directory itself is never entered.
	IncludeIgnored bool
	// Base is the start directory's path components relative to the directory Parents'
	// Dir fields are relative to (the workspace root); see LoadParents.
	Base []string
	// Parents are ignore files of directories above the walk's start, outermost first.
	Parents []IgnoreFile
	// Skip, when set, leaves out entries whatever IncludeIgnored says: the hub's own state and
	// paths the policy denies. It gets the slash path relative to the workspace root (Base
	// prefixed) and whether the entry is a directory (a skipped directory is not entered).
	Skip func(rel string, isDir bool) bool
	// Omitted, when set, hears of the entries an ignore rule leaves out (why "ignored") and of
	// symlinks (why "symlink"), with the slash path relative to the walk's start: for callers
	// that report what they left out. Hidden names, .git, Skip's entries, special files and
	// write temp files go unmentioned.
	Omitted func(rel string, isDir bool, why string)
}

// LoadParents reads the ignore files of every directory from the top of fsys down to, but not
// including, start (a slash path in fsys), so that a search of a sub-directory honours the same
// rules as a search of the whole tree.
func LoadParents(fsys fs.FS, start string) (base []string, parents []IgnoreFile) {
	start = strings.Trim(path.Clean("/"+start), "/")
	if start == "" {
		return nil, nil
	}
	base = strings.Split(start, "/")
	for i := 0; i < len(base); i++ {
		dir := strings.Join(base[:i], "/")
		join := func(n string) string {
			if dir == "" {
				return n
			}
			return dir + "/" + n
		}
		domain := slices.Clone(base[:i])
		if b, err := fs.ReadFile(fsys, join(".git/info/exclude")); err == nil {
			parents = append(parents, IgnoreFile{Dir: domain, Kind: KindGit, Content: b})
		}
		if b, err := fs.ReadFile(fsys, join(".gitignore")); err == nil {
			parents = append(parents, IgnoreFile{Dir: domain, Kind: KindGit, Content: b})
		}
		if b, err := fs.ReadFile(fsys, join(".ignore")); err == nil {
			parents = append(parents, IgnoreFile{Dir: domain, Kind: KindIgnore, Content: b})
		}
	}
	return base, parents
}

// IgnoreFile is the content of one ignore file and where it lives.
type IgnoreFile struct {
	Dir     []string // directory components, relative to the workspace root
	Kind    int      // KindGit (.gitignore, .git/info/exclude) or KindIgnore (.ignore)
	Content []byte
}

// Kinds of ignore file, in rising precedence (ripgrep: a .ignore match anywhere beats a
// .gitignore match).
const (
	KindGit = iota
	KindIgnore
)

// ignoreSet is the patterns in force in one directory: two stacks, each in ascending priority.
type ignoreSet struct {
	git, ign []gitignore.Pattern
}

func (s ignoreSet) excluded(p []string, isDir bool) bool {
	if r := lastMatch(s.ign, p, isDir); r != gitignore.NoMatch {
		return r == gitignore.Exclude
	}
	return lastMatch(s.git, p, isDir) == gitignore.Exclude
}

func lastMatch(ps []gitignore.Pattern, p []string, isDir bool) gitignore.MatchResult {
	for i := len(ps) - 1; i >= 0; i-- {
		if r := ps[i].Match(p, isDir); r != gitignore.NoMatch {
			return r
		}
	}
	return gitignore.NoMatch
}

func parsePatterns(content []byte, domain []string) []gitignore.Pattern {
	var out []gitignore.Pattern
	sc := bufio.NewScanner(bytes.NewReader(content))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		line := strings.TrimSuffix(sc.Text(), "\r")
		if line == "" || strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "" {
			continue
		}
		// A leading "\#" or "\!" escapes the special meaning.
		if strings.HasPrefix(line, `\#`) || strings.HasPrefix(line, `\!`) {
			line = line[1:]
		}
		// go-git handles "/name" (anchored), "dir/" (directories only), "a/b" (anchored
		// glob), "**" and "!" (re-include).
		out = append(out, gitignore.ParsePattern(line, domain))
	}
	return out
}

// ErrStop may be returned by a visit function to end a walk early without error.
var ErrStop = errors.New("stop walk")

// walker holds the state of one walk.
type walker struct {
	fast  *fastOpener
	opts  WalkOptions
	nbase int
	visit func(rel string, dir *os.Root, name string, isDir bool) error
}

// Walk visits every entry under root in sorted, depth-first order, honouring ignore rules and
// hidden names as opts says. visit gets the slash path relative to root, the directory handle
// the entry lives in (valid only during the call) and its name. Symlinks are skipped.
func Walk(ctx context.Context, root *os.Root, opts WalkOptions, visit func(rel string, dir *os.Root, name string, isDir bool) error) error {
	var fast *fastOpener
	if !portableOnly {
		if fast = newFastOpener(root); fast != nil {
			defer fast.close()
		}
	}
	return walk(ctx, root, opts, fast, visit)
}

// walk is Walk with a given fast opener (nil: list directories through os.Root, whose
// ReadDir lstat's every entry; the fast path reads the types getdents already reports).
func walk(ctx context.Context, root *os.Root, opts WalkOptions, fast *fastOpener, visit func(rel string, dir *os.Root, name string, isDir bool) error) error {
	w := &walker{opts: opts, visit: visit, nbase: len(opts.Base), fast: fast}
	var set ignoreSet
	for _, pf := range opts.Parents {
		ps := parsePatterns(pf.Content, pf.Dir)
		if pf.Kind == KindIgnore {
			set.ign = append(set.ign, ps...)
		} else {
			set.git = append(set.git, ps...)
		}
	}
	err := w.dir(ctx, root, slices.Clone(opts.Base), set)
	if errors.Is(err, ErrStop) {
		return nil
	}
	return err
}

// omit tells opts.Omitted (if any) that relDir/name was left out.
func (w *walker) omit(relDir, name string, isDir bool, why string) {
	if w.opts.Omitted == nil {
		return
	}
	if relDir != "" {
		name = relDir + "/" + name
	}
	w.opts.Omitted(name, isDir, why)
}

func (w *walker) readDir(d *os.Root, relDir string) ([]fs.DirEntry, error) {
	if w.fast != nil {
		if relDir == "" {
			relDir = "."
		}
		if des, err := w.fast.readDir(relDir); err == nil {
			return des, nil
		}
	}
	f, err := d.Open(".")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.ReadDir(-1)
}

// readSmall reads an ignore file; one that is not a regular file (a FIFO named .gitignore would
// hang a plain open) counts as absent.
func readSmall(dir *os.Root, name string) []byte {
	f, st, err := workspace.OpenInRoot(dir, name)
	if err != nil {
		return nil
	}
	defer f.Close()
	if !st.Mode().IsRegular() {
		return nil
	}
	b, _ := io.ReadAll(io.LimitReader(f, 1<<20))
	return b
}

func (w *walker) dir(ctx context.Context, d *os.Root, comps []string, set ignoreSet) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	relDir := strings.Join(comps[w.nbase:], "/")
	des, err := w.readDir(d, relDir)
	if err != nil && len(des) == 0 {
		return nil // unreadable directory: skip, as rg does (it warns)
	}
	slices.SortFunc(des, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	if !w.opts.IncludeIgnored {
		// Copy-on-extend: children must not see siblings' patterns, and appending to a shared
		// backing array would let them.
		hasGit := false
		for _, de := range des {
			switch de.Name() {
			case ".git":
				hasGit = true
			case ".gitignore":
				if b := readSmall(d, ".gitignore"); len(b) > 0 {
					set.git = append(slices.Clip(set.git), parsePatterns(b, comps)...)
				}
			case ".ignore":
				if b := readSmall(d, ".ignore"); len(b) > 0 {
					set.ign = append(slices.Clip(set.ign), parsePatterns(b, comps)...)
				}
			}
		}
		if hasGit {
			if b := readSmall(d, ".git/info/exclude"); len(b) > 0 {
				// Lowest priority of the git rules in this directory.
				set.git = append(parsePatterns(b, comps), slices.Clip(set.git)...)
			}
		}
	}
	child := make([]string, len(comps)+1)
	copy(child, comps)
	for _, de := range des {
		name := de.Name()
		t := de.Type()
		link := t&fs.ModeSymlink != 0 // never followed; mentioned to Omitted once the rules below pass it
		isDir := de.IsDir()
		if !link && !isDir && !t.IsRegular() {
			continue // sockets, devices, fifos (opens check again: the entry may be swapped)
		}
		if !isDir && workspace.IsTempName(name) {
			continue // a write's temp file, live or left by a killed hub: never a result
		}
		if name == ".git" && isDir {
			continue
		}
		if w.opts.Skip != nil {
			child[len(comps)] = name
			if w.opts.Skip(strings.Join(child[:len(comps)+1], "/"), isDir) {
				continue
			}
		}
		if !w.opts.IncludeIgnored {
			if name[0] == '.' {
				continue
			}
			child[len(comps)] = name
			if set.excluded(child, isDir) {
				if !link {
					w.omit(relDir, name, isDir, "ignored")
				}
				continue
			}
		}
		if link {
			w.omit(relDir, name, false, "symlink")
			continue
		}
		rel := name
		if relDir != "" {
			rel = relDir + "/" + name
		}
		if err := w.visit(rel, d, name, isDir); err != nil {
			if errors.Is(err, fs.SkipDir) {
				continue
			}
			return err
		}
		if isDir {
			// Not d.OpenRoot: it opens without O_NONBLOCK, so a directory swapped for a FIFO
			// after it was listed would hang the walk in open(2).
			sub, err := workspace.OpenRootIn(d, name)
			if err != nil {
				continue
			}
			next := make([]string, len(comps)+1)
			copy(next, comps)
			next[len(comps)] = name
			err = w.dir(ctx, sub, next, set)
			sub.Close()
			if err != nil {
				return err
			}
		}
	}
	return nil
}

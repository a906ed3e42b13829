package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// ErrProtected is returned (wrapped) for a path that is part of the hub's own state.
var ErrProtected = errors.New("is part of Switchboard's own state (its config and policy, tokens, audit log or data); no tool may read or change it — edit it yourself, or use the dashboard or the CLI")

// Protect marks absolute paths (files or directories) as the hub's own state: its config file,
// token, audit log, data and runtime directories. When the workspace contains them (a hub
// started in the home directory) no tool may open, list, search, change or hand them to another
// program, by any spelling: relative, absolute, through "..", or through a symlink inside the
// workspace. Paths outside the workspace are ignored (the sandbox already keeps tools out).
//
// It is meant to be called once, before the root is shared.
func (r *Root) Protect(paths ...string) {
	for _, p := range paths {
		if p == "" || !filepath.IsAbs(p) {
			continue
		}
		p = filepath.Clean(p)
		if real, err := filepath.EvalSymlinks(p); err == nil {
			p = real
		}
		if !strings.HasPrefix(p, r.dir+string(filepath.Separator)) {
			continue // outside, or the root itself: nothing to hide inside the workspace
		}
		rel := strings.TrimPrefix(p, r.dir+string(filepath.Separator))
		if !slices.Contains(r.protected, rel) {
			r.protected = append(r.protected, rel)
		}
	}
}

// ProtectedRel reports whether rel (clean, relative to the root, OS separators) is or lies
// inside a protected path. It is a string check: guardState also resolves symlinks.
func (r *Root) ProtectedRel(rel string) bool {
	for _, p := range r.protected {
		if rel == p || strings.HasPrefix(rel, p+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

// HasProtected reports whether the workspace contains any of the hub's own state.
func (r *Root) HasProtected() bool { return len(r.protected) > 0 }

// guardState refuses rel when it is, lies in, or (through symlinks) resolves into a protected
// path. Without protected paths inside the workspace it costs nothing.
func (r *Root) guardState(p, rel string) error {
	if len(r.protected) == 0 {
		return nil
	}
	if r.ProtectedRel(rel) {
		return fmt.Errorf("%q %w", p, ErrProtected)
	}
	// A symlink inside the workspace may point into protected state: resolve the longest
	// existing prefix (a file about to be created resolves through its parent).
	full := filepath.Join(r.dir, rel)
	for probe, rest := full, ""; ; {
		if real, err := filepath.EvalSymlinks(probe); err == nil {
			resolved := filepath.Join(real, rest)
			if resolved != r.dir && strings.HasPrefix(resolved, r.dir+string(filepath.Separator)) &&
				r.ProtectedRel(strings.TrimPrefix(resolved, r.dir+string(filepath.Separator))) {
				return fmt.Errorf("%q %w", p, ErrProtected)
			}
			return nil
		}
		parent := filepath.Dir(probe)
		if parent == probe || len(parent) < len(r.dir) {
			return nil
		}
		rest = filepath.Join(filepath.Base(probe), rest)
		probe = parent
	}
}

// guardedFS is the workspace's fs.FS with the hub's own state left out: opening it fails and
// directory listings do not show it (RAG ingestion and ignore-file loading walk this).
type guardedFS struct {
	fsys fs.FS
	r    *Root
	skip func(rel string, isDir bool) bool // more to leave out (FilteredFS), or nil
}

// ErrFiltered is returned (wrapped) by a FilteredFS for a path its filter leaves out.
var ErrFiltered = errors.New("is left out by the policy")

// FilteredFS is FS with the entries skip names left out as well (slash paths relative to the
// root): for walks that must honour the policy's path rules.
func (r *Root) FilteredFS(skip func(rel string, isDir bool) bool) fs.FS {
	return guardedFS{fsys: safeFS{r.root}, r: r, skip: skip}
}

func (g guardedFS) check(op, name string) error {
	rel := filepath.FromSlash(path.Clean(name))
	if err := g.r.guardState(name, rel); err != nil {
		return &fs.PathError{Op: op, Path: name, Err: err}
	}
	if g.skip != nil && name != "." && g.skip(path.Clean(name), false) {
		return &fs.PathError{Op: op, Path: name, Err: fmt.Errorf("%q %w", name, ErrFiltered)}
	}
	return nil
}

func (g guardedFS) hidden(dir string, de fs.DirEntry) bool {
	rel := path.Join(dir, de.Name())
	return g.r.ProtectedRel(filepath.FromSlash(rel)) || (g.skip != nil && g.skip(rel, de.IsDir()))
}

func (g guardedFS) Open(name string) (fs.File, error) {
	if err := g.check("open", name); err != nil {
		return nil, err
	}
	return g.fsys.Open(name)
}

func (g guardedFS) ReadDir(name string) ([]fs.DirEntry, error) {
	if err := g.check("readdir", name); err != nil {
		return nil, err
	}
	des, err := fs.ReadDir(g.fsys, name)
	dir := path.Clean(name)
	return slices.DeleteFunc(des, func(de fs.DirEntry) bool { return g.hidden(dir, de) }), err
}

func (g guardedFS) Stat(name string) (fs.FileInfo, error) {
	if err := g.check("stat", name); err != nil {
		return nil, err
	}
	return fs.Stat(g.fsys, name)
}

func (g guardedFS) ReadFile(name string) ([]byte, error) {
	if err := g.check("readfile", name); err != nil {
		return nil, err
	}
	return fs.ReadFile(g.fsys, name)
}

// Canonical returns the one spelling of p that policy path rules are matched against: the
// slash path relative to the root, cleaned, with symlinks inside the workspace resolved ("."
// for the root). "./src/a", "x/../src/a", "/abs/workspace/src/a" and a link to src/a all give
// "src/a". A path outside the workspace is an error (the tool refuses it anyway).
func (r *Root) Canonical(p string) (string, error) {
	if p == "" {
		p = "."
	}
	rel, err := r.rel(p)
	if err != nil {
		return "", err
	}
	full := filepath.Join(r.dir, rel)
	for probe, rest := full, ""; ; {
		if real, err := filepath.EvalSymlinks(probe); err == nil {
			resolved := filepath.Join(real, rest)
			switch {
			case resolved == r.dir:
				return ".", nil
			case strings.HasPrefix(resolved, r.dir+string(filepath.Separator)):
				return filepath.ToSlash(strings.TrimPrefix(resolved, r.dir+string(filepath.Separator))), nil
			}
			return "", fmt.Errorf("%q: %w", p, ErrOutside)
		}
		parent := filepath.Dir(probe)
		if parent == probe || len(parent) < len(r.dir) {
			return filepath.ToSlash(rel), nil
		}
		rest = filepath.Join(filepath.Base(probe), rest)
		probe = parent
	}
}

// OpenExact opens dir (absolute, clean, symlinks resolved: the directory a decision was made
// about) as a workspace, and makes sure the directory opened is dir itself: a path component
// swapped for a symlink between the decision and the open is refused instead of becoming the
// workspace. The returned root works by handle from then on, whatever later happens to the name.
// Where the kernel cannot name an open directory (no /proc) it is Open with a re-check.
func OpenExact(dir string) (*Root, error) {
	f, err := os.OpenFile(dir, os.O_RDONLY|oNonblock|oDirectory, 0)
	if err != nil {
		return nil, fmt.Errorf("open workspace %q: %w; give an existing directory", dir, err)
	}
	defer f.Close()
	if got := openedPath(f); got != "" && got != dir {
		return nil, fmt.Errorf("open workspace %q: it now leads to %s (a symlink was swapped in); refusing it", dir, got)
	}
	rr, err := reopenRoot(f)
	if err != nil {
		r, err := Open(dir)
		if err != nil {
			return nil, err
		}
		if r.dir != dir {
			r.Close()
			return nil, fmt.Errorf("open workspace %q: it now leads to %s (a symlink was swapped in); refusing it", dir, r.dir)
		}
		return r, nil
	}
	return &Root{dir: dir, root: rr, maxReadBytes: DefaultMaxReadBytes}, nil
}

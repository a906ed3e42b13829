package git

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// errOutside is what confine.resolve returns for a path that leaves the workspace; it is the
// same whether or not anything exists out there, so a .git file or symlink cannot be used to
// probe the host.
var errOutside = errors.New("outside the workspace")

// confine resolves paths that git would follow (.git files, commondir, alternates,
// core.worktree, symlinks inside .git) and keeps them inside one directory, the workspace.
type confine struct {
	dir string // absolute, symlinks resolved
}

// below returns p's path below the root ("" for the root itself) if p, taken literally, is
// the root or names something under it.
func (c confine) below(p string) (string, bool) {
	if p == c.dir {
		return "", true
	}
	prefix := c.dir
	if !strings.HasSuffix(prefix, string(filepath.Separator)) {
		prefix += string(filepath.Separator)
	}
	if rest, ok := strings.CutPrefix(p, prefix); ok {
		return rest, true
	}
	return "", false
}

// resolve returns the physical path of p (absolute, not cleaned: ".." after a symlink means
// the parent of the link's target, as for the kernel and git's realpath), walking it one
// component at a time so that no step — a symlink, an absolute link target, a ".." — leaves
// the root. It never looks at anything outside the root; a path that would go there is
// errOutside. A missing component is fs.ErrNotExist.
func (c confine) resolve(p string) (string, error) {
	rest, ok := c.below(p)
	if !ok {
		return "", errOutside
	}
	cur := c.dir
	todo := splitPath(rest)
	for hops := 0; len(todo) > 0; {
		name := todo[0]
		todo = todo[1:]
		switch name {
		case "", ".":
			continue
		case "..":
			if cur == c.dir {
				return "", errOutside
			}
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, name)
		st, err := os.Lstat(next)
		if err != nil {
			return "", err
		}
		if st.Mode()&fs.ModeSymlink == 0 {
			if len(todo) > 0 && !st.IsDir() {
				return "", fmt.Errorf("%s: %w", next, fs.ErrNotExist)
			}
			cur = next
			continue
		}
		if hops++; hops > 40 {
			return "", fmt.Errorf("%s: too many levels of symbolic links", p)
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", err
		}
		if filepath.IsAbs(target) {
			r, ok := c.below(target)
			if !ok {
				return "", errOutside
			}
			cur = c.dir
			todo = append(splitPath(r), todo...)
		} else {
			todo = append(splitPath(target), todo...)
		}
	}
	return cur, nil
}

func splitPath(p string) []string {
	if p == "" {
		return nil
	}
	return strings.Split(p, string(filepath.Separator))
}

// show names p for an error message: relative to the workspace when it is inside.
func (c confine) show(p string) string {
	if rest, ok := c.below(p); ok {
		if rest == "" {
			return "."
		}
		return rest
	}
	return p
}

// readSmall reads a regular file of at most max bytes. It refuses anything else (a FIFO would
// block, a device would never end).
func readSmall(p string, max int64) ([]byte, error) {
	st, err := os.Stat(p)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", p)
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", p)
	}
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("%s is larger than %d bytes", p, max)
	}
	return b, nil
}

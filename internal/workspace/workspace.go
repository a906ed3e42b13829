// Package workspace is the sandboxed filesystem every file and directory tool goes through.
//
// It is built on os.Root, which resolves every path component with openat-style calls relative to
// an open directory handle. That closes the classic holes of string-prefix sandboxes (the attack
// classes behind CVE-2025-53109 and CVE-2025-53110 in the reference filesystem server): "..",
// absolute paths, sibling directories that share a prefix with the root ("/w/proj-evil" next to
// "/w/proj") and symlinks whose target lies outside the root are all refused by the kernel-level
// walk, not by a check that can be raced or fooled.
package workspace

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
)

// DefaultMaxReadBytes is the largest file Read returns whole. Larger files must be read in line
// windows (offset/limit), which keeps a single tool result well under the 10 MiB message cap.
const DefaultMaxReadBytes = 4 << 20

// ErrOutside is returned (wrapped) for any path that would leave the workspace. The message is the
// same whether or not the outside target exists, so callers cannot probe the host filesystem.
var ErrOutside = errors.New("path is outside the workspace")

// Root is an open workspace directory. It is safe for concurrent use.
type Root struct {
	dir          string // absolute, symlinks resolved
	root         *os.Root
	maxReadBytes int64
	protected    []string // the hub's own state inside the root, relative (Protect)

	sweepMu     sync.Mutex // guards the background sweep (temp.go)
	sweepCancel func()
	sweepDone   chan struct{}
	closed      bool
}

// Open opens dir as a workspace root. dir must exist and be a directory.
func Open(dir string) (*Root, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("workspace %q: %w", dir, err)
	}
	// Resolve symlinks once so that absolute client paths under either spelling compare equal.
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	// os.OpenRoot opens without O_NONBLOCK and would hang on a FIFO, so the path is checked with
	// a non-blocking open first. The root is then opened by name, not through the checked handle
	// (OpenRootPath), so that os.Root's file names, which show up in errors, read as the workspace
	// path; the window between the two is only open to whoever controls the workspace's own parent.
	f, err := os.OpenFile(abs, os.O_RDONLY|oNonblock|oDirectory, 0)
	if err != nil {
		return nil, fmt.Errorf("open workspace %q: %w; give an existing directory", abs, err)
	}
	f.Close()
	r, err := os.OpenRoot(abs)
	if err != nil {
		return nil, fmt.Errorf("open workspace %q: %w", abs, err)
	}
	return &Root{dir: abs, root: r, maxReadBytes: DefaultMaxReadBytes}, nil
}

// SetMaxReadBytes changes the whole-file read cap (n <= 0 restores the default).
func (r *Root) SetMaxReadBytes(n int64) {
	if n <= 0 {
		n = DefaultMaxReadBytes
	}
	r.maxReadBytes = n
}

// Dir returns the absolute workspace directory.
func (r *Root) Dir() string { return r.dir }

// Close stops a running temp-file sweep (StartSweep) and releases the directory handle.
func (r *Root) Close() error {
	r.stopSweep()
	return r.root.Close()
}

// rel turns a client path into a clean path relative to the root, refusing what can never be
// inside it. The kernel-level walk of os.Root still guards every component (symlinks included).
func (r *Root) rel(p string) (string, error) {
	if strings.IndexByte(p, 0) >= 0 {
		return "", fmt.Errorf("path %q contains a NUL byte; remove it", p)
	}
	if p == "" {
		return "", errors.New("path is empty; give a path relative to the workspace root, e.g. \"src/main.go\" or \".\"")
	}
	if err := checkLimits(p); err != nil {
		return "", err
	}
	if filepath.IsAbs(p) {
		clean := filepath.Clean(p)
		if clean == r.dir {
			return ".", nil
		}
		// Compare with a trailing separator so "/w/proj-evil" never matches root "/w/proj".
		if !strings.HasPrefix(clean, r.dir+string(filepath.Separator)) {
			return "", fmt.Errorf("%q: %w (root %s); use a path relative to the root", p, ErrOutside, r.dir)
		}
		p = strings.TrimPrefix(clean, r.dir+string(filepath.Separator))
	}
	clean := filepath.Clean(p)
	if clean == ".." || strings.HasPrefix(clean, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("%q: %w; \"..\" may not climb above the root", p, ErrOutside)
	}
	if err := r.guardState(p, clean); err != nil {
		return "", err
	}
	return clean, nil
}

// Path limits of Linux (PATH_MAX, NAME_MAX). Longer paths cannot be used by other programs and
// deep ones only exhaust resources (a 20,000-level dir_create), so they are refused up front.
const (
	MaxPathBytes      = 4096
	MaxComponentBytes = 255
)

// checkLimits refuses paths longer than MaxPathBytes or with a component over MaxComponentBytes.
func checkLimits(p string) error {
	if len(p) > MaxPathBytes {
		return fmt.Errorf("path is %d bytes, above the %d-byte limit (PATH_MAX); use a shorter path", len(p), MaxPathBytes)
	}
	for c := range strings.SplitSeq(p, string(filepath.Separator)) {
		if len(c) > MaxComponentBytes {
			return fmt.Errorf("path component %q… is %d bytes, above the %d-byte limit for one name (NAME_MAX); use a shorter name", c[:32], len(c), MaxComponentBytes)
		}
	}
	return nil
}

// wrap normalises errors from os.Root so that escapes read the same whatever lies outside.
func (r *Root) wrap(op, p string, err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	if strings.Contains(msg, "path escapes from parent") || errors.Is(err, ErrOutside) {
		return fmt.Errorf("%s %q: %w (a symlink or \"..\" leads out of the root)", op, p, ErrOutside)
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s %q: no such file or directory in the workspace; call dir_list to see what exists", op, p)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("%s %q: permission denied", op, p)
	}
	return fmt.Errorf("%s %q: %w", op, p, err)
}

// Resolve returns the absolute host path of p after checking that it, and every symlink on the
// way, stays inside the root. It is meant for handing a directory to another program (a process
// working directory), where an os.Root handle cannot be passed.
func (r *Root) Resolve(p string) (string, error) {
	if p == "" {
		p = "."
	}
	rel, err := r.rel(p)
	if err != nil {
		return "", err
	}
	if _, err := r.root.Stat(rel); err != nil {
		return "", r.wrap("resolve", p, err)
	}
	real, err := filepath.EvalSymlinks(filepath.Join(r.dir, rel))
	if err != nil {
		return "", r.wrap("resolve", p, err)
	}
	if real != r.dir && !strings.HasPrefix(real, r.dir+string(filepath.Separator)) {
		return "", fmt.Errorf("resolve %q: %w", p, ErrOutside)
	}
	return real, nil
}

// OpenDir opens directory p through the root's confined walk and returns the open handle and its
// absolute name. The handle pins the directory that was checked: a child process started in it
// (process.StartOptions.DirFile) runs there even if p is swapped for a symlink afterwards, which a
// path from Resolve cannot promise. The caller closes the handle.
func (r *Root) OpenDir(p string) (*os.File, string, error) {
	if p == "" {
		p = "."
	}
	rel, err := r.rel(p)
	if err != nil {
		return nil, "", err
	}
	f, st, err := r.openRead("open directory", p, rel)
	if err != nil {
		return nil, "", err
	}
	if !st.IsDir() {
		f.Close()
		return nil, "", fmt.Errorf("open directory %q: not a directory", p)
	}
	return f, filepath.Join(r.dir, rel), nil
}

// OpenWalkRoot opens directory p as an os.Root for a walk that descends one directory handle at
// a time (search.Walk, which rag_ingest uses too): confined like OpenDir, and never blocking on a
// directory swapped for a FIFO (OpenRootIn). The caller closes the root.
func (r *Root) OpenWalkRoot(p string) (*os.Root, error) {
	if p == "" {
		p = "."
	}
	rel, err := r.rel(p)
	if err != nil {
		return nil, err
	}
	root, err := OpenRootIn(r.root, rel)
	if err != nil {
		return nil, r.wrap("open directory", p, err)
	}
	return root, nil
}

// ReadResult is a whole file or a window of its lines.
type ReadResult struct {
	Content    string
	TotalLines int  // lines in the file (only counted for windowed reads)
	Truncated  bool // more lines follow the window
}

// ReadFile returns the whole file, refusing files larger than the read cap.
func (r *Root) ReadFile(p string) (string, error) {
	rel, err := r.rel(p)
	if err != nil {
		return "", err
	}
	f, st, err := r.openRead("read", p, rel)
	if err != nil {
		return "", err
	}
	defer f.Close()
	if st.IsDir() {
		return "", fmt.Errorf("read %q: is a directory; use dir_list", p)
	}
	if st.Size() > r.maxReadBytes {
		return "", fmt.Errorf("read %q: file is %d bytes, above the %d-byte limit for a whole read; pass offset and limit (lines) to read it in windows, or byte_offset and max_bytes for files with very long lines", p, st.Size(), r.maxReadBytes)
	}
	b, err := io.ReadAll(io.LimitReader(f, r.maxReadBytes+1))
	if err != nil {
		return "", r.wrap("read", p, err)
	}
	return string(b), nil
}

// ReadLines returns limit lines starting at line offset (0-based). limit <= 0 means up to the read
// cap. The file is streamed, so windows of files above the whole-read cap work.
func (r *Root) ReadLines(p string, offset, limit int) (ReadResult, error) {
	if offset < 0 {
		return ReadResult{}, fmt.Errorf("offset %d is negative; use 0 for the first line", offset)
	}
	rel, err := r.rel(p)
	if err != nil {
		return ReadResult{}, err
	}
	f, st, err := r.openRead("read", p, rel)
	if err != nil {
		return ReadResult{}, err
	}
	defer f.Close()
	if st.IsDir() {
		return ReadResult{}, fmt.Errorf("read %q: is a directory; use dir_list", p)
	}
	br := bufio.NewReaderSize(f, 64<<10)
	var (
		sb    strings.Builder
		line  int
		taken int
		res   ReadResult
	)
	for {
		chunk, err := br.ReadString('\n')
		if len(chunk) > 0 {
			if line >= offset && (limit <= 0 || taken < limit) {
				if int64(sb.Len()+len(chunk)) > r.maxReadBytes {
					res.Truncated = true
				} else {
					sb.WriteString(chunk)
					taken++
				}
			} else if line >= offset {
				res.Truncated = true
			}
			line++
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return ReadResult{}, r.wrap("read", p, err)
		}
	}
	res.Content = sb.String()
	res.TotalLines = line
	if offset > 0 && offset >= line {
		return ReadResult{}, fmt.Errorf("offset: line %d is past the end of %q, which has %d lines (offsets start at 0)", offset, p, line)
	}
	if taken == 0 && res.Truncated {
		// The first line of the window alone is above the budget: say so rather than return nothing.
		return ReadResult{}, fmt.Errorf("read %q: line %d alone is longer than the %d-byte window limit; read it in byte windows with byte_offset and max_bytes", p, offset, r.maxReadBytes)
	}
	return res, nil
}

// ByteWindow is a run of bytes of a file.
type ByteWindow struct {
	Content    string
	TotalBytes int64 // size of the file
	Next       int64 // offset to continue from; equals TotalBytes at the end
}

// ReadBytes returns up to max bytes of p from byte offset off (max <= 0 or above the read cap
// means the cap). A window that would end inside a UTF-8 sequence ends before it, so continuing
// from Next never splits a character. For files whose lines are too long for line windows.
func (r *Root) ReadBytes(p string, off int64, max int) (ByteWindow, error) {
	if off < 0 {
		return ByteWindow{}, fmt.Errorf("byte_offset %d is negative; use 0 for the start of the file", off)
	}
	if max <= 0 || int64(max) > r.maxReadBytes {
		max = int(r.maxReadBytes)
	}
	rel, err := r.rel(p)
	if err != nil {
		return ByteWindow{}, err
	}
	f, st, err := r.openRead("read", p, rel)
	if err != nil {
		return ByteWindow{}, err
	}
	defer f.Close()
	if st.IsDir() {
		return ByteWindow{}, fmt.Errorf("read %q: is a directory; use dir_list", p)
	}
	size := st.Size()
	if off > size || (off == size && off > 0) {
		return ByteWindow{}, fmt.Errorf("byte_offset: %d is past the end of %q, which is %d bytes", off, p, size)
	}
	buf := make([]byte, min(int64(max), size-off))
	n, err := f.ReadAt(buf, off)
	if err != nil && !errors.Is(err, io.EOF) {
		return ByteWindow{}, r.wrap("read", p, err)
	}
	buf = buf[:n]
	if off+int64(n) < size {
		if keep := utf8Boundary(buf); keep > 0 {
			buf = buf[:keep]
		} else if n > 0 {
			// Cutting the partial character would return nothing and never advance.
			return ByteWindow{}, fmt.Errorf("max_bytes: %d is smaller than the UTF-8 character at byte %d of %q; use max_bytes of 4 or more", max, off, p)
		}
	}
	return ByteWindow{Content: string(buf), TotalBytes: size, Next: off + int64(len(buf))}, nil
}

// utf8Boundary returns the length of b without a UTF-8 sequence cut off at its end.
func utf8Boundary(b []byte) int {
	for i := len(b) - 1; i >= 0 && i >= len(b)-4; i-- {
		c := b[i]
		if c < 0x80 {
			return len(b) // ASCII: nothing cut
		}
		if c >= 0xC0 { // a lead byte: is its sequence complete?
			need := 2
			switch {
			case c >= 0xF0:
				need = 4
			case c >= 0xE0:
				need = 3
			}
			if len(b)-i < need {
				return i
			}
			return len(b)
		}
	}
	return len(b)
}

// WriteFile replaces p atomically: the content goes to a temporary file in the same directory,
// is fsynced, and is renamed over the target, so a crash leaves either the old or the new file,
// never a torn one. An existing file keeps its permission bits; parents are created as needed.
func (r *Root) WriteFile(p string, content []byte) error {
	rel, err := r.rel(p)
	if err != nil {
		return err
	}
	if rel == "." {
		return fmt.Errorf("write %q: is the workspace root; name a file", p)
	}
	rel, err = r.followFinalLink(p, rel)
	if err != nil {
		return err
	}
	mode := fs.FileMode(0o644)
	if st, err := r.root.Lstat(rel); err == nil {
		if st.IsDir() {
			return fmt.Errorf("write %q: is a directory", p)
		}
		// The write itself would not block (the content goes to a new temp file renamed over
		// the target), but silently replacing a FIFO or socket some program listens on is not
		// what a file write means; the agent can delete it first if that is what it wants.
		if !st.Mode().IsRegular() {
			return NotRegular("write", p, st.Mode())
		}
		mode = st.Mode().Perm()
	} else if !errors.Is(err, fs.ErrNotExist) {
		return r.wrap("write", p, err)
	}
	if dir := filepath.Dir(rel); dir != "." {
		if err := r.root.MkdirAll(dir, 0o755); err != nil {
			return r.wrap("write", p, err)
		}
	}
	// A kill between here and the rename leaves tmp behind: its name (TempName) hides it from
	// every listing and lets the next start's sweep remove it (temp.go).
	tmp := filepath.Join(filepath.Dir(rel), TempName(filepath.Base(rel)))
	f, err := r.root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return r.wrap("write", p, err)
	}
	ok := false
	defer func() {
		if !ok {
			_ = r.root.Remove(tmp)
		}
	}()
	if _, err := f.Write(content); err != nil {
		f.Close()
		return r.wrap("write", p, err)
	}
	if testHookWritten != nil {
		testHookWritten(filepath.Join(r.dir, tmp))
	}
	// Chmod explicitly: the umask may have narrowed the mode given to OpenFile.
	if err := f.Chmod(mode); err != nil {
		f.Close()
		return r.wrap("write", p, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return r.wrap("write", p, err)
	}
	if err := f.Close(); err != nil {
		return r.wrap("write", p, err)
	}
	if err := r.root.Rename(tmp, rel); err != nil {
		return r.wrap("write", p, err)
	}
	ok = true
	return nil
}

// followFinalLink makes writes through a symlink that stays inside the root update the link's
// target (as a plain write would) instead of replacing the link with a regular file.
func (r *Root) followFinalLink(p, rel string) (string, error) {
	for i := 0; i < 16; i++ {
		st, err := r.root.Lstat(rel)
		if err != nil || st.Mode()&fs.ModeSymlink == 0 {
			if err != nil && !errors.Is(err, fs.ErrNotExist) {
				return "", r.wrap("write", p, err)
			}
			return rel, nil
		}
		target, err := r.root.Readlink(rel)
		if err != nil {
			return "", r.wrap("write", p, err)
		}
		if filepath.IsAbs(target) {
			next, err := r.rel(target)
			if err != nil {
				return "", fmt.Errorf("write %q: %w (symlink target)", p, ErrOutside)
			}
			rel = next
			continue
		}
		next := filepath.Clean(filepath.Join(filepath.Dir(rel), target))
		if next == ".." || strings.HasPrefix(next, ".."+string(filepath.Separator)) {
			return "", fmt.Errorf("write %q: %w (symlink target)", p, ErrOutside)
		}
		rel = next
	}
	return "", fmt.Errorf("write %q: too many levels of symbolic links", p)
}

// guardLink refuses an operation on a final path component that is a symlink leading out of the
// root. os.Root already refuses to follow such links; this also covers operations that act on the
// link entry itself and keep it (rename), so no tool moves an escaping link around. Delete is the
// exception: removing the link cannot reach its target.
func (r *Root) guardLink(op, p, rel string) error {
	if rel == "." {
		return nil
	}
	st, err := r.root.Lstat(rel)
	if err != nil || st.Mode()&fs.ModeSymlink == 0 {
		return nil
	}
	if _, err := r.followFinalLink(p, rel); err != nil {
		return fmt.Errorf("%s %q: %w (a symlink leads out of the root)", op, p, ErrOutside)
	}
	return nil
}

// EditResult reports what Edit changed.
type EditResult struct{ Replacements int }

// Edit replaces the first (or every) occurrence of old with new, atomically.
func (r *Root) Edit(p, old, new string, all bool) (EditResult, error) {
	if old == "" {
		return EditResult{}, errors.New("old_string is empty; give the exact text to replace")
	}
	content, err := r.ReadFile(p)
	if err != nil {
		return EditResult{}, err
	}
	n := strings.Count(content, old)
	if n == 0 {
		return EditResult{}, fmt.Errorf("old_string %s was not found in %q; read the file and copy the exact text, including whitespace", quoteShort(old), p)
	}
	if all {
		content = strings.ReplaceAll(content, old, new)
	} else {
		content = strings.Replace(content, old, new, 1)
		n = 1
	}
	if err := r.WriteFile(p, []byte(content)); err != nil {
		return EditResult{}, err
	}
	return EditResult{Replacements: n}, nil
}

func quoteShort(s string) string {
	const max = 80
	if len(s) > max {
		return fmt.Sprintf("%q… (%d bytes)", s[:max], len(s))
	}
	return fmt.Sprintf("%q", s)
}

// Delete removes a file, a symlink (never its target) or an empty directory.
func (r *Root) Delete(p string) error {
	rel, err := r.rel(p)
	if err != nil {
		return err
	}
	if rel == "." {
		return fmt.Errorf("delete %q: refusing to delete the workspace root", p)
	}
	// A symlink is removed as a link (unlinkat never follows the final component), so a link
	// whose target is outside may be deleted: the target is not touched. Links on the way to the
	// final component are still walked by os.Root, which refuses escaping ones.
	if err := r.root.Remove(rel); err != nil {
		if st, serr := r.root.Lstat(rel); serr == nil && st.IsDir() {
			return fmt.Errorf("delete %q: directory is not empty; delete its entries first", p)
		}
		return r.wrap("delete", p, err)
	}
	return nil
}

// Rename moves oldPath to newPath inside the workspace, creating newPath's parents.
func (r *Root) Rename(oldPath, newPath string) error {
	oldRel, err := r.rel(oldPath)
	if err != nil {
		return fmt.Errorf("oldPath: %w", err)
	}
	newRel, err := r.rel(newPath)
	if err != nil {
		return fmt.Errorf("newPath: %w", err)
	}
	if oldRel == "." || newRel == "." {
		return errors.New("rename: the workspace root itself cannot be renamed or replaced")
	}
	if err := r.guardLink("rename", oldPath, oldRel); err != nil {
		return fmt.Errorf("oldPath: %w", err)
	}
	if err := r.guardLink("rename", newPath, newRel); err != nil {
		return fmt.Errorf("newPath: %w", err)
	}
	st, err := r.root.Lstat(oldRel)
	if err != nil {
		return fmt.Errorf("oldPath: %w", r.wrap("rename", oldPath, err))
	}
	if err := r.guardMovedLinks(oldPath, oldRel, newRel, st); err != nil {
		return err
	}
	if dir := filepath.Dir(newRel); dir != "." {
		if err := r.root.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("newPath: %w", r.wrap("rename", newPath, err))
		}
	}
	if err := r.root.Rename(oldRel, newRel); err != nil {
		return r.wrap("rename", oldPath, err)
	}
	return nil
}

// guardMovedLinks refuses a rename after which a relative symlink would lead out of the root: the
// moved entry itself if it is a link ("a/b/l -> ../x" renamed to "l" points above the root), or a
// link inside a moved directory whose target climbs out of that directory. Absolute targets and
// targets within the moved subtree mean the same after the move and are not checked again.
func (r *Root) guardMovedLinks(oldPath, oldRel, newRel string, st fs.FileInfo) error {
	check := func(linkRel string) error {
		target, err := r.root.Readlink(linkRel)
		if err != nil || filepath.IsAbs(target) {
			return nil // absolute targets do not change meaning (and outside ones were refused by guardLink)
		}
		// Where the link will sit after the move.
		moved := newRel
		if linkRel != oldRel {
			moved = filepath.Join(newRel, strings.TrimPrefix(linkRel, oldRel+string(filepath.Separator)))
		}
		dest := filepath.Clean(filepath.Join(filepath.Dir(moved), target))
		if dest == ".." || strings.HasPrefix(dest, ".."+string(filepath.Separator)) {
			return fmt.Errorf("newPath: rename %q to %q: %w: the symlink %q -> %q would point outside the root from its new place; move it elsewhere or recreate the link with dir_create/file_write",
				oldPath, newRel, ErrOutside, linkRel, target)
		}
		return nil
	}
	if st.Mode()&fs.ModeSymlink != 0 {
		return check(oldRel)
	}
	if !st.IsDir() {
		return nil
	}
	return fs.WalkDir(safeRawFS{r.root}, filepath.ToSlash(oldRel), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.Type()&fs.ModeSymlink == 0 {
			return nil
		}
		return check(filepath.FromSlash(p))
	})
}

// Exists reports whether p exists and is a directory. Paths outside the root give an error that
// reads the same whether or not the outside target exists.
func (r *Root) Exists(p string) (exists, isDir bool, err error) {
	rel, err := r.rel(p)
	if err != nil {
		return false, false, err
	}
	st, err := r.root.Stat(rel)
	if err != nil {
		werr := r.wrap("exists", p, err)
		if errors.Is(werr, ErrOutside) {
			return false, false, werr
		}
		return false, false, nil
	}
	return true, st.IsDir(), nil
}

// Entry is one directory entry.
type Entry struct {
	Name  string
	Path  string
	IsDir bool
	Size  int64
}

// List returns the immediate children of p, sorted by name.
func (r *Root) List(p string) ([]Entry, error) {
	rel, err := r.rel(p)
	if err != nil {
		return nil, err
	}
	f, st, err := r.openRead("list", p, rel)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if !st.IsDir() {
		return nil, fmt.Errorf("list %q: not a directory; use file_read", p)
	}
	des, err := f.ReadDir(-1)
	if err != nil {
		return nil, r.wrap("list", p, err)
	}
	sort.Slice(des, func(i, j int) bool { return des[i].Name() < des[j].Name() })
	out := make([]Entry, 0, len(des))
	for _, de := range des {
		if !de.IsDir() && IsTempName(de.Name()) {
			continue // a write in progress or an interrupted one (temp.go)
		}
		if len(r.protected) > 0 && r.ProtectedRel(filepath.Join(rel, de.Name())) {
			continue // the hub's own state is not shown
		}
		e := Entry{Name: de.Name(), Path: path.Join(filepath.ToSlash(p), de.Name()), IsDir: de.IsDir()}
		if !e.IsDir {
			if info, err := de.Info(); err == nil {
				e.Size = info.Size()
			}
		}
		out = append(out, e)
	}
	return out, nil
}

// Mkdir creates p and any missing parents; an existing directory is not an error.
func (r *Root) Mkdir(p string) error {
	rel, err := r.rel(p)
	if err != nil {
		return err
	}
	if err := r.guardLink("create directory", p, rel); err != nil {
		return err
	}
	if err := r.root.MkdirAll(rel, 0o755); err != nil {
		return r.wrap("create directory", p, err)
	}
	return nil
}

// FS exposes the workspace as a read-only fs.FS confined to the root (for ingestion and walking).
// Its opens never block on special files (safeFS), its listings leave out temp files, and the
// hub's own state (Protect) is left out of it.
func (r *Root) FS() fs.FS {
	if len(r.protected) == 0 {
		return safeFS{r.root}
	}
	return guardedFS{fsys: safeFS{r.root}, r: r}
}

// testHookWritten, when set (tests only), runs after WriteFile has written a temp file's content
// and before it is synced and renamed, with the temp file's host path.
var testHookWritten func(tmp string)

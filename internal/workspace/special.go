package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Special files (FIFOs, sockets, devices) are refused by every file tool. A hostile agent can
// create them with the process tools, or find them in a checked-out tree, and a plain open(2) of a
// FIFO blocks in the kernel until a writer appears: no context can end that call, so a file_read
// of one would never return and a RAG ingest holding its collection's lock would keep it forever.
//
// Every open of a workspace path therefore goes through the helpers below: the open itself uses
// O_NONBLOCK (opening a FIFO returns at once, a socket fails with ENXIO) and the decision is made
// on fstat of the handle that was opened, never on a separate stat by name, which an agent could
// race by swapping the file between the stat and the open.

// ErrNotRegular is wrapped by every refusal of a special file (errors.Is works on them).
var ErrNotRegular = errors.New("not a regular file")

// NotRegularError says that Path is a FIFO, socket or device.
type NotRegularError struct {
	Op   string // what was attempted ("read", "write", "list"...)
	Path string // the path as the caller gave it
	Mode fs.FileMode
}

// Error says what the file is and why file tools refuse it.
func (e *NotRegularError) Error() string {
	return fmt.Sprintf("%s %q: is a %s, not a regular file; file tools refuse FIFOs, sockets and devices because opening or reading one can block forever (delete it with file_delete if it is in the way)",
		e.Op, e.Path, KindOf(e.Mode))
}

// Unwrap returns ErrNotRegular, so errors.Is finds every refusal of a special file.
func (e *NotRegularError) Unwrap() error { return ErrNotRegular }

// KindOf names the type of a file mode for error messages.
func KindOf(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return "regular file"
	case m.IsDir():
		return "directory"
	case m&fs.ModeSymlink != 0:
		return "symbolic link"
	case m&fs.ModeNamedPipe != 0:
		return "named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeCharDevice != 0:
		return "character device"
	case m&fs.ModeDevice != 0:
		return "block device"
	}
	return "special file"
}

// NotRegular returns the refusal for a special file at p (op names the attempt).
func NotRegular(op, p string, m fs.FileMode) error { return &NotRegularError{Op: op, Path: p, Mode: m} }

// checkOpened fstat's a freshly opened handle and keeps it only when it is a regular file or a
// directory. For a regular file the O_NONBLOCK it was opened with is cleared again: Linux ignores
// it on regular files, but other systems and some FUSE file systems may not, and reads of a
// regular file are meant to block until the data is there.
func checkOpened(f *os.File, op, p string) (fs.FileInfo, error) {
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	switch {
	case st.Mode().IsRegular():
		if err := clearNonblock(f); err != nil {
			f.Close()
			return nil, fmt.Errorf("%s %q: clear O_NONBLOCK: %w", op, p, err)
		}
	case st.IsDir():
	default:
		f.Close()
		return nil, NotRegular(op, p, st.Mode())
	}
	return st, nil
}

// OpenInRoot opens name (relative to root) for reading without ever blocking on a special file.
// It returns regular files and directories with their fstat information; anything else is
// refused with a *NotRegularError (naming name, op "open"). Symlinks are followed inside root, as
// os.Root does.
func OpenInRoot(root *os.Root, name string) (*os.File, fs.FileInfo, error) {
	f, err := root.OpenFile(name, os.O_RDONLY|oNonblock, 0)
	if err != nil {
		if isNoDevice(err) {
			if st, serr := root.Stat(name); serr == nil && !st.Mode().IsRegular() && !st.IsDir() {
				return nil, nil, NotRegular("open", name, st.Mode())
			}
		}
		return nil, nil, err
	}
	st, err := checkOpened(f, "open", name)
	if err != nil {
		return nil, nil, err
	}
	return f, st, nil
}

// OpenPath is OpenInRoot for a host path outside any workspace (the hub's own stores, whose
// files another program on the machine could still replace with a FIFO).
func OpenPath(p string) (*os.File, fs.FileInfo, error) {
	f, err := os.OpenFile(p, os.O_RDONLY|oNonblock, 0)
	if err != nil {
		if isNoDevice(err) {
			if st, serr := os.Stat(p); serr == nil && !st.Mode().IsRegular() && !st.IsDir() {
				return nil, nil, NotRegular("open", p, st.Mode())
			}
		}
		return nil, nil, err
	}
	st, err := checkOpened(f, "open", p)
	if err != nil {
		return nil, nil, err
	}
	return f, st, nil
}

// OpenRootIn opens the directory name under parent as an os.Root without blocking when name is
// (or has just been swapped for) a FIFO: os.Root.OpenRoot opens without O_NONBLOCK and would hang
// in open(2). The directory is opened with O_DIRECTORY|O_NONBLOCK first and, on Linux, the root is
// opened through that very handle (/proc/self/fd), so the root is the directory that was checked.
// Without /proc the root is opened by name after the check, a window this cannot close there.
func OpenRootIn(parent *os.Root, name string) (*os.Root, error) {
	f, err := parent.OpenFile(name, os.O_RDONLY|oNonblock|oDirectory, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil {
		return nil, err
	} else if !st.IsDir() { // only where O_DIRECTORY does not exist
		return nil, NotRegular("open directory", name, st.Mode())
	}
	if r, err := reopenRoot(f); err == nil {
		return r, nil
	}
	return parent.OpenRoot(name)
}

// OpenRootPath is OpenRootIn for a host path.
func OpenRootPath(p string) (*os.Root, error) {
	f, err := os.OpenFile(p, os.O_RDONLY|oNonblock|oDirectory, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil {
		return nil, err
	} else if !st.IsDir() {
		return nil, NotRegular("open directory", p, st.Mode())
	}
	if r, err := reopenRoot(f); err == nil {
		return r, nil
	}
	return os.OpenRoot(p)
}

// openRead opens a client path for reading through OpenInRoot, naming op and p in errors.
func (r *Root) openRead(op, p, rel string) (*os.File, fs.FileInfo, error) {
	f, st, err := OpenInRoot(r.root, rel)
	if err != nil {
		var nr *NotRegularError
		if errors.As(err, &nr) {
			return nil, nil, NotRegular(op, p, nr.Mode)
		}
		return nil, nil, r.wrap(op, p, err)
	}
	return f, st, nil
}

// safeFS is the workspace as an fs.FS for walkers (RAG ingest, ignore-file loading): every open
// goes through OpenInRoot, so a FIFO in the tree is refused instead of hanging the walk, and
// directory listings leave out the temp files of writes (IsTempName), live or interrupted.
type safeFS struct{ root *os.Root }

func (s safeFS) Open(name string) (fs.File, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	f, _, err := OpenInRoot(s.root, filepath.FromSlash(name))
	if err != nil {
		return nil, err
	}
	return f, nil
}

// ReadDir lists a directory through a non-blocking open (os.Root's FS opens it by name with a
// plain open, which a directory swapped for a FIFO would hang), sorted, without temp files.
func (s safeFS) ReadDir(name string) ([]fs.DirEntry, error) { return s.readDir(name, true) }

func (s safeFS) readDir(name string, hideTemps bool) ([]fs.DirEntry, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: fs.ErrInvalid}
	}
	f, st, err := OpenInRoot(s.root, filepath.FromSlash(name))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if !st.IsDir() {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: errors.New("not a directory")}
	}
	des, err := f.ReadDir(-1)
	if hideTemps {
		des = slices.DeleteFunc(des, func(de fs.DirEntry) bool { return !de.IsDir() && IsTempName(de.Name()) })
	}
	slices.SortFunc(des, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return des, err
}

// Stat does not open the file, so it cannot block; it follows symlinks inside the root.
func (s safeFS) Stat(name string) (fs.FileInfo, error) {
	return fs.Stat(s.root.FS(), name)
}

package workspace

import (
	"os"
	"strconv"
)

// reopenRoot opens an os.Root on the directory f refers to. /proc/self/fd/N resolves to the open
// file itself, not to whatever now has its name, so the root cannot be a file swapped in since f
// was opened and checked.
func reopenRoot(f *os.File) (*os.Root, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return nil, err
	}
	var (
		r    *os.Root
		oerr error
	)
	if err := rc.Control(func(fd uintptr) { r, oerr = os.OpenRoot("/proc/self/fd/" + strconv.Itoa(int(fd))) }); err != nil {
		return nil, err
	}
	return r, oerr
}

// openedPath is the kernel's name for the directory f refers to (/proc/self/fd/N), "" when it
// cannot say.
func openedPath(f *os.File) string {
	rc, err := f.SyscallConn()
	if err != nil {
		return ""
	}
	var p string
	_ = rc.Control(func(fd uintptr) { p, _ = os.Readlink("/proc/self/fd/" + strconv.Itoa(int(fd))) })
	return p
}

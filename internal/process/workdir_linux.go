package process

import (
	"fmt"
	"os"
	"strconv"
)

// heldDirPath names the open directory f as /proc/self/fd/N, N being f's descriptor in this
// process. os/exec has no fchdir, but syscall.forkAndExecInChild chdirs to Cmd.Dir before it
// rearranges descriptors and before exec closes the close-on-exec ones, so at that moment the
// child's descriptor table is a copy of ours and /proc/self/fd/N is a magic link to the very
// directory we hold: the kernel follows the open file, not a path that could be swapped. The
// caller keeps f open until Start returns. The name is checked here to resolve to f (it would not
// without /proc mounted), and nothing falls back to the plain path.
func heldDirPath(dir string, f *os.File, st os.FileInfo) (string, error) {
	p := "/proc/self/fd/" + strconv.FormatUint(uint64(f.Fd()), 10)
	pst, err := os.Stat(p)
	if err != nil || !os.SameFile(st, pst) {
		return "", fmt.Errorf("working directory %q: cannot name the checked directory through /proc/self/fd (is /proc mounted?)", dir)
	}
	return p, nil
}

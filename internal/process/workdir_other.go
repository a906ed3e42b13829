//go:build !linux

package process

import (
	"fmt"
	"os"
)

// heldDirPath has no /proc/self/fd to name the open directory on this platform: it checks that
// dir still names the directory f holds and uses the path, which narrows the swap window to the
// fork but does not close it (Linux closes it; see workdir_linux.go).
func heldDirPath(dir string, f *os.File, st os.FileInfo) (string, error) {
	pst, err := os.Stat(dir)
	if err != nil || !os.SameFile(st, pst) {
		return "", fmt.Errorf("working directory %q changed after it was checked; try again", dir)
	}
	return dir, nil
}

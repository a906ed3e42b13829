//go:build !unix

package rag

import (
	"fmt"
	"os"
	"runtime"
)

// lockDir has no cross-process lock on this platform: refuse to write rather than risk two
// writers interleaving commits.
func lockDir(dir string) (func(), error) {
	return nil, fmt.Errorf("rag: writing collection %s is not supported on %s (no advisory file locks)", dir, runtime.GOOS)
}

// inode is unknown here; size and modification time still identify a manifest version.
func inode(os.FileInfo) uint64 { return 0 }

// Package atomicfile writes a file whole or not at all: the data goes to a temporary file in
// the same directory (created 0600, so a secret is never readable by others even for a moment)
// and is renamed over the target, so a reader, or the hub after a crash, sees the old file or
// the new one, never half of one.
package atomicfile

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Write replaces path with data, creating its directory (0700) when missing. The file is
// 0600: what the hub keeps this way (grants, tokens' digests, state) is the user's alone.
func Write(path string, data []byte) error { return WriteMode(path, data, 0o600) }

// WriteMode is Write for a file that keeps a mode of its own (a config file the user made
// readable, a client's settings): the new file gets mode before it replaces the old one.
func WriteMode(path string, data []byte, mode fs.FileMode) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+"-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name()) // after a successful rename there is nothing left to remove
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if mode != 0o600 { // CreateTemp made it 0600
		if err := tmp.Chmod(mode); err != nil {
			tmp.Close()
			return fmt.Errorf("write %s: %w", path, err)
		}
	}
	// On disk before the rename: after a crash the name holds the old data or the new, never
	// an empty file.
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

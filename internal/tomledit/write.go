package tomledit

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/switchboard-hub/switchboard/internal/atomicfile"
)

// WriteFile replaces the file at path with data atomically: a temporary file in the same
// directory, with the old file's mode (0600 for a new file: the config may hold tokens), renamed
// over it. A symlinked config (a dotfiles repository) stays a symlink: its target is replaced.
func WriteFile(path string, data []byte) error {
	target := path
	if p, err := filepath.EvalSymlinks(path); err == nil {
		target = p
	}
	mode := fs.FileMode(0o600)
	if st, err := os.Stat(target); err == nil {
		mode = st.Mode().Perm()
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return atomicfile.WriteMode(target, data, mode)
}

//go:build !linux

package workspace

import (
	"errors"
	"os"
)

// reopenRoot needs /proc/self/fd (Linux); elsewhere callers open the root by name after checking.
func reopenRoot(*os.File) (*os.Root, error) { return nil, errors.ErrUnsupported }

// openedPath needs /proc/self/fd (Linux).
func openedPath(*os.File) string { return "" }

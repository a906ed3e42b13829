//go:build !linux

package search

import (
	"errors"
	"io/fs"
	"os"
)

// fastOpener is Linux-only (openat2); elsewhere files are opened through os.Root.
type fastOpener struct{}

func newFastOpener(*os.Root) *fastOpener { return nil }

func (*fastOpener) close() {}

func (*fastOpener) readFile(string, []byte) ([]byte, bool) { return nil, false }

func (*fastOpener) readDir(string) ([]fs.DirEntry, error) { return nil, errors.ErrUnsupported }

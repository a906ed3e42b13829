//go:build !unix

package mcp

import (
	"io"
	"os"
)

// pollableStdin is os.Stdin where descriptors cannot be switched to non-blocking mode.
func pollableStdin() io.ReadCloser { return os.Stdin }

//go:build !unix

package transport

import (
	"io"
	"os"
)

// pollableStdin is os.Stdin where descriptors cannot be switched to non-blocking mode.
func pollableStdin() io.ReadCloser { return os.Stdin }

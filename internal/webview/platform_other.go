//go:build !unix

package webview

import (
	"errors"
	"fmt"
	"runtime"
)

// errPlatform is what starting a browser answers on systems without Unix process groups, which
// this package needs to end a browser and all its helpers. It wraps errors.ErrUnsupported.
var errPlatform = fmt.Errorf("the webview tools are not supported on %s (the browser runs in its own Unix process group: use Linux or macOS): %w", runtime.GOOS, errors.ErrUnsupported)

func checkPlatform() error { return errPlatform }

// pidAlive is never reached: startBrowser refuses first.
func pidAlive(int) bool { return false }

//go:build !unix

package process

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"syscall"
)

// errPlatform is what Start, Exec and Resize answer on systems without Unix process groups,
// signals and PTYs. It wraps errors.ErrUnsupported.
var errPlatform = fmt.Errorf("running processes is not supported on %s (it needs Unix process groups and signals: use Linux or macOS): %w", runtime.GOOS, errors.ErrUnsupported)

func checkPlatform() error { return errPlatform }

func killPID(int, syscall.Signal) error { return errPlatform }

func startPTY(*exec.Cmd, uint16, uint16) (*os.File, error) { return nil, errPlatform }

func setWinsize(*os.File, uint16, uint16) error { return errPlatform }

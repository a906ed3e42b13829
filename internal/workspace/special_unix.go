//go:build unix

package workspace

import (
	"errors"
	"os"
	"syscall"
)

const (
	oNonblock  = syscall.O_NONBLOCK
	oDirectory = syscall.O_DIRECTORY
)

// clearNonblock puts f back into blocking mode (see checkOpened). It goes through SyscallConn
// rather than Fd, which would also change how the os.File itself does I/O.
func clearNonblock(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) { serr = syscall.SetNonblock(int(fd), false) }); err != nil {
		return err
	}
	return serr
}

// isNoDevice reports the error open(2) gives for a socket file (and a device without a driver):
// nothing was opened, so the refusal can only be explained by a stat by name.
func isNoDevice(err error) bool { return errors.Is(err, syscall.ENXIO) }

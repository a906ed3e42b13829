//go:build unix

package process

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"

	"github.com/switchboard-hub/switchboard/internal/procgroup"
)

// checkPlatform reports whether this system can run processes the way the package needs (process
// groups, signals, PTYs): on Unix it always can.
func checkPlatform() error { return nil }

// killPID sends sig to one process.
func killPID(pid int, sig syscall.Signal) error { return syscall.Kill(pid, sig) }

// startPTY starts cmd on a new pseudo-terminal and returns a pollable master. pty.StartWithSize
// puts the child in a new session (so its pgid is its pid) with the terminal as controlling tty.
func startPTY(cmd *exec.Cmd, cols, rows uint16) (*os.File, error) {
	master, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: cols, Rows: rows})
	if err != nil {
		return nil, startError(cmd.Args[0], err)
	}
	// creack/pty leaves the master in blocking mode (it calls Fd()), and a blocking read
	// cannot be interrupted by Close. A non-blocking duplicate goes through Go's poller, so
	// Shutdown can always unblock the reader.
	pollable, err := pollableDup(master)
	_ = master.Close()
	if err != nil {
		_ = procgroup.Signal(cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
		return nil, fmt.Errorf("start process %q: pty: %w", cmd.Args[0], err)
	}
	return pollable, nil
}

// pollableDup returns a non-blocking, close-on-exec duplicate of f that Go's poller manages, so
// reads honour Close and deadlines.
func pollableDup(f *os.File) (*os.File, error) {
	var dupErr error
	fd := -1
	rc, err := f.SyscallConn()
	if err != nil {
		return nil, err
	}
	if err := rc.Control(func(src uintptr) {
		fd, dupErr = unix.FcntlInt(src, unix.F_DUPFD_CLOEXEC, 0)
	}); err != nil {
		return nil, err
	}
	if dupErr != nil {
		return nil, fmt.Errorf("dup: %w", dupErr)
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		_ = unix.Close(fd)
		return nil, fmt.Errorf("set non-blocking: %w", err)
	}
	// os.NewFile registers a non-blocking descriptor with the poller.
	return os.NewFile(uintptr(fd), f.Name()), nil
}

// setWinsize sets the terminal size of a PTY master without switching it to blocking mode
// (pty.Setsize would, through Fd()).
func setWinsize(f *os.File, cols, rows uint16) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var ioErr error
	if err := rc.Control(func(fd uintptr) {
		ioErr = unix.IoctlSetWinsize(int(fd), unix.TIOCSWINSZ, &unix.Winsize{Col: cols, Row: rows})
	}); err != nil {
		return err
	}
	return ioErr
}

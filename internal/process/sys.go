package process

import (
	"fmt"
	"os"
	"os/exec"

	"golang.org/x/sys/unix"
)

// pipeSet holds both ends of a process's stdin, stdout and stderr pipes.
type pipeSet struct {
	stdinR, stdinW   *os.File
	stdoutR, stdoutW *os.File
	stderrR, stderrW *os.File
}

// pipeFiles creates the three pipes and hands the child's ends to cmd. The pipes are plain
// *os.File values, so exec passes them straight to the child (no copying goroutines) and Wait
// does not wait for descendants that keep them open; our read ends are non-blocking and go
// through the runtime poller, so Close always unblocks a reader.
func pipeFiles(cmd *exec.Cmd) (*pipeSet, error) {
	var ps pipeSet
	var err error
	if ps.stdinR, ps.stdinW, err = os.Pipe(); err != nil {
		return nil, fmt.Errorf("stdin pipe: %w", err)
	}
	if ps.stdoutR, ps.stdoutW, err = os.Pipe(); err != nil {
		ps.closeAll()
		return nil, fmt.Errorf("stdout pipe: %w", err)
	}
	if ps.stderrR, ps.stderrW, err = os.Pipe(); err != nil {
		ps.closeAll()
		return nil, fmt.Errorf("stderr pipe: %w", err)
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = ps.stdinR, ps.stdoutW, ps.stderrW
	return &ps, nil
}

func (ps *pipeSet) closeChildEnds() {
	for _, f := range []*os.File{ps.stdinR, ps.stdoutW, ps.stderrW} {
		if f != nil {
			_ = f.Close()
		}
	}
}

func (ps *pipeSet) closeAll() {
	ps.closeChildEnds()
	for _, f := range []*os.File{ps.stdinW, ps.stdoutR, ps.stderrR} {
		if f != nil {
			_ = f.Close()
		}
	}
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

package process

import (
	"fmt"
	"os"
	"os/exec"
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

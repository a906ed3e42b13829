package mcp

import (
	"context"
	"fmt"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/internal/process"
)

// Client logging: the hub's warnings that concern one client are sent to that client as
// notifications/message (MCP logging), at the level the client chose with logging/setLevel.
// go-sdk keeps the level per session and drops messages below it; until a client sets a level
// it gets none.

// clientLogger is the logger name clients see on messages from the hub.
const clientLogger = "switchboard"

// procOwners remembers which session started which process, so the process's end is reported
// to that client (others see it in process_list and on the dashboard).
type procOwners struct {
	mu sync.Mutex
	m  map[string]*sdk.ServerSession
}

func (o *procOwners) set(id string, ss *sdk.ServerSession) {
	if ss == nil {
		return
	}
	o.mu.Lock()
	if o.m == nil {
		o.m = map[string]*sdk.ServerSession{}
	}
	o.m[id] = ss
	o.mu.Unlock()
}

func (o *procOwners) take(id string) *sdk.ServerSession {
	o.mu.Lock()
	defer o.mu.Unlock()
	ss := o.m[id]
	delete(o.m, id)
	return ss
}

// logTo sends one message to a client session. A session that has gone away is not an error.
func (s *Service) logTo(ss *sdk.ServerSession, level sdk.LoggingLevel, format string, args ...any) {
	if ss == nil {
		return
	}
	msg := fmt.Sprintf(format, args...)
	if err := ss.Log(context.Background(), &sdk.LoggingMessageParams{Level: level, Logger: clientLogger, Data: msg}); err != nil {
		s.logger.Debug("client log not delivered", "error", err)
	}
}

// watchOwnedProcesses tells the client that started a process when it ends: a warning when it
// died on its own with a non-zero code or a signal, or was stopped by someone else; info when it
// exited cleanly.
func (s *Service) watchOwnedProcesses() {
	if s.procs == nil {
		return
	}
	s.procs.Subscribe(func(ev process.Event) {
		if ev.Kind != process.EventExited {
			return
		}
		ss := s.owners.take(ev.Info.ID)
		if ss == nil {
			return
		}
		// The callback runs on the process service's goroutine: send without blocking it.
		go s.reportEnd(ss, ev.Info)
	})
}

// ownProcess records that ss started process id. A process that ended before this point (its
// exit event came first) is reported at once.
func (s *Service) ownProcess(id string, ss *sdk.ServerSession) {
	s.owners.set(id, ss)
	if ss != nil {
		s.startedBy.Store(id, ss) // for the session's scoped hub token (wsToken); never taken
	}
	if info, err := s.procs.Get(id); err == nil && info.Status != process.StatusRunning {
		if ss := s.owners.take(id); ss != nil {
			go s.reportEnd(ss, info)
		}
	}
}

func (s *Service) reportEnd(ss *sdk.ServerSession, in process.Info) {
	switch {
	case in.Status == process.StatusFailed:
		s.logTo(ss, "warning", "process %s (%s) failed to start: %s", in.ID, in.Command, in.Error)
	case in.Status == process.StatusExited && in.ExitCode != 0:
		s.logTo(ss, "warning", "process %s (%s) you started died: exit code %d after %s; process_output %s shows its last output",
			in.ID, in.Command, in.ExitCode, in.Duration.Round(1e6), in.ID)
	case in.Status == process.StatusExited:
		s.logTo(ss, "info", "process %s (%s) you started exited with code 0 after %s", in.ID, in.Command, in.Duration.Round(1e6))
	default:
		s.logTo(ss, "notice", "process %s (%s) you started was %s (exit code %d)", in.ID, in.Command, in.Status, in.ExitCode)
	}
}

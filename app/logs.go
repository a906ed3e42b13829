package app

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"

	"github.com/switchboard-hub/switchboard/internal/audit"
	"github.com/switchboard-hub/switchboard/internal/hublog"
	"github.com/switchboard-hub/switchboard/internal/policy"
	"github.com/switchboard-hub/switchboard/internal/upstream"
	"github.com/switchboard-hub/switchboard/internal/wshub"
)

// The dashboard's Logs view: the audit trail read back from its files (GET /api/audit, live
// through the "activity" channel it already has) and the hub's own log (GET /api/hublog and the
// "hublog" channel below).

// ChannelHubLog is the dashboard channel with the hub's own log: a HubLogSnapshot on subscribe,
// then one hublog.Record per event. Records carry a sequence number; an event at or below the
// snapshot's last one is a repeat (the publisher may lag the snapshot by a record or two).
const ChannelHubLog = "hublog"

// hubLogSnapshotSize is how many of the newest records a new subscriber gets.
const hubLogSnapshotSize = 500

// HubLogSnapshot is the "hublog" channel's snapshot: the newest records, oldest first, and the
// file the log is also written to.
type HubLogSnapshot struct {
	Records []hublog.Record `json:"records"`
	File    string          `json:"file"`
}

// HubLogList is HubLog's answer (GET /api/hublog), the same shape as the channel's snapshot.
type HubLogList = HubLogSnapshot

// AuditQuery filters and pages the audit trail (GET /api/audit's query parameters).
type AuditQuery struct {
	// Client is a client's name or a session id.
	Client string `json:"client"`
	// Tool is a glob (*, ?) or a prefix of the tool's name.
	Tool     string `json:"tool"`
	Decision string `json:"decision" tstype:"'' | 'allow' | 'ask' | 'deny'"`
	Outcome  string `json:"outcome" tstype:"'' | 'ok' | 'error' | 'started'"`
	// Limit is the page size: 0 for 100, at most 1000.
	Limit int `json:"limit"`
	// Before is the previous page's next: the page continues with older entries.
	Before string `json:"before"`
}

// AuditPage is one page of the audit trail, newest written first.
type AuditPage struct {
	Entries []audit.Entry `json:"entries"`
	// Next is the cursor of the page of older entries; "" when there are none.
	Next string `json:"next,omitempty"`
	// File is the live audit file; Files are those read, newest first (the live file and its
	// rotated backups that exist).
	File  string   `json:"file"`
	Files []string `json:"files"`
}

// auditFile is where the stack writes the audit trail.
func (st *Stack) auditFile() string { return filepath.Join(st.Config.LogDir(), "audit.log") }

// Audit reads one page of the audit trail from its files.
func (c *Controller) Audit(q AuditQuery) (AuditPage, error) {
	_ = c.st.Audit.Flush() // the newest calls may still sit in the writer's buffer
	file := c.st.auditFile()
	p, err := audit.Read(file, audit.Query{Client: q.Client, Tool: q.Tool, Decision: q.Decision, Outcome: q.Outcome, Limit: q.Limit, Before: q.Before})
	if err != nil {
		return AuditPage{}, err
	}
	return AuditPage{Entries: p.Entries, Next: p.Next, File: file, Files: p.Files}, nil
}

// HubLog returns the newest limit records at level or above (0: 200, at most the ring's size),
// oldest first.
func (c *Controller) HubLog(level string, limit int) (HubLogList, error) {
	min, err := hublog.ParseLevel(level)
	if err != nil {
		return HubLogList{}, err
	}
	if limit < 0 || limit > hublog.DefaultSize {
		return HubLogList{}, fmt.Errorf("limit: %d is out of range; use 1 to %d (0 for 200)", limit, hublog.DefaultSize)
	}
	if limit == 0 {
		limit = 200
	}
	return HubLogList{Records: c.st.HubLog.Records(hublog.Query{MinLevel: min, Limit: limit}), File: c.st.HubLog.File()}, nil
}

// feedHubLog serves the "hublog" channel. Records are published from a goroutine of its own,
// never inside the logging call: the WebSocket hub itself logs (a slow client dropped) while it
// holds a client's lock, and publishing from there would deadlock on it. The returned func
// stops the goroutine (Close).
func (st *Stack) feedHubLog() (stop func()) {
	h := st.WSHub
	if h == nil {
		return func() {}
	}
	h.SetSnapshotProvider(ChannelHubLog, func(string) (any, bool) {
		return HubLogSnapshot{Records: st.HubLog.Records(hublog.Query{Limit: hubLogSnapshotSize}), File: st.HubLog.File()}, true
	})
	wake := make(chan struct{}, 1)
	cancel := st.HubLog.OnRecord(func(hublog.Record) {
		select {
		case wake <- struct{}{}:
		default: // a wake-up is pending: it will publish this record too
		}
	})
	ctx, end := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { // owned by the Stack: Close ends it
		defer close(done)
		var last uint64
		for {
			select {
			case <-ctx.Done():
				return
			case <-wake:
				for _, r := range st.HubLog.Records(hublog.Query{After: last}) {
					h.Publish(ChannelHubLog, wshub.TypeEvent, r)
					last = r.Seq
				}
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			cancel()
			end()
			<-done
		})
	}
}

// serverStates remembers the state last logged for each upstream server, so that the hub log
// has a line per change of state, not one per status update (there is one per call).
type serverStates struct {
	mu   sync.Mutex
	last map[string]string
}

// logServerChange logs an upstream server's change of state: running and stopped at info, an
// exit that the supervisor restarts, or a failure, as a warning with the error.
func (st *Stack) logServerChange(name string) {
	m := st.Service.Upstreams()
	if m == nil {
		return
	}
	s, err := m.Status(name)
	state := s.State
	if err != nil {
		state = "removed"
	}
	st.serverStates.mu.Lock()
	if st.serverStates.last == nil {
		st.serverStates.last = map[string]string{}
	}
	prev, seen := st.serverStates.last[name]
	if state == "removed" {
		delete(st.serverStates.last, name)
	} else {
		st.serverStates.last[name] = state
	}
	st.serverStates.mu.Unlock()
	if prev == state || (!seen && state == "removed") {
		return
	}
	switch state {
	case upstream.StateRunning:
		st.Logger.Info("servers: "+name+" is running", "server", name, "info", s.ServerInfo, "pid", s.PID)
	case upstream.StateBackoff:
		st.Logger.Warn("servers: "+name+" exited; restarting", "server", name, "restarts", s.Restarts, "next", s.NextRestart, "err", s.LastError)
	case upstream.StateFailed:
		st.Logger.Warn("servers: "+name+" failed; fix its entry in the config file", "server", name, "err", s.LastError)
	case upstream.StateSignin:
		st.Logger.Warn("servers: "+name+" needs you to sign in", "server", name, "fix", "switchboard servers login "+name+", or Sign in in the Servers view or the tray")
	case upstream.StateDisabled, "removed":
		st.Logger.Info("servers: "+name+" is "+state, "server", name)
	}
}

// logPolicy logs a reload of the policy from the config file: the rules now in force, or why
// the file was refused.
func (st *Stack) logPolicy(ps policy.Status) {
	if ps.Error != "" {
		st.Logger.Warn("policy: the config file's policy was not applied; the last good one stays", "path", ps.Path, "err", ps.Error)
		return
	}
	st.Logger.Info("policy: reloaded", "path", ps.Path, "rules", ps.Rules, "default", string(ps.Default))
	st.logPolicyWarnings(ps)
}

// logPolicyWarnings logs each rule of the policy in force that can never match (a rule on
// servers_call), at the start and after every reload: such a rule loads fine and then silently
// decides nothing, so the log is where the user learns it.
func (st *Stack) logPolicyWarnings(ps policy.Status) {
	for _, w := range ps.Warnings {
		st.Logger.Warn("policy: "+w, "path", ps.Path)
	}
}

package notify

import (
	"time"

	"github.com/switchboard-hub/switchboard/internal/upstream"
)

// The two rules that keep notifications worth reading, as plain state machines over the time
// they are given (tested without clocks or buses).

// Refusal is a tool call the policy refused.
type Refusal struct {
	Client string // the client's name, or its session id when it gave none
	Tool   string
	Rule   string
	// More counts the refusals of the same client collapsed into this one (the latest).
	More int
}

// DenyThrottle lets at most one refusal notification per client through per Interval: the
// first at once, the ones after it held and, when the interval is over, collapsed into one ("…,
// and N more"). It is not safe for concurrent use.
type DenyThrottle struct {
	Interval time.Duration
	clients  map[string]*denyState
}

type denyState struct {
	sent   time.Time // when this client's last notification went out
	held   int       // refusals since then
	latest Refusal
}

// Add records a refusal at now and returns it when it may be shown now.
func (t *DenyThrottle) Add(r Refusal, now time.Time) (Refusal, bool) {
	if t.clients == nil {
		t.clients = map[string]*denyState{}
	}
	st := t.clients[r.Client]
	if st == nil {
		st = &denyState{}
		t.clients[r.Client] = st
	}
	if st.held == 0 && (st.sent.IsZero() || now.Sub(st.sent) >= t.Interval) {
		st.sent = now
		return r, true
	}
	st.held++
	st.latest = r
	return Refusal{}, false
}

// Due returns, collapsed, the refusals held for clients whose interval is over at now, and
// forgets clients that have been quiet for an interval.
func (t *DenyThrottle) Due(now time.Time) []Refusal {
	var out []Refusal
	for client, st := range t.clients {
		if now.Sub(st.sent) < t.Interval {
			continue
		}
		if st.held == 0 {
			delete(t.clients, client)
			continue
		}
		r := st.latest
		r.More = st.held - 1
		out = append(out, r)
		st.sent, st.held = now, 0
	}
	return out
}

// Next is when the earliest held refusal is due; zero when none is held.
func (t *DenyThrottle) Next() time.Time {
	var next time.Time
	for _, st := range t.clients {
		if st.held == 0 {
			continue
		}
		if at := st.sent.Add(t.Interval); next.IsZero() || at.Before(next) {
			next = at
		}
	}
	return next
}

// Crash is an upstream server that keeps crashing, or has failed.
type Crash struct {
	Server string
	// Restarts is how many times it exited within the window.
	Restarts  int
	Failed    bool // in state "failed": it will not be retried until its entry changes
	LastError string
}

// CrashWatch spots servers that keep crashing: Restarts exits within Window, or the state
// "failed". It reports once per episode; an episode ends when the server has gone a whole
// window without an exit (and is not failed), is disabled, or is replaced (restarted by the
// user or changed in the config file: its restart count starts again). Not safe for concurrent
// use.
type CrashWatch struct {
	Window   time.Duration
	Restarts int
	servers  map[string]*crashState
}

type crashState struct {
	restarts int         // the counter as last seen
	exits    []time.Time // exits within the window, oldest first
	notified bool        // this episode was reported
}

// Observe takes a server's status at now and returns a crash to report, if one begins.
func (w *CrashWatch) Observe(s upstream.Status, now time.Time) (Crash, bool) {
	if w.servers == nil {
		w.servers = map[string]*crashState{}
	}
	st := w.servers[s.Name]
	if st == nil {
		st = &crashState{}
		w.servers[s.Name] = st
	}
	switch {
	case s.State == upstream.StateDisabled || s.State == upstream.StateStopped:
		*st = crashState{restarts: s.Restarts}
		return Crash{}, false
	case s.Restarts < st.restarts: // a new process supervisor: the count starts again
		*st = crashState{}
	}
	i := 0
	for i < len(st.exits) && now.Sub(st.exits[i]) >= w.Window {
		i++
	}
	st.exits = st.exits[i:]
	failed := s.State == upstream.StateFailed
	if st.notified && len(st.exits) == 0 && !failed {
		st.notified = false // a quiet window before this: the episode is over
	}
	for ; st.restarts < s.Restarts; st.restarts++ {
		st.exits = append(st.exits, now)
	}
	if st.notified || (len(st.exits) < w.Restarts && !failed) {
		return Crash{}, false
	}
	st.notified = true
	return Crash{Server: s.Name, Restarts: len(st.exits), Failed: failed, LastError: s.LastError}, true
}

// Forget drops a server that is gone from the config.
func (w *CrashWatch) Forget(name string) { delete(w.servers, name) }

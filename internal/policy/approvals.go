package policy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/switchboard-hub/switchboard/internal/listeners"
	"github.com/switchboard-hub/switchboard/internal/redact"
)

// Who answered a question. The audit log records one of these with every approval.
const (
	ByClient    = "client"    // the calling client, through MCP elicitation
	ByDashboard = "dashboard" // the dashboard (window, headless page or its /api)
	ByTray      = "tray"      // the tray menu
	ByTimeout   = "timeout"   // nobody: ask_timeout passed
	ByNobody    = "nobody"    // nobody could answer: no dashboard or tray was open
)

// Kinds of question.
const (
	KindCall = "call" // may this tool call run?
	KindRoot = "root" // may this client's MCP root become its workspace?
	// KindClient: may this OAuth client use the hub (its authorization server), and with which
	// toolsets? The answer may narrow the scopes asked for (Outcome.Scopes).
	KindClient = "client"
)

// Approval is one pending question.
type Approval struct {
	ID        string `json:"id"`
	Kind      string `json:"kind"` // "call" | "root"
	Tool      string `json:"tool,omitempty"`
	Arguments string `json:"arguments,omitempty"` // readable summary, bulk payloads cut
	Root      string `json:"root,omitempty"`      // KindRoot: the directory asked for
	// KindClient: the device (the address its browser came from), the scopes it asks for (the
	// toolsets, and readonly) and where its authorization goes (the redirect URI).
	Device      string    `json:"device,omitempty"`
	Scopes      []string  `json:"scopes,omitempty"`
	Redirect    string    `json:"redirect,omitempty"`
	Client      string    `json:"client"`
	Session     string    `json:"session,omitempty"`
	Workspace   string    `json:"workspace,omitempty"`
	Rule        string    `json:"rule,omitempty"`
	RequestedAt time.Time `json:"requestedAt"`
	ExpiresAt   time.Time `json:"expiresAt"`
}

// Outcome is how a question ended.
type Outcome struct {
	Approved bool   `json:"approved"`
	By       string `json:"by"`               // ByClient, ByDashboard, ByTray, ByTimeout, or "" when the caller gave up
	Reason   string `json:"reason,omitempty"` // why it was not approved
	// Dismissed: nobody decided — the prompt was cancelled, nobody could answer, the time ran
	// out or the session ended. A refusal for this call, never one to remember.
	Dismissed bool `json:"dismissed,omitempty"`
	// Scopes the user granted (KindClient), when the answer chose them.
	Scopes []string `json:"scopes,omitempty"`
}

// Result is the audit word for an outcome: "approved", "declined" or "timed out".
func (o Outcome) Result() string {
	switch {
	case o.Approved:
		return "approved"
	case o.By == ByTimeout:
		return "timed out"
	case o.By == ByNobody:
		return "unanswerable"
	case o.Dismissed:
		return "dismissed"
	}
	return "declined"
}

// ApprovalChange is a broker notification.
type ApprovalChange struct {
	Kind     string   `json:"kind"` // "added" | "resolved"
	Approval Approval `json:"approval"`
	Outcome  *Outcome `json:"outcome,omitempty"`
}

// Broker holds questions nobody answered yet and hands each answer to the call waiting for it.
type Broker struct {
	seq atomic.Uint64

	mu        sync.Mutex
	pending   map[string]*waiter
	listeners listeners.Set[ApprovalChange]
	nextL     int
	presence  map[int]func() bool // polled by Attended, not notified: not a listeners.Set
}

type waiter struct {
	a    Approval
	done chan Outcome // buffered 1: the first answer wins
}

// NewBroker returns an empty broker.
func NewBroker() *Broker {
	return &Broker{pending: map[string]*waiter{}, presence: map[int]func() bool{}}
}

// UnattendedWait is how long a question waits when nobody is there to answer it (no dashboard
// page, no tray) before it fails: long enough for a dashboard that is just opening, short
// enough that no client hangs on a consent nobody can give.
const UnattendedWait = 3 * time.Second

// AddPresence registers a way a person can answer questions — the tray while it has a host, the
// dashboard while a page is subscribed — as a function that says whether it is there now.
// remove unregisters it.
func (b *Broker) AddPresence(present func() bool) (remove func()) {
	b.mu.Lock()
	id := b.nextL
	b.nextL++
	b.presence[id] = present
	b.mu.Unlock()
	return func() { b.mu.Lock(); delete(b.presence, id); b.mu.Unlock() }
}

// Attended reports whether anyone can answer a question now.
func (b *Broker) Attended() bool {
	b.mu.Lock()
	fns := make([]func() bool, 0, len(b.presence))
	for _, fn := range b.presence {
		fns = append(fns, fn)
	}
	b.mu.Unlock()
	for _, fn := range fns {
		if fn() {
			return true
		}
	}
	return false
}

// Withdraw ends every question of a session (its client disconnected): the calls waiting on
// them are refused with reason, and the dashboard shows them resolved as withdrawn. An answer
// given later finds nothing to approve.
func (b *Broker) Withdraw(session, reason string) {
	if session == "" {
		return
	}
	b.mu.Lock()
	var ws []*waiter
	for id, w := range b.pending {
		if w.a.Session == session {
			delete(b.pending, id)
			ws = append(ws, w)
		}
	}
	b.mu.Unlock()
	for _, w := range ws {
		w.done <- Outcome{Reason: reason, Dismissed: true}
	}
}

// ErrUnknownApproval is returned by Decide for an ID that is not (or no longer) pending.
var ErrUnknownApproval = errors.New("no such pending approval (already answered or timed out); GET /api/approvals lists the pending ones")

// MaxPending caps the open questions: a client flooding the hub with calls that ask cannot grow
// the dashboard's list without bound; beyond it, calls are refused at once.
const MaxPending = 100

// Ask queues a question and waits for an answer, for timeout, or for ctx to end (the call was
// cancelled). The question disappears from the pending list however it ends.
func (b *Broker) Ask(ctx context.Context, a Approval, timeout time.Duration, tick func(waited time.Duration)) Outcome {
	if timeout <= 0 {
		timeout = DefaultAskTimeout
	}
	a.ID = fmt.Sprintf("a%d", b.seq.Add(1))
	a.RequestedAt = time.Now().UTC()
	a.ExpiresAt = a.RequestedAt.Add(timeout)
	w := &waiter{a: a, done: make(chan Outcome, 1)}
	b.mu.Lock()
	if len(b.pending) >= MaxPending {
		b.mu.Unlock()
		return Outcome{Reason: fmt.Sprintf("%d questions are already waiting for an answer; answer or deny them on the dashboard first", MaxPending)}
	}
	b.pending[a.ID] = w
	b.mu.Unlock()
	b.notify(ApprovalChange{Kind: "added", Approval: a})

	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var tc <-chan time.Time
	if tick != nil {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		tc = t.C
	}
	// Nobody to ask: check again every quarter second for UnattendedWait, then give up. An
	// ask_timeout no longer than that simply runs out (one rule decides, never a race of two).
	var unattended <-chan time.Time
	var alone time.Duration
	if timeout > UnattendedWait && !b.Attended() {
		t := time.NewTicker(UnattendedWait / 12)
		defer t.Stop()
		unattended = t.C
	}
	var out Outcome
wait:
	for {
		select {
		case out = <-w.done:
			break wait
		case <-timer.C:
			out = Outcome{By: ByTimeout, Reason: fmt.Sprintf("no answer within %s (policy.ask_timeout)", timeout), Dismissed: true}
			break wait
		case <-ctx.Done():
			out = Outcome{Reason: "the call was cancelled while waiting for approval", Dismissed: true}
			break wait
		case <-unattended:
			if b.Attended() {
				unattended = nil // someone opened the dashboard: wait for their answer
				continue
			}
			if alone += UnattendedWait / 12; alone >= UnattendedWait {
				out = Outcome{By: ByNobody, Reason: "nobody could answer: the client could not be asked (no MCP elicitation, or an inner call over stateless HTTP) and no dashboard or tray is open", Dismissed: true}
				break wait
			}
		case <-tc:
			tick(time.Since(a.RequestedAt))
		}
	}
	b.mu.Lock()
	_, still := b.pending[a.ID]
	delete(b.pending, a.ID)
	b.mu.Unlock()
	if !still { // Decide removed it and sent an answer; prefer that answer if it raced the timer
		select {
		case o := <-w.done:
			out = o
		default:
		}
	}
	b.notify(ApprovalChange{Kind: "resolved", Approval: a, Outcome: &out})
	return out
}

// Decide answers a pending question.
func (b *Broker) Decide(id string, allow bool, by string) error {
	return b.DecideScopes(id, allow, by, nil)
}

// DecideScopes answers a pending question, granting scopes (KindClient: the toolsets the user
// chose; nil: those asked for).
func (b *Broker) DecideScopes(id string, allow bool, by string, scopes []string) error {
	b.mu.Lock()
	w, ok := b.pending[id]
	if ok {
		delete(b.pending, id)
	}
	b.mu.Unlock()
	if !ok {
		return fmt.Errorf("approval %q: %w", id, ErrUnknownApproval)
	}
	o := Outcome{Approved: allow, By: by}
	if allow {
		o.Scopes = scopes
	} else {
		o.Reason = "declined on the " + by
	}
	w.done <- o
	return nil
}

// Pending lists the open questions, oldest first.
func (b *Broker) Pending() []Approval {
	b.mu.Lock()
	out := make([]Approval, 0, len(b.pending))
	for _, w := range b.pending {
		out = append(out, w.a)
	}
	b.mu.Unlock()
	sort.Slice(out, func(i, j int) bool {
		if !out[i].RequestedAt.Equal(out[j].RequestedAt) {
			return out[i].RequestedAt.Before(out[j].RequestedAt)
		}
		return out[i].ID < out[j].ID
	})
	return out
}

// Subscribe calls fn on every change; fn must not block.
func (b *Broker) Subscribe(fn func(ApprovalChange)) (cancel func()) { return b.listeners.Add(fn) }

func (b *Broker) notify(c ApprovalChange) { b.listeners.Notify(c) }

// Summarize renders arguments for a person deciding: one "key: value" line per argument, sorted,
// long values cut. What package redact hides is hidden as the audit trail hides it: payloads
// (what a call touches matters for a decision, the bytes it writes would drown it) by their size,
// secrets as redact.Marker; private text (a script, a prompt) is shown, since the person
// deciding should read it.
func Summarize(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return "(no arguments)"
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return fmt.Sprintf("(%d bytes, not an object)", len(raw))
	}
	if len(m) == 0 {
		return "(no arguments)"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteByte('\n')
		}
		var v, s string
		switch class := redact.Of(k); {
		case class == redact.Secret:
			v = redact.Marker
		case class == redact.Payload && json.Unmarshal(m[k], &s) == nil:
			v = fmt.Sprintf("<%d bytes>", len(s))
		case class == redact.Payload:
			v = fmt.Sprintf("<%d bytes of JSON>", len(m[k]))
		case json.Unmarshal(m[k], &s) == nil:
			v = s
		default:
			v = string(redact.Nested(k, m[k]))
		}
		if r := []rune(v); len(r) > 200 {
			v = string(r[:199]) + "…"
		}
		b.WriteString(k)
		b.WriteString(": ")
		b.WriteString(v)
		if b.Len() > 2000 {
			b.WriteString("\n…")
			break
		}
	}
	return b.String()
}

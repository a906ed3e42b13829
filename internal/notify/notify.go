// Package notify shows desktop notifications for what needs the user while the dashboard is
// out of sight: an approval waiting, an upstream server that keeps crashing or needs the user to
// sign in, a client whose calls the policy refuses. Notifications go over DBus to the session's notification service
// (org.freedesktop.Notifications, the Desktop Notifications Specification); fyne.io/systray,
// the tray, has none of its own.
//
// A Notifier turns the hub's events into notifications on one goroutine of its own, rate
// limited by the rules in rules.go; Desktop is its DBus client.
package notify

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/switchboard-hub/switchboard/internal/policy"
	"github.com/switchboard-hub/switchboard/internal/upstream"
)

// Notification is one desktop notification.
type Notification struct {
	Summary string
	Body    string
}

// Summaries of the notifications, one per kind.
const (
	SummaryApproval = "Switchboard: approval needed"
	SummaryCrash    = "Switchboard: server keeps crashing"
	SummaryFailed   = "Switchboard: server failed"
	SummaryRefused  = "Switchboard: call refused"
	SummarySignIn   = "Switchboard: sign in needed"
)

// Sender shows a notification (Desktop; a recorder in tests).
type Sender interface {
	Notify(ctx context.Context, n Notification) error
}

// Options configure a Notifier. Zero durations and counts take the defaults.
type Options struct {
	Sender Sender
	Logger *slog.Logger
	// DenyInterval: at most one refusal notification per client per interval (default 1 min).
	DenyInterval time.Duration
	// CrashWindow and CrashRestarts: a server that exits CrashRestarts times within
	// CrashWindow keeps crashing (defaults 5 min and 3).
	CrashWindow   time.Duration
	CrashRestarts int
}

// Notifier shows notifications for the events it is given. Its methods never block the caller
// (they run inside the hub's calls and callbacks): events are queued for Run, and dropped when
// the queue is full — a flood that fills it would be throttled away anyway.
type Notifier struct {
	o      Options
	events chan func(now time.Time) []Notification
	rules  rules // touched only by the queued funcs, which run on Run's goroutine
}

// queueSize bounds the events waiting for Run.
const queueSize = 256

// New makes a Notifier; Run shows what it is given.
func New(o Options) *Notifier {
	if o.DenyInterval <= 0 {
		o.DenyInterval = time.Minute
	}
	if o.CrashWindow <= 0 {
		o.CrashWindow = 5 * time.Minute
	}
	if o.CrashRestarts <= 0 {
		o.CrashRestarts = 3
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return &Notifier{o: o, events: make(chan func(time.Time) []Notification, queueSize)}
}

// rules is Run's state: only Run's goroutine touches it.
type rules struct {
	deny  DenyThrottle
	crash CrashWatch
	ran   map[string]bool // servers seen running since they last fell back to "sign in"
}

func (n *Notifier) enqueue(fn func(now time.Time) []Notification) {
	select {
	case n.events <- fn:
	default:
	}
}

// ApprovalWaiting shows that a question waits for the user (policy.Broker's "added").
func (n *Notifier) ApprovalWaiting(a policy.Approval) {
	body := fmt.Sprintf("%s wants to run %s", orUnnamed(a.Client), a.Tool)
	if a.Kind == policy.KindRoot {
		body = fmt.Sprintf("%s wants to use %s as its workspace", orUnnamed(a.Client), a.Root)
	}
	n.enqueue(func(time.Time) []Notification { return []Notification{{Summary: SummaryApproval, Body: body}} })
}

// Refused shows that the policy refused a client's call, throttled per client.
func (n *Notifier) Refused(r Refusal) {
	n.enqueue(func(now time.Time) []Notification {
		if r, ok := n.rules.deny.Add(r, now); ok {
			return []Notification{refusedNote(r)}
		}
		return nil
	})
}

// ServerStatus takes an upstream server's new status; a crash episode's start is shown, and a
// server that falls back to waiting for the user to sign in (its refresh token refused or
// revoked), once per fall.
func (n *Notifier) ServerStatus(s upstream.Status) {
	n.enqueue(func(time.Time) []Notification {
		if n.rules.ran == nil {
			n.rules.ran = map[string]bool{}
		}
		switch s.State {
		case upstream.StateRunning:
			n.rules.ran[s.Name] = true
		case upstream.StateSignin:
			// A fall from running: the grant stopped working. A server never signed in waits
			// from the start and says so in the Servers view; no notification at every start.
			if n.rules.ran[s.Name] {
				n.rules.ran[s.Name] = false
				return []Notification{{Summary: SummarySignIn, Body: fmt.Sprintf("%s needs you to sign in again: click Sign in in the Servers view or the tray, or run `switchboard servers login %s`", s.Name, s.Name)}}
			}
		}
		return nil
	})
	if s.Restarts == 0 && s.State != upstream.StateFailed && s.State != upstream.StateDisabled {
		return // nothing the crash rule counts
	}
	n.enqueue(func(now time.Time) []Notification {
		c, ok := n.rules.crash.Observe(s, now)
		if !ok {
			return nil
		}
		if c.Failed {
			return []Notification{{Summary: SummaryFailed, Body: fmt.Sprintf("%s cannot start: %s", c.Server, orNone(c.LastError))}}
		}
		return []Notification{{Summary: SummaryCrash, Body: fmt.Sprintf("%s exited %d times in %s; last error: %s",
			c.Server, c.Restarts, n.o.CrashWindow.Round(time.Second), orNone(c.LastError))}}
	})
}

// ServerRemoved forgets a server gone from the config.
func (n *Notifier) ServerRemoved(name string) {
	n.enqueue(func(time.Time) []Notification {
		n.rules.crash.Forget(name)
		delete(n.rules.ran, name)
		return nil
	})
}

func refusedNote(r Refusal) Notification {
	body := fmt.Sprintf("%s: %s was refused by %s", orUnnamed(r.Client), r.Tool, r.Rule)
	if r.More > 0 {
		body += fmt.Sprintf(", and %d more", r.More)
	}
	return Notification{Summary: SummaryRefused, Body: body}
}

func orUnnamed(client string) string {
	if client == "" {
		return "A client"
	}
	return client
}

func orNone(s string) string {
	if s == "" {
		return "none recorded (see the server's log in the dashboard)"
	}
	return s
}

// Run shows notifications until ctx ends. A notification that cannot be shown is logged once at
// info (the service may have gone away), not retried.
func (n *Notifier) Run(ctx context.Context) {
	n.o.Logger.Info("notifications: on")
	n.rules.deny.Interval = n.o.DenyInterval
	n.rules.crash.Window, n.rules.crash.Restarts = n.o.CrashWindow, n.o.CrashRestarts
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	failing := false
	show := func(notes []Notification) {
		for _, note := range notes {
			sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			err := n.o.Sender.Notify(sctx, note)
			cancel()
			switch {
			case err != nil && !failing:
				failing = true
				n.o.Logger.Info("notifications: cannot show one; check the session's notification service", "summary", note.Summary, "err", err)
			case err == nil:
				failing = false
			}
		}
	}
	for {
		var fire <-chan time.Time
		if next := n.rules.deny.Next(); !next.IsZero() {
			timer.Reset(time.Until(next))
			fire = timer.C
		}
		select {
		case <-ctx.Done():
			return
		case fn := <-n.events:
			show(fn(time.Now()))
		case <-fire:
		}
		timer.Stop()
		var due []Notification
		for _, r := range n.rules.deny.Due(time.Now()) {
			due = append(due, refusedNote(r))
		}
		show(due)
	}
}

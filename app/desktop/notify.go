package desktop

import (
	"context"

	"github.com/switchboard-hub/switchboard/app"
	"github.com/switchboard-hub/switchboard/internal/audit"
	"github.com/switchboard-hub/switchboard/internal/notify"
	"github.com/switchboard-hub/switchboard/internal/policy"
)

// Desktop notifications ([desktop] notifications): the desktop app tells the user, while the
// window is out of sight, about an approval waiting, an upstream server that keeps crashing and
// a client whose calls the policy refuses (internal/notify has the rules).

// startDesktopNotifications connects to the session's notification service and shows the
// stack's events until stop is called. Switched off in the config, or without a session bus or
// a notification service, it logs why once, at info, and shows nothing. o tunes the rules (the
// zero value: the defaults).
func startDesktopNotifications(st *app.Stack, o notify.Options) (stop func()) {
	if !st.Config.Desktop.Notifications {
		st.Logger.Info("notifications: off ([desktop] notifications = false in the config file)")
		return func() {}
	}
	d, err := notify.Connect("Switchboard", "switchboard", "switchboard")
	if err != nil {
		st.Logger.Info("notifications: off: " + err.Error())
		return func() {}
	}
	o.Sender = d
	stopNotifier := startNotifications(st, o)
	return func() {
		stopNotifier()
		d.Close()
	}
}

// startNotifications feeds the stack's events to a Notifier showing them through o.Sender, on a
// goroutine that stop ends.
func startNotifications(st *app.Stack, o notify.Options) (stop func()) {
	if o.Logger == nil {
		o.Logger = st.Logger
	}
	n := notify.New(o)
	cancels := []func(){
		st.Service.Approvals().Subscribe(func(c policy.ApprovalChange) {
			if c.Kind == "added" {
				n.ApprovalWaiting(c.Approval)
			}
		}),
		st.Audit.OnRecord(func(e audit.Entry) {
			if e.Decision == string(policy.Deny) {
				client := e.Client
				if client == "" {
					client = e.Session
				}
				n.Refused(notify.Refusal{Client: client, Tool: e.Tool, Rule: e.Rule})
			}
		}),
	}
	if m := st.Service.Upstreams(); m != nil {
		cancels = append(cancels, m.OnChange(func(name string) {
			s, err := m.Status(name)
			if err != nil {
				n.ServerRemoved(name)
				return
			}
			n.ServerStatus(s)
		}))
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { // owned by the caller: stop ends it
		defer close(done)
		n.Run(ctx)
	}()
	return func() {
		for _, c := range cancels {
			c()
		}
		cancel()
		<-done
	}
}

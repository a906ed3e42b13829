package desktop

import (
	"context"
	"fmt"

	"github.com/switchboard-hub/switchboard/app"
	"github.com/switchboard-hub/switchboard/app/tray"
	"github.com/switchboard-hub/switchboard/internal/agentic"
	"github.com/switchboard-hub/switchboard/internal/audit"
	"github.com/switchboard-hub/switchboard/internal/autostart"
	"github.com/switchboard-hub/switchboard/internal/config"
	"github.com/switchboard-hub/switchboard/internal/policy"
	"github.com/switchboard-hub/switchboard/internal/sessions"
	"github.com/switchboard-hub/switchboard/internal/tasks"
	"github.com/switchboard-hub/switchboard/internal/upstream"
	"github.com/switchboard-hub/switchboard/internal/wshub"
	"github.com/switchboard-hub/switchboard/mcp"
)

// traySource is the tray's view of the stack (tray.Source): what it shows, what its clicks do,
// and one change subscription over every part that can change what it shows.
type traySource struct {
	st  *app.Stack
	ctl *app.Controller
}

var _ tray.Source = traySource{}

func newTraySource(st *app.Stack, ctl *app.Controller) traySource {
	return traySource{st: st, ctl: ctl}
}

func (s traySource) Transports() []mcp.TransportStatus { return s.st.Transports.Status() }

// SetTransport switches a transport and saves it in the config file, as the dashboard's switch
// does, audited "by tray".
func (s traySource) SetTransport(ctx context.Context, name string, enable bool) error {
	return s.ctl.SetTransportBy(ctx, "tray", name, enable)
}

func (s traySource) Sessions() int { return len(s.st.Service.Sessions().List()) }

func (s traySource) DashboardClients() int {
	if s.st.WSHub == nil {
		return 0
	}
	return s.st.WSHub.Stats().Clients
}

func (s traySource) Bridge() (bool, string) {
	if s.st.IDE == nil {
		return false, ""
	}
	b := s.st.IDE.BridgeStatus()
	return b.Connected, b.LastError
}

func (s traySource) PendingApprovals() []policy.Approval { return s.st.Service.Approvals().Pending() }

func (s traySource) TasksRunning() int { return s.st.Service.TasksRunning() }

func (s traySource) DecideApproval(id string, allow bool) error {
	decision := "deny"
	if allow {
		decision = "allow"
	}
	return s.st.Service.DecideApproval(id, decision, policy.ByTray)
}

// SignIn starts signing the hub in to a remote server, as the Servers view's Sign in does
// (the hub opens the page in the browser: the desktop sets Stack.OpenURL).
func (s traySource) SignIn(server string) error {
	si, err := s.ctl.LoginServer(server)
	if err != nil {
		return err
	}
	if !si.Opened {
		return app.OpenInBrowser(si.URL)
	}
	return nil
}

// Servers are the upstream servers ([[servers]]) with their state.
func (s traySource) Servers() []upstream.Status {
	if m := s.st.Service.Upstreams(); m != nil {
		return m.Statuses()
	}
	return nil
}

// Project is the hub's project folder ("" while none is chosen).
func (s traySource) Project() (string, bool) { return s.st.Service.WorkspaceDir(), true }

// SetProject makes dir the project folder, as the window's chooser does, audited "by tray".
func (s traySource) SetProject(dir string) (string, error) {
	ch, err := s.ctl.SetProjectBy("tray", dir)
	return ch.Note, err
}

func (s traySource) LogDir() string { return s.st.Config.LogDir() }

// Autostart: the XDG autostart entry's presence. The item is offered only when the running
// binary's path is known (the entry starts it).
func (s traySource) Autostart() (on, ok bool) {
	if _, err := app.AutostartExe(); err != nil {
		return false, false
	}
	return autostart.Enabled(s.st.Config.Env.ConfigHome()), true
}

// SetAutostart writes or removes the entry, audited like the other tray controls. When the config
// sets [desktop] autostart otherwise, the note says that setting returns at the next start.
func (s traySource) SetAutostart(on bool) (string, error) {
	end := s.st.Service.BeginAction("tray", app.ActionAutostartSet, map[string]bool{"enabled": on})
	exe, err := app.AutostartExe()
	if err == nil {
		err = autostart.Set(s.st.Config.Env.ConfigHome(), on, exe)
	}
	end(err)
	if err != nil {
		return "", err
	}
	if v := s.st.Config.Desktop.Autostart; v != nil && *v != on {
		return fmt.Sprintf("until the next start: the config sets [desktop] autostart = %t", *v), nil
	}
	return "", nil
}

// applyAutostartConfig applies [desktop] autostart when the config sets it (desktop start-up).
func applyAutostartConfig(cfg config.Config) error {
	v := cfg.Desktop.Autostart
	if v == nil {
		return nil
	}
	exe, err := app.AutostartExe()
	if err != nil {
		return err
	}
	return autostart.Set(cfg.Env.ConfigHome(), *v, exe)
}

// Subscribe registers changed with every part of the stack the tray shows: transports, the
// dashboard hub's clients, MCP sessions, approvals, the IDE bridge, the upstream servers' states
// and "Start at login" (a push, not a poll).
func (s traySource) Subscribe(changed func()) (cancel func()) {
	cancels := []func(){
		s.st.Transports.OnChange(func([]mcp.TransportStatus) { changed() }),
		s.st.Service.Sessions().Subscribe(func(sessions.Change) { changed() }),
		s.st.Service.Approvals().Subscribe(func(policy.ApprovalChange) { changed() }),
		s.st.Service.OnWorkspaceChange(func(string) { changed() }),
		s.st.Service.OnTasksChange(func(c tasks.Change) {
			if c.Kind != "updated" { // progress ticks change no count
				changed()
			}
		}),
	}
	if s.st.WSHub != nil {
		cancels = append(cancels, s.st.WSHub.OnChange(func(wshub.Stats) { changed() }))
	}
	if s.st.IDE != nil {
		cancels = append(cancels, s.st.IDE.OnBridgeStatus(func(agentic.BridgeStatus) { changed() }))
	}
	if m := s.st.Service.Upstreams(); m != nil {
		cancels = append(cancels, m.OnChange(func(string) { changed() }))
	}
	// "Start at login" switched anywhere else (the Settings view, another window): every switch
	// is an audited action, and the activity feed (the dashboard's "activity" channel) carries it.
	cancels = append(cancels, s.st.Service.OnActivity(func(e audit.Entry) {
		if e.Tool == app.ActionAutostartSet {
			changed()
		}
	}))
	return func() {
		for _, c := range cancels {
			c()
		}
	}
}

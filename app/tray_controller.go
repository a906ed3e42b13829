package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/switchboard-hub/switchboard/internal/hub"
	"github.com/switchboard-hub/switchboard/internal/policy"
	"github.com/switchboard-hub/switchboard/internal/sessions"
	"github.com/switchboard-hub/switchboard/mcp"
)

// trayView shows a menu model. The systray implementation (desktop builds) replaces the whole
// menu, icon and tooltip; tests record what they were given.
type trayView interface {
	Render(m trayMenu)
}

// desktopShell is what tray actions need from the window toolkit.
type desktopShell interface {
	ShowWindow()
	CopyText(text string) error
	OpenFolder(path string) error
	Quit()
}

// Tray timing. The IDE bridge has no change hook the app can reach, so its status is polled;
// the poll only re-renders when something changed, which keeps the idle tray at ~0% CPU.
const (
	bridgePollInterval = 2 * time.Second
	noticeLifetime     = 10 * time.Second
)

// trayController owns the tray's state. One goroutine (Run) selects on every source of change
// — transports, hub clients, MCP sessions, the bridge poll, tray-host presence, menu clicks —
// recomputes the state and, when the model differs from what is shown, renders it whole.
type trayController struct {
	st    *Stack
	ctl   *Controller
	view  trayView
	shell desktopShell

	clicks chan trayAction // from the view's click forwarders; buffered so a click is not lost while a render runs
	hostCh chan bool       // tray host presence, from the host monitor

	hostAvailable atomic.Bool // read by the window's close handler from another goroutine

	bridgePoll time.Duration
	noticeTTL  time.Duration
}

func newTrayController(st *Stack, ctl *Controller, view trayView, shell desktopShell) *trayController {
	return &trayController{
		st: st, ctl: ctl, view: view, shell: shell,
		clicks:     make(chan trayAction, 8),
		hostCh:     make(chan bool, 1),
		bridgePoll: bridgePollInterval,
		noticeTTL:  noticeLifetime,
	}
}

// Click queues a menu click; the view's forwarders call it. It gives up when ctx ends.
func (c *trayController) Click(ctx context.Context, a trayAction) {
	select {
	case c.clicks <- a:
	case <-ctx.Done():
	}
}

// SetHostAvailable reports tray-host presence; the latest value wins.
func (c *trayController) SetHostAvailable(ok bool) {
	for {
		select {
		case c.hostCh <- ok:
			return
		default:
		}
		select { // drop a stale value nobody read yet, then retry
		case <-c.hostCh:
		default:
		}
	}
}

// HostAvailable reports whether a tray host shows our icon, i.e. whether hiding the window
// leaves the user a way back to it.
func (c *trayController) HostAvailable() bool { return c.hostAvailable.Load() }

// snapshot reads the current state from the stack.
func (c *trayController) snapshot(notice string) trayState {
	s := trayState{Transports: c.st.Transports.Status(), Sessions: len(c.st.Service.Sessions().List()), Notice: notice}
	if pending := c.st.Service.Approvals().Pending(); len(pending) > 0 {
		a := pending[0]
		s.Approvals = len(pending)
		s.NextApproval = trayApproval{ID: a.ID, Client: a.Client, What: approvalWhat(a), Details: a.Arguments}
	}
	if c.st.Hub != nil {
		s.DashboardClients = c.st.Hub.Stats().Clients
	}
	if c.st.IDE != nil {
		b := c.st.IDE.BridgeStatus()
		s.BridgeConnected, s.BridgeError = b.Connected, b.LastError
	}
	return s
}

// Run is the tray's event loop; it returns when ctx ends, after the action goroutines it
// started have finished.
func (c *trayController) Run(ctx context.Context) {
	wake := make(chan struct{}, 1)
	kick := func() {
		select {
		case wake <- struct{}{}:
		default: // a wake-up is already pending; it will read the newest state
		}
	}
	// The change callbacks run on the goroutine that made the change: they only kick.
	// Transports and Hub have no unsubscribe; after Run returns their kick is a no-op send.
	c.st.Transports.OnChange(func([]mcp.TransportStatus) { kick() })
	if c.st.Hub != nil {
		c.st.Hub.OnChange(func(hub.Stats) { kick() })
	}
	unsubscribe := c.st.Service.Sessions().Subscribe(func(sessions.Change) { kick() })
	defer unsubscribe()
	unsubscribeApprovals := c.st.Service.Approvals().Subscribe(func(policy.ApprovalChange) { kick() })
	defer unsubscribeApprovals()

	var actions sync.WaitGroup
	defer actions.Wait()
	results := make(chan string, 8) // notices from finished actions

	poll := time.NewTicker(c.bridgePoll)
	defer poll.Stop()
	noticeExpiry := time.NewTimer(time.Hour)
	noticeExpiry.Stop()
	defer noticeExpiry.Stop()

	notice := ""
	var shown *trayMenu
	render := func() {
		m := buildTrayMenu(c.snapshot(notice))
		if shown != nil && trayMenuEqual(*shown, m) {
			return
		}
		c.view.Render(m)
		shown = &m
	}
	setNotice := func(n string) {
		notice = n
		noticeExpiry.Reset(c.noticeTTL)
	}
	render()
	for {
		select {
		case <-ctx.Done():
			return
		case <-wake:
		case <-poll.C:
		case <-noticeExpiry.C:
			notice = ""
		case n := <-results:
			setNotice(n)
		case ok := <-c.hostCh:
			was := c.hostAvailable.Swap(ok)
			if was && !ok {
				// The tray host went away: a hidden window would be unreachable, so show it.
				c.shell.ShowWindow()
			}
		case a := <-c.clicks:
			if a.Kind == actionQuit {
				c.shell.Quit()
				continue
			}
			actions.Add(1)
			go func() { // owned by Run: it waits for actions before returning
				defer actions.Done()
				if n := c.do(ctx, a); n != "" {
					select {
					case results <- n:
					case <-ctx.Done():
					}
				}
			}()
		}
		render()
	}
}

// do performs one click and returns a notice for the menu ("" for none). Transport switches
// can wait for in-flight calls to drain, so actions run off the event loop.
func (c *trayController) do(ctx context.Context, a trayAction) string {
	switch a.Kind {
	case actionOpenDashboard:
		c.shell.ShowWindow()
	case actionToggleTransport:
		tctx, cancel := context.WithTimeout(ctx, mcp.DrainTimeout+2*time.Second)
		defer cancel()
		end := c.st.Service.BeginAction("tray", "transport_set", transportArgs{Name: a.Transport, Enabled: a.Enable})
		err := c.st.Transports.Set(tctx, a.Transport, a.Enable)
		end(err)
		if err != nil {
			verb := "stop"
			if a.Enable {
				verb = "start"
			}
			return fmt.Sprintf("Could not %s %s: %s", verb, transportLabel(a.Transport), shorten(err.Error(), 80))
		}
	case actionCopyClientConfig:
		return c.copyClientConfig()
	case actionApprove, actionDeny:
		decision := "allow"
		if a.Kind == actionDeny {
			decision = "deny"
		}
		if err := c.st.Service.DecideApproval(a.Approval, decision, policy.ByTray); err != nil {
			return "Could not answer: " + shorten(err.Error(), 80)
		}
		if a.Kind == actionDeny {
			return "Denied"
		}
		return "Allowed"
	case actionOpenLogs:
		dir := c.st.Config.LogDir()
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return fmt.Sprintf("Logs folder %s: %v", dir, err)
		}
		if err := c.shell.OpenFolder(dir); err != nil {
			return fmt.Sprintf("Logs are in %s (%s)", dir, shorten(err.Error(), 60))
		}
	}
	return ""
}

// clientConfigFile is where the tray also saves the copied configuration: an X clipboard
// empties when its owner exits, and a file survives.
func clientConfigFile(dataDir string) string { return filepath.Join(dataDir, "client-config.json") }

// copyClientConfig copies the snippet for the best running transport: the Unix socket relay
// shares this hub's state with stdio-only clients, HTTP needs no relay, stdio starts a
// separate hub and is the last resort.
func (c *trayController) copyClientConfig() string {
	kind, best := c.ctl.ClientConfig().Best()
	text, err := json.MarshalIndent(best, "", "  ")
	if err != nil {
		return fmt.Sprintf("Client configuration: %v", err)
	}
	text = append(text, '\n')
	file := clientConfigFile(c.st.Config.DataDir)
	fileErr := os.WriteFile(file, text, 0o600)
	if err := c.shell.CopyText(string(text)); err != nil {
		if fileErr != nil {
			return "Could not copy client configuration: " + shorten(errors.Join(err, fileErr).Error(), 80)
		}
		return "Clipboard unavailable; configuration saved to " + file
	}
	return fmt.Sprintf("Copied client configuration (%s)", transportLabel(kind))
}

// approvalWhat says in a few words what a question is about.
func approvalWhat(a policy.Approval) string {
	if a.Kind == policy.KindRoot {
		return "use " + a.Root + " as its workspace"
	}
	return "run " + a.Tool
}

// trayMenuEqual compares two models; the view is only asked to render real changes.
func trayMenuEqual(a, b trayMenu) bool {
	if a.Icon != b.Icon || a.Tooltip != b.Tooltip || len(a.Items) != len(b.Items) {
		return false
	}
	for i := range a.Items {
		if a.Items[i] != b.Items[i] {
			return false
		}
	}
	return true
}

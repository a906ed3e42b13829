// Package tray is the desktop app's tray: a controller that owns the tray's state and runs one
// event loop, a pure state→menu function (model.go), the icons, and — in desktop builds — the
// fyne.io/systray view and the tray-host monitor. It reaches the hub only through Source, so it
// knows nothing of how the app is assembled.
package tray

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/switchboard-hub/switchboard/internal/policy"
	"github.com/switchboard-hub/switchboard/internal/upstream"
	"github.com/switchboard-hub/switchboard/mcp"
	mcptransport "github.com/switchboard-hub/switchboard/mcp/transport"
)

// View shows a menu model. The systray implementation (desktop builds) replaces the whole
// menu, icon and tooltip; tests record what they were given.
type View interface {
	Render(m Menu)
}

// Shell is what tray actions need from the window toolkit.
type Shell interface {
	ShowWindow()
	// ShowView shows the window on one dashboard view (View*).
	ShowView(view string)
	OpenFolder(path string) error
	// PickFolder asks the user for a folder (the native picker), starting in start; "" when the
	// user dismissed it.
	PickFolder(title, start string) (string, error)
	Quit()
}

// Source is everything the tray reads from and does to the running hub. The app implements it
// over its stack; every read is cheap (the controller reads them all on each change).
type Source interface {
	Transports() []mcp.TransportStatus
	// SetTransport starts or stops a transport; it may wait for in-flight calls to drain.
	SetTransport(ctx context.Context, name string, enable bool) error
	Sessions() int         // connected MCP client sessions
	DashboardClients() int // WebSocket hub clients
	// Bridge is the IDE bridge's state; connected false with lastError "" when there is none.
	Bridge() (connected bool, lastError string)
	PendingApprovals() []policy.Approval // oldest first
	TasksRunning() int                   // tool calls running as tasks
	DecideApproval(id string, allow bool) error
	// SignIn starts signing the hub in to a remote server: its page opens in the browser.
	SignIn(server string) error
	LogDir() string
	// Autostart reports whether the app starts at login (the XDG autostart entry exists); ok is
	// false when the app cannot manage that (the menu leaves the item out).
	Autostart() (on, ok bool)
	// SetAutostart writes or removes the autostart entry; the returned note (may be "") is
	// added to the menu's confirmation.
	SetAutostart(on bool) (note string, err error)
	// Servers are the upstream servers the hub runs, in config order (none: nil).
	Servers() []upstream.Status
	// Project is the hub's project folder ("" while none is chosen); ok is false when the app
	// has no project folder to show (the menu leaves the item out).
	Project() (dir string, ok bool)
	// SetProject makes dir the project folder; the returned note (may be "") is added to the
	// menu's confirmation.
	SetProject(dir string) (note string, err error)
	// Subscribe calls changed (which must not block) whenever anything above may have changed,
	// until cancel is called.
	Subscribe(changed func()) (cancel func())
}

// noticeLifetime is how long the outcome of a tray action stays in the menu.
const noticeLifetime = 10 * time.Second

// Controller owns the tray's state. One goroutine (Run) selects on every source of change
// — the Source's change notifications, tray-host presence, menu clicks, finished actions —
// recomputes the state and, when the model differs from what is shown, renders it whole.
// Nothing is polled: an idle tray does no work.
type Controller struct {
	src   Source
	view  View
	shell Shell

	clicks chan Action // from the view's click forwarders; buffered so a click is not lost while a render runs
	hostCh chan bool   // tray host presence, from the host monitor

	hostAvailable atomic.Bool // read by the window's close handler from another goroutine

	// NoticeTTL is how long an action's notice is shown (set before Run).
	NoticeTTL time.Duration
}

// New returns a controller that shows src's state in view and asks shell for window actions.
func New(src Source, view View, shell Shell) *Controller {
	return &Controller{
		src: src, view: view, shell: shell,
		clicks:    make(chan Action, 8),
		hostCh:    make(chan bool, 1),
		NoticeTTL: noticeLifetime,
	}
}

// Click queues a menu click; the view's forwarders call it. It gives up when ctx ends.
func (c *Controller) Click(ctx context.Context, a Action) {
	select {
	case c.clicks <- a:
	case <-ctx.Done():
	}
}

// SetHostAvailable reports tray-host presence; the latest value wins.
func (c *Controller) SetHostAvailable(ok bool) {
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
func (c *Controller) HostAvailable() bool { return c.hostAvailable.Load() }

// snapshot reads the current state from the source.
func (c *Controller) snapshot(notice string) State {
	s := State{Transports: c.src.Transports(), Sessions: c.src.Sessions(), DashboardClients: c.src.DashboardClients(), Notice: notice}
	if pending := c.src.PendingApprovals(); len(pending) > 0 {
		a := pending[0]
		s.Approvals = len(pending)
		s.NextApproval = Approval{ID: a.ID, Client: a.Client, What: approvalWhat(a), Details: approvalDetails(a)}
	}
	s.Tasks = c.src.TasksRunning()
	s.BridgeConnected, s.BridgeError = c.src.Bridge()
	if on, ok := c.src.Autostart(); ok {
		s.Autostart = &on
	}
	if dir, ok := c.src.Project(); ok {
		s.Project = &Project{Dir: dir}
	}
	for _, st := range c.src.Servers() {
		s.Servers = append(s.Servers, Server{Name: st.Name, State: st.State, Approved: st.Approved, Held: st.Held, Sandbox: st.Sandbox.Mode,
			Command: st.Command, LastError: st.LastError})
	}
	return s
}

// Run is the tray's event loop; it returns when ctx ends, after the action goroutines it
// started have finished.
func (c *Controller) Run(ctx context.Context) {
	wake := make(chan struct{}, 1)
	kick := func() {
		select {
		case wake <- struct{}{}:
		default: // a wake-up is already pending; it will read the newest state
		}
	}
	// The change callback runs on the goroutine that made the change: it only kicks.
	cancel := c.src.Subscribe(kick)
	defer cancel()

	var actions sync.WaitGroup
	defer actions.Wait()
	results := make(chan string, 8) // notices from finished actions

	noticeExpiry := time.NewTimer(time.Hour)
	noticeExpiry.Stop()
	defer noticeExpiry.Stop()

	notice := ""
	var shown *Menu
	render := func() {
		m := BuildMenu(c.snapshot(notice))
		if shown != nil && menuEqual(*shown, m) {
			return
		}
		c.view.Render(m)
		shown = &m
	}
	setNotice := func(n string) {
		notice = n
		noticeExpiry.Reset(c.NoticeTTL)
	}
	render()
	for {
		select {
		case <-ctx.Done():
			return
		case <-wake:
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
			if a.Kind == ActionQuit {
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
func (c *Controller) do(ctx context.Context, a Action) string {
	switch a.Kind {
	case ActionOpenDashboard:
		if a.View != "" {
			c.shell.ShowView(a.View)
		} else {
			c.shell.ShowWindow()
		}
	case ActionToggleTransport:
		tctx, cancel := context.WithTimeout(ctx, mcptransport.DrainTimeout+2*time.Second)
		defer cancel()
		if err := c.src.SetTransport(tctx, a.Transport, a.Enable); err != nil {
			verb := "stop"
			if a.Enable {
				verb = "start"
			}
			return fmt.Sprintf("Could not %s %s: %s", verb, transportLabel(a.Transport), shorten(err.Error(), 80))
		}
	case ActionChooseProject:
		return c.chooseProject()
	case ActionSignIn:
		if err := c.src.SignIn(a.Server); err != nil {
			return "Sign in to " + a.Server + ": " + shorten(err.Error(), 80)
		}
		return "Sign in to " + a.Server + " in your browser"
	case ActionToggleAutostart:
		note, err := c.src.SetAutostart(a.Enable)
		if err != nil {
			return "Start at login: " + shorten(err.Error(), 80)
		}
		msg := "Switchboard will start at login"
		if !a.Enable {
			msg = "Switchboard will not start at login"
		}
		if note != "" {
			msg += " (" + note + ")"
		}
		return msg
	case ActionApprove, ActionDeny:
		if err := c.src.DecideApproval(a.Approval, a.Kind == ActionApprove); err != nil {
			return "Could not answer: " + shorten(err.Error(), 80)
		}
		if a.Kind == ActionDeny {
			return "Denied"
		}
		return "Allowed"
	case ActionOpenLogs:
		dir := c.src.LogDir()
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return fmt.Sprintf("Logs folder %s: %v", dir, err)
		}
		if err := c.shell.OpenFolder(dir); err != nil {
			return fmt.Sprintf("Logs are in %s (%s)", dir, shorten(err.Error(), 60))
		}
	}
	return ""
}

// chooseProject asks for a folder and makes it the project folder. The picker waits for the
// user, so it runs off the event loop like every action.
func (c *Controller) chooseProject() string {
	start, _ := c.src.Project()
	dir, err := c.shell.PickFolder("Choose a project folder", start)
	switch {
	case err != nil:
		return "Project folder: " + shorten(err.Error(), 80)
	case dir == "":
		return "" // dismissed
	}
	note, err := c.src.SetProject(dir)
	if err != nil {
		return "Project not changed: " + shorten(err.Error(), 100)
	}
	msg := "Project folder is now " + filepath.Base(dir)
	if note != "" {
		msg += " (" + shorten(note, 80) + ")"
	}
	return msg
}

// approvalWhat says in a few words what a question is about.
func approvalWhat(a policy.Approval) string {
	switch a.Kind {
	case policy.KindRoot:
		return "use " + a.Root + " as its workspace"
	case policy.KindClient:
		return "use this hub from " + a.Device
	}
	return "run " + a.Tool
}

// approvalDetails is what the tray shows of a question beyond its title: a call's arguments, or
// the toolsets a client on another machine asks for (allowed from the tray: all of them; the
// dashboard lets the user untick some).
func approvalDetails(a policy.Approval) string {
	if a.Kind == policy.KindClient {
		return "toolsets: " + strings.Join(a.Scopes, ", ") + "\nits authorization goes to " + a.Redirect
	}
	return a.Arguments
}

// menuEqual compares two models; the view is only asked to render real changes.
func menuEqual(a, b Menu) bool {
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

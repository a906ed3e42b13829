package tray

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/switchboard-hub/switchboard/internal/upstream"
	"github.com/switchboard-hub/switchboard/mcp"
)

// The tray follows one rule: state in, whole menu out. State is everything the tray shows,
// BuildMenu turns it into a Menu, and the systray view replaces the menu it shows with
// that model. Nothing patches a menu item in place, so the menu can never drift from the state,
// and this file (no GTK, no DBus) is where the tray's behaviour is tested.

// State is what the tray knows about the running hub.
type State struct {
	Transports       []mcp.TransportStatus
	Sessions         int    // connected MCP client sessions (any transport)
	DashboardClients int    // WebSocket hub clients: the dashboard window and other viewers
	BridgeConnected  bool   // IDE bridge to the agentic backend is online
	BridgeError      string // last bridge dial error while offline
	Notice           string // outcome of the last tray action, shown until it expires
	Approvals        int    // tool calls and roots waiting for the user's answer
	Tasks            int    // tool calls running as tasks (they outlived their client's request)
	NextApproval     Approval
	// Autostart is the "Start at login" item: whether the XDG autostart entry exists. Nil when
	// the app cannot manage it (the item is left out).
	Autostart *bool
	// Servers are the upstream servers ([[servers]] in the config file), in config order.
	Servers []Server
	// Project is the hub's project folder (the "Project: NAME" item); nil when the app has none
	// to show (the item is left out).
	Project *Project
}

// Project is the hub's project folder as the menu shows it.
type Project struct {
	Dir string // "" while none is chosen
}

// Server is one upstream server as the menu shows it.
type Server struct {
	Name     string
	State    string // upstream.State*
	Approved bool   // out of quarantine
	Held     int    // tools waiting for approval (new or changed)
	// Sandbox is upstream.Sandbox*: "off" and "unconfined" are said in the menu.
	Sandbox   string
	Command   string // command line or URL, for the tooltip
	LastError string
}

// Approval is the oldest pending question, answerable from the menu.
type Approval struct {
	ID      string
	Client  string
	What    string // "run file_write", "use /srv/x as its workspace"
	Details string // arguments summary, for the tooltip
}

// Icon is one icon variant. Only the combinations iconVariant returns are rendered.
type Icon struct {
	HubUp        bool // at least one MCP transport (Unix socket, TCP, HTTP) is listening
	BridgeOnline bool // IDE bridge connected
	Active       bool // at least one MCP session connected
}

// name is the variant's file-friendly name (build/icons/tray-<name>.png).
func (i Icon) name() string {
	switch {
	case !i.HubUp:
		return "stopped"
	case i.BridgeOnline && i.Active:
		return "online-active"
	case i.BridgeOnline:
		return "online"
	case i.Active:
		return "idle-active"
	default:
		return "idle"
	}
}

// iconVariants lists every variant the tray can show, for rendering and the icon files.
func iconVariants() []Icon {
	return []Icon{
		{},
		{HubUp: true},
		{HubUp: true, Active: true},
		{HubUp: true, BridgeOnline: true},
		{HubUp: true, BridgeOnline: true, Active: true},
	}
}

// ActionKind says what a menu item does when clicked.
type ActionKind int

// The menu actions. The model only names them; the tray controller carries them out.
const (
	ActionNone            ActionKind = iota // informational line
	ActionOpenDashboard                     // show the window, on Action.View when set
	ActionToggleTransport                   // switch Action.Transport on or off (Action.Enable)
	ActionOpenLogs                          // open the folder with the audit log
	ActionQuit                              // stop the hub, its processes and sockets, and exit
	ActionApprove                           // answer Action.Approval with allow
	ActionDeny                              // answer Action.Approval with deny
	ActionToggleAutostart                   // switch Start at login on or off (Action.Enable)
	ActionChooseProject                     // ask for a folder (native picker) and make it the project folder
	ActionSignIn                            // sign the hub in to Action.Server (OAuth) in the browser
)

// Action is a click, resolved to what it should do.
type Action struct {
	Kind      ActionKind
	View      string // ActionOpenDashboard: the dashboard view to show (View*), "" for the one shown last
	Transport string // ActionToggleTransport: which transport
	Enable    bool   // ActionToggleTransport, ActionToggleAutostart: the state to switch to
	Approval  string // ActionApprove, ActionDeny: the approval's ID
	Server    string // ActionSignIn: the server to sign in to
}

// Item is one menu line. A zero Action with Enabled=false is a status line.
type Item struct {
	Label     string
	Tooltip   string
	Action    Action
	Enabled   bool
	Checkable bool
	Checked   bool
	Separator bool
}

// Menu is the whole tray: icon, tooltip and menu.
type Menu struct {
	Icon    Icon
	Tooltip string
	Items   []Item
}

// Menu labels the smoke test and users look for.
const (
	LabelOpenDashboard  = "Open dashboard"
	LabelConnectClients = "Connect clients…"
	LabelOpenLogs       = "Open logs folder"
	LabelQuit           = "Quit"
	LabelAutostart      = "Start at login"
	// LabelProject starts the project folder's item: "Project: my-app".
	LabelProject = "Project: "
)

// Dashboard views tray items open: the tab names of frontend/src/App.svelte, which shows the view
// its location hash names (#clients).
const (
	ViewClients  = "clients"
	ViewServers  = "servers"
	ViewActivity = "activity" // its Tasks list shows the running tasks
)

// transport is a transport as the menu names it.
type transport struct{ name, label string }

// transportOrder is the order transports appear in the menu, with their menu names.
func transportOrder() []transport {
	return []transport{
		{mcp.TransportTCP, "TCP"},
		{mcp.TransportUnix, "Unix socket"},
		{mcp.TransportHTTP, "Streamable HTTP"},
		{mcp.TransportWS, "WebSocket hub"},
	}
}

// transportLabel is the human name of a transport ("tcp" → "TCP").
func transportLabel(name string) string {
	for _, t := range transportOrder() {
		if t.name == name {
			return t.label
		}
	}
	return name
}

// hubUp reports whether agents can reach the hub: any MCP transport listening. The WebSocket
// hub only feeds dashboards, so it does not count.
func (s State) hubUp() bool {
	for _, t := range s.Transports {
		if t.Running && t.Name != mcp.TransportWS {
			return true
		}
	}
	return false
}

// iconVariant picks the icon for a state.
func iconVariant(s State) Icon {
	if !s.hubUp() {
		return Icon{}
	}
	return Icon{HubUp: true, BridgeOnline: s.BridgeConnected, Active: s.Sessions > 0}
}

// plural formats a count with its noun: 1 session, 2 sessions.
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// statusLine is the one-line summary at the top of the menu and in the tooltip.
func statusLine(s State) string {
	var b strings.Builder
	if s.hubUp() {
		b.WriteString("Hub running")
	} else {
		b.WriteString("Hub stopped: no MCP transport is listening")
	}
	fmt.Fprintf(&b, " · %s", plural(s.Sessions, "MCP session"))
	if s.BridgeConnected {
		b.WriteString(" · IDE bridge online")
	} else {
		b.WriteString(" · IDE bridge offline")
	}
	return b.String()
}

// tooltip is the tray tooltip: the status plus what is listening and who watches.
func tooltip(s State) string {
	var running []string
	for _, t := range transportOrder() {
		for _, st := range s.Transports {
			if st.Name == t.name && st.Running {
				running = append(running, t.label)
			}
		}
	}
	listening := "nothing"
	if len(running) > 0 {
		listening = strings.Join(running, ", ")
	}
	line := fmt.Sprintf("Switchboard — %s · %s · listening on %s",
		statusLine(s), plural(s.DashboardClients, "dashboard client"), listening)
	if !s.BridgeConnected && s.BridgeError != "" {
		line += " · bridge: " + shorten(s.BridgeError, 80)
	}
	return line
}

// shorten cuts s to at most n runes, marking the cut.
func shorten(s string, n int) string {
	r := []rune(strings.TrimSpace(s))
	if len(r) <= n {
		return string(r)
	}
	return string(r[:n-1]) + "…"
}

// transportItem is the start/stop line of one transport.
func transportItem(label string, st mcp.TransportStatus) Item {
	it := Item{
		Enabled:   true,
		Checkable: true,
		Checked:   st.Running,
		Action:    Action{Kind: ActionToggleTransport, Transport: st.Name, Enable: !st.Running},
	}
	switch {
	case st.Running:
		it.Label = fmt.Sprintf("%s: %s", label, st.Addr)
		it.Tooltip = fmt.Sprintf("%s is listening on %s; click to stop it", label, st.Addr)
	case st.Error != "":
		it.Label = fmt.Sprintf("%s: off (failed: %s)", label, shorten(st.Error, 60))
		it.Tooltip = fmt.Sprintf("%s failed: %s; click to try again on %s", label, st.Error, st.Addr)
	default:
		it.Label = label + ": off"
		it.Tooltip = fmt.Sprintf("Click to start %s on %s", label, st.Addr)
	}
	return it
}

// maxServerItems is how many servers the menu lists; the rest are counted in one line.
const maxServerItems = 8

// LabelServers heads the servers section.
const LabelServers = "Servers"

// serverLabel is one server's line: "everything — running", "github — quarantined (approve in
// the dashboard)". What needs the user comes first: a server that cannot run, then one waiting
// for approval.
func serverLabel(s Server) string {
	var what string
	switch {
	case s.State == upstream.StateDisabled:
		what = "disabled"
	case s.State == upstream.StateFailed:
		what = "failed"
		if s.LastError != "" {
			what += ": " + shorten(s.LastError, 50)
		}
	case s.State == upstream.StateBackoff:
		what = "down, restarting"
	case s.State == upstream.StateUnapproved:
		what = "command not approved (approve in the dashboard)"
	case s.State == upstream.StateSignin:
		what = "sign in… (click to open the sign-in page)"
	case !s.Approved:
		what = "quarantined (approve in the dashboard)"
	case s.Held > 0:
		what = fmt.Sprintf("%s, %s held (approve in the dashboard)", s.State, plural(s.Held, "tool"))
	case s.State == upstream.StateIdle:
		what = "idle (starts on first use)"
	default:
		what = s.State
	}
	if s.Sandbox == upstream.SandboxOff || s.Sandbox == upstream.SandboxUnconfined {
		what += ", not sandboxed"
	}
	return s.Name + " — " + what
}

// serverItems is the servers section: a heading, then one line per server (each opens the
// dashboard, where the Servers tab has the controls).
func serverItems(servers []Server) []Item {
	if len(servers) == 0 {
		return nil
	}
	running, waiting, signin := 0, 0, 0
	for _, s := range servers {
		if s.State == upstream.StateRunning {
			running++
		}
		if s.State == upstream.StateSignin {
			signin++
			continue
		}
		if (!s.Approved || s.Held > 0 || s.State == upstream.StateUnapproved) && s.State != upstream.StateDisabled {
			waiting++ // a disabled server waits for nothing until it is enabled
		}
	}
	head := fmt.Sprintf("%s: %d running", LabelServers, running)
	if waiting > 0 {
		head += fmt.Sprintf(", %d waiting for approval", waiting)
	}
	if signin > 0 {
		head += fmt.Sprintf(", %d waiting for you to sign in", signin)
	}
	out := []Item{{Label: head}}
	for i, s := range servers {
		if i == maxServerItems {
			out = append(out, Item{Label: fmt.Sprintf("… %d more (see the dashboard)", len(servers)-maxServerItems),
				Enabled: true, Action: Action{Kind: ActionOpenDashboard, View: ViewServers}})
			break
		}
		tip := "Open the dashboard's Servers tab to approve, restart or disable it"
		if s.Command != "" {
			tip = s.Command + " — " + tip
		}
		if s.State == upstream.StateSignin {
			out = append(out, Item{Label: serverLabel(s), Tooltip: s.Command + " — sign the hub in to it in your browser",
				Enabled: true, Action: Action{Kind: ActionSignIn, Server: s.Name}})
			continue
		}
		out = append(out, Item{Label: serverLabel(s), Tooltip: tip, Enabled: true, Action: Action{Kind: ActionOpenDashboard, View: ViewServers}})
	}
	return out
}

// projectItem is the project folder's line; a click asks for another folder.
func projectItem(p Project) Item {
	it := Item{Enabled: true, Action: Action{Kind: ActionChooseProject}}
	if p.Dir == "" {
		it.Label = LabelProject + "none — choose a folder…"
		it.Tooltip = "No project folder yet: clients without folders of their own cannot work until you choose one"
		return it
	}
	it.Label = LabelProject + shorten(filepath.Base(p.Dir), 40)
	it.Tooltip = p.Dir + " — where clients work; click to choose another folder"
	return it
}

// tasksLabel is the tray line while tasks run: "2 tasks running".
func tasksLabel(n int) string {
	if n == 1 {
		return "1 task running"
	}
	return fmt.Sprintf("%d tasks running", n)
}

// approvalsLabel is the tray line for pending approvals: "2 waiting for approval".
func approvalsLabel(n int) string { return fmt.Sprintf("%d waiting for approval", n) }

// BuildMenu is the tray's whole behaviour: the menu for a state.
func BuildMenu(s State) Menu {
	m := Menu{Icon: iconVariant(s), Tooltip: tooltip(s)}
	add := func(it Item) { m.Items = append(m.Items, it) }
	sep := func() { add(Item{Separator: true}) }

	add(Item{Label: statusLine(s)})
	if s.Notice != "" {
		add(Item{Label: s.Notice})
	}
	sep()
	if s.Approvals > 0 {
		add(Item{Label: approvalsLabel(s.Approvals), Tooltip: "Agents are waiting for your approval; open the dashboard to see them all",
			Enabled: true, Action: Action{Kind: ActionOpenDashboard}})
		if a := s.NextApproval; a.ID != "" {
			who := a.Client
			if who == "" {
				who = "a client"
			}
			q := shorten(fmt.Sprintf("%s: %s", who, a.What), 60)
			tip := fmt.Sprintf("%s wants to %s", who, a.What)
			if a.Details != "" {
				tip += " — " + shorten(strings.ReplaceAll(a.Details, "\n", "; "), 200)
			}
			add(Item{Label: "Allow " + q, Tooltip: tip, Enabled: true, Action: Action{Kind: ActionApprove, Approval: a.ID}})
			add(Item{Label: "Deny " + q, Tooltip: tip, Enabled: true, Action: Action{Kind: ActionDeny, Approval: a.ID}})
		}
	}
	if s.Tasks > 0 {
		add(Item{Label: tasksLabel(s.Tasks), Tooltip: "Tool calls that ran longer than their client waited and go on as tasks; open the dashboard's Activity view to follow or cancel them",
			Enabled: true, Action: Action{Kind: ActionOpenDashboard, View: ViewActivity}})
	}
	add(Item{Label: LabelOpenDashboard, Tooltip: "Show the Switchboard window", Enabled: true, Action: Action{Kind: ActionOpenDashboard}})
	if s.Project != nil {
		add(projectItem(*s.Project))
	}
	sep()
	if items := serverItems(s.Servers); len(items) > 0 {
		m.Items = append(m.Items, items...)
		sep()
	}
	for _, t := range transportOrder() {
		for _, st := range s.Transports {
			if st.Name == t.name {
				add(transportItem(t.label, st))
			}
		}
	}
	sep()
	add(Item{Label: LabelConnectClients, Tooltip: "Open the dashboard's Clients view: set up Claude, Cursor, VS Code and other MCP clients to use this hub, or copy the configuration for any other client",
		Enabled: true, Action: Action{Kind: ActionOpenDashboard, View: ViewClients}})
	add(Item{Label: LabelOpenLogs, Tooltip: "Open the folder with the audit log", Enabled: true, Action: Action{Kind: ActionOpenLogs}})
	if s.Autostart != nil {
		on := *s.Autostart
		tip := "Start Switchboard hidden in the tray when you log in (writes an XDG autostart entry)"
		if on {
			tip = "Switchboard starts hidden in the tray when you log in; click to stop that (removes the XDG autostart entry)"
		}
		add(Item{Label: LabelAutostart, Tooltip: tip, Enabled: true, Checkable: true, Checked: on,
			Action: Action{Kind: ActionToggleAutostart, Enable: !on}})
	}
	sep()
	add(Item{Label: LabelQuit, Tooltip: "Stop the hub, its processes and sockets, and exit", Enabled: true, Action: Action{Kind: ActionQuit}})
	return m
}

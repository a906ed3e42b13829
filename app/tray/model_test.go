package tray

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/switchboard-hub/switchboard/internal/policy"
	"github.com/switchboard-hub/switchboard/internal/upstream"
	"github.com/switchboard-hub/switchboard/mcp"
)

// trayTestTransports is the four transports with unix and ws running, as the desktop starts.
func trayTestTransports() []mcp.TransportStatus {
	return []mcp.TransportStatus{
		{Name: mcp.TransportUnix, Running: true, Addr: "/run/user/1000/switchboard/mcp.sock"},
		{Name: mcp.TransportTCP, Addr: "127.0.0.1:9100"},
		{Name: mcp.TransportHTTP, Addr: "127.0.0.1:9101"},
		{Name: mcp.TransportWS, Running: true, Addr: "127.0.0.1:41234"},
	}
}

// menuLabels returns the non-separator labels of a menu, in order.
func menuLabels(m Menu) []string {
	var out []string
	for _, it := range m.Items {
		if !it.Separator {
			out = append(out, it.Label)
		}
	}
	return out
}

// itemWithPrefix returns the first item whose label starts with prefix.
func itemWithPrefix(t *testing.T, m Menu, prefix string) Item {
	t.Helper()
	for _, it := range m.Items {
		if !it.Separator && strings.HasPrefix(it.Label, prefix) {
			return it
		}
	}
	t.Fatalf("no menu item starts with %q; labels: %q", prefix, menuLabels(m))
	return Item{}
}

func TestBuildTrayMenu(t *testing.T) {
	allOff := trayTestTransports()
	for i := range allOff {
		allOff[i].Running = false
	}
	tcpFailed := trayTestTransports()
	tcpFailed[1].Error = "listen tcp 127.0.0.1:9100: bind: address already in use"
	onlyWS := trayTestTransports()
	onlyWS[0].Running = false

	tests := []struct {
		name         string
		state        State
		wantLabels   []string
		wantIcon     Icon
		wantChecked  map[string]bool // label prefix → checked
		wantTooltip  []string        // substrings
		wantNoTipSub string
	}{
		{
			name:  "desktop start: unix and ws running",
			state: State{Transports: trayTestTransports(), DashboardClients: 1},
			wantLabels: []string{
				"Hub running · 0 MCP sessions · IDE bridge offline",
				LabelOpenDashboard,
				"TCP: off",
				"Unix socket: /run/user/1000/switchboard/mcp.sock",
				"Streamable HTTP: off",
				"WebSocket hub: 127.0.0.1:41234",
				LabelConnectClients, LabelOpenLogs, LabelQuit,
			},
			wantIcon:    Icon{HubUp: true},
			wantChecked: map[string]bool{"TCP": false, "Unix socket": true, "Streamable HTTP": false, "WebSocket hub": true},
			wantTooltip: []string{"1 dashboard client", "listening on Unix socket, WebSocket hub", "IDE bridge offline"},
		},
		{
			name:  "everything off: hub stopped",
			state: State{Transports: allOff},
			wantLabels: []string{
				"Hub stopped: no MCP transport is listening · 0 MCP sessions · IDE bridge offline",
				LabelOpenDashboard, "TCP: off", "Unix socket: off", "Streamable HTTP: off", "WebSocket hub: off",
				LabelConnectClients, LabelOpenLogs, LabelQuit,
			},
			wantIcon:    Icon{},
			wantTooltip: []string{"listening on nothing"},
		},
		{
			name:     "only the WebSocket hub: agents cannot connect, so the hub counts as stopped",
			state:    State{Transports: onlyWS, Sessions: 0},
			wantIcon: Icon{},
		},
		{
			name:        "one session, bridge online",
			state:       State{Transports: trayTestTransports(), Sessions: 1, BridgeConnected: true, BridgeError: "old error"},
			wantIcon:    Icon{HubUp: true, BridgeOnline: true, Active: true},
			wantTooltip: []string{"1 MCP session ", "IDE bridge online"},
			// A stale dial error is not news once the bridge is up.
			wantNoTipSub: "old error",
		},
		{
			name:        "several sessions, bridge offline with an error",
			state:       State{Transports: trayTestTransports(), Sessions: 3, BridgeError: "dial tcp: connection refused"},
			wantIcon:    Icon{HubUp: true, Active: true},
			wantTooltip: []string{"3 MCP sessions", "bridge: dial tcp: connection refused"},
		},
		{
			name:        "a transport that failed says why",
			state:       State{Transports: tcpFailed},
			wantIcon:    Icon{HubUp: true},
			wantChecked: map[string]bool{"TCP: off (failed: listen tcp 127.0.0.1:9100: bind: address already in use)": false},
		},
		{
			name:  "a notice follows the status line",
			state: State{Transports: trayTestTransports(), Notice: "Copied client configuration (Unix socket)"},
			wantLabels: []string{
				"Hub running · 0 MCP sessions · IDE bridge offline",
				"Copied client configuration (Unix socket)",
				LabelOpenDashboard,
				"TCP: off",
				"Unix socket: /run/user/1000/switchboard/mcp.sock",
				"Streamable HTTP: off",
				"WebSocket hub: 127.0.0.1:41234",
				LabelConnectClients, LabelOpenLogs, LabelQuit,
			},
			wantIcon: Icon{HubUp: true},
		},
		{
			name: "approvals waiting: a line above Open dashboard",
			state: State{Transports: trayTestTransports(), Sessions: 1, Approvals: 2,
				NextApproval: Approval{ID: "a7", Client: "claude-code", What: "run file_delete", Details: "path: notes.txt"}},
			wantLabels: []string{
				"Hub running · 1 MCP session · IDE bridge offline",
				"2 waiting for approval",
				"Allow claude-code: run file_delete",
				"Deny claude-code: run file_delete",
				LabelOpenDashboard,
				"TCP: off",
				"Unix socket: /run/user/1000/switchboard/mcp.sock",
				"Streamable HTTP: off",
				"WebSocket hub: 127.0.0.1:41234",
				LabelConnectClients, LabelOpenLogs, LabelQuit,
			},
			wantIcon: Icon{HubUp: true, Active: true},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := BuildMenu(tc.state)
			if tc.wantLabels != nil {
				if got := menuLabels(m); strings.Join(got, "\n") != strings.Join(tc.wantLabels, "\n") {
					t.Errorf("labels:\n got %q\nwant %q", got, tc.wantLabels)
				}
			}
			if m.Icon != tc.wantIcon {
				t.Errorf("icon = %+v (%s), want %+v (%s)", m.Icon, m.Icon.name(), tc.wantIcon, tc.wantIcon.name())
			}
			for prefix, checked := range tc.wantChecked {
				it := itemWithPrefix(t, m, prefix)
				if !it.Checkable || it.Checked != checked {
					t.Errorf("%q: checkable=%v checked=%v, want checkable and checked=%v", it.Label, it.Checkable, it.Checked, checked)
				}
			}
			for _, sub := range tc.wantTooltip {
				if !strings.Contains(m.Tooltip, sub) {
					t.Errorf("tooltip %q lacks %q", m.Tooltip, sub)
				}
			}
			if tc.wantNoTipSub != "" && strings.Contains(m.Tooltip, tc.wantNoTipSub) {
				t.Errorf("tooltip %q should not mention %q", m.Tooltip, tc.wantNoTipSub)
			}
			// Informational lines are disabled and do nothing; every enabled line does something.
			for _, it := range m.Items {
				if it.Separator {
					continue
				}
				if it.Enabled != (it.Action.Kind != ActionNone) {
					t.Errorf("%q: enabled=%v but action=%v", it.Label, it.Enabled, it.Action.Kind)
				}
			}
			// Separators never start or end the menu, nor come in pairs.
			for i, it := range m.Items {
				if it.Separator && (i == 0 || i == len(m.Items)-1 || m.Items[i-1].Separator) {
					t.Errorf("misplaced separator at %d", i)
				}
			}
		})
	}
}

func TestTrayMenuActions(t *testing.T) {
	m := BuildMenu(State{Transports: trayTestTransports()})
	tests := []struct {
		prefix string
		want   Action
	}{
		{LabelOpenDashboard, Action{Kind: ActionOpenDashboard}},
		{"TCP", Action{Kind: ActionToggleTransport, Transport: mcp.TransportTCP, Enable: true}},
		{"Unix socket", Action{Kind: ActionToggleTransport, Transport: mcp.TransportUnix, Enable: false}},
		{"Streamable HTTP", Action{Kind: ActionToggleTransport, Transport: mcp.TransportHTTP, Enable: true}},
		{"WebSocket hub", Action{Kind: ActionToggleTransport, Transport: mcp.TransportWS, Enable: false}},
		{LabelConnectClients, Action{Kind: ActionOpenDashboard, View: ViewClients}},
		{LabelOpenLogs, Action{Kind: ActionOpenLogs}},
		{LabelQuit, Action{Kind: ActionQuit}},
	}
	for _, tc := range tests {
		if got := itemWithPrefix(t, m, tc.prefix).Action; got != tc.want {
			t.Errorf("%s: action %+v, want %+v", tc.prefix, got, tc.want)
		}
	}
}

func TestTrayApprovalActions(t *testing.T) {
	m := BuildMenu(State{Transports: trayTestTransports(), Approvals: 1,
		NextApproval: Approval{ID: "a3", Client: "", What: "use /srv/other as its workspace", Details: ""}})
	if got := itemWithPrefix(t, m, "Allow ").Action; got != (Action{Kind: ActionApprove, Approval: "a3"}) {
		t.Errorf("allow action = %+v", got)
	}
	deny := itemWithPrefix(t, m, "Deny ")
	if deny.Action != (Action{Kind: ActionDeny, Approval: "a3"}) || deny.Label != "Deny a client: use /srv/other as its workspace" {
		t.Errorf("deny item = %+v", deny)
	}
	if !strings.Contains(deny.Tooltip, "a client wants to use /srv/other as its workspace") {
		t.Errorf("tooltip = %q", deny.Tooltip)
	}
	if itemsWith := menuLabels(BuildMenu(State{Transports: trayTestTransports()})); strings.Contains(strings.Join(itemsWith, "|"), "Allow ") {
		t.Errorf("allow item without approvals: %q", itemsWith)
	}
}

func TestIconVariantNames(t *testing.T) {
	seen := map[string]bool{}
	for _, v := range iconVariants() {
		if seen[v.name()] {
			t.Errorf("two variants are named %q", v.name())
		}
		seen[v.name()] = true
	}
	// Every state maps to a listed variant, so every icon the tray can show has a file.
	for _, sessions := range []int{0, 2} {
		for _, bridge := range []bool{false, true} {
			for _, tr := range [][]mcp.TransportStatus{nil, trayTestTransports()} {
				v := iconVariant(State{Transports: tr, Sessions: sessions, BridgeConnected: bridge})
				if !seen[v.name()] {
					t.Errorf("state sessions=%d bridge=%v gives unlisted variant %+v", sessions, bridge, v)
				}
				if v != (Icon{}) && !v.HubUp {
					t.Errorf("variant %+v: only the stopped icon may have HubUp=false", v)
				}
			}
		}
	}
}

func TestTrayMenuEqual(t *testing.T) {
	a := BuildMenu(State{Transports: trayTestTransports()})
	b := BuildMenu(State{Transports: trayTestTransports()})
	if !menuEqual(a, b) {
		t.Fatal("identical states gave unequal menus")
	}
	for name, s := range map[string]State{
		"session":   {Transports: trayTestTransports(), Sessions: 1},
		"notice":    {Transports: trayTestTransports(), Notice: "x"},
		"dashboard": {Transports: trayTestTransports(), DashboardClients: 2},
	} {
		if menuEqual(a, BuildMenu(s)) {
			t.Errorf("%s change: menus compare equal", name)
		}
	}
}

func TestTrayAutostartItem(t *testing.T) {
	on, off := true, false
	tests := []struct {
		name      string
		autostart *bool
		want      *Item // nil: no item
	}{
		{name: "not manageable: no item", autostart: nil},
		{name: "off: unchecked, click enables", autostart: &off,
			want: &Item{Label: LabelAutostart, Enabled: true, Checkable: true, Checked: false, Action: Action{Kind: ActionToggleAutostart, Enable: true}}},
		{name: "on: checked, click disables", autostart: &on,
			want: &Item{Label: LabelAutostart, Enabled: true, Checkable: true, Checked: true, Action: Action{Kind: ActionToggleAutostart, Enable: false}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := BuildMenu(State{Transports: trayTestTransports(), Autostart: tc.autostart})
			labels := menuLabels(m)
			if tc.want == nil {
				if strings.Contains(strings.Join(labels, "|"), LabelAutostart) {
					t.Errorf("item shown without autostart support: %q", labels)
				}
				return
			}
			got := itemWithPrefix(t, m, LabelAutostart)
			got.Tooltip = ""
			if got != *tc.want {
				t.Errorf("item = %+v; want %+v", got, *tc.want)
			}
			// Beside the other settings-like items, before Quit.
			if i := strings.Index(strings.Join(labels, "|"), LabelOpenLogs+"|"+LabelAutostart+"|"+LabelQuit); i < 0 {
				t.Errorf("labels %q: want %s between %s and %s", labels, LabelAutostart, LabelOpenLogs, LabelQuit)
			}
		})
	}
}

func TestTrayServersSection(t *testing.T) {
	servers := []Server{
		{Name: "everything", State: upstream.StateRunning, Approved: true, Command: "npx -y @modelcontextprotocol/server-everything", Sandbox: upstream.SandboxOff},
		{Name: "github", State: upstream.StateRunning},
		{Name: "cloned", State: upstream.StateUnapproved},
		{Name: "fixture", State: upstream.StateRunning, Approved: true, Held: 1},
		{Name: "memory", State: upstream.StateIdle, Approved: true},
		{Name: "broken", State: upstream.StateFailed, Approved: true, LastError: "start: exec: \"nope\": executable file not found in $PATH"},
		{Name: "flaky", State: upstream.StateBackoff},
		{Name: "off", State: upstream.StateDisabled},
	}
	m := BuildMenu(State{Transports: trayTestTransports(), Servers: servers})
	labels := menuLabels(m)
	want := []string{
		"Servers: 3 running, 4 waiting for approval",
		"everything — running, not sandboxed",
		"github — quarantined (approve in the dashboard)",
		"cloned — command not approved (approve in the dashboard)",
		"fixture — running, 1 tool held (approve in the dashboard)",
		"memory — idle (starts on first use)",
		"broken — failed: start: exec: \"nope\": executable file not found in…",
		"flaky — down, restarting",
		"off — disabled",
	}
	// After "Open dashboard", before the transports, in config order.
	start := slices.Index(labels, LabelOpenDashboard) + 1
	if start == 0 || len(labels) < start+len(want) || !slices.Equal(labels[start:start+len(want)], want) {
		t.Fatalf("labels = %q\nwant after %q: %q", labels, LabelOpenDashboard, want)
	}
	if next := labels[start+len(want)]; !strings.HasPrefix(next, "TCP") {
		t.Errorf("after the servers: %q, want the transports", next)
	}
	head := itemWithPrefix(t, m, "Servers:")
	if head.Enabled || head.Action.Kind != ActionNone {
		t.Errorf("heading = %+v, want a status line", head)
	}
	ev := itemWithPrefix(t, m, "everything — ")
	if !ev.Enabled || ev.Action != (Action{Kind: ActionOpenDashboard, View: ViewServers}) || !strings.HasPrefix(ev.Tooltip, "npx -y @modelcontextprotocol/server-everything — ") {
		t.Errorf("server item = %+v, want it to open the dashboard with the command in the tooltip", ev)
	}
	for i, it := range m.Items {
		if it.Separator && (i == 0 || i == len(m.Items)-1 || m.Items[i-1].Separator) {
			t.Errorf("misplaced separator at %d", i)
		}
	}

	// No servers: no section.
	if l := strings.Join(menuLabels(BuildMenu(State{Transports: trayTestTransports()})), "|"); strings.Contains(l, "Servers") {
		t.Errorf("servers section without servers: %q", l)
	}
	// A state change is a menu change.
	approved := slices.Clone(servers)
	approved[1].Approved = true
	if menuEqual(m, BuildMenu(State{Transports: trayTestTransports(), Servers: approved})) {
		t.Error("approving a server left the menu equal")
	}
	// Many servers: the first ones, then a count.
	var many []Server
	for i := range maxServerItems + 3 {
		many = append(many, Server{Name: fmt.Sprintf("s%d", i), State: upstream.StateRunning, Approved: true})
	}
	ml := menuLabels(BuildMenu(State{Transports: trayTestTransports(), Servers: many}))
	if !slices.Contains(ml, fmt.Sprintf("s%d — running", maxServerItems-1)) || slices.Contains(ml, fmt.Sprintf("s%d — running", maxServerItems)) ||
		!slices.Contains(ml, "… 3 more (see the dashboard)") {
		t.Errorf("labels with %d servers: %q", len(many), ml)
	}
}

// TestTrayViewsAreDashboardTabs: the views tray items open are tabs the dashboard knows
// (frontend/src/App.svelte's TABS); an unknown hash would land on the Overview instead.
func TestTrayViewsAreDashboardTabs(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "..", "frontend", "src", "App.svelte"))
	if err != nil {
		t.Fatal(err)
	}
	line := regexp.MustCompile(`const TABS = \[([^\]]*)\]`).FindSubmatch(src)
	if line == nil {
		t.Fatal("no `const TABS = [...]` in frontend/src/App.svelte")
	}
	var tabs []string
	for _, m := range regexp.MustCompile(`'([a-z]+)'`).FindAllSubmatch(line[1], -1) {
		tabs = append(tabs, string(m[1]))
	}
	for _, v := range []string{ViewClients, ViewServers} {
		if !slices.Contains(tabs, v) {
			t.Errorf("tray view %q is not a dashboard tab (TABS: %q)", v, tabs)
		}
	}
}

// TestTrayProjectItem: the project folder's line follows "Open dashboard", names the folder (its
// path in the tooltip), says when there is none, and asks for another folder when clicked; an
// app without a project folder to show (nil) has no such line.
func TestTrayProjectItem(t *testing.T) {
	for _, tc := range []struct {
		name      string
		project   *Project
		wantLabel string
		wantTip   string
	}{
		{"a project", &Project{Dir: "/home/me/src/my-app"}, "Project: my-app", "/home/me/src/my-app — where clients work"},
		{"none chosen yet", &Project{}, "Project: none — choose a folder…", "No project folder yet"},
		{"a long name is cut", &Project{Dir: "/srv/" + strings.Repeat("x", 60)}, "Project: " + strings.Repeat("x", 39) + "…", "/srv/xxx"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := BuildMenu(State{Transports: trayTestTransports(), Project: tc.project})
			labels := menuLabels(m)
			i := slices.Index(labels, LabelOpenDashboard)
			if i < 0 || i+1 >= len(labels) || labels[i+1] != tc.wantLabel {
				t.Fatalf("labels %q: want %q right after %q", labels, tc.wantLabel, LabelOpenDashboard)
			}
			it := itemWithPrefix(t, m, tc.wantLabel)
			if !it.Enabled || it.Action != (Action{Kind: ActionChooseProject}) || !strings.HasPrefix(it.Tooltip, tc.wantTip) {
				t.Errorf("item %+v: want an enabled ActionChooseProject with tooltip %q…", it, tc.wantTip)
			}
		})
	}
	if labels := menuLabels(BuildMenu(State{Transports: trayTestTransports()})); slices.ContainsFunc(labels, func(l string) bool { return strings.HasPrefix(l, LabelProject) }) {
		t.Errorf("no project to show, yet the menu has %q", labels)
	}
}

// A remote server waiting for the user to sign in says so, and its line signs in.
func TestTraySignInItem(t *testing.T) {
	servers := []Server{
		{Name: "remote", State: upstream.StateSignin, Command: "https://example.test/mcp"},
		{Name: "everything", State: upstream.StateRunning, Approved: true},
	}
	m := BuildMenu(State{Transports: trayTestTransports(), Servers: servers})
	head := itemWithPrefix(t, m, "Servers:")
	if head.Label != "Servers: 1 running, 1 waiting for you to sign in" {
		t.Errorf("heading %q", head.Label)
	}
	it := itemWithPrefix(t, m, "remote — ")
	if it.Label != "remote — sign in… (click to open the sign-in page)" || !it.Enabled || it.Action != (Action{Kind: ActionSignIn, Server: "remote"}) {
		t.Errorf("item %+v", it)
	}
}

// TestTrayTasksLine: while tasks run the menu says how many and opens the Activity view (its
// Tasks list); with none the line is gone.
func TestTrayTasksLine(t *testing.T) {
	for n, want := range map[int]string{1: "1 task running", 3: "3 tasks running"} {
		it := itemWithPrefix(t, BuildMenu(State{Transports: trayTestTransports(), Tasks: n}), want)
		if it.Action != (Action{Kind: ActionOpenDashboard, View: ViewActivity}) || !it.Enabled {
			t.Errorf("%d tasks: item %+v", n, it)
		}
	}
	if labels := strings.Join(menuLabels(BuildMenu(State{Transports: trayTestTransports()})), "|"); strings.Contains(labels, "running") && strings.Contains(labels, "task") {
		t.Errorf("a tasks line without tasks: %q", labels)
	}
}

// A client on another machine asking to use the hub (OAuth) reads as such in the tray, with the
// toolsets it asks for and where its authorization goes.
func TestTrayClientAuthorization(t *testing.T) {
	a := policy.Approval{ID: "a9", Kind: policy.KindClient, Client: "Claude Code", Device: "192.168.1.20",
		Scopes: []string{"files", "process"}, Redirect: "http://127.0.0.1:33418"}
	if got := approvalWhat(a); got != "use this hub from 192.168.1.20" {
		t.Errorf("what = %q", got)
	}
	if got := approvalDetails(a); !strings.Contains(got, "toolsets: files, process") || !strings.Contains(got, "http://127.0.0.1:33418") {
		t.Errorf("details = %q", got)
	}
	m := BuildMenu(State{Transports: trayTestTransports(), Approvals: 1,
		NextApproval: Approval{ID: a.ID, Client: a.Client, What: approvalWhat(a), Details: approvalDetails(a)}})
	if got := itemWithPrefix(t, m, "Allow ").Action; got != (Action{Kind: ActionApprove, Approval: "a9"}) {
		t.Errorf("allow action = %+v", got)
	}
	if deny := itemWithPrefix(t, m, "Deny "); deny.Label != "Deny Claude Code: use this hub from 192.168.1.20" {
		t.Errorf("deny item = %+v", deny)
	}
}

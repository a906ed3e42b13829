package desktop

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/app"
	"github.com/switchboard-hub/switchboard/app/apptest"
	"github.com/switchboard-hub/switchboard/app/tray"
	"github.com/switchboard-hub/switchboard/internal/config"
	"github.com/switchboard-hub/switchboard/internal/testutil"
	"github.com/switchboard-hub/switchboard/internal/upstream"
	"github.com/switchboard-hub/switchboard/mcp"
	"github.com/switchboard-hub/switchboard/mcp/ide/agenticsim"
)

// recordingView keeps every rendered menu.
type recordingView struct {
	mu    sync.Mutex
	menus []tray.Menu
	more  chan struct{}
}

func newRecordingView() *recordingView { return &recordingView{more: make(chan struct{}, 1)} }

func (v *recordingView) Render(m tray.Menu) {
	v.mu.Lock()
	v.menus = append(v.menus, m)
	v.mu.Unlock()
	select {
	case v.more <- struct{}{}:
	default:
	}
}

func (v *recordingView) count() int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return len(v.menus)
}

func (v *recordingView) last() (tray.Menu, bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if len(v.menus) == 0 {
		return tray.Menu{}, false
	}
	return v.menus[len(v.menus)-1], true
}

// waitFor waits until the latest rendered menu satisfies ok.
func (v *recordingView) waitFor(t *testing.T, what string, ok func(tray.Menu) bool) tray.Menu {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		if m, has := v.last(); has && ok(m) {
			return m
		}
		select {
		case <-v.more:
		case <-deadline:
			m, _ := v.last()
			t.Fatalf("timed out waiting for %s; last menu: %q tooltip %q", what, menuLabels(m), m.Tooltip)
		}
	}
}

func menuHas(prefix string) func(tray.Menu) bool {
	return func(m tray.Menu) bool {
		for _, it := range m.Items {
			if !it.Separator && strings.HasPrefix(it.Label, prefix) {
				return true
			}
		}
		return false
	}
}

// recordingShell records what tray actions asked of the window toolkit.
type recordingShell struct {
	mu     sync.Mutex
	shown  int
	views  []string
	opened []string
	quits  int
	events chan string
	// pick answers PickFolder (the native picker): the folder "chosen"; nil: dismissed.
	pick   func(title, start string) (string, error)
	picked []string // the start folder of each PickFolder
}

func newRecordingShell() *recordingShell { return &recordingShell{events: make(chan string, 16)} }

func (s *recordingShell) note(ev string) {
	select {
	case s.events <- ev:
	default:
	}
}
func (s *recordingShell) ShowWindow() { s.mu.Lock(); s.shown++; s.mu.Unlock(); s.note("show") }
func (s *recordingShell) ShowView(view string) {
	s.mu.Lock()
	s.views = append(s.views, view)
	s.mu.Unlock()
	s.note("view " + view)
}
func (s *recordingShell) OpenFolder(path string) error {
	s.mu.Lock()
	s.opened = append(s.opened, path)
	s.mu.Unlock()
	s.note("open")
	return nil
}
func (s *recordingShell) Quit() { s.mu.Lock(); s.quits++; s.mu.Unlock(); s.note("quit") }
func (s *recordingShell) PickFolder(title, start string) (string, error) {
	s.mu.Lock()
	s.picked = append(s.picked, start)
	pick := s.pick
	s.mu.Unlock()
	s.note("pick")
	if pick == nil {
		return "", nil
	}
	return pick(title, start)
}

func (s *recordingShell) waitEvent(t *testing.T, want string) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case ev := <-s.events:
			if ev == want {
				return
			}
		case <-deadline:
			t.Fatalf("timed out waiting for the shell to %s", want)
		}
	}
}

// runTray starts a controller on st and stops it at cleanup; tune adjusts it before it starts.
func runTray(t *testing.T, st *app.Stack, tune ...func(*tray.Controller)) (*tray.Controller, *recordingView, *recordingShell, context.Context) {
	t.Helper()
	view, shell := newRecordingView(), newRecordingShell()
	c := tray.New(newTraySource(st, app.NewController(st, "test")), view, shell)
	for _, f := range tune {
		f(c)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); c.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			t.Error("tray controller did not stop")
		}
	})
	return c, view, shell, ctx
}

// trayClick sends the action of the first item whose label starts with prefix in the latest menu.
func trayClick(t *testing.T, c *tray.Controller, view *recordingView, ctx context.Context, prefix string) {
	t.Helper()
	m, _ := view.last()
	c.Click(ctx, itemWithPrefix(t, m, prefix).Action)
}

func TestTrayTogglesTCP(t *testing.T) {
	st := apptest.Stack(t, "")
	c, view, _, ctx := runTray(t, st)
	view.waitFor(t, "initial menu", menuHas("TCP: off"))

	trayClick(t, c, view, ctx, "TCP")
	m := view.waitFor(t, "TCP running", menuHas("TCP: 127.0.0.1:"))
	addr := strings.TrimPrefix(itemWithPrefix(t, m, "TCP").Label, "TCP: ")
	if !itemWithPrefix(t, m, "TCP").Checked {
		t.Error("running TCP item is not checked")
	}
	conn, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		t.Fatalf("TCP shown on %s but dial failed: %v", addr, err)
	}
	conn.Close()

	trayClick(t, c, view, ctx, "TCP")
	view.waitFor(t, "TCP off again", menuHas("TCP: off"))
	if conn, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		conn.Close()
		t.Fatalf("TCP shown off but %s still accepts connections", addr)
	}
}

func TestTrayCountsSessionsAndShowsIcon(t *testing.T) {
	st := apptest.Stack(t, "")
	_, view, _, _ := runTray(t, st)
	view.waitFor(t, "no session", func(m tray.Menu) bool { return m.Icon == tray.Icon{HubUp: true} })

	conn, err := net.Dial("unix", st.Config.Unix.Path)
	if err != nil {
		t.Fatal(err)
	}
	client := sdk.NewClient(&sdk.Implementation{Name: "tray-test", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &sdk.IOTransport{Reader: conn, Writer: conn}, nil)
	if err != nil {
		t.Fatalf("connect over the Unix socket: %v", err)
	}
	m := view.waitFor(t, "one session", func(m tray.Menu) bool { return m.Icon.Active })
	if !strings.Contains(m.Tooltip, "1 MCP session ") {
		t.Errorf("tooltip %q does not count the session", m.Tooltip)
	}
	cs.Close()
	view.waitFor(t, "session gone", func(m tray.Menu) bool { return !m.Icon.Active && menuHas("Hub running · 0 MCP sessions")(m) })
}

func TestTrayShowsBridgeOnline(t *testing.T) {
	sim := agenticsim.New(agenticsim.Options{})
	if _, err := sim.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.Close() })
	st := apptest.Stack(t, sim.URL())
	_, view, _, _ := runTray(t, st)
	m := view.waitFor(t, "bridge online", func(m tray.Menu) bool { return m.Icon.BridgeOnline })
	if !menuHas("Hub running · 0 MCP sessions · IDE bridge online")(m) {
		t.Errorf("status line does not say the bridge is online: %q", menuLabels(m))
	}
	sim.Stop()
	view.waitFor(t, "bridge offline after the backend stopped", func(m tray.Menu) bool { return !m.Icon.BridgeOnline })
}

// TestTrayConnectClientsOpensClientsView: "Connect clients…" (which was "Copy client
// configuration") shows the window on the dashboard's Clients view, where clients are connected
// and where the snippet for any other client is copied: the Unix socket relay to this hub.
func TestTrayConnectClientsOpensClientsView(t *testing.T) {
	st := apptest.Stack(t, "")
	c, view, shell, ctx := runTray(t, st)
	view.waitFor(t, "initial menu", menuHas(tray.LabelConnectClients))

	trayClick(t, c, view, ctx, tray.LabelConnectClients)
	shell.waitEvent(t, "view "+tray.ViewClients)
	shell.mu.Lock()
	views, shown := slices.Clone(shell.views), shell.shown
	shell.mu.Unlock()
	if !slices.Equal(views, []string{tray.ViewClients}) || shown != 0 {
		t.Errorf("shell asked to show views %q and the window %d times; want only the %s view", views, shown, tray.ViewClients)
	}
	m, _ := view.last()
	if menuHas("Copy")(m) {
		t.Errorf("the menu still has a copy item: %q", menuLabels(m))
	}

	cfg := app.NewController(st, "test").ClientConfig()
	if cfg.Unix == nil || !slices.Equal(cfg.Unix.MCPServers.Switchboard.Args, []string{"connect", "--socket", st.Config.Unix.Path}) {
		t.Errorf("the Clients view's snippet for other clients = %+v, want the relay to %s", cfg.Unix, st.Config.Unix.Path)
	}
}

func TestTrayOpensLogsAndQuits(t *testing.T) {
	st := apptest.Stack(t, "")
	c, view, shell, ctx := runTray(t, st)
	view.waitFor(t, "initial menu", menuHas(tray.LabelOpenLogs))

	trayClick(t, c, view, ctx, tray.LabelOpenLogs)
	shell.waitEvent(t, "open")
	shell.mu.Lock()
	opened := shell.opened
	shell.mu.Unlock()
	if len(opened) != 1 || opened[0] != st.Config.LogDir() {
		t.Errorf("opened %q, want [%s]", opened, st.Config.LogDir())
	}
	if fi, err := os.Stat(st.Config.LogDir()); err != nil || !fi.IsDir() {
		t.Errorf("logs folder %s: %v", st.Config.LogDir(), err)
	}

	trayClick(t, c, view, ctx, tray.LabelOpenDashboard)
	shell.waitEvent(t, "show")
	trayClick(t, c, view, ctx, tray.LabelQuit)
	shell.waitEvent(t, "quit")
}

func TestTrayHostLossShowsWindow(t *testing.T) {
	st := apptest.Stack(t, "")
	c, view, shell, _ := runTray(t, st)
	view.waitFor(t, "initial menu", menuHas(tray.LabelQuit))
	if c.HostAvailable() {
		t.Fatal("host available before any report: the close button would hide to nowhere")
	}
	c.SetHostAvailable(true)
	testutil.Eventually(t, "the host's presence to be taken up", c.HostAvailable)
	c.SetHostAvailable(false)
	shell.waitEvent(t, "show")
	if c.HostAvailable() {
		t.Error("host still reported available after it went away")
	}
}

func TestTrayRendersOnlyChanges(t *testing.T) {
	st := apptest.Stack(t, "")
	_, view, _, _ := runTray(t, st)
	view.waitFor(t, "initial menu", menuHas(tray.LabelQuit))
	// Nothing polls: with nothing changing, nothing is re-rendered. A poller shows only as time
	// passes, so this waits on purpose (no event can say "nothing happened"): first for the
	// start-up renders to settle, then a quiet stretch.
	time.Sleep(50 * time.Millisecond)
	before := view.count()
	time.Sleep(200 * time.Millisecond)
	if after := view.count(); after != before {
		t.Errorf("%d renders while idle; want none", after-before)
	}
	// A change is rendered.
	if err := st.Transports.Start(mcp.TransportHTTP); err != nil {
		t.Fatal(err)
	}
	view.waitFor(t, "HTTP running", menuHas("Streamable HTTP: 127.0.0.1:"))
}

func TestTrayReportsFailedToggle(t *testing.T) {
	// Occupy a port, then point TCP at it: the tray says why it could not start.
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	st := apptest.Stack(t, "", func(cfg *config.Config) { cfg.TCP.Addr = busy.Addr().String() })
	c, view, _, ctx := runTray(t, st)
	view.waitFor(t, "initial menu", menuHas("TCP: off"))
	trayClick(t, c, view, ctx, "TCP")
	m := view.waitFor(t, "failure shown", menuHas("Could not start TCP"))
	if !menuHas("TCP: off (failed: ")(m) {
		t.Errorf("TCP item does not carry the failure: %q", menuLabels(m))
	}
}

// menuLabels lists the labels of the non-separator items.
func menuLabels(m tray.Menu) []string {
	var out []string
	for _, it := range m.Items {
		if !it.Separator {
			out = append(out, it.Label)
		}
	}
	return out
}

// itemWithPrefix returns the first item whose label starts with prefix.
func itemWithPrefix(t *testing.T, m tray.Menu, prefix string) tray.Item {
	t.Helper()
	for _, it := range m.Items {
		if !it.Separator && strings.HasPrefix(it.Label, prefix) {
			return it
		}
	}
	t.Fatalf("no menu item starts with %q; labels: %q", prefix, menuLabels(m))
	return tray.Item{}
}

// TestTrayTogglesAutostart: "Start at login" writes the XDG autostart entry (the running binary
// with --hidden) in $XDG_CONFIG_HOME/autostart, the item follows the file, and a second click
// removes it.
func TestTrayTogglesAutostart(t *testing.T) {
	cfgHome := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", cfgHome)
	entry := filepath.Join(cfgHome, "autostart", "switchboard.desktop")
	st := apptest.Stack(t, "")
	c, view, _, ctx := runTray(t, st, func(c *tray.Controller) { c.NoticeTTL = 300 * time.Millisecond })
	m := view.waitFor(t, "initial menu", menuHas(tray.LabelAutostart))
	if itemWithPrefix(t, m, tray.LabelAutostart).Checked {
		t.Fatal("Start at login checked with no autostart entry")
	}

	trayClick(t, c, view, ctx, tray.LabelAutostart)
	m = view.waitFor(t, "autostart on", menuHas("Switchboard will start at login"))
	if !itemWithPrefix(t, m, tray.LabelAutostart).Checked {
		t.Error("Start at login not checked after enabling it")
	}
	b, err := os.ReadFile(entry)
	exe, _ := os.Executable()
	if err != nil || !strings.Contains(string(b), "\nExec="+exe+" --hidden\n") || !strings.Contains(string(b), "X-Switchboard-Autostart=true") {
		t.Fatalf("autostart entry %s = %q, %v", entry, b, err)
	}

	trayClick(t, c, view, ctx, tray.LabelAutostart)
	m = view.waitFor(t, "autostart off", menuHas("Switchboard will not start at login"))
	if itemWithPrefix(t, m, tray.LabelAutostart).Checked {
		t.Error("Start at login still checked after disabling it")
	}
	if _, err := os.Stat(entry); !os.IsNotExist(err) {
		t.Errorf("autostart entry still there: %v", err)
	}
}

// TestAutostartConfigApplies: [desktop] autostart = true writes the entry at desktop start-up,
// false removes it, unset leaves it as it is.
func TestAutostartConfigApplies(t *testing.T) {
	cfgHome := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", cfgHome)
	entry := filepath.Join(cfgHome, "autostart", "switchboard.desktop")
	exists := func() bool { _, err := os.Stat(entry); return err == nil }
	on, off := true, false
	for _, step := range []struct {
		v    *bool
		want bool
	}{{&on, true}, {nil, true}, {&off, false}, {nil, false}} {
		cfg := config.Config{Env: config.ReadEnv()} // the XDG_CONFIG_HOME set above
		cfg.Desktop.Autostart = step.v
		if err := applyAutostartConfig(cfg); err != nil {
			t.Fatal(err)
		}
		if exists() != step.want {
			t.Errorf("after autostart = %v: entry exists %v, want %v", step.v, exists(), step.want)
		}
	}
}

// TestTrayListsServers: a server added to the hub's config file appears in the tray as
// quarantined, reads "running" once approved, "disabled" when switched off, and leaves the menu
// when removed — each change pushed by the upstream manager, not polled. Its item opens the
// dashboard's Servers view.
func TestTrayListsServers(t *testing.T) {
	sdkDir := testutil.NodeModule(t, "@modelcontextprotocol/sdk")
	fixture := filepath.Join(filepath.Dir(filepath.Dir(filepath.Dir(sdkDir))), "upstream-fixture.mjs")
	cfgFile := filepath.Join(t.TempDir(), "config.toml")
	st := apptest.Stack(t, "", func(cfg *config.Config) { cfg.Path = cfgFile })
	c, view, shell, ctx := runTray(t, st)
	view.waitFor(t, "initial menu", menuHas(tray.LabelQuit))
	if m, _ := view.last(); menuHas("Servers")(m) {
		t.Fatalf("servers section without servers: %q", menuLabels(m))
	}

	ctl := app.NewController(st, "test")
	if _, err := ctl.AddServer(upstream.Spec{Name: "fixture", Command: "node", Args: []string{fixture}}); err != nil {
		t.Fatal(err)
	}
	view.waitFor(t, "the new server, quarantined", menuHas("fixture — quarantined (approve in the dashboard)"))
	m := view.waitFor(t, "the heading counting it", menuHas("Servers: 0 running, 1 waiting for approval"))
	if it := itemWithPrefix(t, m, "fixture — "); !strings.Contains(it.Tooltip, fixture) {
		t.Errorf("tooltip %q lacks the command line", it.Tooltip)
	}

	if _, err := ctl.ApproveServer("fixture", nil); err != nil {
		t.Fatal(err)
	}
	view.waitFor(t, "approved and running", func(m tray.Menu) bool {
		return menuHas("fixture — running")(m) && menuHas("Servers: 1 running")(m) && !menuHas("Servers: 1 running, ")(m)
	})
	trayClick(t, c, view, ctx, "fixture — ")
	shell.waitEvent(t, "view "+tray.ViewServers)

	if _, err := ctl.SetServerEnabled("fixture", false); err != nil {
		t.Fatal(err)
	}
	view.waitFor(t, "disabled", menuHas("fixture — disabled"))
	if _, err := ctl.RemoveServer("fixture"); err != nil {
		t.Fatal(err)
	}
	view.waitFor(t, "section gone", func(m tray.Menu) bool { return !menuHas("Servers")(m) && !menuHas("fixture")(m) })
}

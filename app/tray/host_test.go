package tray

import (
	"bufio"
	"context"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"
	"github.com/godbus/dbus/v5/prop"
)

// privateSessionBus starts a dbus-daemon of its own and points DBUS_SESSION_BUS_ADDRESS at it.
func privateSessionBus(t *testing.T) string {
	t.Helper()
	daemon, err := exec.LookPath("dbus-daemon")
	if err != nil {
		t.Skip("dbus-daemon not installed (bash build/setup-deps.sh installs it)")
	}
	addr := "unix:path=" + filepath.Join(t.TempDir(), "bus")
	// The daemon prints its address once on stdout and nothing else, so a plain pipe suffices.
	out, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(daemon, "--session", "--nofork", "--nopidfile", "--print-address=1", "--address="+addr)
	cmd.Stdout = w
	err = cmd.Start()
	w.Close()
	if err != nil {
		out.Close()
		t.Fatalf("start dbus-daemon: %v", err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait(); out.Close() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("dbus-daemon printed no address: %v", err)
	}
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", strings.TrimSpace(line))
	return strings.TrimSpace(line)
}

// fakeWatcher is the part of org.kde.StatusNotifierWatcher the monitor reads.
type fakeWatcher struct {
	conn  *dbus.Conn
	props *prop.Properties
}

func startFakeWatcher(t *testing.T, hostRegistered bool) *fakeWatcher {
	t.Helper()
	conn, err := dbus.ConnectSessionBus()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	props, err := prop.Export(conn, snWatcherPath, prop.Map{snWatcherIface: {
		"IsStatusNotifierHostRegistered": {Value: hostRegistered, Emit: prop.EmitTrue},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if reply, err := conn.RequestName(snWatcherName, dbus.NameFlagDoNotQueue); err != nil || reply != dbus.RequestNameReplyPrimaryOwner {
		t.Fatalf("own %s: %v %v", snWatcherName, reply, err)
	}
	return &fakeWatcher{conn: conn, props: props}
}

func (w *fakeWatcher) registerHost(t *testing.T) {
	t.Helper()
	w.props.SetMust(snWatcherIface, "IsStatusNotifierHostRegistered", true)
	if err := w.conn.Emit(snWatcherPath, snWatcherIface+".StatusNotifierHostRegistered"); err != nil {
		t.Fatal(err)
	}
}

func nextReport(t *testing.T, reports <-chan bool, want bool, what string) {
	t.Helper()
	select {
	case got := <-reports:
		if got != want {
			t.Fatalf("%s: reported %v, want %v", what, got, want)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("%s: no report", what)
	}
}

func TestTrayHostMonitor(t *testing.T) {
	privateSessionBus(t)
	m, err := NewHostMonitor(slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	reports := make(chan bool, 8)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); m.Run(ctx, func(ok bool) { reports <- ok }) }()
	t.Cleanup(func() { cancel(); <-done })

	nextReport(t, reports, false, "no watcher on the bus")

	// A watcher without a host draws nothing: still absent, so no new report.
	w := startFakeWatcher(t, false)
	select {
	case got := <-reports:
		t.Fatalf("watcher without host: reported %v, want no change", got)
	case <-time.After(300 * time.Millisecond):
	}

	w.registerHost(t)
	nextReport(t, reports, true, "host registered")

	// The panel crashes: its bus name goes away.
	w.conn.Close()
	nextReport(t, reports, false, "watcher gone")

	// A watcher that already has a host when it appears.
	startFakeWatcher(t, true)
	nextReport(t, reports, true, "watcher with host appeared")
}

func TestTrayHostPresentWithoutWatcher(t *testing.T) {
	privateSessionBus(t)
	conn, err := dbus.ConnectSessionBus()
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ok, err := hostPresent(context.Background(), conn)
	if ok || err != nil {
		t.Fatalf("hostPresent = %v, %v; want false, nil", ok, err)
	}
}

func TestTrayHostMonitorWithoutSessionBus(t *testing.T) {
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "unix:path="+filepath.Join(t.TempDir(), "no-bus-here"))
	if m, err := NewHostMonitor(slog.New(slog.DiscardHandler)); err == nil {
		m.conn.Close()
		t.Fatal("connected to a bus that does not exist")
	}
}

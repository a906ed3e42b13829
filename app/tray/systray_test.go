//go:build desktop || bindings

package tray

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"

	"github.com/switchboard-hub/switchboard/internal/testutil"
)

// These tests drive the real fyne.io/systray item on a private session bus, reading it the way a
// tray host does (StatusNotifierItem properties, com.canonical.dbusmenu). systray keeps its state
// in package globals and can be started once per process, so one test covers the whole life of
// the item. Run with: go test -tags desktop,production,webkit2_41 ./app/tray -run Systray

// dbusLayout is com.canonical.dbusmenu's (ia{sv}av) node.
type dbusLayout struct {
	ID       int32
	Props    map[string]dbus.Variant
	Children []dbus.Variant
}

type dbusMenuItem struct {
	id      int32
	label   string
	enabled bool
	toggle  int32
}

// readDbusMenu returns the top-level items (separators skipped) of our own tray item.
func readDbusMenu(t *testing.T, conn *dbus.Conn) []dbusMenuItem {
	t.Helper()
	name := fmt.Sprintf("org.kde.StatusNotifierItem-%d-1", os.Getpid())
	var revision uint32
	var root dbusLayout
	err := conn.Object(name, "/StatusNotifierItem/menu").
		Call("com.canonical.dbusmenu.GetLayout", 0, int32(0), int32(-1), []string{}).
		Store(&revision, &root)
	if err != nil {
		t.Fatalf("GetLayout: %v", err)
	}
	var items []dbusMenuItem
	for _, c := range root.Children {
		var l dbusLayout
		if err := dbus.Store([]any{c.Value()}, &l); err != nil {
			t.Fatalf("menu node: %v", err)
		}
		if kind, _ := l.Props["type"].Value().(string); kind == "separator" {
			continue
		}
		it := dbusMenuItem{id: l.ID, enabled: true}
		it.label, _ = l.Props["label"].Value().(string)
		if v, ok := l.Props["enabled"]; ok {
			it.enabled, _ = v.Value().(bool)
		}
		if v, ok := l.Props["toggle-state"]; ok {
			it.toggle, _ = v.Value().(int32)
		}
		items = append(items, it)
	}
	return items
}

func waitDbusMenu(t *testing.T, conn *dbus.Conn, ok func([]dbusMenuItem) bool) []dbusMenuItem {
	t.Helper()
	var items []dbusMenuItem
	if !testutil.Poll(testutil.Patience, func() bool { items = readDbusMenu(t, conn); return ok(items) }) {
		t.Fatalf("menu never matched; last: %+v", items)
	}
	return items
}

func labelsOf(items []dbusMenuItem) []string {
	var out []string
	for _, it := range items {
		out = append(out, it.label)
	}
	return out
}

func TestSystrayViewOnSessionBus(t *testing.T) {
	privateSessionBus(t)
	stop, err := StartSystray(slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatalf("StartSystray: %v", err)
	}
	conn, err := dbus.ConnectSessionBus()
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()

	clicks := make(chan Action, 4)
	ctx, cancel := context.WithCancel(context.Background())
	view := NewSystrayView(ctx, func(_ context.Context, a Action) { clicks <- a })

	state := State{Transports: trayTestTransports()}
	model := BuildMenu(state)
	view.Render(model)
	items := waitDbusMenu(t, conn, func(items []dbusMenuItem) bool { return len(items) == len(menuLabels(model)) })
	if got, want := strings.Join(labelsOf(items), "|"), strings.Join(menuLabels(model), "|"); got != want {
		t.Fatalf("dbusmenu labels\n got %s\nwant %s", got, want)
	}
	if items[0].enabled {
		t.Error("the status line is clickable; it should be disabled")
	}

	// Properties a tray host reads.
	var props map[string]dbus.Variant
	name := fmt.Sprintf("org.kde.StatusNotifierItem-%d-1", os.Getpid())
	if err := conn.Object(name, "/StatusNotifierItem").Call("org.freedesktop.DBus.Properties.GetAll", 0, "org.kde.StatusNotifierItem").Store(&props); err != nil {
		t.Fatal(err)
	}
	if id, _ := props["Id"].Value().(string); id != "Switchboard" {
		t.Errorf("Id = %q, want Switchboard", id)
	}
	var pixmaps []struct {
		W, H int32
		Pix  []byte
	}
	if err := dbus.Store([]any{props["IconPixmap"].Value()}, &pixmaps); err != nil || len(pixmaps) != 1 || pixmaps[0].W != iconSize {
		t.Errorf("IconPixmap = %d pixmaps (%v), want one %dpx", len(pixmaps), err, iconSize)
	}

	// A click from the host arrives as the item's action.
	var tcp dbusMenuItem
	for _, it := range items {
		if strings.HasPrefix(it.label, "TCP") {
			tcp = it
		}
	}
	if call := conn.Object(name, "/StatusNotifierItem/menu").Call("com.canonical.dbusmenu.Event", 0, tcp.id, "clicked", dbus.MakeVariant(int32(0)), uint32(0)); call.Err != nil {
		t.Fatal(call.Err)
	}
	select {
	case a := <-clicks:
		if a.Kind != ActionToggleTransport || a.Transport != "tcp" || !a.Enable {
			t.Errorf("click on %q gave %+v", tcp.label, a)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("click on TCP never arrived")
	}

	// A new state replaces the whole menu: new labels and toggle states, old items gone.
	state.Transports[1].Running, state.Transports[1].Addr = true, "127.0.0.1:9100"
	view.Render(BuildMenu(state))
	items = waitDbusMenu(t, conn, func(items []dbusMenuItem) bool {
		for _, it := range items {
			if it.label == "TCP: 127.0.0.1:9100" && it.toggle == 1 {
				return true
			}
		}
		return false
	})
	if len(items) != len(menuLabels(model)) {
		t.Errorf("after re-render %d items, want %d: %q", len(items), len(menuLabels(model)), labelsOf(items))
	}
	// The old TCP item's id is gone; clicking it does nothing.
	_ = conn.Object(name, "/StatusNotifierItem/menu").Call("com.canonical.dbusmenu.Event", 0, tcp.id, "clicked", dbus.MakeVariant(int32(0)), uint32(0))
	select {
	case a := <-clicks:
		t.Errorf("a removed item still delivered %+v", a)
	case <-time.After(200 * time.Millisecond):
	}

	cancel()
	view.Wait() // every forwarder ends
	stop()      // takes the item off the bus without panicking
	var owned bool
	if err := conn.BusObject().Call("org.freedesktop.DBus.NameHasOwner", 0, name).Store(&owned); err != nil || owned {
		t.Errorf("after stop, %s owned=%v (%v); want released", name, owned, err)
	}
}

func TestStartSystrayWithoutSessionBus(t *testing.T) {
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "unix:path="+filepath.Join(t.TempDir(), "no-bus"))
	stop, err := StartSystray(slog.New(slog.DiscardHandler))
	if err == nil {
		t.Fatal("StartSystray succeeded without a session bus")
	}
	stop() // must be callable and must not panic (systray's end would, on its nil connection)
}

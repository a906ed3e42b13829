// Command desktopprobe is the desktop smoke test's hands and eyes (build/desktop-smoke.sh). It is
// a test tool, not part of Switchboard:
//
//	desktopprobe watcher [--no-host]     run an org.kde.StatusNotifierWatcher (and, unless
//	                                     --no-host, announce a tray host) until SIGTERM; prints
//	                                     "ready" and one "registered SERVICE unix_ms=N" per item
//	desktopprobe wait-item [--timeout D] wait until an item is registered; print its service
//	desktopprobe menu                    print the item's dbusmenu: "ID<TAB>LABEL<TAB>flags"
//	desktopprobe props                   print the item's Id, Title, ToolTip and icon size
//	desktopprobe click PREFIX            send "clicked" to the first item whose label starts with PREFIX
//	desktopprobe wait-label PREFIX [--gone] [--timeout D]
//	                                     wait until a label starting with PREFIX exists (or not)
//	desktopprobe close-window WINDOW_ID  ask an X11 window to close, as a window manager's close
//	                                     button does (a WM_DELETE_WINDOW client message)
//
// It speaks DBus through github.com/godbus/dbus/v5 and the few X11 requests it needs directly,
// so the smoke test needs no panel, window manager or Python on the machine.
package main

import (
	"context"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/godbus/dbus/v5"
	"github.com/godbus/dbus/v5/introspect"
	"github.com/godbus/dbus/v5/prop"
)

const (
	watcherName  = "org.kde.StatusNotifierWatcher"
	watcherPath  = dbus.ObjectPath("/StatusNotifierWatcher")
	watcherIface = "org.kde.StatusNotifierWatcher"
	itemIface    = "org.kde.StatusNotifierItem"
	menuIface    = "com.canonical.dbusmenu"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: desktopprobe watcher|wait-item|menu|props|click|wait-label|close-window ...")
		os.Exit(2)
	}
	var err error
	switch cmd, args := os.Args[1], os.Args[2:]; cmd {
	case "watcher":
		err = runWatcher(args)
	case "wait-item":
		err = waitItem(args)
	case "menu":
		err = printMenu()
	case "props":
		err = printProps()
	case "click":
		err = click(args)
	case "wait-label":
		err = waitLabel(args)
	case "close-window":
		err = closeWindow(args)
	default:
		err = fmt.Errorf("unknown command %q", cmd)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "desktopprobe:", err)
		os.Exit(1)
	}
}

// --- StatusNotifierWatcher ------------------------------------------------------------------

// watcher implements org.kde.StatusNotifierWatcher the way KDE's and the GNOME AppIndicator
// extension's do: items register a bus name or an object path (then the sender's unique name
// is the service), and are dropped when their bus name goes away.
type watcher struct {
	conn  *dbus.Conn
	props *prop.Properties

	mu    sync.Mutex
	items []string          // "busname/path"
	owner map[string]string // item → bus name that owns it
}

func (w *watcher) RegisterStatusNotifierItem(sender dbus.Sender, service string) *dbus.Error {
	busName, path := string(sender), "/StatusNotifierItem"
	if strings.HasPrefix(service, "/") {
		path = service
	} else if service != "" {
		busName = service
	}
	item := busName + path
	w.mu.Lock()
	known := false
	for _, it := range w.items {
		known = known || it == item
	}
	if !known {
		w.items = append(w.items, item)
		w.owner[item] = string(sender)
	}
	items := append([]string(nil), w.items...)
	w.mu.Unlock()
	w.props.SetMust(watcherIface, "RegisteredStatusNotifierItems", items)
	_ = w.conn.Emit(watcherPath, watcherIface+".StatusNotifierItemRegistered", item)
	fmt.Printf("registered %s unix_ms=%d\n", item, time.Now().UnixMilli())
	return nil
}

func (w *watcher) RegisterStatusNotifierHost(service string) *dbus.Error {
	w.props.SetMust(watcherIface, "IsStatusNotifierHostRegistered", true)
	_ = w.conn.Emit(watcherPath, watcherIface+".StatusNotifierHostRegistered")
	return nil
}

// dropOwner forgets the items of a bus name that left the bus.
func (w *watcher) dropOwner(name string) {
	w.mu.Lock()
	var kept, gone []string
	for _, it := range w.items {
		if w.owner[it] == name {
			gone = append(gone, it)
			delete(w.owner, it)
		} else {
			kept = append(kept, it)
		}
	}
	w.items = kept
	w.mu.Unlock()
	if len(gone) == 0 {
		return
	}
	w.props.SetMust(watcherIface, "RegisteredStatusNotifierItems", append([]string{}, kept...))
	for _, it := range gone {
		_ = w.conn.Emit(watcherPath, watcherIface+".StatusNotifierItemUnregistered", it)
		fmt.Printf("unregistered %s unix_ms=%d\n", it, time.Now().UnixMilli())
	}
}

func runWatcher(args []string) error {
	fs := flag.NewFlagSet("watcher", flag.ExitOnError)
	noHost := fs.Bool("no-host", false, "run the watcher without announcing a tray host")
	_ = fs.Parse(args)

	conn, err := dbus.ConnectSessionBus()
	if err != nil {
		return err
	}
	defer conn.Close()
	w := &watcher{conn: conn, owner: map[string]string{}}
	if err := conn.Export(w, watcherPath, watcherIface); err != nil {
		return err
	}
	w.props, err = prop.Export(conn, watcherPath, prop.Map{watcherIface: {
		"RegisteredStatusNotifierItems":  {Value: []string{}, Emit: prop.EmitTrue},
		"IsStatusNotifierHostRegistered": {Value: false, Emit: prop.EmitTrue},
		"ProtocolVersion":                {Value: int32(0), Emit: prop.EmitTrue},
	}})
	if err != nil {
		return err
	}
	node := &introspect.Node{Name: string(watcherPath), Interfaces: []introspect.Interface{
		introspect.IntrospectData, prop.IntrospectData,
		{Name: watcherIface, Methods: introspect.Methods(w), Properties: w.props.Introspection(watcherIface)},
	}}
	if err := conn.Export(introspect.NewIntrospectable(node), watcherPath, "org.freedesktop.DBus.Introspectable"); err != nil {
		return err
	}
	if err := conn.AddMatchSignal(dbus.WithMatchSender("org.freedesktop.DBus"), dbus.WithMatchMember("NameOwnerChanged")); err != nil {
		return err
	}
	signals := make(chan *dbus.Signal, 64)
	conn.Signal(signals)
	reply, err := conn.RequestName(watcherName, dbus.NameFlagDoNotQueue)
	if err != nil || reply != dbus.RequestNameReplyPrimaryOwner {
		return fmt.Errorf("own %s: reply %v, %v (is another watcher running?)", watcherName, reply, err)
	}
	if !*noHost {
		// A host registers a name of its own, then announces it, as a real panel does.
		host := fmt.Sprintf("org.kde.StatusNotifierHost-%d", os.Getpid())
		if _, err := conn.RequestName(host, dbus.NameFlagDoNotQueue); err != nil {
			return err
		}
		_ = w.RegisterStatusNotifierHost(host)
	}
	fmt.Printf("ready host=%v unix_ms=%d\n", !*noHost, time.Now().UnixMilli())

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case sig := <-signals:
			// NameOwnerChanged(name, old, new): an empty new owner means the name left the bus.
			if sig != nil && sig.Name == "org.freedesktop.DBus.NameOwnerChanged" && len(sig.Body) == 3 {
				if name, _ := sig.Body[0].(string); name != "" {
					if newOwner, _ := sig.Body[2].(string); newOwner == "" {
						w.dropOwner(name)
					}
				}
			}
		}
	}
}

// --- item and menu clients ------------------------------------------------------------------

// firstItem returns the bus name and path of the first registered item.
func firstItem(conn *dbus.Conn) (string, dbus.ObjectPath, error) {
	v, err := conn.Object(watcherName, watcherPath).GetProperty(watcherIface + ".RegisteredStatusNotifierItems")
	if err != nil {
		return "", "", fmt.Errorf("ask the watcher for items: %w", err)
	}
	items, _ := v.Value().([]string)
	if len(items) == 0 {
		return "", "", errors.New("no StatusNotifierItem is registered")
	}
	i := strings.Index(items[0], "/")
	if i < 0 {
		return items[0], "/StatusNotifierItem", nil
	}
	return items[0][:i], dbus.ObjectPath(items[0][i:]), nil
}

func waitItem(args []string) error {
	fs := flag.NewFlagSet("wait-item", flag.ExitOnError)
	timeout := fs.Duration("timeout", 30*time.Second, "how long to wait")
	_ = fs.Parse(args)
	conn, err := dbus.ConnectSessionBus()
	if err != nil {
		return err
	}
	defer conn.Close()
	deadline := time.Now().Add(*timeout)
	for {
		name, path, err := firstItem(conn)
		if err == nil {
			fmt.Printf("%s%s\n", name, path)
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("after %s: %w", *timeout, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// menuEntry is one flattened dbusmenu item.
type menuEntry struct {
	id                  int32
	label, kind         string
	enabled, visible    bool
	toggleType          string
	toggleState         int32
	childrenDisplay     string
	depth               int
	hasToggle, hasLabel bool
}

// layout is com.canonical.dbusmenu's (ia{sv}av) node.
type layout struct {
	ID       int32
	Props    map[string]dbus.Variant
	Children []dbus.Variant
}

func flatten(l layout, depth int, out *[]menuEntry) {
	e := menuEntry{id: l.ID, enabled: true, visible: true, depth: depth}
	for k, v := range l.Props {
		switch k {
		case "label":
			e.label, _ = v.Value().(string)
			e.hasLabel = true
		case "type":
			e.kind, _ = v.Value().(string)
		case "enabled":
			e.enabled, _ = v.Value().(bool)
		case "visible":
			e.visible, _ = v.Value().(bool)
		case "toggle-type":
			e.toggleType, _ = v.Value().(string)
		case "toggle-state":
			e.toggleState, _ = v.Value().(int32)
			e.hasToggle = true
		case "children-display":
			e.childrenDisplay, _ = v.Value().(string)
		}
	}
	if depth > 0 {
		*out = append(*out, e)
	}
	for _, c := range l.Children {
		var child layout
		if err := dbus.Store([]any{c.Value()}, &child); err == nil {
			flatten(child, depth+1, out)
		}
	}
}

// readMenu fetches the whole menu of the first registered item.
func readMenu(conn *dbus.Conn) (string, dbus.ObjectPath, []menuEntry, error) {
	name, path, err := firstItem(conn)
	if err != nil {
		return "", "", nil, err
	}
	mv, err := conn.Object(name, path).GetProperty(itemIface + ".Menu")
	if err != nil {
		return "", "", nil, fmt.Errorf("read %s.Menu: %w", itemIface, err)
	}
	menuPath, ok := mv.Value().(dbus.ObjectPath)
	if !ok {
		return "", "", nil, fmt.Errorf("%s.Menu is %T, want an object path", itemIface, mv.Value())
	}
	var revision uint32
	var root layout
	call := conn.Object(name, menuPath).Call(menuIface+".GetLayout", 0, int32(0), int32(-1), []string{})
	if err := call.Store(&revision, &root); err != nil {
		return "", "", nil, fmt.Errorf("GetLayout: %w", err)
	}
	var entries []menuEntry
	flatten(root, 0, &entries)
	return name, menuPath, entries, nil
}

func printMenu() error {
	conn, err := dbus.ConnectSessionBus()
	if err != nil {
		return err
	}
	defer conn.Close()
	_, _, entries, err := readMenu(conn)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.kind == "separator" {
			fmt.Printf("%d\t---\tseparator\n", e.id)
			continue
		}
		var flags []string
		if !e.enabled {
			flags = append(flags, "disabled")
		}
		if !e.visible {
			flags = append(flags, "hidden")
		}
		if e.toggleType != "" {
			flags = append(flags, fmt.Sprintf("%s=%d", e.toggleType, e.toggleState))
		}
		fmt.Printf("%d\t%s\t%s\n", e.id, e.label, strings.Join(flags, ","))
	}
	return nil
}

func printProps() error {
	conn, err := dbus.ConnectSessionBus()
	if err != nil {
		return err
	}
	defer conn.Close()
	name, path, err := firstItem(conn)
	if err != nil {
		return err
	}
	var all map[string]dbus.Variant
	if err := conn.Object(name, path).Call("org.freedesktop.DBus.Properties.GetAll", 0, itemIface).Store(&all); err != nil {
		return fmt.Errorf("GetAll %s: %w", itemIface, err)
	}
	fmt.Printf("Id\t%v\n", all["Id"].Value())
	fmt.Printf("Title\t%v\n", all["Title"].Value())
	fmt.Printf("Status\t%v\n", all["Status"].Value())
	var tip struct {
		Name  string
		Icons []struct {
			W, H int32
			Pix  []byte
		}
		Title, Description string
	}
	if v, ok := all["ToolTip"]; ok {
		_ = dbus.Store([]any{v.Value()}, &tip)
	}
	fmt.Printf("ToolTip\t%s\n", tip.Title)
	var pixmaps []struct {
		W, H int32
		Pix  []byte
	}
	if v, ok := all["IconPixmap"]; ok {
		_ = dbus.Store([]any{v.Value()}, &pixmaps)
	}
	for _, p := range pixmaps {
		fmt.Printf("IconPixmap\t%dx%d\t%d bytes\n", p.W, p.H, len(p.Pix))
	}
	return nil
}

func click(args []string) error {
	if len(args) != 1 {
		return errors.New("usage: click LABEL_PREFIX")
	}
	conn, err := dbus.ConnectSessionBus()
	if err != nil {
		return err
	}
	defer conn.Close()
	name, menuPath, entries, err := readMenu(conn)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.hasLabel && strings.HasPrefix(e.label, args[0]) {
			call := conn.Object(name, menuPath).Call(menuIface+".Event", 0, e.id, "clicked", dbus.MakeVariant(int32(0)), uint32(time.Now().Unix()))
			if call.Err != nil {
				return fmt.Errorf("Event(%d, clicked): %w", e.id, call.Err)
			}
			fmt.Printf("clicked %d\t%s\n", e.id, e.label)
			return nil
		}
	}
	return fmt.Errorf("no menu item starts with %q", args[0])
}

func waitLabel(args []string) error {
	fs := flag.NewFlagSet("wait-label", flag.ExitOnError)
	timeout := fs.Duration("timeout", 15*time.Second, "how long to wait")
	gone := fs.Bool("gone", false, "wait until no label starts with PREFIX")
	if len(args) < 1 {
		return errors.New("usage: wait-label PREFIX [--gone] [--timeout D]")
	}
	prefix := args[0]
	_ = fs.Parse(args[1:])
	conn, err := dbus.ConnectSessionBus()
	if err != nil {
		return err
	}
	defer conn.Close()
	deadline := time.Now().Add(*timeout)
	for {
		_, _, entries, err := readMenu(conn)
		if err == nil {
			found := ""
			for _, e := range entries {
				if e.hasLabel && strings.HasPrefix(e.label, prefix) {
					found = e.label
					break
				}
			}
			if (found != "") != *gone {
				fmt.Println(found)
				return nil
			}
		}
		if time.Now().After(deadline) {
			if err != nil {
				return fmt.Errorf("after %s: %w", *timeout, err)
			}
			return fmt.Errorf("after %s: label %q still %s", *timeout, prefix, map[bool]string{true: "present", false: "absent"}[*gone])
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// --- X11: WM_DELETE_WINDOW ------------------------------------------------------------------

// closeWindow sends the window a WM_PROTOCOLS/WM_DELETE_WINDOW client message, which is what a
// window manager does when its close button is pressed. GTK turns it into "delete-event".
// The smoke test's Xvfb has no window manager, and xdotool's windowclose destroys the window
// instead, which no real user action does.
func closeWindow(args []string) error {
	if len(args) != 1 {
		return errors.New("usage: close-window WINDOW_ID")
	}
	wid, err := strconv.ParseUint(args[0], 0, 32)
	if err != nil {
		return fmt.Errorf("window id %q: %w", args[0], err)
	}
	c, err := dialX11(os.Getenv("DISPLAY"))
	if err != nil {
		return err
	}
	defer c.Close()
	protocols, err := c.internAtom("WM_PROTOCOLS")
	if err != nil {
		return err
	}
	deleteWindow, err := c.internAtom("WM_DELETE_WINDOW")
	if err != nil {
		return err
	}
	// SendEvent(propagate=false, destination=wid, mask=0, ClientMessage{format 32, WM_PROTOCOLS,
	// [WM_DELETE_WINDOW, CurrentTime]}): with an empty mask it goes to the window's owner.
	req := make([]byte, 44)
	req[0] = 25 // SendEvent
	binary.LittleEndian.PutUint16(req[2:], 11)
	binary.LittleEndian.PutUint32(req[4:], uint32(wid))
	ev := req[12:]
	ev[0] = 33 // ClientMessage
	ev[1] = 32 // format
	binary.LittleEndian.PutUint32(ev[4:], uint32(wid))
	binary.LittleEndian.PutUint32(ev[8:], protocols)
	binary.LittleEndian.PutUint32(ev[12:], deleteWindow)
	if _, err := c.Write(req); err != nil {
		return fmt.Errorf("send WM_DELETE_WINDOW: %w", err)
	}
	// GetInputFocus is a round trip: its reply means the server has handled SendEvent, and an
	// X error (bad window) arrives before it.
	if _, err := c.roundTrip([]byte{43, 0, 1, 0}); err != nil {
		return fmt.Errorf("send WM_DELETE_WINDOW to 0x%x: %w", wid, err)
	}
	return nil
}

type x11Conn struct{ net.Conn }

// dialX11 connects to a local display (":N" or ":N.S") over its Unix socket, without
// authorisation: Xvfb as the smoke test starts it grants local connections.
func dialX11(display string) (*x11Conn, error) {
	d, ok := strings.CutPrefix(display, ":")
	if !ok {
		return nil, fmt.Errorf("DISPLAY=%q: only local displays (:N) are supported", display)
	}
	if i := strings.IndexByte(d, '.'); i >= 0 {
		d = d[:i]
	}
	conn, err := net.DialTimeout("unix", "/tmp/.X11-unix/X"+d, 5*time.Second)
	if err != nil {
		return nil, fmt.Errorf("connect to X display %s: %w", display, err)
	}
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	// Setup: little-endian, protocol 11.0, no authorisation.
	if _, err := conn.Write([]byte{'l', 0, 11, 0, 0, 0, 0, 0, 0, 0, 0, 0}); err != nil {
		conn.Close()
		return nil, err
	}
	head := make([]byte, 8)
	if _, err := io.ReadFull(conn, head); err != nil {
		conn.Close()
		return nil, fmt.Errorf("X setup: %w", err)
	}
	rest := make([]byte, int(binary.LittleEndian.Uint16(head[6:]))*4)
	if _, err := io.ReadFull(conn, rest); err != nil {
		conn.Close()
		return nil, fmt.Errorf("X setup: %w", err)
	}
	if head[0] != 1 {
		reason := rest
		if int(head[1]) <= len(rest) {
			reason = rest[:head[1]]
		}
		conn.Close()
		return nil, fmt.Errorf("X server refused the connection: %s", reason)
	}
	return &x11Conn{conn}, nil
}

// roundTrip sends a request with a reply and returns the 32-byte reply, or the X error.
func (c *x11Conn) roundTrip(req []byte) ([]byte, error) {
	if _, err := c.Write(req); err != nil {
		return nil, err
	}
	for {
		pkt := make([]byte, 32)
		if _, err := io.ReadFull(c, pkt); err != nil {
			return nil, err
		}
		switch pkt[0] {
		case 0:
			return nil, fmt.Errorf("X error code %d (resource 0x%x, major opcode %d)", pkt[1], binary.LittleEndian.Uint32(pkt[4:]), pkt[10])
		case 1:
			if extra := binary.LittleEndian.Uint32(pkt[4:]); extra > 0 {
				if _, err := io.CopyN(io.Discard, c, int64(extra)*4); err != nil {
					return nil, err
				}
			}
			return pkt, nil
		default: // an event; we selected none, but skip anything that arrives
		}
	}
}

func (c *x11Conn) internAtom(name string) (uint32, error) {
	n := len(name)
	pad := (4 - n%4) % 4
	req := make([]byte, 8+n+pad)
	req[0] = 16 // InternAtom
	req[1] = 0  // only-if-exists: false
	binary.LittleEndian.PutUint16(req[2:], uint16(len(req)/4))
	binary.LittleEndian.PutUint16(req[4:], uint16(n))
	copy(req[8:], name)
	reply, err := c.roundTrip(req)
	if err != nil {
		return 0, fmt.Errorf("InternAtom %s: %w", name, err)
	}
	return binary.LittleEndian.Uint32(reply[8:]), nil
}

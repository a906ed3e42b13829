package tray

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/godbus/dbus/v5"
)

// A tray icon on Linux is a StatusNotifierItem: the app exports it on the session bus and
// registers it with org.kde.StatusNotifierWatcher, and a tray host (a panel) shows it. With no
// watcher, or a watcher but no host, nobody draws the icon: hiding the window would leave the
// user no way back, so the window's close button must quit instead. The monitor here tells the
// tray controller, and through it the close handler, whether a host is there right now.

const (
	snWatcherName  = "org.kde.StatusNotifierWatcher"
	snWatcherPath  = dbus.ObjectPath("/StatusNotifierWatcher")
	snWatcherIface = "org.kde.StatusNotifierWatcher"
)

// hostPresent asks the bus whether a StatusNotifierWatcher is running and says a host is
// registered with it.
func hostPresent(ctx context.Context, conn *dbus.Conn) (bool, error) {
	var owned bool
	if err := conn.BusObject().CallWithContext(ctx, "org.freedesktop.DBus.NameHasOwner", 0, snWatcherName).Store(&owned); err != nil {
		return false, fmt.Errorf("ask the bus for %s: %w", snWatcherName, err)
	}
	if !owned {
		return false, nil
	}
	var v dbus.Variant
	err := conn.Object(snWatcherName, snWatcherPath).
		CallWithContext(ctx, "org.freedesktop.DBus.Properties.Get", 0, snWatcherIface, "IsStatusNotifierHostRegistered").
		Store(&v)
	if err != nil {
		return false, fmt.Errorf("read %s.IsStatusNotifierHostRegistered: %w", snWatcherIface, err)
	}
	registered, ok := v.Value().(bool)
	return ok && registered, nil
}

// HostMonitor reports tray-host presence on a private session-bus connection: once at
// start, then whenever the watcher appears, disappears or its hosts change.
type HostMonitor struct {
	conn   *dbus.Conn
	logger *slog.Logger
}

// NewHostMonitor connects to the session bus. An error means there is no session bus
// (e.g. no DBUS_SESSION_BUS_ADDRESS): no tray is possible at all.
func NewHostMonitor(logger *slog.Logger) (*HostMonitor, error) {
	conn, err := dbus.ConnectSessionBus()
	if err != nil {
		return nil, fmt.Errorf("connect to the DBus session bus: %w", err)
	}
	return &HostMonitor{conn: conn, logger: logger}, nil
}

// Close releases the monitor's bus connection when Run will not be called.
func (m *HostMonitor) Close() { m.conn.Close() }

// Run calls report with the current presence and then with every change, until ctx ends; it
// closes the connection before returning.
func (m *HostMonitor) Run(ctx context.Context, report func(bool)) {
	defer m.conn.Close()
	signals := make(chan *dbus.Signal, 16)
	m.conn.Signal(signals)
	defer m.conn.RemoveSignal(signals)
	matches := [][]dbus.MatchOption{
		{ // the watcher appearing or going away
			dbus.WithMatchSender("org.freedesktop.DBus"),
			dbus.WithMatchInterface("org.freedesktop.DBus"),
			dbus.WithMatchMember("NameOwnerChanged"),
			dbus.WithMatchArg(0, snWatcherName),
		},
		{ // StatusNotifierHostRegistered / Unregistered and the rest of the watcher's signals
			dbus.WithMatchInterface(snWatcherIface),
			dbus.WithMatchObjectPath(snWatcherPath),
		},
	}
	for _, opts := range matches {
		if err := m.conn.AddMatchSignalContext(ctx, opts...); err != nil {
			m.logger.Warn("tray: cannot watch for a tray host; assuming none", "error", err)
			report(false)
			return
		}
	}
	last, first := false, true
	check := func() {
		ok, err := hostPresent(ctx, m.conn)
		if err != nil && ctx.Err() == nil {
			m.logger.Warn("tray: tray host check failed; treating it as absent", "error", err)
		}
		if first || ok != last {
			first, last = false, ok
			report(ok)
		}
	}
	check()
	for {
		select {
		case <-ctx.Done():
			return
		case sig, open := <-signals:
			if !open || sig == nil {
				return
			}
			check()
		}
	}
}

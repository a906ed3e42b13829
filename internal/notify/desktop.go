package notify

import (
	"context"
	"fmt"
	"slices"

	"github.com/godbus/dbus/v5"
)

// The Desktop Notifications Specification's names
// (https://specifications.freedesktop.org/notification-spec/latest/).
const (
	ServiceName = "org.freedesktop.Notifications"
	ObjectPath  = dbus.ObjectPath("/org/freedesktop/Notifications")
	Interface   = "org.freedesktop.Notifications"
)

// Desktop sends notifications to the session's notification service. It is safe for concurrent
// use.
type Desktop struct {
	conn    *dbus.Conn
	appName string
	icon    string
	entry   string
}

// Connect opens a private connection to the session bus and checks that a notification service
// is there (running, or one the bus can start). appName is the spec's app_name; icon an icon name
// or file ("" for none); desktopEntry the .desktop file's name without its extension, which
// notification services use for the app's name, icon and settings.
func Connect(appName, icon, desktopEntry string) (*Desktop, error) {
	conn, err := dbus.ConnectSessionBus()
	if err != nil {
		return nil, fmt.Errorf("no session bus (%v)", err)
	}
	ok, err := serviceAvailable(conn)
	if err != nil || !ok {
		conn.Close()
		if err == nil {
			err = fmt.Errorf("no notification service (%s) on the session bus", ServiceName)
		}
		return nil, err
	}
	return &Desktop{conn: conn, appName: appName, icon: icon, entry: desktopEntry}, nil
}

// serviceAvailable: the service has an owner, or the bus can activate it (most notification
// daemons start on their first message).
func serviceAvailable(conn *dbus.Conn) (bool, error) {
	var has bool
	if err := conn.BusObject().Call("org.freedesktop.DBus.NameHasOwner", 0, ServiceName).Store(&has); err != nil {
		return false, fmt.Errorf("session bus: NameHasOwner: %w", err)
	}
	if has {
		return true, nil
	}
	var names []string
	if err := conn.BusObject().Call("org.freedesktop.DBus.ListActivatableNames", 0).Store(&names); err != nil {
		return false, fmt.Errorf("session bus: ListActivatableNames: %w", err)
	}
	return slices.Contains(names, ServiceName), nil
}

// urgencyNormal is the spec's "urgency" hint for a normal notification.
const urgencyNormal byte = 1

// Notify shows n (the spec's Notify: no actions, the service's default timeout).
func (d *Desktop) Notify(ctx context.Context, n Notification) error {
	hints := map[string]dbus.Variant{"urgency": dbus.MakeVariant(urgencyNormal)}
	if d.entry != "" {
		hints["desktop-entry"] = dbus.MakeVariant(d.entry)
	}
	var id uint32
	err := d.conn.Object(ServiceName, ObjectPath).CallWithContext(ctx, Interface+".Notify", 0,
		d.appName, uint32(0), d.icon, n.Summary, n.Body, []string{}, hints, int32(-1)).Store(&id)
	if err != nil {
		return fmt.Errorf("%s.Notify: %w", Interface, err)
	}
	return nil
}

// Close closes the connection.
func (d *Desktop) Close() error { return d.conn.Close() }

// Package notifytest is a notification service for tests: org.freedesktop.Notifications as the
// Desktop Notifications Specification (1.2) defines it — Notify, CloseNotification,
// GetCapabilities, GetServerInformation and the NotificationClosed signal, with the spec's
// introspection — exported in-process on the session bus the test points at (a private
// dbus-daemon: internal/secrets/secretstest.Bus). Every Notify is recorded with all its
// arguments; arguments the spec forbids are refused with InvalidArgs, as a real service's
// bindings would. Debian has no notification daemon that runs without a display, so this stands
// in for one. Nothing in the product imports it.
package notifytest

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"
	"github.com/godbus/dbus/v5/introspect"
)

const (
	serviceName = "org.freedesktop.Notifications"
	objectPath  = dbus.ObjectPath("/org/freedesktop/Notifications")
	iface       = "org.freedesktop.Notifications"
)

// Notification is one Notify call as the service received it.
type Notification struct {
	ID            uint32
	AppName       string
	ReplacesID    uint32
	AppIcon       string
	Summary       string
	Body          string
	Actions       []string
	Hints         map[string]dbus.Variant
	ExpireTimeout int32
}

// Server is the running service.
type Server struct {
	conn *dbus.Conn

	mu     sync.Mutex
	got    []Notification
	nextID uint32
	more   chan struct{}
}

// introspection is the interface as the specification gives it.
var introspection = introspect.Interface{
	Name: iface,
	Methods: []introspect.Method{
		{Name: "GetCapabilities", Args: []introspect.Arg{{Name: "capabilities", Type: "as", Direction: "out"}}},
		{Name: "Notify", Args: []introspect.Arg{
			{Name: "app_name", Type: "s", Direction: "in"}, {Name: "replaces_id", Type: "u", Direction: "in"},
			{Name: "app_icon", Type: "s", Direction: "in"}, {Name: "summary", Type: "s", Direction: "in"},
			{Name: "body", Type: "s", Direction: "in"}, {Name: "actions", Type: "as", Direction: "in"},
			{Name: "hints", Type: "a{sv}", Direction: "in"}, {Name: "expire_timeout", Type: "i", Direction: "in"},
			{Name: "id", Type: "u", Direction: "out"},
		}},
		{Name: "CloseNotification", Args: []introspect.Arg{{Name: "id", Type: "u", Direction: "in"}}},
		{Name: "GetServerInformation", Args: []introspect.Arg{
			{Name: "name", Type: "s", Direction: "out"}, {Name: "vendor", Type: "s", Direction: "out"},
			{Name: "version", Type: "s", Direction: "out"}, {Name: "spec_version", Type: "s", Direction: "out"},
		}},
	},
	Signals: []introspect.Signal{
		{Name: "NotificationClosed", Args: []introspect.Arg{{Name: "id", Type: "u"}, {Name: "reason", Type: "u"}}},
		{Name: "ActionInvoked", Args: []introspect.Arg{{Name: "id", Type: "u"}, {Name: "action_key", Type: "s"}}},
	},
}

// Start exports the service on the session bus (DBUS_SESSION_BUS_ADDRESS) until the test ends.
func Start(t testing.TB) *Server {
	t.Helper()
	conn, err := dbus.ConnectSessionBus()
	if err != nil {
		t.Fatalf("notifytest: session bus: %v", err)
	}
	s := &Server{conn: conn, more: make(chan struct{}, 1)}
	t.Cleanup(func() { conn.Close() })
	if err := conn.ExportMethodTable(map[string]any{
		"Notify":               s.notify,
		"CloseNotification":    s.closeNotification,
		"GetCapabilities":      s.capabilities,
		"GetServerInformation": s.serverInformation,
	}, objectPath, iface); err != nil {
		t.Fatal(err)
	}
	node := &introspect.Node{Name: string(objectPath), Interfaces: []introspect.Interface{introspect.IntrospectData, introspection}}
	if err := conn.Export(introspect.NewIntrospectable(node), objectPath, "org.freedesktop.DBus.Introspectable"); err != nil {
		t.Fatal(err)
	}
	reply, err := conn.RequestName(serviceName, dbus.NameFlagDoNotQueue)
	if err != nil || reply != dbus.RequestNameReplyPrimaryOwner {
		t.Fatalf("notifytest: own %s: reply %v, %v", serviceName, reply, err)
	}
	return s
}

func invalid(format string, a ...any) *dbus.Error {
	return dbus.NewError("org.freedesktop.DBus.Error.InvalidArgs", []any{fmt.Sprintf(format, a...)})
}

// knownHints are the spec's standard hints and their types.
var knownHints = map[string]string{
	"action-icons": "b", "category": "s", "desktop-entry": "s", "image-data": "(iiibiiay)", "image_data": "(iiibiiay)",
	"image-path": "s", "image_path": "s", "icon_data": "(iiibiiay)", "resident": "b", "sound-file": "s",
	"sound-name": "s", "suppress-sound": "b", "transient": "b", "x": "i", "y": "i", "urgency": "y",
}

func (s *Server) notify(appName string, replacesID uint32, appIcon, summary, body string, actions []string, hints map[string]dbus.Variant, expire int32) (uint32, *dbus.Error) {
	if len(actions)%2 != 0 {
		return 0, invalid("actions: %d strings; the spec wants identifier/label pairs", len(actions))
	}
	if expire < -1 {
		return 0, invalid("expire_timeout: %d; -1 (default), 0 (never) or milliseconds", expire)
	}
	for k, v := range hints {
		if want, ok := knownHints[k]; ok && v.Signature().String() != want {
			return 0, invalid("hint %q: type %s, the spec says %s", k, v.Signature(), want)
		}
		if k == "urgency" && v.Value().(byte) > 2 {
			return 0, invalid("hint urgency: %d; 0 (low), 1 (normal) or 2 (critical)", v.Value())
		}
	}
	if summary == "" {
		return 0, invalid("summary: empty")
	}
	s.mu.Lock()
	id := replacesID
	if id == 0 {
		s.nextID++
		id = s.nextID
	}
	s.got = append(s.got, Notification{ID: id, AppName: appName, ReplacesID: replacesID, AppIcon: appIcon, Summary: summary,
		Body: body, Actions: actions, Hints: hints, ExpireTimeout: expire})
	s.mu.Unlock()
	select {
	case s.more <- struct{}{}:
	default:
	}
	return id, nil
}

func (s *Server) closeNotification(id uint32) *dbus.Error {
	// Reason 3: closed by a call to CloseNotification.
	if err := s.conn.Emit(objectPath, iface+".NotificationClosed", id, uint32(3)); err != nil {
		return dbus.MakeFailedError(err)
	}
	return nil
}

func (s *Server) capabilities() ([]string, *dbus.Error) { return []string{"body"}, nil }

func (s *Server) serverInformation() (string, string, string, string, *dbus.Error) {
	return "notifytest", "switchboard", "1", "1.2", nil
}

// All returns every notification received so far, in order.
func (s *Server) All() []Notification {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Notification(nil), s.got...)
}

// Wait returns the first notification received that satisfies match, waiting up to timeout.
func (s *Server) Wait(t testing.TB, what string, timeout time.Duration, match func(Notification) bool) Notification {
	t.Helper()
	deadline := time.After(timeout)
	for {
		for _, n := range s.All() {
			if match(n) {
				return n
			}
		}
		select {
		case <-s.more:
		case <-deadline:
			var got []string
			for _, n := range s.All() {
				got = append(got, fmt.Sprintf("%q: %q", n.Summary, n.Body))
			}
			t.Fatalf("no notification %s within %s; got:\n%s", what, timeout, strings.Join(got, "\n"))
		}
	}
}

// Package instance keeps the desktop app to one instance per user session: the first instance
// owns a well-known name on the DBus session bus; a later launch finds the name taken, asks the
// owner to show itself (Activate) and exits. It is pure Go (godbus) with no GUI dependency, so it
// is tested against a private dbus-daemon.
//
// Wails v2 has options.App.SingleInstanceLock, but on Linux (v2.16.0) it claims the name only
// inside wails.Run, after the app has built its hub and bound the Unix socket, and the second
// instance leaves with os.Exit(1) from inside Wails. Claiming the name first thing, before anything
// else starts, lets the second launch exit 0 without touching the first one's sockets.
package instance

import (
	"errors"
	"fmt"
	"os"

	"github.com/godbus/dbus/v5"
)

// Names on the session bus. The interface has one method, Activate(args []string, cwd string).
const (
	BusName    = "io.github.switchboard_hub.Switchboard"
	ObjectPath = dbus.ObjectPath("/io/github/switchboard_hub/Switchboard")
	Interface  = BusName + ".Instance"
)

// Request is what a later launch tells the running instance.
type Request struct {
	Args []string // its command-line arguments, without the program name
	Dir  string   // its working directory
}

// Lock is the held single-instance name; Release gives it up (the bus also drops it when the
// process exits).
type Lock struct{ conn *dbus.Conn }

// Release gives up the name and closes the connection.
func (l *Lock) Release() {
	if l != nil && l.conn != nil {
		_ = l.conn.Close()
	}
}

// ErrNoBus means there is no session bus to hold the name on; the app then runs without the
// single-instance guarantee.
var ErrNoBus = errors.New("no DBus session bus")

// Acquire makes this process the instance, or hands over to the one that is running.
//
//   - First instance: it returns a held Lock; onActivate is called (on a DBus goroutine) each time a
//     later launch asks this instance to show itself.
//   - Another instance holds the name: it calls that instance's Activate with req and returns
//     (nil, nil); the caller should exit.
//   - No session bus: it returns an error wrapping ErrNoBus.
func Acquire(req Request, onActivate func(Request)) (*Lock, error) {
	conn, err := dbus.ConnectSessionBus()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoBus, err)
	}
	// Export before asking for the name, so a launch that finds the name taken can always call.
	if err := conn.Export(activator(onActivate), ObjectPath, Interface); err != nil {
		conn.Close()
		return nil, fmt.Errorf("single instance: export: %w", err)
	}
	reply, err := conn.RequestName(BusName, dbus.NameFlagDoNotQueue)
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("single instance: request name %s: %w", BusName, err)
	}
	switch reply {
	case dbus.RequestNameReplyPrimaryOwner, dbus.RequestNameReplyAlreadyOwner:
		return &Lock{conn: conn}, nil
	}
	defer conn.Close()
	call := conn.Object(BusName, ObjectPath).Call(Interface+".Activate", 0, req.Args, req.Dir)
	if call.Err != nil {
		return nil, fmt.Errorf("another Switchboard is running (it owns %s on the session bus) but did not answer: %w", BusName, call.Err)
	}
	return nil, nil
}

// CurrentRequest is this process's own launch, to hand to a running instance.
func CurrentRequest() Request {
	dir, _ := os.Getwd()
	return Request{Args: os.Args[1:], Dir: dir}
}

// activator is the exported object; its one method is Activate.
type activator func(Request)

// Activate is called over DBus by a later launch.
func (f activator) Activate(args []string, dir string) *dbus.Error {
	if f != nil {
		f(Request{Args: args, Dir: dir})
	}
	return nil
}

// Package app is the hub every front end of Switchboard drives: the Stack (one running hub with
// everything it owns, built from the config), the Controller (what the dashboard may ask of it)
// with the control table declaring each dashboard control once (controls.go), and what every
// mode does to launch a hub (launch.go). It wires internal packages into an mcp.Service and holds
// no tool logic of its own.
//
// The front ends import it, never the other way round: app/cli (the command line, which picks a
// front end), app/desktop (the Wails window, the tray, the bindings) and app/dashboard (the
// dashboard over loopback HTTP, headless mode). app/apptest holds the helpers their tests share.
package app

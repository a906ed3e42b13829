// Package desktop is Switchboard's desktop front end: the Wails window showing the dashboard, the
// tray item (app/tray draws it; tray_source.go feeds it from the hub), desktop notifications and
// the Wails bindings (App), which call the control table of package app like the headless
// dashboard's /api does. What needs Wails, GTK or cgo carries the build tag `desktop || bindings`
// (desktop.go, quit_*.go), with a stub (stub.go) for builds without the desktop UI; the rest is
// plain Go, tested without a display.
package desktop

package desktop

import (
	"sync"

	"github.com/switchboard-hub/switchboard/app"
	"github.com/switchboard-hub/switchboard/internal/dashcontrol"
)

// App is what the desktop window's JavaScript sees as window.go.desktop.App: Wails binds every
// exported method of the struct, under the package name (desktop) and the type name (App). Its
// methods are the dashboard's controls (app/controls.go), so the dashboard has the same controls
// in the window as over the headless HTTP API: most are generated into bindings_gen.go
// (`go run ./build/gencontrols`), each one call into the control table; Bootstrap and PickProject,
// which need the window, are written by hand here. It carries no build tag: the bindings are
// plain Go and are tested without GTK.
type App struct {
	ctl *app.Controller

	// firstBootstrap runs once, on the dashboard's first call: the page has loaded and its
	// script runs, which is the desktop's "first paint" mark.
	firstBootstrap func()
	once           sync.Once

	// pickFolder opens the desktop's native folder picker ("" when dismissed); nil without one.
	pickFolder func(title, start string) (string, error)
}

// newApp wraps a controller; onFirstBootstrap may be nil.
func newApp(ctl *app.Controller, onFirstBootstrap func()) *App {
	return &App{ctl: ctl, firstBootstrap: onFirstBootstrap}
}

// Bootstrap returns where the WebSocket hub is and its token. Written by hand: its first call
// marks the first paint.
func (a *App) Bootstrap() (app.Bootstrap, error) {
	if a.firstBootstrap != nil {
		a.once.Do(a.firstBootstrap)
	}
	return a.ctl.Bootstrap()
}

// PickProject opens the native folder picker and makes the folder chosen the project folder.
// Written by hand: only the window has the picker.
func (a *App) PickProject() (app.ProjectChange, error) { return a.ctl.PickProject(a.pickFolder) }

// callControl is what each generated binding does: run the declared control on the App's
// Controller.
func callControl[Out any](a *App, name string, args ...any) (Out, error) {
	return dashcontrol.Invoke[Out](app.Controls(), a.ctl, name, args...)
}

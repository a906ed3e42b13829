//go:build (desktop || bindings) && !(linux && cgo)

package desktop

import wailsruntime "github.com/wailsapp/wails/v2/pkg/runtime"

// Without GTK (another platform, or the bindings generator's build without cgo) Wails' own calls
// do: WindowShow raises the window there, and Quit ends its run loop. A quit asked before the
// window exists is lost here, unlike with GTK (quit_gtk.go).

func (*desktop) presentWindow() {}

func (d *desktop) endMainLoop() {
	if wctx := d.runtimeCtx(); wctx != nil {
		wailsruntime.Quit(wctx)
	}
}

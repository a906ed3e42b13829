//go:build desktop || bindings

package tray

import (
	"context"
	"fmt"
	"log/slog"
	"sync"

	"fyne.io/systray"
	"github.com/godbus/dbus/v5"
)

// SystrayView renders tray models with fyne.io/systray (a StatusNotifierItem plus a
// com.canonical.dbusmenu menu, pure DBus on Linux). Each Render replaces the whole menu.
type SystrayView struct {
	ctx   context.Context // ends the click forwarders
	click func(context.Context, Action)

	mu    sync.Mutex
	icons map[Icon][]byte // PNG per variant, drawn on first use
	wg    sync.WaitGroup  // click forwarders
}

// NewSystrayView returns the system-tray View. Clicks are passed to click with ctx, which also
// bounds the goroutines that forward them.
func NewSystrayView(ctx context.Context, click func(context.Context, Action)) *SystrayView {
	return &SystrayView{ctx: ctx, click: click, icons: map[Icon][]byte{}}
}

func (v *SystrayView) icon(i Icon) []byte {
	v.mu.Lock()
	defer v.mu.Unlock()
	b, ok := v.icons[i]
	if !ok {
		b = IconPNG(i, iconSize)
		v.icons[i] = b
	}
	return b
}

// Render shows m. ResetMenu removes the old items, which closes their ClickedCh and so ends
// their forwarders.
func (v *SystrayView) Render(m Menu) {
	systray.SetIcon(v.icon(m.Icon))
	systray.SetTooltip(m.Tooltip)
	systray.ResetMenu()
	for _, it := range m.Items {
		if it.Separator {
			systray.AddSeparator()
			continue
		}
		var mi *systray.MenuItem
		if it.Checkable {
			mi = systray.AddMenuItemCheckbox(it.Label, it.Tooltip, it.Checked)
		} else {
			mi = systray.AddMenuItem(it.Label, it.Tooltip)
		}
		if !it.Enabled {
			mi.Disable()
		}
		if it.Action.Kind == ActionNone {
			continue
		}
		v.wg.Add(1)
		go v.forward(mi.ClickedCh, it.Action) // owned by v: ends when the item is removed or ctx ends
	}
}

// forward turns an item's clicks into actions. systray drops a click when nobody is receiving
// on ClickedCh, so every actionable item has a goroutine waiting on it.
func (v *SystrayView) forward(clicked <-chan struct{}, a Action) {
	defer v.wg.Done()
	for {
		select {
		case _, open := <-clicked:
			if !open {
				return
			}
			v.click(v.ctx, a)
		case <-v.ctx.Done():
			return
		}
	}
}

// Wait blocks until every forwarder has ended (after ctx is cancelled).
func (v *SystrayView) Wait() { v.wg.Wait() }

// StartSystray exports the tray item on the session bus and returns the function that takes it
// down. It guards fyne.io/systray's two traps:
//   - its end function closes the bus connection unconditionally, and panics on the nil
//     connection left when start could not reach a session bus: so without a bus start is not
//     called at all, and end runs under recover;
//   - without a StatusNotifierWatcher it only logs that registration failed and keeps trying
//     when one appears; the app runs on, and the host monitor keeps the close button quitting.
func StartSystray(logger *slog.Logger) (stop func(), err error) {
	if _, err := dbus.SessionBus(); err != nil {
		return func() {}, fmt.Errorf("no DBus session bus, so no tray icon: %w", err)
	}
	// The title must be set before start: it becomes the item's Id property.
	systray.SetTitle("Switchboard")
	start, end := systray.RunWithExternalLoop(nil, nil)
	start()
	return func() {
		defer func() {
			if r := recover(); r != nil {
				logger.Warn("tray: systray shutdown panicked; ignored", "panic", r)
			}
		}()
		end()
	}, nil
}

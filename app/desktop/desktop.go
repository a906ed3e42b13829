//go:build desktop || bindings

package desktop

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wailsapp/wails/v2"
	"github.com/wailsapp/wails/v2/pkg/options"
	"github.com/wailsapp/wails/v2/pkg/options/assetserver"
	"github.com/wailsapp/wails/v2/pkg/options/linux"
	wailsruntime "github.com/wailsapp/wails/v2/pkg/runtime"

	"github.com/switchboard-hub/switchboard/app"
	"github.com/switchboard-hub/switchboard/app/tray"
	"github.com/switchboard-hub/switchboard/frontend"
	"github.com/switchboard-hub/switchboard/internal/config"
	"github.com/switchboard-hub/switchboard/internal/instance"
	"github.com/switchboard-hub/switchboard/internal/notify"
)

// Built is true in desktop builds: `switchboard` with a display opens the window and tray.
const Built = true

// Run runs the hub in-process with the dashboard window and the tray. It returns when the
// user quits (tray Quit, or closing the window when no tray host can bring it back) or on
// SIGINT/SIGTERM, after the hub, its processes and its sockets have shut down.
//
// One instance per session: a launch while another instance runs asks that one to show its
// window and returns nil (exit 0) before building anything (internal/instance).
func Run(parent context.Context, cfg config.Config, version string, o Options) error {
	d := &desktop{launched: time.Now(), hidden: o.Hidden}
	lock, err := instance.Acquire(instance.CurrentRequest(), d.secondLaunch)
	switch {
	case err == nil && lock == nil:
		fmt.Fprintln(os.Stderr, "switchboard: already running in this session; showing its window")
		return nil
	case err != nil:
		fmt.Fprintf(os.Stderr, "switchboard: desktop: no single-instance guard (%v)\n", err)
	default:
		defer lock.Release() // after the stack has closed its sockets: a relaunch meanwhile hands over
	}
	// A hub started from a terminal (headless, or `switchboard serve`) holds the socket: hand the
	// user over to it, with a word on the desktop, instead of failing on its socket unseen.
	if info, ok := app.RunningHub(parent, cfg); ok {
		fmt.Fprintln(os.Stderr, "switchboard: "+app.HandOff(info, openURL, notifyOnce))
		return nil
	}
	ctx, stop := app.SignalContext(parent)
	defer stop()
	// The client token, so "Streamable HTTP" and TCP can be switched on from the tray.
	if err := app.ResolveClientToken(&cfg); err != nil {
		return err
	}
	st, err := app.BuildStack(cfg, version, app.StackOptions{LogSink: os.Stderr, WithHub: true, StartIDE: true, EagerServers: true, ProjectSource: o.ProjectSource})
	if err != nil {
		return err
	}
	defer st.CloseBounded()
	st.AnnounceProject(os.Stderr, "the window or the tray")
	// The terminal gets what a person needs; every tool call goes to the audit log.
	fmt.Fprintf(os.Stderr, "switchboard: tool calls are audited to %s (the dashboard's Activity view shows them live)\n", filepath.Join(st.Config.LogDir(), "audit.log"))
	if err := st.StartDefaultTransports(); err != nil {
		return err
	}
	d.st, d.logger = st, st.Logger
	if err := applyAutostartConfig(cfg); err != nil {
		fmt.Fprintf(os.Stderr, "switchboard: desktop: [desktop] autostart: %v\n", err)
	}
	st.OpenURL = openURL // a sign-in's page (LoginServer) opens in the user's browser
	d.ctl = app.NewController(st, version)
	stopNotifications := startDesktopNotifications(st, notify.Options{})
	defer stopNotifications() // before the stack closes (deferred earlier, runs later)
	app.ReleaseStartupMemory()
	return d.run(ctx)
}

// windowSettleDelay is how long after the dashboard's first Bootstrap call the desktop releases
// the garbage of loading the window (ReleaseStartupMemory): its first hub snapshots have been sent
// by then.
const windowSettleDelay = 3 * time.Second

// desktop is the window, the tray and the glue between them and the stack. It implements
// tray.Shell for the tray's actions.
type desktop struct {
	st       *app.Stack
	ctl      *app.Controller
	logger   *slog.Logger
	launched time.Time
	hidden   bool // --hidden: start with the window hidden when a tray host shows the icon

	showAsked atomic.Bool // a later launch asked for the window (maybe before it existed)
	// Wails' StartHidden hides the window with a call queued on GTK's main thread as the window
	// starts, which can run after a show asked for meanwhile; so a show wanted during start-up
	// waits for the DOM-ready event (after that hide) as well: domReady, noHost, showAsked.
	domReady atomic.Bool
	noHost   atomic.Bool // no tray, or the host monitor's latest report says no host

	wailsCtx atomic.Pointer[context.Context] // Wails' runtime context, set by OnStartup
	quitting atomic.Bool                     // Quit ran: GTK's main loop is ending

	// The tray is set up on Wails' OnStartup goroutine and torn down after the window closed,
	// which can overlap when the app quits at once; mu orders the two.
	mu          sync.Mutex
	trayStopped bool                            // stopTray ran: startup must not set anything up
	tray        atomic.Pointer[tray.Controller] // nil until set up, or when there is no session bus
	trayStop    func()                          // takes the tray item off the bus
	trayWG      sync.WaitGroup                  // tray controller, host monitor
	trayEnd     context.CancelFunc
	view        *tray.SystrayView

	webEnv []string // name=value the app set for its window (dashboardEnv); kept from children it starts

	// picking is held while the folder picker is open: Wails hands every dialog's answer over one
	// shared channel, so two pickers at once (the tray's and the window's) would swap answers.
	picking sync.Mutex
}

// mark prints a start-up milestone with its time since launch and its wall clock, for the smoke
// test's launch figures (build/desktop-smoke.sh --measure).
func (d *desktop) mark(what string) {
	now := time.Now()
	fmt.Fprintf(os.Stderr, "switchboard: desktop: %s (+%dms, unix_ms=%d)\n", what, now.Sub(d.launched).Milliseconds(), now.UnixMilli())
}

func (d *desktop) run(ctx context.Context) error {
	trayCtx, trayEnd := context.WithCancel(context.Background())
	d.trayEnd = trayEnd
	defer d.stopTray()

	runDone := make(chan struct{})
	defer close(runDone)
	go func() { // owned by run: ends with it, or quits the app on a signal
		select {
		case <-ctx.Done():
			fmt.Fprintln(os.Stderr, "switchboard: shutting down")
			d.Quit()
		case <-runDone:
		}
	}()

	// GTK, WebKit and the window's web process (which inherits the app's environment) read the
	// dashboard's window environment (window_env.go) when the window starts. The stack captured
	// the environment of the processes agents start when it was built, before this; OpenFolder
	// leaves them out explicitly.
	d.webEnv = dashboardEnv(os.LookupEnv)
	for _, kv := range d.webEnv {
		name, value, _ := strings.Cut(kv, "=")
		if err := os.Setenv(name, value); err != nil {
			d.logger.Warn("desktop: cannot set the window's environment", "var", name, "err", err)
		}
	}
	app := newApp(d.ctl, func() {
		d.mark("dashboard loaded, first Bootstrap call")
		// Loading the window (assets, bindings, the dashboard's first hub snapshots) leaves a few
		// MiB more garbage; give it back once the page has settled.
		time.AfterFunc(windowSettleDelay, app.ReleaseStartupMemory)
	})
	app.pickFolder = d.PickFolder
	err := wails.Run(&options.App{
		Title:            "Switchboard",
		Width:            1200,
		Height:           800,
		MinWidth:         720,
		MinHeight:        480,
		BackgroundColour: &options.RGBA{R: 0x0d, G: 0x11, B: 0x17, A: 0xff}, // --bg of the dashboard
		AssetServer:      &assetserver.Options{Assets: frontend.Dist(), Handler: notBuiltHandler()},
		StartHidden:      d.hidden, // shown by startup when no tray host turns up
		OnStartup:        func(wctx context.Context) { d.startup(wctx, trayCtx) },
		OnDomReady:       d.domReadied,
		OnBeforeClose:    d.beforeClose,
		Bind:             []any{app},
		Linux: &linux.Options{
			Icon:             tray.IconPNG(tray.AppIcon(), tray.WindowIconSize),
			ProgramName:      "switchboard", // WM_CLASS, matched by build/linux/switchboard.desktop
			WebviewGpuPolicy: linux.WebviewGpuPolicyNever,
		},
	})
	if err != nil {
		return fmt.Errorf("desktop window: %w", err)
	}
	fmt.Fprintln(os.Stderr, "switchboard: window closed; stopping the hub")
	return nil
}

// notBuiltHandler answers when the binary was built without the dashboard (frontend/dist
// empty): a page that says how to build it, instead of Wails' bare 404.
func notBuiltHandler() http.Handler {
	if frontend.Built() {
		return nil
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, `<!doctype html><title>Switchboard</title><body style="font-family:sans-serif;background:#0d1117;color:#e6edf3"><h1>Switchboard</h1><p>The dashboard was not built into this binary. Run <code>make build</code>.</p>`)
	})
}

// startup runs on Wails' OnStartup (its own goroutine, GTK loop running): export the tray item
// and start the tray's event loop and the tray-host monitor.
func (d *desktop) startup(wctx context.Context, trayCtx context.Context) {
	d.wailsCtx.Store(&wctx)
	if d.quitting.Load() { // a signal arrived before the window existed; the quit is queued
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.trayStopped {
		return
	}
	noTray := func(err error) {
		fmt.Fprintf(os.Stderr, "switchboard: desktop: no tray icon (%v); closing the window quits\n", err)
		d.setNoHost(true)
	}
	monitor, err := tray.NewHostMonitor(d.logger)
	if err != nil {
		noTray(err)
		return
	}
	stop, err := tray.StartSystray(d.logger)
	if err != nil {
		monitor.Close()
		noTray(err)
		return
	}
	d.trayStop = stop
	var tc *tray.Controller // the view's click forwarders start with the first render, in tc.Run
	d.view = tray.NewSystrayView(trayCtx, func(ctx context.Context, a tray.Action) { tc.Click(ctx, a) })
	tc = tray.New(newTraySource(d.st, d.ctl), d.view, d)
	d.tray.Store(tc)
	// The tray's approval items answer questions while a tray host shows them.
	removePresence := d.st.Service.Approvals().AddPresence(tc.HostAvailable)
	context.AfterFunc(trayCtx, removePresence)
	d.trayWG.Add(2)
	go func() { // owned by d: trayCtx ends it (stopTray)
		defer d.trayWG.Done()
		tc.Run(trayCtx)
	}()
	go func() { // owned by d: trayCtx ends it (stopTray)
		defer d.trayWG.Done()
		monitor.Run(trayCtx, func(ok bool) {
			if ok {
				fmt.Fprintln(os.Stderr, "switchboard: desktop: tray host present; closing the window hides it to the tray")
			} else {
				fmt.Fprintln(os.Stderr, "switchboard: desktop: no tray host (no StatusNotifierWatcher with a registered host on the session bus); closing the window quits")
			}
			d.setNoHost(!ok)
			tc.SetHostAvailable(ok)
		})
	}()
	d.mark("tray item exported")
}

// domReadied runs on Wails' OnDomReady: the window's start-up (and StartHidden's hide) is over,
// so a show wanted meanwhile can happen now.
func (d *desktop) domReadied(context.Context) {
	d.mark("DOM ready")
	d.domReady.Store(true)
	if d.showAsked.Load() || (d.hidden && d.noHost.Load()) {
		d.ShowWindow()
	}
}

// setNoHost records whether a tray host can bring the window back. A window started hidden
// (--hidden) is shown when there is none: it would be unreachable.
func (d *desktop) setNoHost(none bool) {
	d.noHost.Store(none)
	if none && d.hidden && d.domReady.Load() {
		d.ShowWindow()
	}
}

// stopTray ends the tray's goroutines and takes the item off the bus.
func (d *desktop) stopTray() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.trayStopped = true
	d.trayEnd()
	d.trayWG.Wait()
	if d.view != nil {
		d.view.Wait()
	}
	if d.trayStop != nil {
		d.trayStop()
	}
}

// beforeClose decides what closing the window does: hide it to the tray when a tray host shows
// our icon (the user can get the window back), quit otherwise. Wails asks it before every quit of
// its own: the window's close button, and the SIGINT/SIGTERM handler Wails installs beside ours.
// It always vetoes Wails' quit, which would call gtk_main_quit off the main thread, and quits
// through Quit instead, so that one quit, on the main thread, ends the window.
func (d *desktop) beforeClose(wctx context.Context) (prevent bool) {
	if !d.quitting.Load() {
		if tc := d.tray.Load(); tc != nil && tc.HostAvailable() {
			wailsruntime.WindowHide(wctx)
			fmt.Fprintln(os.Stderr, "switchboard: desktop: window hidden to the tray (Open dashboard brings it back; Quit exits)")
			return true
		}
	}
	d.Quit()
	return true
}

// runtimeCtx is Wails' context once the window exists.
func (d *desktop) runtimeCtx() context.Context {
	if p := d.wailsCtx.Load(); p != nil {
		return *p
	}
	return nil
}

// ShowWindow brings the window back and raises it (tray "Open dashboard", a second launch, or
// the tray host going away).
func (d *desktop) ShowWindow() {
	if wctx := d.runtimeCtx(); wctx != nil {
		wailsruntime.WindowShow(wctx)
		wailsruntime.WindowUnminimise(wctx)
		d.presentWindow()
	}
}

// ShowView shows the window on one dashboard view (tray "Connect clients…", a server's line). The
// dashboard shows the view its location hash names, the same #clients link a bookmark or a test
// uses, so setting the hash is the whole protocol; the view is one of tray's View* names.
func (d *desktop) ShowView(view string) {
	if wctx := d.runtimeCtx(); wctx != nil {
		hash, _ := json.Marshal("#" + view) // a JavaScript string literal
		wailsruntime.WindowExecJS(wctx, "window.location.hash = "+string(hash))
		fmt.Fprintf(os.Stderr, "switchboard: desktop: showing the %s view\n", view)
	}
	d.ShowWindow()
}

// secondLaunch runs (on a DBus goroutine) when the user starts the app again while this one runs:
// it shows and raises this instance's window, now or as soon as the window exists.
func (d *desktop) secondLaunch(r instance.Request) {
	fmt.Fprintf(os.Stderr, "switchboard: desktop: second launch (args %q); showing the window\n", r.Args)
	d.showAsked.Store(true)
	if d.domReady.Load() { // else domReadied shows it
		d.ShowWindow()
	}
}

// PickFolder asks the user for a folder with the native picker (GTK's file chooser), over the
// window, which it shows first: "" when the user dismissed it. It blocks until the user answers;
// callers run it off the tray's loop and off the main thread (Wails dispatches the dialog).
func (d *desktop) PickFolder(title, start string) (string, error) {
	wctx := d.runtimeCtx()
	if wctx == nil {
		return "", fmt.Errorf("the window is not up yet")
	}
	if !d.picking.TryLock() {
		return "", fmt.Errorf("a folder picker is already open; answer it first")
	}
	defer d.picking.Unlock()
	d.ShowWindow()
	return wailsruntime.OpenDirectoryDialog(wctx, wailsruntime.OpenDialogOptions{
		Title:                title,
		DefaultDirectory:     start,
		CanCreateDirectories: true,
	})
}

// openURL opens url in the user's browser.
func openURL(url string) error {
	cmd := exec.Command("xdg-open", url)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("xdg-open: %w", err)
	}
	go func() { _ = cmd.Wait() }() // reaps xdg-open, which returns once the browser has the URL
	return nil
}

// notifyOnce shows one desktop notification, when the session has a notification service.
func notifyOnce(summary, body string) {
	d, err := notify.Connect("Switchboard", "switchboard", "switchboard")
	if err != nil {
		return
	}
	defer d.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	_ = d.Notify(ctx, notify.Notification{Summary: summary, Body: body})
}

// OpenFolder opens a folder in the user's file manager.
func (d *desktop) OpenFolder(path string) error {
	cmd := exec.Command("xdg-open", path)
	cmd.Env = withoutEnv(os.Environ(), d.webEnv)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("xdg-open %s: %w", path, err)
	}
	go func() { _ = cmd.Wait() }() // reaps xdg-open, which returns as soon as it handed the folder over
	return nil
}

// Quit shuts the app down: the window closes, then Run stops the tray and the stack. Every
// way out comes here (tray Quit, a signal, closing the window without a tray host) and may come
// more than once, but GTK's main loop is ended once. Before the window exists the quit waits for
// the main loop to start (endMainLoop).
func (d *desktop) Quit() {
	if d.quitting.CompareAndSwap(false, true) {
		d.endMainLoop()
	}
}

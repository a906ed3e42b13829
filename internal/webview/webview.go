// Package webview drives one shared Chrome/Chromium over the Chrome DevTools Protocol
// (github.com/chromedp/chromedp): connect to a running browser's DevTools endpoint or launch a
// private one, then navigate, click, type, query, evaluate, screenshot, wait, read the console,
// take accessibility snapshots with element refs, and manage tabs.
//
// One Webview is shared by every client of the hub. Its connection state is guarded by a mutex;
// operations run on the active tab without holding it, so a long webview_wait of one client does
// not block the others. Disconnect (or Close at hub shutdown) ends the connection, and for a
// launched browser kills its process group and removes its profile.
package webview

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
	"github.com/switchboard-hub/switchboard/internal/listeners"
)

// ErrNotConnected is returned by every operation while no browser is connected.
var ErrNotConnected = errors.New("not connected to a browser; call webview_launch to start a private browser, or webview_connect with a DevTools URL (e.g. http://127.0.0.1:9222)")

// DefaultTimeout is the operation timeout when the caller gives none.
const DefaultTimeout = 30 * time.Second

// Options configure a Webview.
type Options struct {
	// BrowserPath is the executable for Launch; empty means look up BrowserNames on PATH.
	BrowserPath string
	// Headless is the default of Launch (true when HeadlessSet is false).
	Headless    bool
	HeadlessSet bool
	// DataDir holds launched browsers' profiles under DataDir/browser (default: the OS temp dir).
	DataDir string
	// ConsoleLimit is how many console messages are kept (default 1000; oldest dropped).
	ConsoleLimit int
	// Display says a graphical session is there (DISPLAY or WAYLAND_DISPLAY, config.Env):
	// without one, Launch refuses headless: false.
	Display bool
}

// Event tells subscribers (the dashboard feed) that something changed.
type Event struct {
	// Kind is "state" (connected, disconnected, tab switched, navigated, an action ran) or
	// "console" (Console is set).
	Kind    string
	Console *ConsoleMessage
}

// Webview is the shared browser connection. The zero value is not usable; call New.
type Webview struct {
	opts Options

	mu   sync.Mutex
	st   *session // nil while not connected
	lost error    // why the last connection ended on its own, until the next connect/disconnect

	conMu   sync.Mutex
	console []ConsoleMessage

	subs listeners.Set[Event]

	filesMu   sync.RWMutex
	fileRoots []FileRoot // see AllowFiles
}

// New returns a Webview that is not connected yet.
func New(opts Options) *Webview {
	if opts.ConsoleLimit <= 0 {
		opts.ConsoleLimit = 1000
	}
	if !opts.HeadlessSet {
		opts.Headless = true
	}
	return &Webview{opts: opts}
}

// Subscribe registers fn for change events until cancel is called. fn must return quickly.
func (w *Webview) Subscribe(fn func(Event)) (cancel func()) { return w.subs.Add(fn) }

func (w *Webview) emit(ev Event) { w.subs.Notify(ev) }

// session is one live connection.
type session struct {
	rootCtx    context.Context // chromedp context holding the browser connection, no target
	rootCancel context.CancelFunc
	allocStop  context.CancelFunc
	browser    *chromedp.Browser
	alloc      *guardAllocator // why the transport closed the connection, if it did
	timeout    time.Duration
	endpoint   string
	proc       *browserProc // set when launched by us

	mu          sync.Mutex // guards tabs, active and preexisting
	tabs        map[target.ID]*tab
	active      target.ID
	preexisting map[target.ID]bool // targets open before the file guard was installed

	guardMu     sync.Mutex // guards guardClosed and guardWG.Add against shutdown's Wait
	guardClosed bool
	guardWG     sync.WaitGroup // the workers answering paused requests (guard.go)
	guardSem    chan struct{}
}

// tab is one attached page target.
type tab struct {
	id     target.ID
	ctx    context.Context
	cancel context.CancelFunc
	owned  bool // created by us: closed on disconnect; else only detached

	mu    sync.Mutex
	refs  map[string]cdp.BackendNodeID
	byID  map[cdp.BackendNodeID]string
	next  int
	url   string
	title string
}

// Connected reports whether a browser is connected.
func (w *Webview) Connected() bool {
	_, err := w.sess()
	return err == nil
}

// sess returns the live session, or ErrNotConnected (also when the browser went away).
func (w *Webview) sess() (*session, error) {
	w.mu.Lock()
	st, lost := w.st, w.lost
	w.mu.Unlock()
	if st == nil {
		if lost != nil {
			return nil, lost
		}
		return nil, ErrNotConnected
	}
	if st.rootCtx.Err() != nil {
		w.dropLost(st)
		return nil, st.lostError()
	}
	return st, nil
}

// lostErr is ErrNotConnected with the reason the connection ended.
type lostErr struct{ error }

func (e lostErr) Is(target error) bool { return target == ErrNotConnected }
func (e lostErr) Unwrap() error        { return e.error }

// lostError says why the connection ended: the browser broke the protocol, or it went away.
func (st *session) lostError() error {
	if v := st.alloc.violation(); v != nil {
		return lostErr{fmt.Errorf("the browser connection was closed: %w; call webview_launch, or webview_connect to a real Chrome", v)}
	}
	return lostErr{errors.New("the browser connection was lost (the browser closed or crashed); call webview_launch or webview_connect again")}
}

// dropLost forgets a session whose browser has gone, releasing what is left of it.
func (w *Webview) dropLost(st *session) {
	w.mu.Lock()
	if w.st == st {
		w.st = nil
		w.lost = st.lostError()
	}
	w.mu.Unlock()
	st.shutdown(2 * time.Second)
	w.emit(Event{Kind: "state"})
}

// ConnectOptions are the arguments of Connect.
type ConnectOptions struct {
	DebugURL string
	Timeout  time.Duration
}

// Connect attaches to a running browser's DevTools endpoint (http://host:port, ws://host:port or
// a full ws://.../devtools/browser/... URL), closing any previous connection first. It opens a
// new tab of its own, which Disconnect closes; the browser's other tabs are left alone.
func (w *Webview) Connect(ctx context.Context, o ConnectOptions) (string, error) {
	if strings.TrimSpace(o.DebugURL) == "" {
		return "", errors.New("debug_url: required; give the browser's DevTools address, e.g. http://127.0.0.1:9222 (start Chrome with --remote-debugging-port=9222)")
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	w.Disconnect()
	cctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	wsURL, err := resolveDevTools(cctx, o.DebugURL)
	if err != nil {
		return "", err
	}
	st, err := w.open(ctx, wsURL, o.Timeout, nil, "")
	if err != nil {
		// Only a browser that broke the protocol is worth naming; anything else (a refused
		// websocket, a service that is not Chrome) reads the same, so that webview_connect
		// cannot be used to learn what listens where.
		var perr *ProtocolError
		if errors.As(err, &perr) {
			return "", fmt.Errorf("debug_url: could not connect to %s: %w", o.DebugURL, err)
		}
		return "", noDevTools(o.DebugURL)
	}
	w.install(st)
	return fmt.Sprintf("Connected to %s (timeout %s)", o.DebugURL, o.Timeout), nil
}

// LaunchOptions are the arguments of Launch.
type LaunchOptions struct {
	Headless *bool // default Options.Headless
	Timeout  time.Duration
}

// LaunchInfo describes a launched browser.
type LaunchInfo struct {
	Path     string
	PID      int
	Profile  string
	Endpoint string
	Headless bool
}

// Launch starts a private browser with a fresh profile and connects to it, closing any previous
// connection first.
func (w *Webview) Launch(ctx context.Context, o LaunchOptions) (LaunchInfo, error) {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	headless := w.opts.Headless
	if o.Headless != nil {
		headless = *o.Headless
	}
	path, err := FindBrowser(w.opts.BrowserPath)
	if err != nil {
		return LaunchInfo{}, err
	}
	w.Disconnect()
	root := w.opts.DataDir
	if root == "" {
		root = filepath.Join(os.TempDir(), "switchboard")
	}
	lctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	if !headless && !w.opts.Display {
		return LaunchInfo{}, errors.New("headless: false needs a display, but DISPLAY and WAYLAND_DISPLAY are unset; use headless: true")
	}
	proc, wsURL, err := startBrowser(lctx, path, filepath.Join(root, "browser"), headless)
	if err != nil {
		return LaunchInfo{}, err
	}
	// Attach to the blank tab the browser opened with.
	first, err := firstPage(lctx, wsURL)
	if err != nil {
		proc.close()
		return LaunchInfo{}, fmt.Errorf("launched browser: %w", err)
	}
	st, err := w.open(ctx, wsURL, o.Timeout, proc, first)
	if err != nil {
		proc.close()
		return LaunchInfo{}, fmt.Errorf("launched browser: %w", err)
	}
	w.install(st)
	return LaunchInfo{Path: path, PID: proc.Pid(), Profile: proc.profile, Endpoint: wsURL, Headless: headless}, nil
}

func (w *Webview) install(st *session) {
	w.mu.Lock()
	old := w.st
	w.st, w.lost = st, nil
	w.mu.Unlock()
	if old != nil { // a concurrent Connect/Launch won the race before us; keep the newest
		old.shutdown(5 * time.Second)
	}
	w.emit(Event{Kind: "state"})
}

// open connects chromedp to wsURL and attaches to firstTarget (or a new tab when empty).
func (w *Webview) open(ctx context.Context, wsURL string, timeout time.Duration, proc *browserProc, firstTarget target.ID) (*session, error) {
	allocCtx, allocStop, alloc := newGuardedAllocator(context.Background(), wsURL, timeout)
	// chromedp logs to the standard logger by default; what a DevTools endpoint sends must not
	// reach the hub's stderr (in stdio mode that is the client's log).
	quiet := func(string, ...any) {}
	rootCtx, rootCancel := chromedp.NewContext(allocCtx, chromedp.WithLogf(quiet), chromedp.WithErrorf(quiet))
	st := &session{rootCtx: rootCtx, rootCancel: rootCancel, allocStop: allocStop, alloc: alloc, timeout: timeout,
		endpoint: wsURL, proc: proc, tabs: map[target.ID]*tab{}, preexisting: map[target.ID]bool{},
		guardSem: make(chan struct{}, maxGuardWorkers)}
	// ListenBrowser allocates the browser connection without opening a tab. The context of this
	// first call carries the connection's lifetime, so it has no timeout; the dial has one.
	if err := chromedp.ListenBrowser(rootCtx, func(ev any) { w.browserEvent(st, ev) }); err != nil {
		rootCancel()
		allocStop()
		return nil, err
	}
	// A message the transport refused ends the connection; say so instead of a bare
	// "context canceled" from whichever call was under way.
	fail := func(err error) error {
		if v := alloc.violation(); v != nil {
			return v
		}
		return err
	}
	st.browser = chromedp.FromContext(rootCtx).Browser
	actx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	// The guard comes first: no tab is attached, and nothing navigated by us, before every
	// file:// load of the browser goes through the hub.
	if err := w.guardBrowser(actx, st); err != nil {
		st.shutdown(time.Second)
		if v := alloc.violation(); v != nil {
			return nil, v
		}
		return nil, err
	}
	if _, err := cdp.Call(actx, st.browser, target.SetDiscoverTargets, target.SetDiscoverTargetsParams{Discover: true}); err != nil {
		st.shutdown(time.Second)
		return nil, fail(err)
	}
	owned := false
	if firstTarget == "" {
		res, err := cdp.Call(actx, st.browser, target.CreateTarget, target.CreateTargetParams{URL: "about:blank"})
		if err != nil {
			st.shutdown(time.Second)
			return nil, fail(err)
		}
		firstTarget, owned = res.TargetID, true
	}
	t, err := w.attach(actx, st, firstTarget, owned || proc != nil)
	if err != nil {
		st.shutdown(time.Second)
		return nil, fail(err)
	}
	st.active = t.id
	return st, nil
}

// attach makes a chromedp context for the page target id and starts its event listener.
func (w *Webview) attach(ctx context.Context, st *session, id target.ID, owned bool) (*tab, error) {
	t := &tab{id: id, owned: owned, refs: map[string]cdp.BackendNodeID{}, byID: map[cdp.BackendNodeID]string{}}
	opts := []chromedp.ContextOption{chromedp.WithTargetID(id), chromedp.WithListener(func(ev any) { w.tabEvent(t, ev) })}
	if !owned {
		opts = append(opts, chromedp.WithDetachOnCancel())
	}
	t.ctx, t.cancel = chromedp.NewContext(st.rootCtx, opts...)
	// The first Run attaches; its context is the tab's lifetime, so it must not carry the
	// timeout. Bound the wait from outside instead.
	errc := make(chan error, 1)
	go func() {
		defer func() {
			// chromedp dereferences the browser's replies on this goroutine (e.g. the frame
			// tree); the transport checks them, this is the backstop.
			if r := recover(); r != nil {
				st.rootCancel()
				errc <- fmt.Errorf("%w (%v)", errPanic, r)
			}
		}()
		errc <- chromedp.Do(t.ctx)
	}()
	select {
	case err := <-errc:
		if err != nil {
			t.cancel()
			return nil, err
		}
	case <-ctx.Done():
		t.cancel()
		return nil, fmt.Errorf("attaching to tab %s: %w", id, ctx.Err())
	}
	if info, err := cdp.Call(ctx, st.browser, target.GetTargetInfo, target.GetTargetInfoParams{TargetID: id}); err == nil && info.TargetInfo != nil {
		t.setInfo(info.TargetInfo.URL, info.TargetInfo.Title)
	}
	st.mu.Lock()
	st.tabs[id] = t
	st.mu.Unlock()
	return t, nil
}

// Disconnect ends the connection: tabs we opened are closed, a launched browser is closed and
// its profile removed. It reports whether there was a connection.
func (w *Webview) Disconnect() bool {
	w.mu.Lock()
	st := w.st
	w.st, w.lost = nil, nil
	w.mu.Unlock()
	if st == nil {
		return false
	}
	st.shutdown(5 * time.Second)
	w.emit(Event{Kind: "state"})
	return true
}

// Close is Disconnect for hub shutdown.
func (w *Webview) Close() error {
	w.Disconnect()
	return nil
}

// shutdown releases a session. A launched browser's process group is killed outright (its
// profile is thrown away, so there is nothing a graceful close would save) and the profile
// removed; for a connected browser the tabs we opened are closed and the others detached.
func (st *session) shutdown(grace time.Duration) {
	st.mu.Lock()
	tabs := make([]*tab, 0, len(st.tabs))
	for _, t := range st.tabs {
		tabs = append(tabs, t)
	}
	st.tabs = map[target.ID]*tab{}
	st.mu.Unlock()
	if st.proc == nil {
		// Close the tabs we opened and wait until the browser has destroyed them: Chrome answers
		// CloseTarget first, and a close still under way when the connection drops can be lost.
		ctx, cancel := context.WithTimeout(context.Background(), grace)
		st.unguardBrowser(ctx)
		gone := cdp.Events(ctx, st.browser, target.TargetDestroyed)
		waiting := map[target.ID]bool{}
		for _, t := range tabs {
			if t.owned {
				if _, err := cdp.Call(ctx, st.browser, target.CloseTarget, target.CloseTargetParams{TargetID: t.id}); err == nil {
					waiting[t.id] = true
				}
			}
		}
		if len(waiting) > 0 {
			for ev, err := range gone {
				if err != nil {
					break
				}
				delete(waiting, ev.TargetID)
				if len(waiting) == 0 {
					break
				}
			}
		}
		for _, t := range tabs {
			t.cancel()
		}
		cancel()
	}
	st.rootCancel()
	st.allocStop()
	st.guardMu.Lock()
	st.guardClosed = true
	st.guardMu.Unlock()
	st.guardWG.Wait() // their calls end with the connection's context
	if st.proc != nil {
		for _, t := range tabs {
			t.cancel()
		}
		st.proc.close()
	}
}

// activeTab returns the session and its active tab.
func (w *Webview) activeTab() (*session, *tab, error) {
	st, err := w.sess()
	if err != nil {
		return nil, nil, err
	}
	st.mu.Lock()
	t := st.tabs[st.active]
	st.mu.Unlock()
	if t == nil {
		return nil, nil, errors.New("no active tab; open one with webview_tabs {\"action\":\"new\"}")
	}
	return st, t, nil
}

// run runs fn on the active tab with the connection's timeout (or timeout when > 0), also ending
// when ctx ends.
func (w *Webview) run(ctx context.Context, timeout time.Duration, fn func(ctx context.Context, t *chromedp.Target) error) error {
	st, tb, err := w.activeTab()
	if err != nil {
		return err
	}
	return w.runOn(ctx, st, tb, timeout, fn)
}

func (w *Webview) runOn(ctx context.Context, st *session, tb *tab, timeout time.Duration, fn func(ctx context.Context, t *chromedp.Target) error) error {
	if timeout <= 0 {
		timeout = st.timeout
	}
	rctx, cancel := context.WithTimeout(tb.ctx, timeout)
	defer cancel()
	stop := context.AfterFunc(ctx, cancel)
	defer stop()
	err := func() (err error) {
		defer func() {
			// fn and chromedp read the browser's replies on this goroutine. The transport has
			// checked them, but a panic here must end this connection, not the hub.
			if r := recover(); r != nil {
				st.rootCancel()
				err = fmt.Errorf("%w (%v)", errPanic, r)
			}
		}()
		return chromedp.Do(rctx, chromedp.Func(fn))
	}()
	if errors.Is(err, errPanic) {
		return err
	}
	if err != nil {
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case errors.Is(err, context.DeadlineExceeded) || (rctx.Err() == context.DeadlineExceeded && tb.ctx.Err() == nil):
			return fmt.Errorf("timed out after %s; the page did not answer in time (raise timeout in webview_connect/webview_launch, or check the page)", timeout)
		case tb.ctx.Err() != nil:
			if st.rootCtx.Err() != nil {
				return st.lostError()
			}
			return errors.New("the tab was closed; pick another with webview_tabs {\"action\":\"list\"} and select it")
		}
	}
	return err
}

// Timeout is the connection's default operation timeout (DefaultTimeout when not connected).
func (w *Webview) Timeout() time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.st == nil {
		return DefaultTimeout
	}
	return w.st.timeout
}

func (t *tab) setInfo(url, title string) {
	t.mu.Lock()
	t.url, t.title = url, title
	t.mu.Unlock()
}

func (t *tab) info() (string, string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.url, t.title
}

// resetRefs forgets the snapshot refs of the previous document.
func (t *tab) resetRefs() {
	t.mu.Lock()
	t.refs = map[string]cdp.BackendNodeID{}
	t.byID = map[cdp.BackendNodeID]string{}
	t.mu.Unlock()
}

// tabEvent runs on the tab's reader goroutine: it must be quick and must not call the browser.
func (w *Webview) tabEvent(t *tab, ev any) {
	switch e := ev.(type) {
	case *page.EventFrameNavigated:
		if e.Frame != nil && e.Frame.ParentID == "" {
			t.resetRefs() // backend node ids belong to the old document
			t.mu.Lock()
			t.url = e.Frame.URL + e.Frame.URLFragment
			t.mu.Unlock()
			w.emit(Event{Kind: "state"})
			// The load itself was refused by the file guard (guard.go), so this document is
			// Chrome's error page; leave it for about:blank so the tab holds nothing of it.
			for _, u := range []string{e.Frame.URL, e.Frame.UnreachableURL} {
				if strings.HasPrefix(strings.ToLower(u), "file:") {
					if err := w.fileAllowed(u); err != nil {
						go w.bounce(t, u, err) // the listener must not call the browser
						break
					}
				}
			}
		}
	case *page.EventNavigatedWithinDocument:
		t.mu.Lock()
		t.url = e.URL
		t.mu.Unlock()
		w.emit(Event{Kind: "state"})
	case *page.EventDomContentEventFired, *page.EventLoadEventFired:
		// Chrome announces a navigation with the address as the title ("host:port/") and never
		// announces the <title> the document parses afterwards: the document being there is
		// the signal for listeners (the dashboard's feed) to read the title again (Refresh).
		// Without it, a page that parsed its <title> after the feed's read showed host:port
		// until the next action.
		w.emit(Event{Kind: "state"})
	default:
		if m, ok := consoleFrom(ev); ok {
			w.addConsole(m)
		}
	}
}

// bounce replaces a refused file document with about:blank.
func (w *Webview) bounce(t *tab, url string, why error) {
	ctx, cancel := context.WithTimeout(t.ctx, 10*time.Second)
	defer cancel()
	_ = chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, page.Navigate, page.NavigateParams{URL: "about:blank"})
		return err
	}))
	w.addConsole(ConsoleMessage{Type: "error", Text: fmt.Sprintf("navigation to %s blocked by the hub: %v", url, why), Timestamp: stamp(0), URL: url})
}

// browserEvent keeps tab titles and URLs current.
func (w *Webview) browserEvent(st *session, ev any) {
	var info *target.Info
	switch e := ev.(type) {
	case *fetch.EventRequestPaused:
		w.paused(st, e)
		return
	case *target.EventTargetInfoChanged:
		info = e.TargetInfo
	case *target.EventTargetDestroyed:
		st.mu.Lock()
		t := st.tabs[e.TargetID]
		st.mu.Unlock()
		if t != nil {
			go w.forgetTab(st, e.TargetID)
		}
		return
	default:
		return
	}
	if info == nil || info.Type != "page" {
		return
	}
	st.mu.Lock()
	t := st.tabs[info.TargetID]
	st.mu.Unlock()
	if t != nil {
		u, title := t.info()
		if u != info.URL || title != info.Title {
			t.setInfo(info.URL, info.Title)
			w.emit(Event{Kind: "state"})
		}
	}
}

// forgetTab drops a tab that the browser closed (by a script, the user, or a close action).
func (w *Webview) forgetTab(st *session, id target.ID) {
	st.mu.Lock()
	t := st.tabs[id]
	delete(st.tabs, id)
	if st.active == id {
		st.active = ""
		for other := range st.tabs {
			st.active = other
			break
		}
	}
	st.mu.Unlock()
	if t != nil {
		t.cancel()
	}
	w.emit(Event{Kind: "state"})
}

package mcp

import (
	"context"
	"encoding/base64"
	"sync"
	"time"

	"github.com/switchboard-hub/switchboard/internal/webview"
	"github.com/switchboard-hub/switchboard/internal/wshub"
	"github.com/switchboard-hub/switchboard/mcp/channel"
)

// The dashboard's Browser view follows the shared browser on the hub channel "browser": the
// active tab's URL and title, the tabs, a small JPEG of the viewport refreshed after every
// navigation and action, and the console tail. Updates are coalesced (at most one every
// browserFeedInterval), and the screenshot is only taken while someone subscribes.
const (
	browserFeedInterval = 150 * time.Millisecond
	browserShotWidth    = 480 // CSS pixels; a JPEG of ~10–40 KB
	browserConsoleTail  = 50
	browserConsoleText  = 1 << 10 // per message on the hub; webview_console has the full text
)

// feedConsole shortens messages for the hub, so an event stays small whatever the page logs.
func feedConsole(msgs []webview.ConsoleMessage) []webview.ConsoleMessage {
	out := make([]webview.ConsoleMessage, len(msgs))
	for i, m := range msgs {
		if len(m.Text) > browserConsoleText {
			cut := browserConsoleText
			for cut > 0 && m.Text[cut]&0xC0 == 0x80 {
				cut--
			}
			m.Text = m.Text[:cut] + "…"
		}
		out[i] = m
	}
	return out
}

// BrowserFeed is the data of a "browser" snapshot and of each "browser" event. In an event,
// Console holds only the messages since the previous event; in a snapshot, the last 50.
type BrowserFeed struct {
	State      webview.State            `json:"state"`
	Screenshot string                   `json:"screenshot"` // data:image/jpeg;base64,... or "" (none yet / disconnected)
	ShotAt     time.Time                `json:"shotAt,omitzero"`
	Console    []webview.ConsoleMessage `json:"console"`
	Dropped    int                      `json:"dropped,omitempty"` // console messages left out of this event (too many at once)
}

type browserFeed struct {
	w    *webview.Webview
	h    *wshub.Hub
	kick chan struct{}
	done chan struct{}
	once sync.Once

	mu       sync.Mutex
	shot     string
	shotAt   time.Time
	dirty    bool // state changed: take a new screenshot
	stale    bool // the page changed while nobody subscribed: shot is older than the page
	pending  []webview.ConsoleMessage
	dropped  int
	finished chan struct{}
}

func newBrowserFeed(w *webview.Webview, h *wshub.Hub) *browserFeed {
	f := &browserFeed{w: w, h: h, kick: make(chan struct{}, 1), done: make(chan struct{}), finished: make(chan struct{})}
	h.SetSnapshotProvider(channel.Browser, func(string) (any, bool) {
		f.mu.Lock()
		defer f.mu.Unlock()
		state := w.State()
		if state.Connected && (f.shot == "" || f.stale) {
			// The page changed while nobody watched (no screenshot was taken then): take one
			// now for the viewer who just arrived; it follows this snapshot as an event.
			f.dirty = true
			select {
			case f.kick <- struct{}{}:
			default:
			}
		}
		return BrowserFeed{State: state, Screenshot: f.shot, ShotAt: f.shotAt, Console: feedConsole(w.ConsoleTail(browserConsoleTail, false))}, true
	})
	w.Subscribe(f.onEvent)
	go f.loop()
	// A dashboard that opens the Browser view while nothing happens still gets a picture.
	f.onEvent(webview.Event{Kind: "state"})
	return f
}

func (f *browserFeed) onEvent(ev webview.Event) {
	f.mu.Lock()
	if ev.Kind == "console" && ev.Console != nil {
		f.pending = append(f.pending, *ev.Console)
		if over := len(f.pending) - browserConsoleTail; over > 0 {
			f.pending = append(f.pending[:0], f.pending[over:]...)
			f.dropped += over
		}
	} else {
		f.dirty = true
	}
	f.mu.Unlock()
	select {
	case f.kick <- struct{}{}:
	default:
	}
}

func (f *browserFeed) stop() {
	if f == nil {
		return
	}
	f.once.Do(func() { close(f.done) })
	<-f.finished
}

func (f *browserFeed) loop() {
	defer close(f.finished)
	for {
		select {
		case <-f.done:
			return
		case <-f.kick:
		}
		select { // coalesce a burst of events into one update
		case <-f.done:
			return
		case <-time.After(browserFeedInterval):
		}
		f.mu.Lock()
		dirty := f.dirty
		f.dirty = false
		f.mu.Unlock()
		if dirty {
			f.w.Refresh(context.Background())
		}
		state := f.w.State()
		if dirty || !state.Connected {
			f.refreshShot(state.Connected)
		}
		f.mu.Lock()
		ev := BrowserFeed{State: state, Screenshot: f.shot, ShotAt: f.shotAt, Console: feedConsole(f.pending), Dropped: f.dropped}
		f.pending, f.dropped = nil, 0
		f.mu.Unlock()
		f.h.Publish(channel.Browser, wshub.TypeEvent, ev)
	}
}

func (f *browserFeed) refreshShot(connected bool) {
	if !connected {
		f.mu.Lock()
		f.shot, f.shotAt = "", time.Time{}
		f.mu.Unlock()
		return
	}
	if !f.h.HasSubscribers(channel.Browser) {
		f.mu.Lock()
		f.stale = true // the next subscriber's snapshot asks for a fresh one
		f.mu.Unlock()
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	go func() { // a stop while capturing ends the capture
		select {
		case <-f.done:
			cancel()
		case <-ctx.Done():
		}
	}()
	data, err := f.w.LiveShot(ctx, browserShotWidth)
	if err != nil || len(data) == 0 {
		return
	}
	f.mu.Lock()
	f.shot = "data:image/jpeg;base64," + base64.StdEncoding.EncodeToString(data)
	f.shotAt = time.Now()
	f.stale = false
	f.mu.Unlock()
}

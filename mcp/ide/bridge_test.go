package ide

import (
	"context"
	"github.com/switchboard-hub/switchboard/internal/agentic"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/switchboard-hub/switchboard/internal/agentic/protocol"
	"github.com/switchboard-hub/switchboard/internal/testutil"
	"github.com/switchboard-hub/switchboard/mcp/ide/agenticsim"
)

func TestBridgeAuthorizationHeader(t *testing.T) {
	tests := []struct {
		name       string
		simToken   string
		token      string
		wantHeader string
		connects   bool
	}{
		{name: "token sent as bearer", simToken: "s3cret", token: "s3cret", wantHeader: "Bearer s3cret", connects: true},
		{name: "no token, no header", simToken: "", token: "", wantHeader: "", connects: true},
		{name: "missing token refused", simToken: "s3cret", token: "", wantHeader: "", connects: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sim := startSim(t, agenticsim.Options{Token: tc.simToken})
			sub := startSubsystem(t, nil, sim.URL(), WithToken(tc.token))
			if tc.connects {
				testutil.Eventually(t, "bridge connected", func() bool { return sub.BridgeStatus().Connected })
			} else {
				testutil.Eventually(t, "two refused dials", func() bool { return sub.BridgeStatus().Attempts >= 2 })
				st := sub.BridgeStatus()
				if st.Connected {
					t.Fatal("connected without the token")
				}
				if !strings.Contains(st.LastError, "401") || !strings.Contains(st.LastError, agentic.EnvToken) {
					t.Errorf("lastError %q should name HTTP 401 and %s", st.LastError, agentic.EnvToken)
				}
			}
			headers := sim.AuthHeaders()
			if len(headers) == 0 {
				t.Fatal("simulator saw no upgrade request")
			}
			for _, h := range headers {
				if h != tc.wantHeader {
					t.Errorf("Authorization header = %q, want %q", h, tc.wantHeader)
				}
			}
		})
	}
}

// flakyBackend refuses upgrades (HTTP 503) until accept is set; it then
// accepts exactly one connection, clears accept, and closes that connection
// when the test says so. Every dial and the connection are logged in order
// together with the bridge's scheduled delays.
type flakyBackend struct {
	accept   atomic.Bool
	dropConn chan struct{}
	log      *eventLog
}

type eventLog struct {
	mu      sync.Mutex
	entries []logEntry
}

type logEntry struct {
	kind  string // "dial", "connected", "delay"
	at    time.Time
	delay time.Duration
}

func (l *eventLog) add(e logEntry) {
	l.mu.Lock()
	defer l.mu.Unlock()
	e.at = time.Now()
	l.entries = append(l.entries, e)
}

func (l *eventLog) snapshot() []logEntry {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]logEntry(nil), l.entries...)
}

func (f *flakyBackend) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.log.add(logEntry{kind: "dial"})
	if !f.accept.CompareAndSwap(true, false) {
		http.Error(w, "backend starting", http.StatusServiceUnavailable)
		return
	}
	conn, err := (&websocket.Upgrader{}).Upgrade(w, r, nil)
	if err != nil {
		return
	}
	f.log.add(logEntry{kind: "connected"})
	<-f.dropConn
	conn.Close()
}

func TestBridgeBackoffScheduleAndReset(t *testing.T) {
	const base, limit = 10 * time.Millisecond, 80 * time.Millisecond
	backend := &flakyBackend{dropConn: make(chan struct{}), log: &eventLog{}}
	srv := httptest.NewServer(backend)
	t.Cleanup(srv.Close)
	var dropOnce sync.Once
	drop := func() { dropOnce.Do(func() { close(backend.dropConn) }) }
	t.Cleanup(drop)

	delays := func(entries []logEntry) []time.Duration {
		var out []time.Duration
		for _, e := range entries {
			if e.kind == "delay" {
				out = append(out, e.delay)
			}
		}
		return out
	}
	sub := startSubsystem(t, nil, "ws"+strings.TrimPrefix(srv.URL, "http")+"/ws",
		WithReconnectInterval(base), WithMaxReconnectInterval(limit),
		withRetryHook(func(d time.Duration) { backend.log.add(logEntry{kind: "delay", delay: d}) }))

	testutil.Eventually(t, "six failed dials", func() bool { return len(delays(backend.log.snapshot())) >= 6 })
	st := sub.BridgeStatus()
	if st.Connected || st.Attempts < 6 || st.NextRetryAt == nil || !strings.Contains(st.LastError, "503") {
		t.Errorf("status while failing = %+v; want disconnected, attempts >= 6, nextRetryAt set, lastError naming 503", st)
	}

	backend.accept.Store(true)
	testutil.Eventually(t, "connection", func() bool { return sub.BridgeStatus().Connected })
	if st := sub.BridgeStatus(); st.Attempts != 0 || st.LastError != "" || st.NextRetryAt != nil {
		t.Errorf("status while connected = %+v; want attempts 0, no error, no retry", st)
	}
	drop()
	testutil.Eventually(t, "four delays after the drop", func() bool {
		entries := backend.log.snapshot()
		for i, e := range entries {
			if e.kind == "connected" {
				return len(delays(entries[i:])) >= 4
			}
		}
		return false
	})

	entries := backend.log.snapshot()
	split := 0
	for i, e := range entries {
		if e.kind == "connected" {
			split = i
		}
	}
	before, after := delays(entries[:split]), delays(entries[split:])
	wantStart := []time.Duration{base, 2 * base, 4 * base, limit, limit, limit}
	for i, want := range wantStart {
		if before[i] != want {
			t.Fatalf("delays before connecting = %v; want prefix %v", before, wantStart)
		}
	}
	for _, d := range before[len(wantStart):] {
		if d != limit {
			t.Fatalf("delay %v after reaching the cap; want %v (all: %v)", d, limit, before)
		}
	}
	wantReset := []time.Duration{base, 2 * base, 4 * base, limit}
	for i, want := range wantReset {
		if after[i] != want {
			t.Fatalf("delays after a successful connection = %v; want prefix %v (reset)", after, wantReset)
		}
	}

	// The scheduled delays are really waited: each dial comes no sooner than
	// the delay scheduled before it (a lower bound only; a loaded machine may
	// be later, never earlier).
	var pending *logEntry
	for i := range entries {
		e := entries[i]
		switch e.kind {
		case "delay":
			pending = &entries[i]
		case "dial":
			if pending != nil {
				if gap := e.at.Sub(pending.at); gap < pending.delay-2*time.Millisecond {
					t.Errorf("dial %v after scheduling a %v delay", gap, pending.delay)
				}
				pending = nil
			}
		}
	}
}

func TestBridgeSendWhileDisconnected(t *testing.T) {
	sub := New(nil, WithBackendURL("ws://127.0.0.1:1/ws"), WithLogger(quietLogger()))
	err := sub.bridge.Send(protocol.Message{Type: protocol.TypeHello})
	if err == nil || !strings.Contains(err.Error(), "not connected") {
		t.Fatalf("Send without a connection: err = %v, want a not-connected error", err)
	}
	if sub.BridgeStatus().Connected {
		t.Fatal("Connected() true before Start")
	}
}

func TestBridgeStopsOnContextAndShutdown(t *testing.T) {
	sim := startSim(t, agenticsim.Options{})
	sub := New(nil, WithBackendURL(sim.URL()), WithLogger(quietLogger()), WithReconnectInterval(10*time.Millisecond))
	ctx, cancel := context.WithCancel(context.Background())
	sub.Start(ctx)
	testutil.Eventually(t, "connected", func() bool { return sub.BridgeStatus().Connected })
	testutil.Eventually(t, "simulator sees the bridge", func() bool { return sim.Clients() == 1 })

	cancel() // the app's context ends: the loop must stop and close the socket
	shutdownCtx, done := context.WithTimeout(context.Background(), 5*time.Second)
	defer done()
	if err := sub.Shutdown(shutdownCtx); err != nil {
		t.Fatalf("shutdown after cancel: %v", err)
	}
	if sub.BridgeStatus().Connected {
		t.Error("still connected after shutdown")
	}
	testutil.Eventually(t, "simulator sees the bridge leave", func() bool { return sim.Clients() == 0 })
	if err := sub.Shutdown(shutdownCtx); err != nil {
		t.Errorf("second shutdown: %v", err)
	}
}

func TestBridgeStatusOnHubChannel(t *testing.T) {
	sim := startSim(t, agenticsim.Options{})
	pub := newRecordingPublisher()
	sub := startSubsystem(t, pub, sim.URL())
	testutil.Eventually(t, "connected", func() bool { return sub.BridgeStatus().Connected })

	snap, ok := pub.snapshot(t, agentic.ChannelBridge)
	if !ok || snap["connected"] != true || snap["url"] != sim.URL() {
		t.Fatalf("ide:bridge snapshot = %v, %v; want connected at %s", snap, ok, sim.URL())
	}
	for _, key := range []string{"connected", "url", "attempts", "lastError", "nextRetryAt"} {
		if _, ok := snap[key]; !ok {
			t.Errorf("ide:bridge snapshot lacks %q: %v", key, snap)
		}
	}

	sim.Stop()
	testutil.Eventually(t, "disconnected event", func() bool {
		events := pub.on(agentic.ChannelBridge)
		last := events[len(events)-1].Data
		return last["connected"] == false && last["nextRetryAt"] != nil
	})
	events := pub.on(agentic.ChannelBridge)
	sawConnected := false
	for _, e := range events {
		if e.Type != "event" {
			t.Errorf("ide:bridge published type %q, want event", e.Type)
		}
		if e.Data["connected"] == true {
			sawConnected = true
		}
	}
	if !sawConnected {
		t.Errorf("no connected=true event among %d ide:bridge events", len(events))
	}
}

// OnBridgeStatus tells a subscriber (the tray) about every connection change without polling,
// and cancel stops it while the bridge keeps retrying.
func TestOnBridgeStatusSubscription(t *testing.T) {
	sim := startSim(t, agenticsim.Options{})
	sub := New(nil, WithBackendURL(sim.URL()), WithReconnectInterval(10*time.Millisecond),
		WithMaxReconnectInterval(50*time.Millisecond), WithLogger(quietLogger()))
	var mu sync.Mutex
	var seen []agentic.BridgeStatus
	cancel := sub.OnBridgeStatus(func(st agentic.BridgeStatus) {
		mu.Lock()
		seen = append(seen, st)
		mu.Unlock()
	})
	count := func() int { mu.Lock(); defer mu.Unlock(); return len(seen) }
	last := func() agentic.BridgeStatus { mu.Lock(); defer mu.Unlock(); return seen[len(seen)-1] }
	sub.Start(context.Background())
	t.Cleanup(func() {
		ctx, c := context.WithTimeout(context.Background(), 5*time.Second)
		defer c()
		_ = sub.Shutdown(ctx)
	})
	testutil.Eventually(t, "connected notification", func() bool { return count() > 0 && last().Connected })

	sim.Stop()
	testutil.Eventually(t, "disconnected notification", func() bool { return !last().Connected && last().LastError != "" })

	// A second subscriber, still subscribed, is the signal: the bridge keeps retrying (status
	// changes every ≤50 ms), and each change reaches every subscribed callback in one pass.
	later := make(chan agentic.BridgeStatus, 64)
	defer sub.OnBridgeStatus(func(st agentic.BridgeStatus) {
		select {
		case later <- st:
		default:
		}
	})()
	cancel()
	cancel() // idempotent
	n := count()
	// Until the bridge has retried twice, and one change more: a change is announced only
	// after the previous one reached every callback.
	for sub.BridgeStatus().Attempts < 2 {
		testutil.Receive(t, later, "a status change after the cancel")
	}
	testutil.Receive(t, later, "a status change after the cancel")
	if got := count(); got != n {
		t.Errorf("%d notifications after cancel", got-n)
	}
	if a := sub.BridgeStatus().Attempts; a < 2 {
		t.Errorf("bridge made %d attempts while the subscriber was cancelled; the test proved nothing", a)
	}
}

package wshub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/switchboard-hub/switchboard/internal/testutil"
)

const testToken = "test-token-0123456789"

// wireMessage is Message as a client decodes it.
type wireMessage struct {
	Type      string          `json:"type"`
	Channel   string          `json:"channel"`
	Data      json.RawMessage `json:"data"`
	Timestamp time.Time       `json:"timestamp"`
}

func newHub(t *testing.T, opts Options) *Hub {
	t.Helper()
	if opts.Token == "" {
		opts.Token = testToken
	}
	h := New(opts)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := h.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	})
	return h
}

// startHub starts h's own listener and returns its ws:// URL.
func startHub(t *testing.T, h *Hub) string {
	t.Helper()
	if _, _, err := h.Start("127.0.0.1:0"); err != nil {
		t.Fatalf("start: %v", err)
	}
	return h.URL()
}

func dialRaw(rawURL, token string, header http.Header) (*websocket.Conn, *http.Response, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, nil, err
	}
	if token != "" {
		q := u.Query()
		q.Set("token", token)
		u.RawQuery = q.Encode()
	}
	d := websocket.Dialer{HandshakeTimeout: 5 * time.Second}
	return d.Dial(u.String(), header)
}

func dial(t *testing.T, rawURL string) *websocket.Conn {
	t.Helper()
	conn, resp, err := dialRaw(rawURL, testToken, nil)
	if err != nil {
		status := 0
		if resp != nil {
			status = resp.StatusCode
		}
		t.Fatalf("dial %s: %v (HTTP %d)", rawURL, err, status)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

func send(t *testing.T, conn *websocket.Conn, frame string) {
	t.Helper()
	if err := conn.WriteMessage(websocket.TextMessage, []byte(frame)); err != nil {
		t.Fatalf("write %s: %v", frame, err)
	}
}

func read(t *testing.T, conn *websocket.Conn) wireMessage {
	t.Helper()
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	var m wireMessage
	if err := conn.ReadJSON(&m); err != nil {
		t.Fatalf("read: %v", err)
	}
	return m
}

func expect(t *testing.T, conn *websocket.Conn, typ, channel string) wireMessage {
	t.Helper()
	m := read(t, conn)
	if m.Type != typ || m.Channel != channel {
		t.Fatalf("got %s on %q (data %s), want %s on %q", m.Type, m.Channel, m.Data, typ, channel)
	}
	if m.Timestamp.IsZero() {
		t.Fatalf("%s on %q has no timestamp", m.Type, m.Channel)
	}
	return m
}

func subscribe(t *testing.T, conn *websocket.Conn, channel string) {
	t.Helper()
	send(t, conn, fmt.Sprintf(`{"type":"subscribe","channel":%q}`, channel))
	expect(t, conn, TypeSubscribed, channel)
}

type seqData struct {
	Seq int `json:"seq"`
}

func seqOf(t *testing.T, m wireMessage) int {
	t.Helper()
	var d seqData
	if err := json.Unmarshal(m.Data, &d); err != nil {
		t.Fatalf("decode %s: %v", m.Data, err)
	}
	return d.Seq
}

func TestSubscribeGetsSnapshotThenEventsInOrder(t *testing.T) {
	h := newHub(t, Options{})
	h.SetSnapshotProvider("processes", func(ch string) (any, bool) {
		return map[string]any{"processes": []string{"p-1"}, "asked": ch}, true
	})
	conn := dial(t, startHub(t, h))

	subscribe(t, conn, "processes")
	snap := expect(t, conn, TypeSnapshot, "processes")
	if got, want := string(snap.Data), `{"asked":"processes","processes":["p-1"]}`; got != want {
		t.Fatalf("snapshot data %s, want %s", got, want)
	}
	for i := range 50 {
		h.Publish("processes", TypeEvent, seqData{Seq: i})
	}
	for i := range 50 {
		if got := seqOf(t, expect(t, conn, TypeEvent, "processes")); got != i {
			t.Fatalf("event %d has seq %d", i, got)
		}
	}

	// A channel without a provider: subscribed, then events, no snapshot.
	subscribe(t, conn, "activity")
	h.SendToChannel("activity", Message{Type: TypeEvent, Data: seqData{Seq: 7}})
	if got := seqOf(t, expect(t, conn, TypeEvent, "activity")); got != 7 {
		t.Fatalf("activity seq %d, want 7", got)
	}
	if st := h.Stats(); st.Clients != 1 || st.Channels != 2 {
		t.Fatalf("stats %+v, want 1 client on 2 channels", st)
	}
}

// TestSnapshotOrderingUnderConcurrentPublish subscribes while a producer
// publishes a counter as fast as it can and a slow provider snapshots it.
// The client must see the snapshot before any event, and events from no
// later than snapshot+1 onward with no gap.
func TestSnapshotOrderingUnderConcurrentPublish(t *testing.T) {
	h := newHub(t, Options{QueueSize: 8192})
	var counter atomic.Int64
	counter.Store(-1)
	snapshotting := make(chan struct{})
	advanced := make(chan struct{}) // the producer published 100 events after the snapshot began
	var once sync.Once
	h.SetSnapshotProvider("counter", func(string) (any, bool) {
		v := counter.Load()
		once.Do(func() { close(snapshotting) })
		select { // the producer keeps publishing meanwhile
		case <-advanced:
		case <-time.After(testutil.Patience):
		}
		return seqData{Seq: int(v)}, true
	})
	conn := dial(t, startHub(t, h))

	const total, beforeSubscribe = 3000, 1000
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := range total {
			if i == beforeSubscribe {
				// Hold the rest until the snapshot is being taken, so they are
				// published while it is in progress and after it.
				select {
				case <-snapshotting:
				case <-time.After(10 * time.Second):
					return
				}
			}
			counter.Store(int64(i)) // state first, then the event, as real producers do
			h.Publish("counter", TypeEvent, seqData{Seq: i})
			if i == beforeSubscribe+100 {
				close(advanced)
			}
		}
	}()
	t.Cleanup(wg.Wait)
	testutil.Eventually(t, "producer to get going", func() bool { return counter.Load() == beforeSubscribe-1 })

	subscribe(t, conn, "counter")
	snap := seqOf(t, expect(t, conn, TypeSnapshot, "counter"))
	if snap >= total-1 {
		t.Fatalf("snapshot %d taken after the producer finished; nothing was published during it", snap)
	}
	first := seqOf(t, expect(t, conn, TypeEvent, "counter"))
	if first > snap+1 {
		t.Fatalf("first event %d after snapshot %d: events %d..%d were missed", first, snap, snap+1, first-1)
	}
	prev := first
	for prev < total-1 {
		got := seqOf(t, expect(t, conn, TypeEvent, "counter"))
		if got != prev+1 {
			t.Fatalf("event %d followed %d", got, prev)
		}
		prev = got
	}
}

func TestUnsubscribeStopsDelivery(t *testing.T) {
	h := newHub(t, Options{})
	conn := dial(t, startHub(t, h))
	subscribe(t, conn, "a")
	subscribe(t, conn, "b")

	h.Publish("a", TypeEvent, seqData{Seq: 1})
	expect(t, conn, TypeEvent, "a")

	send(t, conn, `{"type":"unsubscribe","channel":"a"}`)
	expect(t, conn, TypeUnsubscribed, "a")
	h.Publish("a", TypeEvent, seqData{Seq: 2})
	h.Publish("b", TypeEvent, seqData{Seq: 3}) // marker: arrives, "a" must not
	if m := expect(t, conn, TypeEvent, "b"); seqOf(t, m) != 3 {
		t.Fatalf("marker seq %d, want 3", seqOf(t, m))
	}
	if st := h.Stats(); st.Channels != 1 {
		t.Fatalf("channels %d after unsubscribe, want 1", st.Channels)
	}
}

// TestSlowClientIsDroppedFastClientGetsEverything: the slow client never
// reads, so once the kernel buffers are full its queue fills and the hub
// drops it; the fast client, reading all along, receives every message.
func TestSlowClientIsDroppedFastClientGetsEverything(t *testing.T) {
	const queue = 8
	h := newHub(t, Options{QueueSize: queue})
	u := startHub(t, h)
	slow := dial(t, u)
	fast := dial(t, u)
	subscribe(t, slow, "out")
	subscribe(t, fast, "out")

	received := make(chan int, 4096)
	readErr := make(chan error, 1)
	go func() {
		for {
			_ = fast.SetReadDeadline(time.Now().Add(10 * time.Second))
			var m wireMessage
			if err := fast.ReadJSON(&m); err != nil {
				readErr <- err
				close(received)
				return
			}
			var d struct {
				Seq int `json:"seq"`
			}
			if err := json.Unmarshal(m.Data, &d); err != nil {
				readErr <- err
				close(received)
				return
			}
			received <- d.Seq
		}
	}()

	payload := strings.Repeat("x", 64<<10)
	type bigData struct {
		Seq  int    `json:"seq"`
		Text string `json:"text"`
	}
	next := 0 // next seq the fast client must deliver
	waitFast := func(upTo int) {
		for next <= upTo {
			select {
			case seq, ok := <-received:
				if !ok {
					t.Fatalf("fast client stopped after seq %d: %v", next-1, <-readErr)
				}
				if seq != next {
					t.Fatalf("fast client got seq %d, want %d", seq, next)
				}
				next++
			case <-time.After(10 * time.Second):
				t.Fatalf("fast client stuck waiting for seq %d", next)
			}
		}
	}
	// Keep the fast client within half its queue so only the slow one overflows.
	seq := 0
	for ; h.Stats().SlowDisconnects == 0; seq++ {
		if seq == 2000 { // 125 MiB and the slow client still not dropped
			t.Fatalf("slow client never dropped; stats %+v", h.Stats())
		}
		h.Publish("out", TypeEvent, bigData{Seq: seq, Text: payload})
		waitFast(seq - queue/2)
	}
	for end := seq + 20; seq < end; seq++ {
		h.Publish("out", TypeEvent, bigData{Seq: seq, Text: payload})
		waitFast(seq - queue/2)
	}
	waitFast(seq - 1)

	st := h.Stats()
	if st.SlowDisconnects != 1 || st.Dropped == 0 {
		t.Fatalf("stats %+v, want exactly 1 slow disconnect and some dropped", st)
	}
	testutil.Eventually(t, "slow client to be unregistered", func() bool { return h.Stats().Clients == 1 })
	// The slow client drains what reached its socket, then sees the close.
	_ = slow.SetReadDeadline(time.Now().Add(10 * time.Second))
	for {
		if _, _, err := slow.ReadMessage(); err != nil {
			var netErr interface{ Timeout() bool }
			if errors.As(err, &netErr) && netErr.Timeout() {
				t.Fatalf("slow client connection still open: %v", err)
			}
			break
		}
	}
}

func TestHandshakeAuthAndOrigin(t *testing.T) {
	h := newHub(t, Options{AllowedOrigins: []string{"https://dash.example:8443/"}})
	u := startHub(t, h)
	hostPort := strings.TrimSuffix(strings.TrimPrefix(u, "ws://"), "/ws")
	bearer := http.Header{"Authorization": {"Bearer " + testToken}}

	tests := []struct {
		name   string
		token  string
		header http.Header
		status int
	}{
		{"no token", "", nil, http.StatusUnauthorized},
		{"wrong token", "nope", nil, http.StatusUnauthorized},
		{"token prefix only", testToken[:5], nil, http.StatusUnauthorized},
		{"wrong bearer", "", http.Header{"Authorization": {"Bearer nope"}}, http.StatusUnauthorized},
		{"query token", testToken, nil, http.StatusSwitchingProtocols},
		{"bearer header", "", bearer, http.StatusSwitchingProtocols},
		{"bearer lower-case scheme", "", http.Header{"Authorization": {"bearer " + testToken}}, http.StatusSwitchingProtocols},
		{"foreign origin", testToken, http.Header{"Origin": {"https://evil.example"}}, http.StatusForbidden},
		{"foreign origin without token", "", http.Header{"Origin": {"https://evil.example"}}, http.StatusForbidden},
		{"wails linux/mac", testToken, http.Header{"Origin": {"wails://wails"}}, http.StatusSwitchingProtocols},
		{"wails windows", testToken, http.Header{"Origin": {"http://wails.localhost"}}, http.StatusSwitchingProtocols},
		{"configured origin", testToken, http.Header{"Origin": {"https://DASH.example:8443"}}, http.StatusSwitchingProtocols},
		{"own origin", testToken, http.Header{"Origin": {"http://" + hostPort}}, http.StatusSwitchingProtocols},
		{"loopback same origin", testToken, http.Header{"Origin": {"http://localhost:1234"}, "Host": {"localhost:1234"}}, http.StatusSwitchingProtocols},
		{"rebinding host", testToken, http.Header{"Origin": {"http://evil.example:1234"}, "Host": {"evil.example:1234"}}, http.StatusForbidden},
		{"null origin", testToken, http.Header{"Origin": {"null"}}, http.StatusForbidden},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			conn, resp, err := dialRaw(u, tc.token, tc.header)
			if conn != nil {
				defer conn.Close()
			}
			if resp == nil {
				t.Fatalf("no HTTP response: %v", err)
			}
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d (err %v)", resp.StatusCode, tc.status, err)
			}
			if tc.status == http.StatusSwitchingProtocols {
				send(t, conn, `{"type":"ping"}`)
				expect(t, conn, TypePong, "")
			}
		})
	}
}

func TestMountedInAnotherServer(t *testing.T) {
	h := newHub(t, Options{})
	mux := http.NewServeMux()
	mux.Handle("/ws", h)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	u := "ws" + strings.TrimPrefix(srv.URL, "http") + "/ws"

	// The page served by this same loopback server may connect.
	conn, resp, err := dialRaw(u, testToken, http.Header{"Origin": {srv.URL}})
	if err != nil {
		t.Fatalf("dial with same origin: %v (resp %v)", err, resp)
	}
	defer conn.Close()
	subscribe(t, conn, "x")
	h.Publish("x", TypeEvent, seqData{Seq: 1})
	expect(t, conn, TypeEvent, "x")
	if h.Running() {
		t.Fatal("Running() true without Start")
	}
}

func TestPing(t *testing.T) {
	// 250 ms leaves a loaded machine half a second to answer each ping.
	h := newHub(t, Options{PingInterval: 250 * time.Millisecond})
	u := startHub(t, h)

	t.Run("application ping gets pong", func(t *testing.T) {
		conn := dial(t, u)
		send(t, conn, `{"type":"ping"}`)
		expect(t, conn, TypePong, "")
	})

	t.Run("hub pings a reading client and keeps it", func(t *testing.T) {
		conn := dial(t, u)
		var pings atomic.Int32
		conn.SetPingHandler(func(data string) error {
			pings.Add(1)
			return conn.WriteControl(websocket.PongMessage, []byte(data), time.Now().Add(time.Second))
		})
		// Control frames are handled inside Read; read until well past the
		// pong wait (500ms) to prove answered pings keep the connection.
		_ = conn.SetReadDeadline(time.Now().Add(1600 * time.Millisecond))
		_, _, err := conn.ReadMessage()
		var netErr interface{ Timeout() bool }
		if !errors.As(err, &netErr) || !netErr.Timeout() {
			t.Fatalf("read ended with %v, want our own read timeout (connection should stay up)", err)
		}
		if pings.Load() < 3 {
			t.Fatalf("got %d pings in 1600ms at a 250ms interval", pings.Load())
		}
	})

	t.Run("silent client is dropped after twice the interval", func(t *testing.T) {
		testutil.Eventually(t, "earlier clients to leave", func() bool { return h.Stats().Clients == 0 })
		conn := dial(t, u) // never reads, so never answers pings
		testutil.Eventually(t, "client to register", func() bool { return h.Stats().Clients == 1 })
		testutil.Eventually(t, "silent client to be dropped", func() bool { return h.Stats().Clients == 0 })
		// The hub closed the TCP connection: reading now ends in an error
		// (after the pings queued before the close), not our deadline.
		_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		_, _, err := conn.ReadMessage()
		var netErr interface{ Timeout() bool }
		if err == nil || (errors.As(err, &netErr) && netErr.Timeout()) {
			t.Fatalf("read on dropped connection: %v, want a closed-connection error", err)
		}
	})
}

func TestBadFramesGetErrorsAndKeepTheConnection(t *testing.T) {
	h := newHub(t, Options{})
	conn := dial(t, startHub(t, h))
	tests := []struct {
		frame, channel, wantInError string
	}{
		{`not json`, "", "frame: not a JSON object"},
		{`{"type":"subscribe"}`, "", "channel: missing"},
		{`{"type":"subscribe","channel":"a\u0001b"}`, "a\x01b", "control character"},
		{`{"type":"subscribe","channel":"` + strings.Repeat("c", 300) + `"}`, strings.Repeat("c", 300), "limit is 256"},
		{`{"type":"jump","channel":"x"}`, "x", `type: unknown "jump"`},
		{`{"channel":"x"}`, "x", "type: missing"},
	}
	for _, tc := range tests {
		send(t, conn, tc.frame)
		m := expect(t, conn, TypeError, tc.channel)
		var d ErrorData
		if err := json.Unmarshal(m.Data, &d); err != nil || !strings.Contains(d.Message, tc.wantInError) {
			t.Fatalf("frame %s: error data %s, want message containing %q", tc.frame, m.Data, tc.wantInError)
		}
	}
	if err := conn.WriteMessage(websocket.BinaryMessage, []byte{1, 2}); err != nil {
		t.Fatal(err)
	}
	expect(t, conn, TypeError, "")
	send(t, conn, `{"type":"ping"}`)
	expect(t, conn, TypePong, "")
	if st := h.Stats(); st.Channels != 0 {
		t.Fatalf("rejected subscribes created %d channels", st.Channels)
	}
}

func TestOversizedFrameClosesConnection(t *testing.T) {
	h := newHub(t, Options{MaxMessageSize: 1024})
	conn := dial(t, startHub(t, h))
	send(t, conn, `{"type":"subscribe","channel":"`+strings.Repeat("a", 2000)+`"}`)
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, _, err := conn.ReadMessage()
	if !websocket.IsCloseError(err, websocket.CloseMessageTooBig) {
		t.Fatalf("read after oversized frame: %v, want close 1009", err)
	}
	testutil.Eventually(t, "client to be unregistered", func() bool { return h.Stats().Clients == 0 })
}

func TestShutdownClosesClients(t *testing.T) {
	h := New(Options{Token: testToken})
	var mu sync.Mutex
	var seen []int
	h.OnChange(func(st Stats) {
		mu.Lock()
		seen = append(seen, st.Clients)
		mu.Unlock()
	})
	u := startHub(t, h)
	conns := []*websocket.Conn{dial(t, u), dial(t, u), dial(t, u)}
	subscribe(t, conns[0], "x")
	testutil.Eventually(t, "3 clients", func() bool { return h.Stats().Clients == 3 })

	// Clients read concurrently, as real ones do, so they answer the close
	// frame and Shutdown completes the handshake without waiting it out.
	closeErrs := make(chan error, len(conns))
	for _, c := range conns {
		go func() {
			_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
			_, _, err := c.ReadMessage()
			closeErrs <- err
		}()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := h.Shutdown(ctx); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	for i := range conns {
		if err := <-closeErrs; !websocket.IsCloseError(err, websocket.CloseGoingAway) {
			t.Fatalf("client %d: %v, want close 1001", i, err)
		}
	}
	if st := h.Stats(); st.Clients != 0 || st.Channels != 0 {
		t.Fatalf("stats after shutdown %+v", st)
	}
	if h.Running() {
		t.Fatal("still running after shutdown")
	}
	if err := h.Shutdown(ctx); err != nil {
		t.Fatalf("second shutdown: %v", err)
	}
	if _, _, err := h.Start("127.0.0.1:0"); !errors.Is(err, ErrShutdown) {
		t.Fatalf("start after shutdown: %v, want ErrShutdown", err)
	}
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, "/ws?token="+testToken, nil)
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusServiceUnavailable {
		t.Fatalf("ServeHTTP after shutdown: %d, want 503", rec.Code)
	}
	mu.Lock()
	defer mu.Unlock()
	// Start, 3 connects, Stop (inside Shutdown), 3 disconnects. Concurrent
	// notifications may report the same count, so check the shape only.
	if len(seen) != 8 || seen[0] != 0 || slices.Max(seen) != 3 || slices.Min(seen[4:]) != 0 {
		t.Fatalf("OnChange client counts %v, want 8 calls: start at 0, up to 3 clients, down to 0", seen)
	}
}

func TestStartTwiceReturnsSameAddress(t *testing.T) {
	h := newHub(t, Options{})
	var changes atomic.Int32
	h.OnChange(func(Stats) { changes.Add(1) })
	addr, already, err := h.Start("127.0.0.1:0")
	if err != nil || already {
		t.Fatalf("first start: %q %v %v", addr, already, err)
	}
	if changes.Load() != 1 {
		t.Fatalf("OnChange calls after Start: %d, want 1", changes.Load())
	}
	again, already, err := h.Start("127.0.0.1:0")
	if err != nil || !already || again != addr {
		t.Fatalf("second start: %q already=%v err=%v, want %q already=true", again, already, err, addr)
	}
	if !h.Running() || h.URL() != "ws://"+addr+"/ws" {
		t.Fatalf("running=%v url=%q", h.Running(), h.URL())
	}
	conn := dial(t, h.URL())
	testutil.Eventually(t, "client to register", func() bool { return h.Stats().Clients == 1 })
	if _, _, err := h.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	if n := changes.Load(); n != 2 {
		t.Fatalf("OnChange calls after start, connect, start again: %d, want 2 (an already-running Start changes nothing)", n)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := h.Stop(ctx); err != nil {
		t.Fatalf("stop: %v", err)
	}
	if h.Running() || h.URL() != "" {
		t.Fatalf("after stop running=%v url=%q", h.Running(), h.URL())
	}
	// Start, connect, Stop (the client's disconnect may follow at any time).
	if n := changes.Load(); n < 3 {
		t.Fatalf("OnChange calls after start, connect, stop: %d, want at least 3", n)
	}
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, _, err := conn.ReadMessage(); !websocket.IsCloseError(err, websocket.CloseGoingAway) {
		t.Fatalf("client of stopped listener: %v, want close 1001", err)
	}
	if _, already, err := h.Start("127.0.0.1:0"); err != nil || already {
		t.Fatalf("restart: already=%v err=%v", already, err)
	}
	dial(t, h.URL())
}

func TestStartReportsListenError(t *testing.T) {
	h := newHub(t, Options{})
	addr, _, err := h.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	other := newHub(t, Options{})
	if _, _, err := other.Start(addr); err == nil || !strings.Contains(err.Error(), addr) {
		t.Fatalf("start on busy %s: %v, want an error naming the address", addr, err)
	}
}

func TestURLForWildcardBind(t *testing.T) {
	tests := map[string]string{
		"0.0.0.0:8080":   "127.0.0.1:8080",
		"[::]:8080":      "[::1]:8080",
		":8080":          "127.0.0.1:8080",
		"127.0.0.1:9000": "127.0.0.1:9000",
	}
	for in, want := range tests {
		if got := dialable(in); got != want {
			t.Errorf("dialable(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestBroadcastReachesEveryClient(t *testing.T) {
	h := newHub(t, Options{})
	u := startHub(t, h)
	a, b := dial(t, u), dial(t, u)
	subscribe(t, a, "x") // subscribed or not, both get it
	testutil.Eventually(t, "2 clients", func() bool { return h.Stats().Clients == 2 })
	h.Broadcast(Message{Type: "notice", Data: seqData{Seq: 9}})
	for _, c := range []*websocket.Conn{a, b} {
		if m := expect(t, c, "notice", ""); seqOf(t, m) != 9 {
			t.Fatalf("broadcast data %s", m.Data)
		}
	}
}

func TestSnapshotProviderLongestPrefixWins(t *testing.T) {
	h := newHub(t, Options{})
	for _, prefix := range []string{"process", "process:", "processes"} {
		h.SetSnapshotProvider(prefix, func(ch string) (any, bool) {
			return map[string]string{"prefix": prefix, "channel": ch}, true
		})
	}
	h.SetSnapshotProvider("none", func(string) (any, bool) { return nil, false })
	h.SetSnapshotProvider("boom", func(string) (any, bool) { panic("provider bug") })
	conn := dial(t, startHub(t, h))

	tests := []struct{ channel, prefix string }{
		{"process:p-1", "process:"},
		{"processes", "processes"},
		{"processing", "process"},
	}
	for _, tc := range tests {
		subscribe(t, conn, tc.channel)
		m := expect(t, conn, TypeSnapshot, tc.channel)
		var d map[string]string
		if err := json.Unmarshal(m.Data, &d); err != nil || d["prefix"] != tc.prefix || d["channel"] != tc.channel {
			t.Fatalf("%s: snapshot %s, want provider %q", tc.channel, m.Data, tc.prefix)
		}
	}
	// No snapshot (provider declines or panics): the next frame is the event.
	for _, ch := range []string{"none", "boom"} {
		subscribe(t, conn, ch)
		h.Publish(ch, TypeEvent, seqData{Seq: 1})
		expect(t, conn, TypeEvent, ch)
	}
	h.SetSnapshotProvider("process:", nil)
	subscribe(t, conn, "process:p-2")
	if m := expect(t, conn, TypeSnapshot, "process:p-2"); !strings.Contains(string(m.Data), `"prefix":"process"`) {
		t.Fatalf("after removing process: provider: %s", m.Data)
	}
}

func TestChannelCountFollowsDisconnect(t *testing.T) {
	h := newHub(t, Options{})
	u := startHub(t, h)
	a, b := dial(t, u), dial(t, u)
	subscribe(t, a, "x")
	subscribe(t, a, "y")
	subscribe(t, b, "y")
	if st := h.Stats(); st.Channels != 2 || st.Clients != 2 {
		t.Fatalf("stats %+v, want 2 clients, 2 channels", st)
	}
	a.Close()
	testutil.Eventually(t, "a to leave", func() bool { st := h.Stats(); return st.Clients == 1 && st.Channels == 1 })
	h.Publish("y", TypeEvent, seqData{Seq: 1})
	expect(t, b, TypeEvent, "y")
}

func TestGeneratedTokenIsRandom(t *testing.T) {
	a, b := New(Options{}), New(Options{})
	if len(a.Token()) != 64 || a.Token() == b.Token() {
		t.Fatalf("tokens %q and %q: want two distinct 64-hex-digit tokens", a.Token(), b.Token())
	}
}

// TestBurstOfMixedSizesArrivesIntact publishes a burst faster than the
// client reads, so the writer coalesces backlogs, with frames both below and
// above the batch size; every frame must arrive whole and in order.
func TestBurstOfMixedSizesArrivesIntact(t *testing.T) {
	h := newHub(t, Options{QueueSize: 1024})
	conn := dial(t, startHub(t, h))
	subscribe(t, conn, "burst")
	type sized struct {
		Seq  int    `json:"seq"`
		Text string `json:"text"`
	}
	sizes := []int{0, 10, 700, 5000, 63 << 10, 64 << 10, 100 << 10, 3}
	const total = 120
	for i := range total {
		h.Publish("burst", TypeEvent, sized{Seq: i, Text: strings.Repeat(string(rune('a'+i%26)), sizes[i%len(sizes)])})
	}
	for i := range total {
		m := expect(t, conn, TypeEvent, "burst")
		var d sized
		if err := json.Unmarshal(m.Data, &d); err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		want := strings.Repeat(string(rune('a'+i%26)), sizes[i%len(sizes)])
		if d.Seq != i || d.Text != want {
			t.Fatalf("frame %d: seq %d, text of %d bytes; want seq %d, %d bytes", i, d.Seq, len(d.Text), i, len(want))
		}
	}
	testutil.Eventually(t, "sent counter to catch up", func() bool { return h.Stats().Sent == total+1 })
	if st := h.Stats(); st.Dropped != 0 || st.SlowDisconnects != 0 {
		t.Fatalf("stats %+v, want nothing dropped", st)
	}
}

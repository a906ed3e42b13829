package agentic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"runtime/debug"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/gorilla/websocket"

	"github.com/switchboard-hub/switchboard/internal/agentic/protocol"
)

const (
	// maxFrameSize caps one inbound frame (DESIGN: every message has a 10 MiB cap).
	maxFrameSize = 10 << 20
	// handshakeTimeout bounds one dial so a black-holed backend does not stall
	// the connect loop past its backoff schedule.
	handshakeTimeout = 10 * time.Second
	// writeTimeout bounds one frame write so a stuck backend cannot block a
	// tool call forever.
	writeTimeout = 10 * time.Second
	// pingInterval and readIdleTimeout detect a backend that vanished without
	// closing the TCP connection (laptop sleep, network change).
	pingInterval    = 20 * time.Second
	readIdleTimeout = 3 * pingInterval
)

// ErrNotConnected is returned (wrapped) by Send and Request while the bridge
// has no live connection to the backend.
var ErrNotConnected = errors.New("bridge: not connected")

// ErrConnectionLost is returned by Request when the connection carrying the
// request ends before the answer arrives.
var ErrConnectionLost = errors.New("bridge: connection to the backend was lost before it answered")

// BackendError is the backend's explicit refusal of a request (a TypeError
// answer).
type BackendError struct {
	Code    string
	Message string
}

// Error formats the refusal with the backend's code, when it gave one.
func (e *BackendError) Error() string {
	if e.Code != "" {
		return fmt.Sprintf("backend refused (%s): %s", e.Code, e.Message)
	}
	return "backend refused: " + e.Message
}

// BridgeStatus is the bridge's connection state, published on the hub channel
// ide:bridge and returned by Subsystem.BridgeStatus.
type BridgeStatus struct {
	Connected bool   `json:"connected"`
	URL       string `json:"url"`
	// Attempts counts failed dials since the last successful connection.
	Attempts  int    `json:"attempts"`
	LastError string `json:"lastError"`
	// NextRetryAt is when the next dial is due; null while connected or idle.
	NextRetryAt *time.Time `json:"nextRetryAt"`
}

// BridgeHooks are the bridge's outputs; the Subsystem wires them to the state
// store and the hub.
type BridgeHooks struct {
	// OnMessage is called on the read goroutine for every inbound message,
	// before a waiting Request is woken, so the waiter sees the applied state.
	OnMessage func(protocol.Message)
	// OnConnect is called after every successful dial, before reading starts.
	OnConnect func()
	// OnStatus is called after every status change (outside the bridge's locks).
	OnStatus func(BridgeStatus)
}

// Bridge keeps a WebSocket connection to the agentic backend: it dials with
// exponential backoff, reads frames and hands them to OnMessage, and writes
// frames for Send and Request.
type Bridge struct {
	cfg   Config
	hooks BridgeHooks
	url   string // BackendURL with credentials redacted, for messages

	// writeMu guards conn/lost and serialises writes: gorilla allows only one
	// concurrent writer, and Send must not race the read loop swapping conn.
	writeMu sync.Mutex
	conn    *websocket.Conn
	lost    chan struct{} // closed when the current connection ends

	statusMu sync.Mutex
	status   BridgeStatus

	pendingMu sync.Mutex
	pending   map[string]chan protocol.Message

	runMu  sync.Mutex
	cancel context.CancelFunc
	done   chan struct{}
}

// NewBridge returns a Bridge for cfg.BackendURL that reports through hooks. It does not dial
// until Start.
func NewBridge(cfg Config, hooks BridgeHooks) *Bridge {
	return &Bridge{
		cfg:     cfg,
		hooks:   hooks,
		url:     redactURL(cfg.BackendURL),
		status:  BridgeStatus{URL: redactURL(cfg.BackendURL)},
		pending: make(map[string]chan protocol.Message),
	}
}

// Start launches the connect loop. It stops when ctx ends or Stop is called.
// A second Start while running is a no-op.
func (b *Bridge) Start(ctx context.Context) {
	b.runMu.Lock()
	defer b.runMu.Unlock()
	if b.done != nil {
		return
	}
	ctx, b.cancel = context.WithCancel(ctx)
	b.done = make(chan struct{})
	go func(done chan struct{}) {
		defer close(done)
		b.connectLoop(ctx)
	}(b.done)
}

// Stop ends the connect loop, closes the connection and waits (bounded by ctx)
// for the bridge's goroutines to exit.
func (b *Bridge) Stop(ctx context.Context) error {
	b.runMu.Lock()
	cancel, done := b.cancel, b.done
	b.runMu.Unlock()
	if done == nil {
		return nil
	}
	cancel()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("stop IDE bridge: %w", ctx.Err())
	}
}

// Connected reports whether a backend connection is live.
func (b *Bridge) Connected() bool {
	b.writeMu.Lock()
	defer b.writeMu.Unlock()
	return b.conn != nil
}

// Status returns a copy of the connection state.
func (b *Bridge) Status() BridgeStatus {
	b.statusMu.Lock()
	defer b.statusMu.Unlock()
	st := b.status
	if st.NextRetryAt != nil {
		t := *st.NextRetryAt
		st.NextRetryAt = &t
	}
	return st
}

// Send writes one message to the backend, stamping its Timestamp.
func (b *Bridge) Send(msg protocol.Message) error {
	_, err := b.send(msg)
	return err
}

// send writes msg and returns the lost channel of the connection it went out
// on, so Request can notice that connection ending.
func (b *Bridge) send(msg protocol.Message) (<-chan struct{}, error) {
	msg.Timestamp = time.Now().UTC()
	data, err := json.Marshal(msg)
	if err != nil {
		return nil, fmt.Errorf("encode %s message: %w", msg.Type, err)
	}
	b.writeMu.Lock()
	defer b.writeMu.Unlock()
	if b.conn == nil {
		return nil, fmt.Errorf("%w to the agentic backend at %s", ErrNotConnected, b.url)
	}
	if err := b.conn.SetWriteDeadline(time.Now().Add(writeTimeout)); err != nil {
		return nil, fmt.Errorf("send %s to backend: %w", msg.Type, err)
	}
	if err := b.conn.WriteMessage(websocket.TextMessage, data); err != nil {
		return nil, fmt.Errorf("send %s to backend: %w", msg.Type, err)
	}
	return b.lost, nil
}

// Request sends msg with a fresh requestId and waits for the backend's answer
// carrying the same id. A TypeError answer is returned as *BackendError.
// Waiting is bounded by ctx; the caller sets the deadline (Config.ResponseWait).
func (b *Bridge) Request(ctx context.Context, msg protocol.Message) (protocol.Message, error) {
	msg.RequestID = uuid.NewString()
	answer := make(chan protocol.Message, 1)
	b.pendingMu.Lock()
	b.pending[msg.RequestID] = answer
	b.pendingMu.Unlock()
	defer func() {
		b.pendingMu.Lock()
		delete(b.pending, msg.RequestID)
		b.pendingMu.Unlock()
	}()

	lost, err := b.send(msg)
	if err != nil {
		return protocol.Message{}, err
	}
	select {
	case resp := <-answer:
		if resp.Type == protocol.TypeError {
			var e protocol.ErrorData
			if err := resp.Decode(&e); err != nil || e.Message == "" {
				e.Message = "no reason given"
			}
			return resp, &BackendError{Code: e.Code, Message: e.Message}
		}
		return resp, nil
	case <-lost:
		return protocol.Message{}, ErrConnectionLost
	case <-ctx.Done():
		return protocol.Message{}, fmt.Errorf("wait for backend answer to %s: %w", msg.Type, ctx.Err())
	}
}

// connectLoop dials, serves the connection until it ends, and dials again.
// Failed dials back off base, 2·base, 4·base … capped at the maximum; after a
// connection ends the schedule starts again at base. The loop waits base
// before redialling a dropped connection so that a backend which accepts and
// immediately closes cannot make the bridge spin.
func (b *Bridge) connectLoop(ctx context.Context) {
	delay := b.cfg.ReconnectInterval
	for {
		conn, err := b.dial(ctx)
		if ctx.Err() != nil {
			if conn != nil {
				conn.Close()
			}
			b.updateStatus(func(st *BridgeStatus) { st.NextRetryAt = nil })
			return
		}
		if err != nil {
			b.updateStatus(func(st *BridgeStatus) {
				st.Attempts++
				st.LastError = err.Error()
			})
			b.cfg.Logger.Debug("IDE bridge dial failed", "url", b.url, "err", err, "retryIn", delay)
		} else {
			b.cfg.Logger.Info("IDE bridge connected", "url", b.url)
			readErr := b.serve(ctx, conn)
			if ctx.Err() != nil {
				b.updateStatus(func(st *BridgeStatus) { st.NextRetryAt = nil })
				return
			}
			b.cfg.Logger.Info("IDE bridge disconnected", "url", b.url, "err", readErr)
			b.updateStatus(func(st *BridgeStatus) {
				st.LastError = "connection lost: " + readErr.Error()
			})
			delay = b.cfg.ReconnectInterval
		}

		if !b.waitRetry(ctx, delay) {
			return
		}
		delay = min(delay*2, b.cfg.MaxReconnectInterval)
	}
}

// waitRetry publishes nextRetryAt and sleeps delay; false when ctx ended.
func (b *Bridge) waitRetry(ctx context.Context, delay time.Duration) bool {
	at := time.Now().Add(delay).UTC()
	b.updateStatus(func(st *BridgeStatus) { st.NextRetryAt = &at })
	if b.cfg.RetryHook != nil {
		b.cfg.RetryHook(delay)
	}
	timer := time.NewTimer(delay)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		b.updateStatus(func(st *BridgeStatus) { st.NextRetryAt = nil })
		return false
	case <-timer.C:
		return true
	}
}

func (b *Bridge) dial(ctx context.Context) (*websocket.Conn, error) {
	var header http.Header
	if b.cfg.Token != "" {
		header = http.Header{}
		header.Set("Authorization", "Bearer "+b.cfg.Token)
	}
	dialer := websocket.Dialer{
		Proxy:            http.ProxyFromEnvironment, // loopback is never proxied
		HandshakeTimeout: handshakeTimeout,
		TLSClientConfig:  b.cfg.TLSConfig, // wss://; nil = system roots
	}
	conn, resp, err := dialer.DialContext(ctx, b.cfg.BackendURL, header)
	if resp != nil && resp.Body != nil {
		resp.Body.Close()
	}
	if err != nil {
		if resp != nil {
			hint := ""
			if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
				hint = fmt.Sprintf("; check the token (%s)", EnvToken)
			}
			return nil, fmt.Errorf("dial %s: HTTP %s%s", b.url, resp.Status, hint)
		}
		return nil, fmt.Errorf("dial %s: %w", b.url, err)
	}
	conn.SetReadLimit(maxFrameSize)
	return conn, nil
}

// serve runs one connection: publishes it, sends the hello via OnConnect,
// keeps it alive with pings and reads until it fails or ctx ends.
func (b *Bridge) serve(ctx context.Context, conn *websocket.Conn) error {
	lost := make(chan struct{})
	b.writeMu.Lock()
	b.conn, b.lost = conn, lost
	b.writeMu.Unlock()
	b.updateStatus(func(st *BridgeStatus) {
		st.Connected = true
		st.Attempts = 0
		st.LastError = ""
		st.NextRetryAt = nil
	})

	// Closing the socket is the only way to interrupt a blocked read.
	stopClose := context.AfterFunc(ctx, func() { conn.Close() })
	defer stopClose()

	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		keepalive(conn, lost)
	}()

	if b.hooks.OnConnect != nil {
		b.hooks.OnConnect()
	}
	err := b.readLoop(conn)

	b.writeMu.Lock()
	b.conn, b.lost = nil, nil
	close(lost)
	b.writeMu.Unlock()
	conn.Close()
	wg.Wait()
	b.updateStatus(func(st *BridgeStatus) { st.Connected = false })
	return err
}

// keepalive pings the backend until the connection is lost.
func keepalive(conn *websocket.Conn, lost <-chan struct{}) {
	ticker := time.NewTicker(pingInterval)
	defer ticker.Stop()
	for {
		select {
		case <-lost:
			return
		case <-ticker.C:
			// WriteControl may run concurrently with other writers (gorilla docs).
			if err := conn.WriteControl(websocket.PingMessage, nil, time.Now().Add(writeTimeout)); err != nil {
				conn.Close()
				return
			}
		}
	}
}

// apply hands one backend message to the hub's state. A panic while applying it (a message
// shaped in a way the hub's code did not expect) ends this connection with an error — the bridge
// reconnects — instead of taking the whole hub and every client down.
func (b *Bridge) apply(msg protocol.Message) (err error) {
	if b.hooks.OnMessage == nil {
		return nil
	}
	defer func() {
		if r := recover(); r != nil {
			b.cfg.Logger.Error("IDE bridge: a backend message broke the hub's handler; dropping the connection", "type", msg.Type, "panic", r, "stack", string(debug.Stack()))
			err = fmt.Errorf("IDE bridge: a %q message from the backend could not be applied (%v); reconnecting", msg.Type, r)
		}
	}()
	b.hooks.OnMessage(msg)
	return nil
}

func (b *Bridge) readLoop(conn *websocket.Conn) error {
	extend := func() { _ = conn.SetReadDeadline(time.Now().Add(readIdleTimeout)) }
	extend()
	conn.SetPongHandler(func(string) error { extend(); return nil })
	for {
		_, data, err := conn.ReadMessage()
		if err != nil {
			return err
		}
		extend()
		var msg protocol.Message
		if err := json.Unmarshal(data, &msg); err != nil || msg.Type == "" {
			// One bad frame is the backend's bug, not a reason to drop the link.
			b.cfg.Logger.Warn("IDE bridge: ignoring malformed frame", "err", err, "bytes", len(data))
			continue
		}
		if err := b.apply(msg); err != nil {
			return err
		}
		if msg.RequestID != "" {
			b.pendingMu.Lock()
			answer, ok := b.pending[msg.RequestID]
			delete(b.pending, msg.RequestID) // only the first answer counts
			b.pendingMu.Unlock()
			if ok {
				answer <- msg // buffered 1, and deleted above: never blocks
			}
		}
	}
}

func (b *Bridge) updateStatus(fn func(*BridgeStatus)) {
	b.statusMu.Lock()
	fn(&b.status)
	b.statusMu.Unlock()
	if b.hooks.OnStatus != nil {
		b.hooks.OnStatus(b.Status())
	}
}

// redactURL hides credentials (userinfo, token query) in the URL shown to users.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	q := u.Query()
	if q.Has("token") {
		q.Set("token", "xxxxx")
		u.RawQuery = q.Encode()
	}
	return u.Redacted()
}

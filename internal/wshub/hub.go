package wshub

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
	"github.com/switchboard-hub/switchboard/internal/listeners"
)

// Message types the hub itself sends. Producers normally use TypeEvent.
const (
	TypeEvent        = "event"
	TypeSnapshot     = "snapshot"
	TypeSubscribed   = "subscribed"
	TypeUnsubscribed = "unsubscribed"
	TypeError        = "error"
	TypePong         = "pong"
)

// Message is the envelope of every frame the hub sends to a client.
type Message struct {
	Type      string    `json:"type"`
	Channel   string    `json:"channel,omitempty"`
	Data      any       `json:"data,omitempty"`
	Timestamp time.Time `json:"timestamp"`
}

// ErrorData is the data of a TypeError message.
type ErrorData struct {
	Message string `json:"message"`
}

// Options configures a Hub. The zero value is usable: a random token, the
// built-in origins only, the default limits.
type Options struct {
	// Token every client must present. Empty means generate a random one;
	// Hub.Token returns it.
	Token string
	// AllowedOrigins are extra browser origins (scheme://host[:port]) allowed
	// to connect, on top of the desktop window's and the hub's own.
	AllowedOrigins []string
	// QueueSize is the per-client send queue in frames (default 256). A client
	// whose queue is full is disconnected; the producer never blocks.
	QueueSize int
	// PingInterval is how often the hub pings each client (default 20s); a
	// client silent for twice this long is dropped.
	PingInterval time.Duration
	// MaxMessageSize caps inbound frames in bytes (default 64 KiB).
	MaxMessageSize int64
	// Logger receives connection-level logs (default: discard).
	Logger *slog.Logger
}

// Defaults applied by New for zero Options fields.
const (
	DefaultQueueSize      = 256
	DefaultPingInterval   = 20 * time.Second
	DefaultMaxMessageSize = 64 << 10

	// writeWait bounds one frame write; a peer that accepts nothing for this
	// long is gone even if its queue is not full yet.
	writeWait = 10 * time.Second
	// closeWait bounds the close handshake on shutdown.
	closeWait = time.Second

	maxChannelLen       = 256
	maxSubscriptionsPer = 1024
)

// builtinOrigins are always allowed: the Wails desktop window's origin on
// Linux/macOS and on Windows.
var builtinOrigins = []string{"wails://wails", "http://wails.localhost"}

// Stats is a point-in-time view of the hub.
type Stats struct {
	Clients         int    `json:"clients"`
	Channels        int    `json:"channels"`
	Sent            uint64 `json:"sent"`
	Dropped         uint64 `json:"dropped"`
	SlowDisconnects uint64 `json:"slowDisconnects"`
}

// SnapshotProvider returns the current state of channel, or false when it has
// none. It is called from the subscribing client's read goroutine with no hub
// lock held, so it may take its own locks or call Hub methods.
type SnapshotProvider func(channel string) (any, bool)

// Hub fans messages out to WebSocket clients by channel.
//
// Concurrency design: a registry guarded by an RWMutex rather than a central
// hub goroutine fed by channels. Publishing is the hot path and is called
// from many producers (process output readers, audit middleware, the IDE
// bridge); with the registry, a publish encodes the message once and then, under
// a read lock, does a non-blocking send into each subscriber's bounded queue.
// Producers publish in parallel, nothing funnels through one goroutine, and
// a publish never waits for a socket: the lock is held only for the
// queue sends, and each client's own writer goroutine does the socket I/O.
// Registration changes (connect, subscribe) take the write lock briefly.
type Hub struct {
	opts      Options
	log       *slog.Logger
	token     string
	tokenHash [32]byte
	scopesMu  sync.Mutex
	scopes    map[[32]byte]*Scope // scoped tokens (ScopedToken), by SHA-256
	allowed   map[string]struct{}
	upgrader  websocket.Upgrader

	mu       sync.RWMutex // guards clients, channels, closed and client.subs
	clients  map[*client]struct{}
	channels map[string]map[*client]struct{}
	closed   bool
	nextID   uint64

	provMu    sync.RWMutex
	providers map[string]SnapshotProvider

	listeners listeners.Set[Stats]

	srvMu     sync.Mutex // guards the own listener: srv, ln, addr, serveDone
	srv       *http.Server
	ln        net.Listener
	addr      string
	serveDone chan struct{}

	sessions sync.WaitGroup // one per connected client (its ServeHTTP call)

	// unbatched turns write coalescing off (one write per frame, plain
	// gorilla behaviour); only the benchmark sets it, as the baseline.
	unbatched bool

	sent    atomic.Uint64
	dropped atomic.Uint64
	slow    atomic.Uint64
}

// New returns a Hub with opts applied. It does not listen until Start; it can
// also be mounted in another server through ServeHTTP.
func New(opts Options) *Hub {
	if opts.QueueSize <= 0 {
		opts.QueueSize = DefaultQueueSize
	}
	if opts.PingInterval <= 0 {
		opts.PingInterval = DefaultPingInterval
	}
	if opts.MaxMessageSize <= 0 {
		opts.MaxMessageSize = DefaultMaxMessageSize
	}
	if opts.Token == "" {
		opts.Token = randomToken()
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	h := &Hub{
		opts:      opts,
		log:       log,
		token:     opts.Token,
		tokenHash: sha256.Sum256([]byte(opts.Token)),
		allowed:   make(map[string]struct{}),
		clients:   make(map[*client]struct{}),
		channels:  make(map[string]map[*client]struct{}),
		providers: make(map[string]SnapshotProvider),
	}
	for _, o := range append(append([]string(nil), builtinOrigins...), opts.AllowedOrigins...) {
		h.allowed[normalizeOrigin(o)] = struct{}{}
	}
	h.upgrader = websocket.Upgrader{
		HandshakeTimeout: 10 * time.Second,
		ReadBufferSize:   4096,
		WriteBufferSize:  16 << 10,
		// Idle clients hand their write buffer back to the pool between
		// frames, so hundreds of quiet dashboard tabs cost little memory.
		WriteBufferPool: &sync.Pool{},
		// Origin is checked in ServeHTTP before the upgrade (with our own
		// allow-list and a 403); gorilla's same-origin default would reject
		// the Wails window.
		CheckOrigin: func(*http.Request) bool { return true },
	}
	return h
}

func randomToken() string {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		// crypto/rand.Read never fails on supported platforms (it panics
		// internally instead); keep the hub unusable rather than guessable.
		panic("hub: read random token: " + err.Error())
	}
	return hex.EncodeToString(b[:])
}

func normalizeOrigin(o string) string {
	return strings.ToLower(strings.TrimRight(strings.TrimSpace(o), "/"))
}

// Token returns the token clients must present.
func (h *Hub) Token() string { return h.token }

// SetSnapshotProvider registers fn for every channel starting with prefix;
// the longest matching prefix wins. A nil fn removes the provider.
func (h *Hub) SetSnapshotProvider(prefix string, fn func(channel string) (any, bool)) {
	h.provMu.Lock()
	defer h.provMu.Unlock()
	if fn == nil {
		delete(h.providers, prefix)
		return
	}
	h.providers[prefix] = fn
}

func (h *Hub) providerFor(channel string) SnapshotProvider {
	h.provMu.RLock()
	defer h.provMu.RUnlock()
	var best SnapshotProvider
	bestLen := -1
	for prefix, fn := range h.providers {
		if len(prefix) > bestLen && strings.HasPrefix(channel, prefix) {
			best, bestLen = fn, len(prefix)
		}
	}
	return best
}

// HasSubscribers reports whether any client subscribes to channel, so a producer can skip
// expensive work (e.g. a browser screenshot) that nobody would see.
func (h *Hub) HasSubscribers(channel string) bool {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return len(h.channels[channel]) > 0
}

// OnChange registers fn to be called after a client connects or
// disconnects and after the own listener starts or stops (Start, Stop,
// ws_start), so a tray or a transports feed can refresh. It runs
// synchronously on the goroutine that caused the change, with no hub lock
// held (fn may call Stats, Addr, Running); keep it fast.
func (h *Hub) OnChange(fn func(Stats)) (cancel func()) {
	if fn == nil {
		return func() {}
	}
	return h.listeners.Add(fn)
}

func (h *Hub) notifyChange() {
	if h.listeners.Len() == 0 {
		return
	}
	h.listeners.Notify(h.Stats())
}

// Stats returns the current client and channel counts and delivery counters.
func (h *Hub) Stats() Stats {
	h.mu.RLock()
	st := Stats{Clients: len(h.clients), Channels: len(h.channels)}
	h.mu.RUnlock()
	st.Sent = h.sent.Load()
	st.Dropped = h.dropped.Load()
	st.SlowDisconnects = h.slow.Load()
	return st
}

// Publish sends an envelope of msgType with data to every subscriber of channel.
func (h *Hub) Publish(channel, msgType string, data any) {
	h.SendToChannel(channel, Message{Type: msgType, Channel: channel, Data: data})
}

// SendToChannel delivers msg to every subscriber of channel. It never
// blocks on a client: a subscriber whose queue is full is disconnected.
// msg.Channel is set to channel and a zero Timestamp is stamped with now.
func (h *Hub) SendToChannel(channel string, msg Message) {
	msg.Channel = channel
	// Encode outside the lock (a large payload must not hold up subscribes),
	// but skip the work when nobody listens.
	h.mu.RLock()
	n := len(h.channels[channel])
	h.mu.RUnlock()
	if n == 0 {
		return
	}
	frame, ok := h.encode(msg)
	if !ok {
		h.dropped.Add(uint64(n))
		return
	}
	h.mu.RLock()
	defer h.mu.RUnlock()
	for c := range h.channels[channel] {
		c.deliver(channel, frame)
	}
}

// Broadcast delivers msg to every connected client, subscribed or not.
func (h *Hub) Broadcast(msg Message) {
	h.mu.RLock()
	n := len(h.clients)
	h.mu.RUnlock()
	if n == 0 {
		return
	}
	frame, ok := h.encode(msg)
	if !ok {
		h.dropped.Add(uint64(n))
		return
	}
	h.mu.RLock()
	defer h.mu.RUnlock()
	for c := range h.clients {
		c.deliver(msg.Channel, frame)
	}
}

// encode stamps and marshals msg once for all recipients.
func (h *Hub) encode(msg Message) ([]byte, bool) {
	if msg.Timestamp.IsZero() {
		msg.Timestamp = time.Now().UTC()
	}
	frame, err := json.Marshal(msg)
	if err != nil {
		h.log.Error("hub: encode message; dropping it", "channel", msg.Channel, "type", msg.Type, "err", err)
		return nil, false
	}
	return frame, true
}

// register adds c unless the hub is shut down.
func (h *Hub) register(c *client) bool {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return false
	}
	h.nextID++
	c.id = h.nextID
	h.clients[c] = struct{}{}
	h.sessions.Add(1)
	h.mu.Unlock()
	h.notifyChange()
	return true
}

func (h *Hub) unregister(c *client) {
	h.mu.Lock()
	delete(h.clients, c)
	for ch := range c.subs {
		h.removeSubscriberLocked(ch, c)
	}
	c.subs = nil
	h.mu.Unlock()
	c.stopQueueing()
	h.notifyChange()
}

func (h *Hub) removeSubscriberLocked(channel string, c *client) {
	subs := h.channels[channel]
	delete(subs, c)
	if len(subs) == 0 {
		delete(h.channels, channel)
	}
}

// subscribe registers c on channel and queues subscribed + snapshot. Events
// published from the moment c is in the registry are held in c's pending
// buffer until the snapshot is queued, which gives the ordering guarantee
// without calling the provider under a hub lock.
func (h *Hub) subscribe(c *client, channel string) {
	if c.scope != nil && !c.scope.Allow(channel) {
		c.sendError(channel, fmt.Sprintf("channel: %q is not open to this token: %s", channel, c.scope.Refusal))
		return
	}
	h.mu.Lock()
	if c.subs == nil { // unregistered meanwhile
		h.mu.Unlock()
		return
	}
	if _, already := c.subs[channel]; !already && len(c.subs) >= maxSubscriptionsPer {
		h.mu.Unlock()
		c.sendError(channel, fmt.Sprintf("channel: this connection already has the maximum of %d subscriptions; unsubscribe from one first", maxSubscriptionsPer))
		return
	}
	// Lock order everywhere: h.mu, then c.mu.
	c.mu.Lock()
	c.enqueueLocked(c.control(Message{Type: TypeSubscribed, Channel: channel}))
	c.beginPendingLocked(channel)
	c.mu.Unlock()
	c.subs[channel] = struct{}{}
	subs := h.channels[channel]
	if subs == nil {
		subs = make(map[*client]struct{})
		h.channels[channel] = subs
	}
	subs[c] = struct{}{}
	h.mu.Unlock()

	var snapshot []byte
	if fn := h.providerFor(channel); fn != nil {
		if data, ok := h.callProvider(fn, channel); ok {
			snapshot = c.control(Message{Type: TypeSnapshot, Channel: channel, Data: data})
		}
	}
	c.endPending(channel, snapshot)
}

// callProvider isolates a panicking provider so one bad channel cannot kill
// the client's read goroutine.
func (h *Hub) callProvider(fn SnapshotProvider, channel string) (data any, ok bool) {
	defer func() {
		if r := recover(); r != nil {
			h.log.Error("hub: snapshot provider panicked; sending no snapshot", "channel", channel, "panic", r)
			data, ok = nil, false
		}
	}()
	return fn(channel)
}

func (h *Hub) unsubscribe(c *client, channel string) {
	h.mu.Lock()
	if c.subs != nil {
		delete(c.subs, channel)
		h.removeSubscriberLocked(channel, c)
	}
	h.mu.Unlock()
	// Queued after removal from the registry, so no event of this channel
	// can follow it in c's queue.
	c.mu.Lock()
	delete(c.pending, channel)
	c.enqueueLocked(c.control(Message{Type: TypeUnsubscribed, Channel: channel}))
	c.mu.Unlock()
}

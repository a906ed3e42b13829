package wshub

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"
	"unicode"

	"github.com/gorilla/websocket"
)

// client is one WebSocket connection. Its read loop runs in the ServeHTTP
// goroutine that accepted it; its write loop is a goroutine owned by that
// same ServeHTTP call, which waits for it before returning.
type client struct {
	hub          *Hub
	conn         *websocket.Conn
	batch        *batchConn // conn's transport, for coalescing queued frames
	id           uint64     // set by register
	remote       string
	viaOwnServer bool   // connected through Hub.Start's listener; Stop drops it
	scope        *Scope // nil: every channel (the hub token); else a scoped token's limits

	send       chan []byte   // bounded queue of encoded frames
	closeReq   chan struct{} // closed to ask the writer for a clean close
	closeOnce  sync.Once
	closeCode  int
	closeText  string
	readerDone chan struct{}

	mu      sync.Mutex          // guards pending and closing
	pending map[string][][]byte // channel -> events held back until its snapshot is queued
	closing bool                // queue no more frames

	subs map[string]struct{} // guarded by hub.mu; nil once unregistered
}

func newClient(h *Hub, conn *websocket.Conn, batch *batchConn, remote string, viaOwnServer bool) *client {
	return &client{
		hub:          h,
		conn:         conn,
		batch:        batch,
		remote:       remote,
		viaOwnServer: viaOwnServer,
		send:         make(chan []byte, h.opts.QueueSize),
		closeReq:     make(chan struct{}),
		readerDone:   make(chan struct{}),
		pending:      make(map[string][][]byte),
		subs:         make(map[string]struct{}),
	}
}

// deliver queues an event frame for channel, holding it back while the
// channel's snapshot is being taken.
func (c *client) deliver(channel string, frame []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if held, ok := c.pending[channel]; ok && !c.closing {
		if len(held) >= cap(c.send) {
			// As many held-back frames as the whole queue holds: the snapshot
			// provider is far behind the producer; same remedy as a full queue.
			c.dropSlowLocked()
			return
		}
		c.pending[channel] = append(held, frame)
		return
	}
	c.enqueueLocked(frame)
}

// enqueueLocked queues frame without blocking. A full queue means the peer
// is not keeping up: drop the connection rather than stall the producer.
func (c *client) enqueueLocked(frame []byte) {
	if frame == nil {
		return
	}
	if c.closing {
		c.hub.dropped.Add(1)
		return
	}
	select {
	case c.send <- frame:
	default:
		c.dropSlowLocked()
	}
}

// dropSlowLocked disconnects a client that cannot keep up. The TCP
// connection is closed at once rather than sent a close frame: its buffers
// are full, so a close frame would wait behind the backlog, and Close never
// blocks. The client's goroutines see the error and clean up; the client
// reconnects and resubscribes to get fresh snapshots.
func (c *client) dropSlowLocked() {
	c.hub.dropped.Add(1)
	if c.closing {
		return
	}
	c.closing = true
	c.pending = nil
	c.hub.slow.Add(1)
	c.hub.log.Warn("hub: client too slow; disconnecting", "client", c.id, "remote", c.remote, "queue", cap(c.send))
	_ = c.conn.Close()
}

func (c *client) beginPendingLocked(channel string) {
	if c.closing || c.pending == nil {
		return
	}
	if _, ok := c.pending[channel]; !ok {
		c.pending[channel] = [][]byte{}
	}
}

// endPending queues the snapshot (if any) and then the events held back
// since the subscription was registered, in order.
func (c *client) endPending(channel string, snapshot []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	held, ok := c.pending[channel]
	if !ok {
		// Unsubscribed (or dropped) while the snapshot was taken: the
		// snapshot is stale news for this client.
		return
	}
	delete(c.pending, channel)
	c.enqueueLocked(snapshot)
	for _, frame := range held {
		c.enqueueLocked(frame)
	}
}

// stopQueueing discards anything held back and refuses new frames.
func (c *client) stopQueueing() {
	c.mu.Lock()
	c.closing = true
	c.pending = nil
	c.mu.Unlock()
}

// control encodes a frame addressed to this client only.
func (c *client) control(msg Message) []byte {
	frame, ok := c.hub.encode(msg)
	if !ok {
		return nil
	}
	return frame
}

func (c *client) sendError(channel, text string) {
	frame := c.control(Message{Type: TypeError, Channel: channel, Data: ErrorData{Message: text}})
	c.mu.Lock()
	c.enqueueLocked(frame)
	c.mu.Unlock()
}

// requestClose asks the writer to send a close frame and end the session.
func (c *client) requestClose(code int, text string) {
	c.closeOnce.Do(func() {
		c.closeCode, c.closeText = code, text
		close(c.closeReq)
	})
}

// writeLoop owns all writes to the socket (gorilla allows one writer).
// It ends when the reader ends, on a close request, or on a write error,
// and always closes the connection so the reader ends too.
func (c *client) writeLoop() {
	ticker := time.NewTicker(c.hub.opts.PingInterval)
	defer ticker.Stop()
	defer c.conn.Close()
	for {
		select {
		case frame := <-c.send:
			if err := c.writeFrames(frame); err != nil {
				c.hub.log.Debug("hub: write failed; disconnecting", "client", c.id, "remote", c.remote, "err", err)
				return
			}
		case <-ticker.C:
			if err := c.conn.WriteControl(websocket.PingMessage, nil, time.Now().Add(writeWait)); err != nil {
				return
			}
		case <-c.readerDone:
			return
		case <-c.closeReq:
			msg := websocket.FormatCloseMessage(c.closeCode, c.closeText)
			if err := c.conn.WriteControl(websocket.CloseMessage, msg, time.Now().Add(closeWait)); err != nil {
				return
			}
			// Give the peer a moment to answer the close frame (the reader
			// sees it and ends) so it gets a clean 1000/1001, not a reset.
			timer := time.NewTimer(closeWait)
			defer timer.Stop()
			select {
			case <-c.readerDone:
			case <-timer.C:
			}
			return
		}
	}
}

// writeFrames writes first and every frame already waiting behind it as
// one coalesced write. Even a lone frame is corked: gorilla writes a frame
// larger than its buffer as header+payload, which through a wrapped
// net.Conn would be two system calls instead of one writev.
func (c *client) writeFrames(first []byte) error {
	backlog := len(c.send) // only this goroutine receives, so these are there
	batching := c.batch != nil
	if batching {
		c.batch.cork()
	}
	_ = c.conn.SetWriteDeadline(time.Now().Add(writeWait))
	if err := c.conn.WriteMessage(websocket.TextMessage, first); err != nil {
		return err
	}
	for range backlog {
		if err := c.conn.WriteMessage(websocket.TextMessage, <-c.send); err != nil {
			return err
		}
	}
	if batching {
		if err := c.batch.uncork(); err != nil {
			return err
		}
	}
	c.hub.sent.Add(uint64(1 + backlog))
	return nil
}

// clientFrame is what a client may send.
type clientFrame struct {
	Type    string `json:"type"`
	Channel string `json:"channel"`
}

// readLoop reads and handles client frames until the connection ends.
func (c *client) readLoop() {
	defer close(c.readerDone)
	pongWait := 2 * c.hub.opts.PingInterval
	c.conn.SetReadLimit(c.hub.opts.MaxMessageSize)
	_ = c.conn.SetReadDeadline(time.Now().Add(pongWait))
	c.conn.SetPongHandler(func(string) error {
		return c.conn.SetReadDeadline(time.Now().Add(pongWait))
	})
	for {
		kind, data, err := c.conn.ReadMessage()
		if err != nil {
			if !errors.Is(err, websocket.ErrReadLimit) && !websocket.IsCloseError(err, websocket.CloseNormalClosure, websocket.CloseGoingAway) {
				c.hub.log.Debug("hub: client read ended", "client", c.id, "remote", c.remote, "err", err)
			}
			return
		}
		_ = c.conn.SetReadDeadline(time.Now().Add(pongWait))
		if kind != websocket.TextMessage {
			c.sendError("", `frame: binary frames are not accepted; send JSON text such as {"type":"subscribe","channel":"processes"}`)
			continue
		}
		c.handleFrame(data)
	}
}

func (c *client) handleFrame(data []byte) {
	var f clientFrame
	if err := json.Unmarshal(data, &f); err != nil {
		c.sendError("", fmt.Sprintf(`frame: not a JSON object (%v); send {"type":"subscribe","channel":"NAME"}, {"type":"unsubscribe","channel":"NAME"} or {"type":"ping"}`, err))
		return
	}
	switch f.Type {
	case "subscribe", "unsubscribe":
		if msg := validateChannel(f.Channel); msg != "" {
			c.sendError(f.Channel, msg)
			return
		}
		if f.Type == "subscribe" {
			c.hub.subscribe(c, f.Channel)
		} else {
			c.hub.unsubscribe(c, f.Channel)
		}
	case "ping":
		frame := c.control(Message{Type: TypePong})
		c.mu.Lock()
		c.enqueueLocked(frame)
		c.mu.Unlock()
	case "":
		c.sendError(f.Channel, `type: missing; use "subscribe", "unsubscribe" or "ping"`)
	default:
		c.sendError(f.Channel, fmt.Sprintf(`type: unknown %q; use "subscribe", "unsubscribe" or "ping"`, f.Type))
	}
}

func validateChannel(ch string) string {
	if ch == "" {
		return `channel: missing; name the channel, e.g. {"type":"subscribe","channel":"processes"}`
	}
	if len(ch) > maxChannelLen {
		return fmt.Sprintf("channel: %d bytes long; the limit is %d", len(ch), maxChannelLen)
	}
	for _, r := range ch {
		if unicode.IsControl(r) {
			return fmt.Sprintf("channel: %q contains a control character; use a plain name such as \"process:proc-1\"", ch)
		}
	}
	return ""
}

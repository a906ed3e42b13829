package transport

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/internal/jsonobj"
)

// MaxMessageSize caps one inbound JSON-RPC message on every transport.
const MaxMessageSize = 10 << 20

// Per-connection limits of the line transport (stdio, Unix, TCP).
const (
	// MaxInFlight is how many requests of one connection may run at once. Further requests wait
	// unread in the socket (the client's writes block), so a client that pipelines thousands of
	// calls cannot make the hub hold thousands of results. A connection starts with a window of
	// one request that grows by one per small reply up to MaxInFlight, and falls back to one
	// after a reply above BigReply: large results (a 4 MiB file_read costs the hub tens of MiB
	// while it is encoded) are computed one at a time per connection.
	MaxInFlight = 8
	// BigReply is the reply size above which a connection's window falls back to one request.
	BigReply = 1 << 20
	// MaxQueuedReplyBytes is how many reply bytes of one connection may wait for the client to
	// read them. Past it the hub stops reading that connection's requests until the client
	// consumes its replies.
	MaxQueuedReplyBytes = 16 << 20
	// MaxBatch caps the members of one JSON-RPC batch (protocol 2025-03-26).
	MaxBatch = 32
)

// AuthMethod is the handshake that authenticates a TCP connection when a token is required. It is
// sent as the first line, as a notification (no reply) or a request (reply: an empty result):
//
//	{"jsonrpc":"2.0","method":"switchboard/auth","params":{"token":"<token>"}}
//
// Alternatively the first message may be the initialize request with the token in
// params._meta["switchboard/token"].
const AuthMethod = "switchboard/auth"

// RelayMethod is the notification `switchboard connect` sends before its client's first message:
//
//	{"jsonrpc":"2.0","method":"switchboard/relay","params":{"cwd":"/home/me/project"}}
//
// The directory the client started the relay in becomes the client's workspace where the
// hub's rules allow (policy.AutoGrant), so clients that send no MCP roots still work in their own
// project. It is read on socket connections only, before the first request; later ones are
// ignored. The directory is a claim like an MCP root, judged by the same rules, never a
// credential. The hello may also carry the client's own token (client_token, written into the
// client's entry by `switchboard clients connect`): that is a credential, checked like a client
// token over HTTP; the relay then sends the hello as a request and waits for its answer, and a
// token the hub does not know ends the connection (verbs.relayHello).
const RelayMethod = "switchboard/relay"

// ControlMethod is the request `switchboard` CLI verbs send the running hub to read or change
// its own state (upstream servers: list, approve, logs, …):
//
//	{"jsonrpc":"2.0","id":1,"method":"switchboard/control","params":{"action":"servers.list"}}
//
// It is answered on the Unix socket only (mode 0600: the user's own processes, which could as
// well edit the config file), never on TCP or HTTP, and never reaches the MCP server: clients
// cannot send it through their MCP session because it is not an MCP method.
const ControlMethod = "switchboard/control"

// ControlFunc answers a ControlMethod request: action names what to do, params are the
// request's params (including "action").
type ControlFunc func(ctx context.Context, action string, params json.RawMessage) (any, error)

// AuthMetaKey is the initialize params._meta key that may carry the token instead of AuthMethod.
const AuthMetaKey = "switchboard/token"

// CodeUnauthorized is the JSON-RPC error code for a missing or wrong TCP token.
const CodeUnauthorized = -32001

// batchProtocol is the only protocol revision whose sessions exchange JSON-RPC batches: 2025-03-26
// added them (receiving is a MUST), 2025-06-18 removed them.
const batchProtocol = "2025-03-26"

// lineOptions tune one line connection.
type lineOptions struct {
	// socket: the connection came from a listener (Unix, TCP). Its first line must be a JSON-RPC
	// message; anything else (an HTTP request line sent by a web page's fetch) closes the
	// connection before a single message is handed to the server.
	socket bool
	// token, when set, must be presented by the first message (AuthMethod or initialize _meta).
	token string
	// reject is told why a connection was closed unserved (for the log).
	reject func(reason string)
	// onRelay is told what a connect relay announced (RelayMethod) and the client its token
	// proved ("" when it presented none).
	onRelay func(h RelayHello, identity string)
	// clients verifies the client token a relay presents (nil: every client token is refused).
	clients ClientTokens
	// control answers ControlMethod requests (Unix socket only); nil refuses them.
	control ControlFunc
	// onInputClosed is called once when the client's input ends (EOF or a read error), before
	// the connection waits for the replies it still owes.
	onInputClosed func()
	// maxInFlight and maxQueued override MaxInFlight and MaxQueuedReplyBytes (tests).
	maxInFlight int
	maxQueued   int64
}

// lineTransport is the newline-delimited JSON transport for stdio, Unix sockets and TCP.
//
// We do not use go-sdk's IOTransport because of behaviours we cannot accept in a shared hub
// (the canaries in gosdk_workarounds_test.go fail once go-sdk changes them):
//   - when a client closes its input right after its last request, go-sdk tears the session down
//     on EOF and replies that are still being computed are dropped (go-sdk issue #1061, fix
//     proposed in PR #1067);
//   - one oversized or malformed line ends the whole connection instead of failing that message;
//   - it reads and dispatches requests as fast as they come, with no bound on the replies that
//     wait for a client that does not read them;
//   - request ids are squeezed into int64 or string (1.5 is answered as 1; go-sdk PRs #1178,
//     #1253): the call table every transport shares (clientCalls) gives such calls stand-ins;
//   - every message is decoded through a streaming decoder with a fresh 32 KiB buffer.
//
// go-sdk v1.8's IOTransport does split JSON-RPC batches (protocol 2025-03-26), but our own
// transport has to do it too, since go-sdk hands a custom Connection one message at a time.
//
// lineConn answers bad messages with a JSON-RPC error and keeps reading, bounds the work of each
// connection, echoes ids byte for byte, and on EOF (or drain) it holds Read back until every
// request it handed out has been answered, so every reply is delivered before the connection
// closes.
type lineTransport struct {
	r       io.ReadCloser
	w       io.Writer
	closeFn func() error
	maxSize int
	opts    lineOptions
	conn    *lineConn
}

func (t *lineTransport) Connect(context.Context) (sdk.Connection, error) {
	max := t.maxSize
	if max <= 0 {
		max = MaxMessageSize
	}
	o := t.opts
	if o.maxInFlight <= 0 {
		o.maxInFlight = MaxInFlight
	}
	if o.maxQueued <= 0 {
		o.maxQueued = MaxQueuedReplyBytes
	}
	c := &lineConn{
		opts:     o,
		w:        t.w,
		closeFn:  t.closeFn,
		incoming: make(chan lineMsg),
		closed:   make(chan struct{}),
		drain:    make(chan struct{}),
		inflight: map[string]*callState{},
		calls:    newClientCalls(""),
		wake:     make(chan struct{}, 1),
		window:   1,
	}
	t.conn = c
	go c.readLoop(t.r, max)
	return c, nil
}

type lineMsg struct {
	data     []byte
	tooLarge int // size read before giving up, when the line exceeded the cap
	err      error
}

// callState is one client request handed to the server and not yet answered.
type callState struct {
	call  *clientCall // the client's id, its stand-in, whether it was cancelled (c.calls)
	batch *batchReply // set when the request came in a batch
	// listen: a subscriptions/listen stream. It is answered only when it ends, so it never
	// counts as work owed: neither against the window nor as a reason to keep a closed or
	// draining connection open.
	listen bool
}

// batchReply collects the replies to one batch; they are written together as one array.
type batchReply struct {
	parts     [][]byte
	held      int // bytes in parts
	remaining int
}

// pendingMsg is a batch member waiting to be handed to the server.
type pendingMsg struct {
	msg   jsonrpc.Message
	wire  json.RawMessage
	alias string
	batch *batchReply
}

type lineConn struct {
	opts lineOptions

	writeMu sync.Mutex
	w       io.Writer
	closeFn func() error

	incoming chan lineMsg

	closeOnce sync.Once
	closed    chan struct{}
	drainOnce sync.Once
	drain     chan struct{}

	// Owned by the goroutine that calls Read.
	pending []pendingMsg
	seen    bool // a message has been read

	mu       sync.Mutex
	inflight map[string]*callState // client requests not yet answered, by the id the server sees
	queued   int64                 // reply bytes not yet taken by the client
	wake     chan struct{}         // signalled when inflight or queued shrink
	calls    *clientCalls          // the client's calls in flight by its ids (aliasing, cancellation)
	window   int                   // requests this connection may have running (1..maxInFlight)
	sawBig   bool                  // a reply above BigReply was written (memory worth returning at close)
	initKey  string                // id of the initialize request
	admitted bool                  // a request has been handed to the server
	protocol string                // protocol version the session negotiated
}

// readLoop splits the stream into lines without ever buffering more than max bytes of one line.
// It is owned by the connection and stops when the reader fails or the connection closes.
func (c *lineConn) readLoop(r io.Reader, max int) {
	br := bufio.NewReaderSize(r, 64<<10)
	send := func(m lineMsg) bool {
		select {
		case c.incoming <- m:
			return true
		case <-c.closed:
			return false
		}
	}
	for {
		buf, size, tooLarge, err := readLine(br, max)
		if tooLarge {
			if !send(lineMsg{data: buf, tooLarge: size}) {
				return
			}
		} else if line := bytes.TrimSpace(buf); len(line) > 0 {
			if !send(lineMsg{data: line}) {
				return
			}
		}
		if err != nil {
			send(lineMsg{err: err})
			return
		}
	}
}

// readLine reads one line. A line longer than max is consumed but only its first 4 KiB kept
// (it usually holds the request id, so the error can name it).
func readLine(br *bufio.Reader, max int) (buf []byte, size int, tooLarge bool, err error) {
	for {
		var frag []byte
		frag, err = br.ReadSlice('\n')
		size += len(frag)
		if !tooLarge {
			if size > max+1 { // +1: the newline itself does not count against the cap
				tooLarge = true
				if len(buf) < 4096 {
					buf = append(buf, frag[:min(len(frag), 4096-len(buf))]...)
				}
			} else {
				buf = append(buf, frag...)
			}
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return buf, size, tooLarge, err
		}
	}
}

func (c *lineConn) SessionID() string { return "" }

// errRejected ends a connection that was closed unserved (not JSON-RPC, or not authenticated).
var errRejected = errors.New("connection rejected")

func (c *lineConn) rejectConn(reason string) error {
	if c.opts.reject != nil {
		c.opts.reject(reason)
	}
	_ = c.Close()
	return fmt.Errorf("%w: %s", errRejected, reason)
}

// Read returns the next message. Oversized and unparsable lines are answered here and skipped.
func (c *lineConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		if len(c.pending) > 0 {
			p := c.pending[0]
			if c.batchFull(p) {
				// The batch's replies, which wait in memory until the whole batch is answered,
				// already passed the reply budget: the rest of it is refused, not run.
				c.pending = c.pending[1:]
				c.failBatchMember(p, fmt.Sprintf("the replies of this batch passed %d MiB before this request ran; send large requests one per line", c.opts.maxQueued>>20))
				continue
			}
			if err := c.admit(ctx, p.msg, p.wire, p.alias, p.batch); err != nil {
				return nil, err
			}
			c.pending = c.pending[1:]
			if c.batchFull(p) { // the replies that came in while it waited filled the budget
				c.mu.Lock()
				delete(c.inflight, idKey(p.msg.(*jsonrpc.Request).ID))
				c.mu.Unlock()
				c.failBatchMember(p, fmt.Sprintf("the replies of this batch passed %d MiB before this request ran; send large requests one per line", c.opts.maxQueued>>20))
				continue
			}
			return p.msg, nil
		}
		var m lineMsg
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-c.closed:
			return nil, io.EOF
		case <-c.drain:
			return nil, c.waitIdle(ctx, io.EOF)
		case m = <-c.incoming:
		}
		if m.err != nil {
			// The client closed its input (or it broke): the replies being computed still
			// go out, but only for EOFGrace. A client that is gone cannot be waiting for
			// them, and a client that merely closed its input after its last request gets
			// them in time unless the call is long (go-sdk #1061 dropped them all).
			err := m.err
			if errors.Is(err, io.EOF) {
				err = io.EOF
			}
			if c.opts.onInputClosed != nil {
				c.opts.onInputClosed()
			}
			return nil, c.waitIdleFor(ctx, err, EOFGrace)
		}
		first := !c.seen
		c.seen = true
		if first && c.opts.socket && (m.tooLarge > 0 || len(m.data) == 0 || m.data[0] != '{') {
			return nil, c.rejectConn(fmt.Sprintf("first line is not a JSON-RPC message (starts with %q)", prefix(m.data, 32)))
		}
		if m.tooLarge > 0 {
			c.replyError(rawIDFromPrefix(m.data), jsonrpc.CodeInvalidRequest,
				fmt.Sprintf("message of %d bytes exceeds the %d MiB limit; send smaller requests (for large files use offset/limit)", m.tooLarge, MaxMessageSize>>20))
			continue
		}
		if m.data[0] == '[' {
			if err := c.readBatch(ctx, m.data); err != nil {
				return nil, err
			}
			continue
		}
		d, err := c.decode(m.data)
		if err != nil {
			if first && c.opts.socket {
				return nil, c.rejectConn(fmt.Sprintf("first line is not a JSON-RPC message: %v", err))
			}
			c.replyError(rawIDFromPrefix(m.data), jsonrpc.CodeParseError,
				fmt.Sprintf("invalid JSON-RPC message: %v; send one JSON object per line", err))
			continue
		}
		// Above the framing, before go-sdk: the hub's own verbs (verbs.go).
		if consumed, err := c.verbs().handle(ctx, d, first); err != nil {
			return nil, err
		} else if consumed {
			continue
		}
		if err := c.admit(ctx, d.msg, d.wire, d.alias, nil); err != nil {
			return nil, err
		}
		return d.msg, nil
	}
}

func prefix(b []byte, n int) string {
	if len(b) > n {
		b = b[:n]
	}
	return string(b)
}

// admit registers a request before it is handed to the server, first waiting while the
// connection has MaxInFlight requests running or MaxQueuedReplyBytes of unread replies: the
// request stays unread meanwhile, and so does everything the client sends after it.
func (c *lineConn) admit(ctx context.Context, msg jsonrpc.Message, wire json.RawMessage, alias string, batch *batchReply) error {
	req, ok := msg.(*jsonrpc.Request)
	if !ok {
		return nil
	}
	if !req.IsCall() {
		if req.Method == "notifications/cancelled" {
			var call *clientCall
			if req.Params, call = c.calls.cancel("", req.Params); call != nil {
				c.signal() // a cancelled call no longer counts against the window
			}
		}
		return nil
	}
	for {
		c.mu.Lock()
		busy := c.active() >= min(c.window, c.opts.maxInFlight) || c.queued >= c.opts.maxQueued
		if !busy {
			key := idKey(req.ID)
			c.inflight[key] = &callState{call: c.calls.open("", wire, alias), batch: batch, listen: req.Method == "subscriptions/listen"}
			c.admitted = true
			if req.Method == "initialize" {
				c.initKey = key
			}
			c.mu.Unlock()
			return nil
		}
		c.mu.Unlock()
		select {
		case <-c.wake:
		case <-c.closed:
			return io.EOF
		case <-c.drain:
			return c.waitIdle(ctx, io.EOF)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// active counts the requests whose replies are still owed (callers hold c.mu).
func (c *lineConn) active() int {
	n := 0
	for _, st := range c.inflight {
		if !st.call.cancelled.Load() && !st.listen {
			n++
		}
	}
	return n
}

func (c *lineConn) signal() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// readBatch splits a JSON-RPC batch into messages for the server; the replies are collected and
// written as one array once every call of the batch is answered.
func (c *lineConn) readBatch(ctx context.Context, data []byte) error {
	// A batch right behind initialize waits for its answer, which says whether batches are on.
	for {
		c.mu.Lock()
		initPending := c.initKey != "" && c.inflight[c.initKey] != nil
		c.mu.Unlock()
		if !initPending {
			break
		}
		select {
		case <-c.wake:
		case <-c.closed:
			return io.EOF
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	c.mu.Lock()
	proto := c.protocol
	c.mu.Unlock()
	if proto != batchProtocol {
		if proto == "" {
			proto = "none yet"
		}
		c.replyError(nil, jsonrpc.CodeInvalidRequest, fmt.Sprintf("JSON-RPC batches are accepted only on sessions that negotiated protocol %s (this session: %s); send one message per line", batchProtocol, proto))
		return nil
	}
	var elems []json.RawMessage
	if err := json.Unmarshal(data, &elems); err != nil {
		c.replyError(nil, jsonrpc.CodeParseError, fmt.Sprintf("invalid JSON-RPC batch: %v", err))
		return nil
	}
	if len(elems) == 0 {
		c.replyError(nil, jsonrpc.CodeInvalidRequest, "empty JSON-RPC batch: send at least one message")
		return nil
	}
	if len(elems) > MaxBatch {
		c.replyError(nil, jsonrpc.CodeInvalidRequest, fmt.Sprintf("JSON-RPC batch of %d messages exceeds the limit of %d; split it", len(elems), MaxBatch))
		return nil
	}
	b := &batchReply{}
	for _, e := range elems {
		d, err := c.decode(e)
		if err == nil {
			if req, ok := d.msg.(*jsonrpc.Request); ok && req.Method == "initialize" {
				err = errors.New("initialize must not be part of a batch")
			}
		}
		if err != nil {
			part, _ := errorReply(rawIDFromPrefix(e), jsonrpc.CodeInvalidRequest, fmt.Sprintf("invalid JSON-RPC message in batch: %v", err))
			b.parts = append(b.parts, part)
			continue
		}
		p := pendingMsg{msg: d.msg, wire: d.wire, alias: d.alias}
		if req, ok := d.msg.(*jsonrpc.Request); ok && req.IsCall() {
			p.batch = b
			b.remaining++
		}
		c.pending = append(c.pending, p)
	}
	if b.remaining == 0 && len(b.parts) > 0 {
		_ = c.writeLine(joinBatch(b.parts))
	}
	return nil
}

// batchFull reports whether p is a call of a batch whose held replies passed the reply budget.
func (c *lineConn) batchFull(p pendingMsg) bool {
	if p.batch == nil { // only calls of a batch carry it
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return p.batch.held >= int(c.opts.maxQueued)
}

// failBatchMember answers a batch call with an error instead of running it.
func (c *lineConn) failBatchMember(p pendingMsg, msg string) {
	part, err := errorReply(p.wire, jsonrpc.CodeInternalError, msg)
	if err != nil {
		return
	}
	c.mu.Lock()
	b := p.batch
	b.parts = append(b.parts, part)
	b.held += len(part)
	b.remaining--
	done := b.remaining == 0
	c.mu.Unlock()
	if done {
		_ = c.writeLine(joinBatch(b.parts))
	}
}

func joinBatch(parts [][]byte) []byte {
	return append(append([]byte{'['}, bytes.Join(parts, []byte{','})...), ']')
}

// EOFGrace bounds how long a connection whose client closed its input keeps answering the
// requests it already handed to the server: a stdio hub whose client went away ends within a
// second, whatever is still running.
const EOFGrace = 750 * time.Millisecond

// waitIdle blocks until every request handed out has been answered, then returns err.
func (c *lineConn) waitIdle(ctx context.Context, err error) error { return c.waitIdleFor(ctx, err, 0) }

// waitIdleFor is waitIdle that gives up after limit (0: no limit).
func (c *lineConn) waitIdleFor(ctx context.Context, err error, limit time.Duration) error {
	var expired <-chan time.Time
	if limit > 0 {
		t := time.NewTimer(limit)
		defer t.Stop()
		expired = t.C
	}
	for {
		c.mu.Lock()
		n := c.active()
		c.mu.Unlock()
		if n == 0 {
			return err
		}
		select {
		case <-c.wake:
		case <-c.closed:
			return err
		case <-expired:
			return err
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (c *lineConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	resp, isResp := msg.(*jsonrpc.Response)
	var st callState
	var key string
	found := false
	if isResp {
		key = idKey(resp.ID)
		c.mu.Lock()
		if p := c.inflight[key]; p != nil {
			st, found = *p, true
		}
		c.mu.Unlock()
	}
	if !found {
		parts, err := encodeMessage(msg, nil)
		if err != nil {
			return fmt.Errorf("encode message: %w", err)
		}
		return c.writeLine(parts...)
	}
	if key == c.initKeyLocked() && resp.Error == nil {
		var r struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		if json.Unmarshal(resp.Result, &r) == nil {
			c.mu.Lock()
			c.protocol = r.ProtocolVersion
			c.mu.Unlock()
		}
	}
	var parts [][]byte
	var err error
	if !st.call.cancelled.Load() {
		wire := json.RawMessage(nil)
		if st.call.alias != "" {
			wire = st.call.wire
		}
		if parts, err = encodeMessage(msg, wire); err != nil {
			err = fmt.Errorf("encode message: %w", err)
		}
	}
	if st.batch != nil {
		c.mu.Lock()
		b := st.batch
		if parts != nil && err == nil {
			part := bytes.Join(parts, nil)
			b.parts = append(b.parts, part)
			b.held += len(part)
		}
		b.remaining--
		done := b.remaining == 0 && len(b.parts) > 0
		c.mu.Unlock()
		parts = nil
		if done {
			parts = [][]byte{joinBatch(b.parts)}
		}
	}
	if parts != nil && err == nil {
		err = c.writeLine(parts...)
	}
	// Forget the request only once its reply is written, so EOF and drain wait for delivery and
	// a client that does not read keeps its connection at its window.
	size := 0
	for _, p := range parts {
		size += len(p)
	}
	c.mu.Lock()
	if size > BigReply {
		c.window, c.sawBig = 1, true
	} else {
		c.window = min(c.window+1, c.opts.maxInFlight)
	}
	delete(c.inflight, key)
	c.signal()
	c.mu.Unlock()
	c.calls.close(st.call)
	return err
}

func (c *lineConn) initKeyLocked() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.initKey
}

var newline = []byte{'\n'}

// writeLine writes one message (its parts, then a newline) under the write lock, so concurrent
// writers never interleave. The parts go out with one writev on sockets, without being copied
// into one buffer first: a 4 MiB file_read reply is not duplicated on its way out.
func (c *lineConn) writeLine(parts ...[]byte) error {
	n := int64(1)
	for _, p := range parts {
		n += int64(len(p))
	}
	c.mu.Lock()
	c.queued += n
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		c.queued -= n
		c.signal()
		c.mu.Unlock()
	}()
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	select {
	case <-c.closed:
		return io.ErrClosedPipe
	default:
	}
	if _, vectored := c.w.(net.Conn); !vectored && len(parts) > 1 && n <= smallReply {
		// Not a socket (stdout): net.Buffers would issue one write per part, so a reply would
		// leave in four writes and reach the client in pieces. A small one is joined first.
		bp := replyBufs.Get().(*[]byte)
		b := (*bp)[:0]
		for _, p := range parts {
			b = append(b, p...)
		}
		b = append(b, '\n')
		_, err := c.w.Write(b)
		*bp = b
		replyBufs.Put(bp)
		return err
	}
	bufs := make(net.Buffers, 0, len(parts)+1)
	bufs = append(append(bufs, parts...), newline)
	_, err := bufs.WriteTo(c.w)
	return err
}

// smallReply is the largest reply writeLine joins into one buffer for a writer without writev.
const smallReply = 64 << 10

var replyBufs = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

// writeRaw writes a response with the given wire id and result or error.
func (c *lineConn) writeRaw(wire json.RawMessage, result []byte, e *jsonrpc.Error) {
	if len(wire) == 0 {
		wire = json.RawMessage("null")
	}
	reply := struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  json.RawMessage `json:"result,omitempty"`
		Error   *jsonrpc.Error  `json:"error,omitempty"`
	}{JSONRPC: "2.0", ID: wire, Result: result, Error: e}
	if data, err := json.Marshal(reply); err == nil {
		_ = c.writeLine(data)
	}
}

// encodeMessage frames a message. A successful response is framed around its already-encoded
// result: go-sdk has encoded and compacted the result once; jsonrpc.EncodeMessage would marshal it
// again, and encoding/json re-scans every byte of an embedded RawMessage, which for a file_read
// reply was the largest single cost of the call. The frame is returned in parts (head, result,
// tail) so the result is never copied. wire, when set, replaces the response's id with the id
// exactly as the client sent it.
func encodeMessage(msg jsonrpc.Message, wire json.RawMessage) ([][]byte, error) {
	resp, ok := msg.(*jsonrpc.Response)
	if !ok || !resp.ID.IsValid() {
		data, err := jsonrpc.EncodeMessage(msg)
		return [][]byte{data}, err
	}
	id := []byte(wire)
	if len(id) == 0 {
		var err error
		if id, err = json.Marshal(resp.ID.Raw()); err != nil {
			return nil, err
		}
	}
	if resp.Error != nil || len(resp.Result) == 0 {
		data, err := jsonrpc.EncodeMessage(msg)
		if err != nil || len(wire) == 0 {
			return [][]byte{data}, err
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(data, &m); err != nil {
			return nil, err
		}
		m["id"] = id
		data, err = json.Marshal(m)
		return [][]byte{data}, err
	}
	head := make([]byte, 0, len(id)+32)
	head = append(head, `{"jsonrpc":"2.0","id":`...)
	head = append(head, id...)
	head = append(head, `,"result":`...)
	return [][]byte{head, resp.Result, {'}'}}, nil
}

// errorReply encodes an error response. It is encoded here rather than with
// jsonrpc.EncodeMessage because that omits "id" when it is unknown, and JSON-RPC 2.0 §5 requires
// "id": null in that case.
func errorReply(wire json.RawMessage, code int64, msg string) ([]byte, error) {
	if len(wire) == 0 {
		wire = json.RawMessage("null")
	}
	reply := struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   struct {
			Code    int64  `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}{JSONRPC: "2.0", ID: wire}
	reply.Error.Code, reply.Error.Message = code, msg
	return json.Marshal(reply)
}

// replyError answers a message we could not hand to the server.
func (c *lineConn) replyError(wire json.RawMessage, code int64, msg string) {
	if data, err := errorReply(wire, code, msg); err == nil {
		_ = c.writeLine(data)
	}
}

// SawBigReplies reports whether the connection wrote a reply above BigReply.
func (c *lineConn) SawBigReplies() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sawBig
}

// Drain stops accepting new requests; Read returns EOF once in-flight calls are answered.
func (c *lineConn) Drain() { c.drainOnce.Do(func() { close(c.drain) }) }

func (c *lineConn) Close() error {
	var err error
	c.closeOnce.Do(func() {
		close(c.closed)
		if c.closeFn != nil {
			err = c.closeFn()
		}
	})
	return err
}

func idKey(id jsonrpc.ID) string {
	switch v := id.Raw().(type) {
	case string:
		return "string:" + v
	case int64:
		return "int:" + strconv.FormatInt(v, 10)
	}
	return fmt.Sprintf("%T:%v", id.Raw(), id.Raw())
}

var idPattern = regexp.MustCompile(`"id"\s*:\s*("(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)`)

// rawIDFromPrefix finds the request id in the first bytes of a message we could not parse, so the
// client can match the error to its request; otherwise the id is null, as JSON-RPC prescribes.
func rawIDFromPrefix(b []byte) json.RawMessage {
	m := idPattern.FindSubmatch(b)
	if m == nil || !json.Valid(m[1]) {
		return nil
	}
	return json.RawMessage(bytes.Clone(m[1]))
}

// wireMessage is one JSON-RPC 2.0 message as it arrives.
type wireMessage struct {
	Version string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  *string         `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *jsonrpc.Error  `json:"error,omitempty"`
}

// parseRequest is json.Unmarshal into a wireMessage for the common message, a request or
// notification of plain keys: its members are sliced out of data in place (data is owned by the
// caller and not reused) instead of copied, and nothing is decoded twice. ok is false for
// anything else (responses, null members, a method with escapes or non-ASCII bytes, unknown or
// differently cased keys, invalid JSON), which is left to encoding/json, so errors and edge
// cases are unchanged (TestParseRequestMatchesUnmarshal).
func parseRequest(data []byte) (w wireMessage, ok bool) {
	simple := true
	ok = jsonobj.Members(data, func(k, v []byte) {
		if string(v) == "null" {
			simple = false
			return
		}
		switch string(k) {
		case "jsonrpc":
			if string(v) != `"2.0"` {
				simple = false
			}
			w.Version = "2.0"
		case "id":
			w.ID = v
		case "method":
			if len(v) < 2 || v[0] != '"' {
				simple = false
				return
			}
			for _, c := range v[1 : len(v)-1] {
				if c < 0x20 || c >= 0x80 || c == '\\' || c == '"' {
					simple = false
					return
				}
			}
			m := string(v[1 : len(v)-1])
			w.Method = &m
		case "params":
			w.Params = v
		default:
			simple = false
		}
	})
	return w, ok && simple && w.Method != nil
}

// decoded is one message with its id as the client wrote it.
type decoded struct {
	msg   jsonrpc.Message
	wire  json.RawMessage
	alias string // the stand-in string id the server gets (needsAlias); "" when none
}

// decode is jsonrpc.DecodeMessage with encoding/json: go-sdk v1.8.0 decodes through a streaming
// decoder that allocates a 32 KiB buffer per call (twice per message), which made up a quarter of
// the garbage of a trivial tool call. It also keeps the id as sent.
func (c *lineConn) decode(data []byte) (decoded, error) {
	w, ok := parseRequest(data)
	if !ok {
		w = wireMessage{}
		if err := json.Unmarshal(data, &w); err != nil {
			return decoded{}, fmt.Errorf("unmarshaling jsonrpc message: %w", err)
		}
	}
	if w.Version != "2.0" {
		return decoded{}, fmt.Errorf("invalid message version tag %q; expected \"2.0\"", w.Version)
	}
	var id jsonrpc.ID
	alias := false // the server gets a stand-in (needsAlias, for a request)
	wire := bytes.TrimSpace(w.ID)
	switch {
	case len(wire) == 0 || string(wire) == "null":
		wire = nil
	case wire[0] == '"':
		var s string
		if err := json.Unmarshal(wire, &s); err != nil {
			return decoded{}, fmt.Errorf("id: %v", err)
		}
		if strings.HasPrefix(s, aliasPrefix) && w.Method != nil {
			alias = true
		} else {
			id, _ = jsonrpc.MakeID(s)
		}
	case wire[0] == '-' || (wire[0] >= '0' && wire[0] <= '9'):
		n, err := strconv.ParseInt(string(wire), 10, 64)
		switch {
		case err == nil && intLiteral.Match(wire) && string(wire) != "-0" && n >= -1<<53 && n <= 1<<53:
			id, _ = jsonrpc.MakeID(float64(n)) // exact: |n| <= 2^53
		case w.Method != nil:
			alias = true
		default: // a reply to one of our requests: our ids are integers
			f, ferr := strconv.ParseFloat(string(wire), 64)
			if ferr != nil {
				return decoded{}, fmt.Errorf("id: %s is not an id this server sent", wire)
			}
			id, _ = jsonrpc.MakeID(f)
		}
	default:
		return decoded{}, fmt.Errorf("id: must be a string or a number, got %s", prefix(wire, 32))
	}
	standIn := ""
	if alias {
		standIn = c.calls.standIn()
		id, _ = jsonrpc.MakeID(standIn)
	}
	if w.Method != nil {
		return decoded{msg: &jsonrpc.Request{ID: id, Method: *w.Method, Params: w.Params}, wire: json.RawMessage(wire), alias: standIn}, nil
	}
	if !id.IsValid() {
		return decoded{}, fmt.Errorf("message without method and without id: neither a request nor a response")
	}
	resp := &jsonrpc.Response{ID: id, Result: w.Result}
	if w.Error != nil {
		resp.Error = w.Error
	}
	return decoded{msg: resp, wire: json.RawMessage(wire)}, nil
}

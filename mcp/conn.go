package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxMessageSize caps one inbound JSON-RPC message on every transport.
const MaxMessageSize = 10 << 20

// lineTransport is the newline-delimited JSON transport for stdio, Unix sockets and TCP.
//
// We do not use go-sdk's IOTransport because of two behaviours we cannot accept in a shared hub:
//   - when a client closes its input right after its last request, go-sdk tears the session down
//     on EOF and replies that are still being computed are dropped (go-sdk issue #1061);
//   - one oversized or malformed line ends the whole connection instead of failing that message.
//
// lineConn answers such messages with a JSON-RPC error and keeps reading, and on EOF (or drain)
// it holds Read back until every request it handed out has been answered, so every reply is
// delivered before the connection closes.
type lineTransport struct {
	r       io.ReadCloser
	w       io.Writer
	closeFn func() error
	maxSize int
	conn    *lineConn
}

func (t *lineTransport) Connect(context.Context) (sdk.Connection, error) {
	max := t.maxSize
	if max <= 0 {
		max = MaxMessageSize
	}
	c := &lineConn{
		w:        t.w,
		closeFn:  t.closeFn,
		incoming: make(chan lineMsg),
		closed:   make(chan struct{}),
		drain:    make(chan struct{}),
		inflight: map[string]bool{},
		idle:     make(chan struct{}, 1),
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

type lineConn struct {
	writeMu sync.Mutex
	w       io.Writer
	closeFn func() error

	incoming chan lineMsg

	closeOnce sync.Once
	closed    chan struct{}
	drainOnce sync.Once
	drain     chan struct{}

	mu       sync.Mutex
	inflight map[string]bool // IDs of client requests not yet answered; false once cancelled
	idle     chan struct{}   // signalled when inflight becomes empty
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
		var buf []byte
		size := 0
		tooLarge := false
		var err error
		for {
			var frag []byte
			frag, err = br.ReadSlice('\n')
			size += len(frag)
			if !tooLarge {
				if size > max+1 { // +1: the newline itself does not count against the cap
					tooLarge = true
					// Keep a prefix: it usually holds the request id, so the error can name it.
					if len(buf) < 4096 {
						buf = append(buf, frag[:min(len(frag), 4096-len(buf))]...)
					}
				} else {
					buf = append(buf, frag...)
				}
			}
			if err != bufio.ErrBufferFull {
				break
			}
		}
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

func (c *lineConn) SessionID() string { return "" }

// Read returns the next message. Oversized and unparsable lines are answered here and skipped.
func (c *lineConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-c.closed:
			return nil, io.EOF
		case <-c.drain:
			return nil, c.waitIdle(ctx, io.EOF)
		case m := <-c.incoming:
			if m.err != nil {
				if errors.Is(m.err, io.EOF) {
					return nil, c.waitIdle(ctx, io.EOF)
				}
				return nil, c.waitIdle(ctx, m.err)
			}
			if m.tooLarge > 0 {
				c.replyError(ctx, idFromPrefix(m.data), jsonrpc.CodeInvalidRequest,
					fmt.Sprintf("message of %d bytes exceeds the %d MiB limit; send smaller requests (for large files use offset/limit)", m.tooLarge, MaxMessageSize>>20))
				continue
			}
			msg, err := decodeMessage(m.data)
			if err != nil {
				c.replyError(ctx, idFromPrefix(m.data), jsonrpc.CodeParseError,
					fmt.Sprintf("invalid JSON-RPC message: %v; send one JSON object per line", err))
				continue
			}
			if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
				c.mu.Lock()
				c.inflight[idKey(req.ID)] = true
				c.mu.Unlock()
			} else if ok && req.Method == "notifications/cancelled" {
				c.markCancelled(req.Params)
			}
			return msg, nil
		}
	}
}

// waitIdle blocks until every request handed out has been answered, then returns err.
func (c *lineConn) waitIdle(ctx context.Context, err error) error {
	for {
		c.mu.Lock()
		n := len(c.inflight)
		c.mu.Unlock()
		if n == 0 {
			return err
		}
		select {
		case <-c.idle:
		case <-c.closed:
			return err
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (c *lineConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	resp, isResp := msg.(*jsonrpc.Response)
	if isResp {
		c.mu.Lock()
		live, known := c.inflight[idKey(resp.ID)]
		c.mu.Unlock()
		if known && !live {
			// The client cancelled this request: the spec says no reply is sent (go-sdk
			// cancels the handler's context but still writes its result).
			c.answered(resp.ID)
			return nil
		}
	}
	data, err := encodeMessage(msg)
	if err != nil {
		return fmt.Errorf("encode message: %w", err)
	}
	if err := c.writeLine(data); err != nil {
		return err
	}
	if isResp {
		c.answered(resp.ID)
	}
	return nil
}

// markCancelled records a notifications/cancelled for a request still in flight, so its reply is
// dropped.
func (c *lineConn) markCancelled(params json.RawMessage) {
	var p struct {
		RequestID any `json:"requestId"`
	}
	if json.Unmarshal(params, &p) != nil {
		return
	}
	id, err := jsonrpc.MakeID(p.RequestID)
	if err != nil || !id.IsValid() {
		return
	}
	c.mu.Lock()
	if _, ok := c.inflight[idKey(id)]; ok {
		c.inflight[idKey(id)] = false
	}
	c.mu.Unlock()
}

// answered retires a request id and wakes waitIdle when none is left.
func (c *lineConn) answered(id jsonrpc.ID) {
	c.mu.Lock()
	delete(c.inflight, idKey(id))
	if len(c.inflight) == 0 {
		select {
		case c.idle <- struct{}{}:
		default:
		}
	}
	c.mu.Unlock()
}

func (c *lineConn) writeLine(data []byte) error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	select {
	case <-c.closed:
		return io.ErrClosedPipe
	default:
	}
	// One write per message: data plus newline, so concurrent writers never interleave.
	buf := make([]byte, 0, len(data)+1)
	buf = append(append(buf, data...), '\n')
	_, err := c.w.Write(buf)
	return err
}

// encodeMessage frames a successful response around its already-encoded result. go-sdk has
// encoded and compacted the result once; jsonrpc.EncodeMessage would marshal it again, and
// encoding/json re-scans every byte of an embedded RawMessage, which for a file_read reply was
// the largest single cost of the call. Everything else goes through jsonrpc.EncodeMessage.
func encodeMessage(msg jsonrpc.Message) ([]byte, error) {
	resp, ok := msg.(*jsonrpc.Response)
	if !ok || resp.Error != nil || len(resp.Result) == 0 || !resp.ID.IsValid() {
		return jsonrpc.EncodeMessage(msg)
	}
	id, err := json.Marshal(resp.ID.Raw())
	if err != nil {
		return nil, err
	}
	buf := make([]byte, 0, len(resp.Result)+len(id)+32)
	buf = append(buf, `{"jsonrpc":"2.0","id":`...)
	buf = append(buf, id...)
	buf = append(buf, `,"result":`...)
	buf = append(buf, resp.Result...)
	return append(buf, '}'), nil
}

// replyError answers a message we could not hand to the server. It is encoded here rather than
// with jsonrpc.EncodeMessage because that omits "id" when it is unknown, and JSON-RPC 2.0 §5
// requires "id": null in that case.
func (c *lineConn) replyError(ctx context.Context, id jsonrpc.ID, code int64, msg string) {
	reply := struct {
		JSONRPC string `json:"jsonrpc"`
		ID      any    `json:"id"`
		Error   struct {
			Code    int64  `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}{JSONRPC: "2.0", ID: id.Raw()}
	reply.Error.Code, reply.Error.Message = code, msg
	data, err := json.Marshal(reply)
	if err != nil {
		return
	}
	_ = c.writeLine(data)
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

func idKey(id jsonrpc.ID) string { return fmt.Sprintf("%T:%v", id.Raw(), id.Raw()) }

var idPattern = regexp.MustCompile(`"id"\s*:\s*("(?:[^"\\]|\\.)*"|-?\d+)`)

// idFromPrefix finds the request id in the first bytes of a message we could not parse, so the
// client can match the error to its request; otherwise the id is null, as JSON-RPC prescribes.
func idFromPrefix(b []byte) jsonrpc.ID {
	m := idPattern.FindSubmatch(b)
	if m == nil {
		return jsonrpc.ID{}
	}
	raw := string(m[1])
	if raw[0] == '"' {
		if id, err := jsonrpc.MakeID(raw[1 : len(raw)-1]); err == nil {
			return id
		}
		return jsonrpc.ID{}
	}
	var n int64
	if _, err := fmt.Sscan(raw, &n); err == nil {
		if id, err := jsonrpc.MakeID(float64(n)); err == nil {
			return id
		}
	}
	return jsonrpc.ID{}
}

// wireMessage is one JSON-RPC 2.0 message as it arrives.
type wireMessage struct {
	Version string          `json:"jsonrpc"`
	ID      any             `json:"id,omitempty"`
	Method  *string         `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *jsonrpc.Error  `json:"error,omitempty"`
}

// decodeMessage is jsonrpc.DecodeMessage with encoding/json: go-sdk v1.8.0 decodes through a
// streaming decoder that allocates a 32 KiB buffer per call (twice per message), which made up
// a quarter of the garbage of a trivial tool call.
func decodeMessage(data []byte) (jsonrpc.Message, error) {
	var w wireMessage
	if err := json.Unmarshal(data, &w); err != nil {
		return nil, fmt.Errorf("unmarshaling jsonrpc message: %w", err)
	}
	if w.Version != "2.0" {
		return nil, fmt.Errorf("invalid message version tag %q; expected \"2.0\"", w.Version)
	}
	id, err := jsonrpc.MakeID(w.ID)
	if err != nil {
		return nil, err
	}
	if w.Method != nil {
		return &jsonrpc.Request{ID: id, Method: *w.Method, Params: w.Params}, nil
	}
	if !id.IsValid() {
		return nil, fmt.Errorf("message without method and without id: neither a request nor a response")
	}
	resp := &jsonrpc.Response{ID: id, Result: w.Result}
	if w.Error != nil {
		resp.Error = w.Error
	}
	return resp, nil
}

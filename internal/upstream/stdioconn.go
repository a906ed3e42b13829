package upstream

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/internal/jsonobj"
)

// maxStdioMessage bounds one message from a server's stdout, as go-sdk's IOTransport does
// (sdk.DefaultMaxLineLength): a server that never ends a line cannot make the hub buffer forever.
const maxStdioMessage = sdk.DefaultMaxLineLength

// directIDPrefix starts the ids of the hub's direct tools/call requests (stdioConn.call). go-sdk's
// client numbers its requests, so a string id with this prefix is never one of its own.
const directIDPrefix = "switchboard-direct-"

// stdioTransport is the client side of the MCP stdio transport to an upstream server's pipes,
// in place of go-sdk's IOTransport, for speed: a proxied tool call is the hub's hottest upstream
// path, and go-sdk v1.8.0 decodes every message from a server three times, each through a
// streaming decoder that allocates a 32 KiB buffer (the framing, readBatch's try as a batch,
// then as a message), then the result twice more (CallToolResult). Here a message is one line
// (the stdio transport's framing), decoded once, and tools/call goes around go-sdk's client
// session (stdioConn.call): its result bytes are read once into the CallToolResult the hub
// serves.
type stdioTransport struct {
	r io.ReadCloser
	w io.WriteCloser
	// junk is told each stdout line that is not JSON-RPC (a server printing its logs to stdout):
	// it is skipped, not taken as the end of the connection.
	junk func(line string)
	// max bounds one message; 0 is maxStdioMessage.
	max int

	conn atomic.Pointer[stdioConn] // set by Connect
}

// Connect implements sdk.Transport. It starts the reader, which ends with the pipe.
func (t *stdioTransport) Connect(context.Context) (sdk.Connection, error) {
	max := t.max
	if max <= 0 {
		max = maxStdioMessage
	}
	c := &stdioConn{
		max:      max,
		w:        t.w,
		r:        t.r,
		junk:     t.junk,
		incoming: make(chan jsonrpc.Message, 16),
		waiting:  map[string]chan directReply{},
		closed:   make(chan struct{}),
		done:     make(chan struct{}),
	}
	t.conn.Store(c)
	go c.readLoop()
	return c, nil
}

// stdioConn is one connection to a server over its stdin and stdout. go-sdk's client session
// reads every message except the replies to direct calls, which go to their callers.
type stdioConn struct {
	r    io.ReadCloser
	w    io.WriteCloser
	junk func(string)
	max  int

	incoming chan jsonrpc.Message // to Read; closed when the reader ends
	readErr  error                // why the reader ended; read after done is closed

	writeMu sync.Mutex

	mu      sync.Mutex
	waiting map[string]chan directReply // direct calls in flight, by id
	nextID  uint64

	closeOnce sync.Once
	closed    chan struct{}
	done      chan struct{} // closed when the reader has ended
}

// directReply is the answer to a direct call: its result or its error member, as sent.
type directReply struct {
	result json.RawMessage
	err    json.RawMessage
}

// SessionID implements sdk.Connection: the stdio transport has no session id.
func (c *stdioConn) SessionID() string { return "" }

// Read implements sdk.Connection.
func (c *stdioConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case m, ok := <-c.incoming:
		if !ok {
			if c.readErr != nil {
				return nil, c.readErr
			}
			return nil, io.EOF
		}
		return m, nil
	}
}

// Write implements sdk.Connection: one message, one line.
func (c *stdioConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return fmt.Errorf("marshaling message: %w", err)
	}
	return c.writeLine(data)
}

func (c *stdioConn) writeLine(parts ...[]byte) error {
	n := 1
	for _, p := range parts {
		n += len(p)
	}
	line := make([]byte, 0, n)
	for _, p := range parts {
		line = append(line, p...)
	}
	line = append(line, '\n')
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	select {
	case <-c.closed:
		return sdk.ErrConnectionClosed
	default:
	}
	_, err := c.w.Write(line)
	return err
}

// Close implements sdk.Connection: both pipes are closed (EOF on its stdin is how a stdio
// server is told to exit) and direct calls in flight end with ErrConnectionClosed.
func (c *stdioConn) Close() error {
	var err error
	c.closeOnce.Do(func() {
		close(c.closed)
		err = errors.Join(c.w.Close(), c.r.Close())
	})
	return err
}

// readLoop reads the server's stdout until it ends: a direct call's reply goes to its caller,
// anything else to Read.
func (c *stdioConn) readLoop() {
	defer close(c.done)
	defer close(c.incoming)
	br := bufio.NewReaderSize(c.r, 64<<10)
	var pending []byte // a message spread over lines (pretty-printed): not the transport's framing, but tolerated
	for {
		line, err := readLine(br, c.max-len(pending))
		if err != nil {
			switch {
			case errors.Is(err, errTooLarge):
				c.readErr = fmt.Errorf("a message from the server is larger than %d bytes", c.max)
			case !errors.Is(err, io.EOF):
				c.readErr = err
			}
			return
		}
		if pending != nil {
			if t := bytes.TrimSpace(line); len(t) > 0 && (t[0] == '{' || t[0] == '[') && json.Valid(t) {
				// A whole message on its own line: what was held back was not the start of
				// one, but a line of the server's own that happens to start like JSON.
				c.logJunk(pending)
			} else {
				line = append(pending, line...)
			}
			pending = nil
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		if line[0] != '{' && line[0] != '[' {
			c.logJunk(line)
			continue
		}
		if c.direct(line) {
			continue
		}
		msgs, err := decodeLine(line)
		if err != nil {
			switch {
			case !json.Valid(line):
				pending = append(line, '\n') // perhaps the rest follows on the next lines
				continue
			case !bytes.Contains(line, []byte(`"jsonrpc"`)):
				c.logJunk(line) // JSON, but not JSON-RPC: a server logging JSON lines to stdout
				continue
			}
			c.readErr = fmt.Errorf("server sent an invalid JSON-RPC message: %w", err)
			return
		}
		for _, m := range msgs {
			select {
			case c.incoming <- m:
			case <-c.closed:
				return
			}
		}
	}
}

var errTooLarge = errors.New("message too large")

// logJunk tells the transport's owner of output that is not a message.
func (c *stdioConn) logJunk(b []byte) {
	if c.junk != nil {
		c.junk(string(bytes.TrimSpace(b)))
	}
}

// readLine reads one line of at most max bytes (without its newline).
func readLine(br *bufio.Reader, max int) ([]byte, error) {
	var line []byte
	for {
		frag, err := br.ReadSlice('\n')
		if len(line)+len(frag) > max {
			return nil, errTooLarge
		}
		switch {
		case err == nil:
			if line == nil {
				return bytes.Clone(frag[:len(frag)-1]), nil
			}
			return append(line, frag[:len(frag)-1]...), nil
		case errors.Is(err, bufio.ErrBufferFull):
			line = append(line, frag...)
		default:
			if len(line)+len(frag) > 0 && errors.Is(err, io.EOF) {
				return append(line, frag...), nil // a last message without its newline
			}
			return nil, err
		}
	}
}

// decodeLine decodes one line: a message, or a batch of them.
func decodeLine(line []byte) ([]jsonrpc.Message, error) {
	if line[0] != '[' {
		m, err := jsonrpc.DecodeMessage(fillInputRequestParams(line))
		if err != nil {
			return nil, err
		}
		return []jsonrpc.Message{m}, nil
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(line, &raws); err != nil {
		return nil, err
	}
	if len(raws) == 0 {
		return nil, errors.New("empty batch")
	}
	msgs := make([]jsonrpc.Message, 0, len(raws))
	for _, r := range raws {
		m, err := jsonrpc.DecodeMessage(fillInputRequestParams(r))
		if err != nil {
			return nil, err
		}
		msgs = append(msgs, m)
	}
	return msgs, nil
}

// direct hands a reply to a direct call to its caller and reports whether line was one.
func (c *stdioConn) direct(line []byte) bool {
	if !bytes.Contains(line, []byte(directIDPrefix)) {
		return false
	}
	var id string
	var reply directReply
	isResponse := true
	ok := jsonobj.Members(line, func(k, v []byte) {
		switch string(k) {
		case "id":
			if len(v) > 2 && v[0] == '"' && bytes.IndexByte(v, '\\') < 0 {
				id = string(v[1 : len(v)-1])
			}
		case "result":
			reply.result = v
		case "error":
			reply.err = v
		case "method":
			isResponse = false
		}
	})
	if !ok || !isResponse || id == "" {
		return false
	}
	c.mu.Lock()
	ch, found := c.waiting[id]
	delete(c.waiting, id)
	c.mu.Unlock()
	if !found {
		// The reply to a call that was cancelled and forgotten: dropped here, as go-sdk drops
		// a reply it did not wait for.
		return strings.HasPrefix(id, directIDPrefix)
	}
	ch <- reply // buffered
	return true
}

// call sends one request on the connection outside go-sdk's client session and returns its
// result's bytes. When ctx ends first, the server is told (notifications/cancelled) and its
// reply, if it comes, is dropped.
func (c *stdioConn) call(ctx context.Context, method string, params []byte) (json.RawMessage, error) {
	ch := make(chan directReply, 1)
	c.mu.Lock()
	c.nextID++
	id := directIDPrefix + strconv.FormatUint(c.nextID, 10)
	c.waiting[id] = ch
	c.mu.Unlock()
	forget := func() {
		c.mu.Lock()
		delete(c.waiting, id)
		c.mu.Unlock()
	}
	quoted := strconv.AppendQuote(nil, id)
	if err := c.writeLine([]byte(`{"jsonrpc":"2.0","id":`), quoted, []byte(`,"method":`), strconv.AppendQuote(nil, method), []byte(`,"params":`), params, []byte(`}`)); err != nil {
		forget()
		return nil, fmt.Errorf("%w: %v", sdk.ErrConnectionClosed, err)
	}
	select {
	case r := <-ch:
		return r.decode()
	case <-ctx.Done():
		forget()
		reason, _ := json.Marshal(ctx.Err().Error())
		_ = c.writeLine([]byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":`), quoted, []byte(`,"reason":`), reason, []byte(`}}`))
		return nil, ctx.Err()
	case <-c.done:
	case <-c.closed:
	}
	forget()
	select {
	case r := <-ch: // the reply came just before the end
		return r.decode()
	default:
		return nil, sdk.ErrConnectionClosed
	}
}

func (r directReply) decode() (json.RawMessage, error) {
	if r.err != nil {
		var e jsonrpc.Error
		if err := json.Unmarshal(r.err, &e); err != nil {
			return nil, fmt.Errorf("the server's error reply does not parse: %w", err)
		}
		return nil, &e
	}
	if r.result == nil {
		return nil, errors.New("the server's reply has neither result nor error")
	}
	return r.result, nil
}

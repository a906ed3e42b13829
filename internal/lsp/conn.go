package lsp

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
)

// maxMessageBytes bounds one message from a server: a workspace's diagnostics or a large
// document's outline are megabytes at most; a bigger Content-Length is a broken stream.
const maxMessageBytes = 256 << 20

// conn is JSON-RPC 2.0 over a language server's standard streams, framed by Content-Length
// headers. It is the hub's own rather than a library's because a language server's answers are
// large (the references of a busy symbol, a file's outline) and on the path of every code_*
// call: each message is decoded once, into its members with the result left raw, and the
// result once more into what the caller asked for. A general JSON-RPC library decoded each
// answer four times over (message kind, then the message, then the result twice), a third of
// the hub's own time on a 50-reference answer.
type conn struct {
	rwc    io.ReadWriteCloser
	handle func(method string, params json.RawMessage, notif bool) (any, error)

	writeMu sync.Mutex

	mu      sync.Mutex
	pending map[uint64]chan *wireMessage
	closed  bool

	done chan struct{} // closed when the read loop ends
}

// wireMessage is any message, as read: a request or notification (Method), or a response.
type wireMessage struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  *ResponseError  `json:"error,omitempty"`
}

type outgoingRequest struct {
	JSONRPC string  `json:"jsonrpc"`
	ID      *uint64 `json:"id,omitempty"`
	Method  string  `json:"method"`
	Params  any     `json:"params,omitempty"`
}

type outgoingResult struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result"`
}

type outgoingError struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   *ResponseError  `json:"error"`
}

// ResponseError is an error a server answered a request with.
type ResponseError struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *ResponseError) Error() string {
	return fmt.Sprintf("the language server answered error %d: %s", e.Code, e.Message)
}

// codeMethodNotFound is JSON-RPC's "method not found".
const codeMethodNotFound = -32601

// newConn starts reading rwc. handle answers the server's requests and takes its notifications,
// in the order they arrive, on the read loop (it must not block on the server). The read loop
// is the conn's: it ends when the stream does, or at Close.
func newConn(rwc io.ReadWriteCloser, handle func(method string, params json.RawMessage, notif bool) (any, error)) *conn {
	c := &conn{rwc: rwc, handle: handle, pending: map[uint64]chan *wireMessage{}, done: make(chan struct{})}
	go c.read()
	return c
}

// Done is closed when the connection has ended.
func (c *conn) Done() <-chan struct{} { return c.done }

// Close ends the connection: calls waiting for an answer return ErrClosed.
func (c *conn) Close() error {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	return c.rwc.Close()
}

// Call sends request method with id and waits for its answer, decoded into result (nil:
// discarded; a *json.RawMessage gets the raw result). It returns ctx's error when ctx ends
// first; telling the server to stop is the caller's ($/cancelRequest).
func (c *conn) Call(ctx context.Context, id uint64, method string, params, result any) error {
	ch := make(chan *wireMessage, 1)
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return ErrClosed
	}
	c.pending[id] = ch
	c.mu.Unlock()
	forget := func() {
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
	}
	if err := c.write(outgoingRequest{JSONRPC: "2.0", ID: &id, Method: method, Params: params}); err != nil {
		forget()
		return err
	}
	var m *wireMessage
	select {
	case m = <-ch:
	case <-ctx.Done():
		forget()
		return ctx.Err()
	case <-c.done:
		select { // an answer read just before the end still counts
		case m = <-ch:
		default:
			return ErrClosed
		}
	}
	if m.Error != nil {
		return m.Error
	}
	switch r := result.(type) {
	case nil:
		return nil
	case *json.RawMessage:
		*r = m.Result
		return nil
	}
	if len(m.Result) == 0 {
		return errors.New("the language server's answer has no result")
	}
	return json.Unmarshal(m.Result, result)
}

// Notify sends notification method.
func (c *conn) Notify(method string, params any) error {
	return c.write(outgoingRequest{JSONRPC: "2.0", Method: method, Params: params})
}

// write sends one message with its header in one write, so that messages never interleave.
func (c *conn) write(msg any) error {
	body, err := json.Marshal(msg)
	if err != nil {
		return fmt.Errorf("encode the message: %w", err)
	}
	frame := make([]byte, 0, len(body)+32)
	frame = append(frame, "Content-Length: "...)
	frame = strconv.AppendInt(frame, int64(len(body)), 10)
	frame = append(frame, "\r\n\r\n"...)
	frame = append(frame, body...)
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	select {
	case <-c.done:
		return ErrClosed
	default:
	}
	if _, err := c.rwc.Write(frame); err != nil {
		c.mu.Lock()
		closed := c.closed
		c.mu.Unlock()
		if closed {
			return ErrClosed
		}
		return fmt.Errorf("write to the language server: %w", err)
	}
	return nil
}

// read is the read loop: one message at a time, answers to their callers, the server's
// requests and notifications to handle.
func (c *conn) read() {
	defer func() {
		c.mu.Lock()
		c.closed = true
		c.pending = map[uint64]chan *wireMessage{}
		c.mu.Unlock()
		close(c.done)
		_ = c.rwc.Close()
	}()
	r := bufio.NewReaderSize(c.rwc, 64<<10)
	var body []byte
	for {
		n, err := readHeader(r)
		if err != nil {
			return
		}
		if cap(body) < n {
			body = make([]byte, n)
		}
		body = body[:n]
		if _, err := io.ReadFull(r, body); err != nil {
			return
		}
		// Unmarshal copies what it keeps (strings, raw members), so body is reused.
		var m wireMessage
		if err := json.Unmarshal(body, &m); err != nil {
			continue // not JSON-RPC: skipped, as the next frame may be fine
		}
		if m.Method != "" {
			c.serve(&m)
			continue
		}
		id, err := strconv.ParseUint(string(m.ID), 10, 64)
		if err != nil {
			continue // an answer to no request of ours
		}
		c.mu.Lock()
		ch, ok := c.pending[id]
		delete(c.pending, id)
		c.mu.Unlock()
		if ok {
			ch <- &m
		}
	}
}

// serve hands a server's request or notification to handle and answers a request.
func (c *conn) serve(m *wireMessage) {
	notif := len(m.ID) == 0 || string(m.ID) == "null"
	res, err := c.handle(m.Method, m.Params, notif)
	if notif {
		return
	}
	if err != nil {
		var re *ResponseError
		if !errors.As(err, &re) {
			re = &ResponseError{Code: -32603, Message: err.Error()}
		}
		_ = c.write(outgoingError{JSONRPC: "2.0", ID: m.ID, Error: re})
		return
	}
	_ = c.write(outgoingResult{JSONRPC: "2.0", ID: m.ID, Result: res})
}

// readHeader reads a message's header lines and returns its Content-Length.
func readHeader(r *bufio.Reader) (int, error) {
	n := -1
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return 0, err
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			if n < 0 {
				return 0, errors.New("a message without Content-Length")
			}
			return n, nil
		}
		name, value, ok := strings.Cut(line, ":")
		if ok && strings.EqualFold(strings.TrimSpace(name), "Content-Length") {
			v, err := strconv.Atoi(strings.TrimSpace(value))
			if err != nil || v < 0 || v > maxMessageBytes {
				return 0, fmt.Errorf("a bad Content-Length %q", value)
			}
			n = v
		}
	}
}

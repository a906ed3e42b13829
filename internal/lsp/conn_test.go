package lsp

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// rawServer is the far end of a conn written by hand, byte for byte, so the tests control the
// framing the conn must read: header order and case, extra headers, answers out of order.
type rawServer struct {
	t  *testing.T
	nc net.Conn
	r  *bufio.Reader
}

func newRawPair(t *testing.T, handle func(string, json.RawMessage, bool) (any, error)) (*conn, *rawServer) {
	a, b := net.Pipe()
	c := newConn(a, handle)
	t.Cleanup(func() { c.Close(); b.Close() })
	return c, &rawServer{t: t, nc: b, r: bufio.NewReader(b)}
}

// next reads one framed message the conn sent.
func (s *rawServer) next() map[string]json.RawMessage {
	s.t.Helper()
	n, err := readHeader(s.r)
	if err != nil {
		s.t.Fatal(err)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(s.r, body); err != nil {
		s.t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		s.t.Fatalf("%s: %v", body, err)
	}
	return m
}

// send writes body with the given header lines (Content-Length added when header is "").
func (s *rawServer) send(header, body string) {
	s.t.Helper()
	if header == "" {
		header = fmt.Sprintf("Content-Length: %d\r\n", len(body))
	}
	if _, err := io.WriteString(s.nc, header+"\r\n"+body); err != nil {
		s.t.Fatal(err)
	}
}

// TestConnAnswersInAnyOrder: concurrent calls get their own answers when the server answers
// them in reverse order, with headers in another case and a Content-Type among them, and a
// *json.RawMessage result is the raw answer.
func TestConnAnswersInAnyOrder(t *testing.T) {
	c, s := newRawPair(t, func(string, json.RawMessage, bool) (any, error) { return nil, nil })
	const n = 3
	var wg sync.WaitGroup
	got := make([]string, n)
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			var raw json.RawMessage
			errs[i] = c.Call(context.Background(), uint64(i+1), "m", map[string]int{"i": i}, &raw)
			got[i] = string(raw)
		})
	}
	ids := map[string]bool{}
	for range n {
		m := s.next()
		if string(m["method"]) != `"m"` || string(m["jsonrpc"]) != `"2.0"` {
			t.Fatalf("request %v", m)
		}
		ids[string(m["id"])] = true
	}
	for i := n; i >= 1; i-- {
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"answer":%d}}`, i, i)
		s.send(fmt.Sprintf("content-type: application/vscode-jsonrpc; charset=utf-8\r\ncontent-length: %d\r\n", len(body)), body)
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil || got[i] != fmt.Sprintf(`{"answer":%d}`, i+1) {
			t.Errorf("call %d: %q %v", i+1, got[i], errs[i])
		}
	}
	if len(ids) != n {
		t.Errorf("ids sent: %v", ids)
	}
}

// TestConnServerRequests: a server's request is answered with the handler's result (null
// included) or its error; a notification gets no answer; an error answer reaches the caller
// with its code.
func TestConnServerRequests(t *testing.T) {
	c, s := newRawPair(t, func(method string, params json.RawMessage, notif bool) (any, error) {
		switch method {
		case "ask":
			return map[string]string{"echo": string(params)}, nil
		case "nothing":
			return nil, nil
		case "note":
			return nil, nil
		}
		return nil, &ResponseError{Code: codeMethodNotFound, Message: "no " + method}
	})
	s.send("", `{"jsonrpc":"2.0","method":"note","params":{}}`)
	s.send("", `{"jsonrpc":"2.0","id":"a","method":"ask","params":[1]}`)
	if m := s.next(); string(m["id"]) != `"a"` || string(m["result"]) != `{"echo":"[1]"}` {
		t.Errorf("answer to ask: %v", m)
	}
	s.send("", `{"jsonrpc":"2.0","id":7,"method":"nothing"}`)
	if m := s.next(); string(m["id"]) != `7` || string(m["result"]) != `null` {
		t.Errorf("answer to nothing: %v (want result null)", m)
	}
	s.send("", `{"jsonrpc":"2.0","id":8,"method":"what"}`)
	if m := s.next(); string(m["id"]) != `8` || !strings.Contains(string(m["error"]), `-32601`) {
		t.Errorf("answer to an unknown request: %v", m)
	}

	done := make(chan error, 1)
	go func() { done <- c.Call(context.Background(), 1, "fails", nil, nil) }()
	s.next()
	s.send("", `{"jsonrpc":"2.0","id":1,"error":{"code":-32801,"message":"content modified"}}`)
	err := <-done
	var re *ResponseError
	if !errors.As(err, &re) || re.Code != -32801 || !strings.Contains(err.Error(), "content modified") {
		t.Errorf("error answer: %v", err)
	}
}

// TestConnEnds: a call waiting when the server goes away, and calls after, get ErrClosed; a
// cancelled call returns at once; a Content-Length past the limit ends the connection.
func TestConnEnds(t *testing.T) {
	c, s := newRawPair(t, func(string, json.RawMessage, bool) (any, error) { return nil, nil })
	ctx, cancel := context.WithCancel(context.Background())
	cancelled := make(chan error, 1)
	go func() { cancelled <- c.Call(ctx, 1, "slow", nil, nil) }()
	s.next()
	cancel()
	if err := <-cancelled; !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled call: %v", err)
	}

	waiting := make(chan error, 1)
	go func() { waiting <- c.Call(context.Background(), 2, "never", nil, nil) }()
	s.next()
	s.send(fmt.Sprintf("Content-Length: %d\r\n", maxMessageBytes+1), "")
	select {
	case err := <-waiting:
		if !errors.Is(err, ErrClosed) {
			t.Errorf("waiting call: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a waiting call did not end with the connection")
	}
	<-c.Done()
	if err := c.Call(context.Background(), 3, "after", nil, nil); !errors.Is(err, ErrClosed) {
		t.Errorf("call after the end: %v", err)
	}
	if err := c.Notify("after", nil); !errors.Is(err, ErrClosed) {
		t.Errorf("notify after the end: %v", err)
	}
}

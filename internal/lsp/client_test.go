package lsp

import (
	"context"
	"encoding/json"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/sourcegraph/jsonrpc2"
)

// fakeServer is the other end of a pipe speaking the protocol's framing: it answers
// initialize, never answers "slow", records notifications and asks the client things.
type fakeServer struct {
	mu     sync.Mutex
	notes  []string
	params map[string]json.RawMessage
	conn   *jsonrpc2.Conn
}

func (f *fakeServer) Handle(ctx context.Context, c *jsonrpc2.Conn, req *jsonrpc2.Request) {
	f.mu.Lock()
	if req.Params != nil {
		f.params[req.Method] = *req.Params
	}
	if req.Notif {
		f.notes = append(f.notes, req.Method)
	}
	f.mu.Unlock()
	switch req.Method {
	case "initialize":
		_ = c.Reply(ctx, req.ID, map[string]any{"capabilities": map[string]any{"definitionProvider": true, "hoverProvider": false}, "serverInfo": map[string]string{"name": "fake", "version": "1"}})
	case "textDocument/definition":
		_ = c.Reply(ctx, req.ID, []map[string]any{{"targetUri": "file:///x.go", "targetRange": Range{}, "targetSelectionRange": Range{Start: Position{2, 3}}}})
	case "slow":
		// never answered
	}
}

func (f *fakeServer) noted(method string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, n := range f.notes {
		if n == method {
			return true
		}
	}
	return false
}

func startFake(t *testing.T) (*Client, *fakeServer) {
	a, b := net.Pipe()
	f := &fakeServer{params: map[string]json.RawMessage{}}
	f.conn = jsonrpc2.NewConn(context.Background(), jsonrpc2.NewBufferedStream(b, jsonrpc2.VSCodeObjectCodec{}), jsonrpc2.AsyncHandler(f))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := Start(ctx, a, Options{Root: "/w", Settings: func(section string) any {
		if section == "gopls" {
			return map[string]any{"x": 1}
		}
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(); f.conn.Close() })
	return c, f
}

// TestClientProtocol: initialize (processId null), capabilities, a LocationLink answer, a
// request the server does not offer, cancellation sent on, and the server's own requests
// answered (configuration by section, edits refused).
func TestClientProtocol(t *testing.T) {
	c, f := startFake(t)
	var init struct {
		ProcessID *int `json:"processId"`
		RootURI   string
	}
	f.mu.Lock()
	_ = json.Unmarshal(f.params["initialize"], &init)
	f.mu.Unlock()
	if init.ProcessID != nil {
		t.Errorf("processId = %d, want null", *init.ProcessID)
	}
	if c.ServerName() != "fake" || !c.Supports("definitionProvider") || c.Supports("hoverProvider") {
		t.Errorf("server %q, capabilities %v", c.ServerName(), c.caps)
	}
	ctx := context.Background()
	ls, err := c.Definition(ctx, "file:///x.go", Position{})
	if err != nil || len(ls) != 1 || ls[0].Range.Start != (Position{2, 3}) {
		t.Errorf("definition = %+v, %v", ls, err)
	}
	if _, err := c.Hover(ctx, "file:///x.go", Position{}); err == nil {
		t.Error("hover on a server without it")
	}

	cctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	err = c.Call(cctx, "slow", nil, nil)
	cancel()
	if err == nil {
		t.Fatal("slow call returned")
	}
	deadline := time.Now().Add(2 * time.Second)
	for !f.noted("$/cancelRequest") && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if !f.noted("$/cancelRequest") {
		t.Error("no $/cancelRequest after the caller gave up")
	}

	var cfg []any
	if err := f.conn.Call(ctx, "workspace/configuration", map[string]any{"items": []map[string]string{{"section": "gopls"}, {"section": "other"}}}, &cfg); err != nil {
		t.Fatal(err)
	}
	if b, _ := json.Marshal(cfg); string(b) != `[{"x":1},null]` {
		t.Errorf("configuration = %s", b)
	}
	var applied struct {
		Applied bool `json:"applied"`
	}
	if err := f.conn.Call(ctx, "workspace/applyEdit", map[string]any{"edit": map[string]any{}}, &applied); err != nil || applied.Applied {
		t.Errorf("applyEdit = %+v, %v", applied, err)
	}

	// Diagnostics: a publish for the synced version ends the wait; the baseline is kept.
	v, sent, err := c.Sync(ctx, "file:///x.go", "go", "package x\n")
	if err != nil || !sent || v != 1 {
		t.Fatalf("sync = %d %v %v", v, sent, err)
	}
	_, mark, ver, _ := c.Baseline("file:///x.go")
	go func() {
		_ = f.conn.Notify(ctx, "textDocument/publishDiagnostics", map[string]any{"uri": "file:///x.go", "version": 1,
			"diagnostics": []Diagnostic{{Message: "boom", Severity: SeverityError}}})
	}()
	wctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if !c.WaitDiagnostics(wctx, "file:///x.go", mark, ver) {
		t.Fatal("no diagnostics")
	}
	if ds, _ := c.Diagnostics("file:///x.go"); len(ds) != 1 || ds[0].Message != "boom" {
		t.Errorf("diagnostics = %+v", ds)
	}
	if _, sent, _ := c.Sync(ctx, "file:///x.go", "go", "package x\n"); sent {
		t.Error("an unchanged text was sent again")
	}
	if _, sent, _ := c.Sync(ctx, "file:///x.go", "go", "package y\n"); !sent {
		t.Error("a change was not sent")
	}
	if base, _, v, _ := c.Baseline("file:///x.go"); v != 2 || len(base) != 1 {
		t.Errorf("baseline after the change = %+v, version %d", base, v)
	}
}

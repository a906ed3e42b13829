package lsp

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/sourcegraph/jsonrpc2"
)

// fakeServer is the other end of a pipe speaking the protocol's framing: it answers
// initialize, never answers "slow", records notifications and asks the client things.
type fakeServer struct {
	mu       sync.Mutex
	notes    []string
	params   map[string]json.RawMessage
	conn     *jsonrpc2.Conn
	outlines int // documentSymbol requests answered
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
		_ = c.Reply(ctx, req.ID, map[string]any{"capabilities": map[string]any{"definitionProvider": true, "hoverProvider": false, "documentSymbolProvider": true}, "serverInfo": map[string]string{"name": "fake", "version": "1"}})
	case "textDocument/definition":
		_ = c.Reply(ctx, req.ID, []map[string]any{{"targetUri": "file:///x.go", "targetRange": Range{}, "targetSelectionRange": Range{Start: Position{2, 3}}}})
	case "textDocument/documentSymbol":
		f.mu.Lock()
		f.outlines++
		n := f.outlines
		f.mu.Unlock()
		// The answer names itself, so a stale one is told from a fresh one.
		_ = c.Reply(ctx, req.ID, []map[string]any{{"name": fmt.Sprintf("answer%d", n), "kind": 12, "range": Range{}, "selectionRange": Range{}}})
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

// TestOutlineKeptPerVersion: an open document's outline is asked of the server once per version
// of its text; a new text (Sync) or an announced change on disk (FilesChanged) asks again, and a
// document that is not open is always asked.
func TestOutlineKeptPerVersion(t *testing.T) {
	c, f := startFake(t)
	ctx := context.Background()
	const uri = "file:///w/a.go"
	name := func() string {
		t.Helper()
		ds, err := c.DocumentSymbols(ctx, uri)
		if err != nil || len(ds) != 1 {
			t.Fatal(ds, err)
		}
		return ds[0].Name
	}
	if got := name(); got != "answer1" {
		t.Fatalf("not open: %s", got)
	}
	if got := name(); got != "answer2" {
		t.Fatalf("a document that is not open was answered from a cache: %s", got)
	}
	if _, _, err := c.Sync(ctx, uri, "go", "package a\n"); err != nil {
		t.Fatal(err)
	}
	first := name()
	if again := name(); again != first {
		t.Fatalf("the same version was asked again: %s, then %s", first, again)
	}
	if _, _, err := c.Sync(ctx, uri, "go", "package a\n"); err != nil { // the same text: same version
		t.Fatal(err)
	}
	if again := name(); again != first {
		t.Fatalf("an unchanged text was asked again: %s, then %s", first, again)
	}
	if _, _, err := c.Sync(ctx, uri, "go", "package a\n\nfunc F() {}\n"); err != nil {
		t.Fatal(err)
	}
	second := name()
	if second == first {
		t.Fatalf("a new text was answered with the old outline %s", first)
	}
	if err := c.FilesChanged(ctx, []FileEvent{{URI: "file:///w/b.go", Type: FileChanged}}); err != nil {
		t.Fatal(err)
	}
	if third := name(); third == second {
		t.Fatalf("after a change on disk the old outline %s was given", second)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.outlines != 5 {
		t.Errorf("the server was asked %d times, want 5 (twice unopened, three versions)", f.outlines)
	}
}

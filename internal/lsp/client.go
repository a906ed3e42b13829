// Package lsp is the hub's Language Server Protocol client: it speaks JSON-RPC 2.0 over a
// language server's standard streams (conn.go, with the protocol's Content-Length framing),
// initializes the server, keeps the documents it opened in step, keeps
// the diagnostics the server publishes and waits for new ones, and wraps the requests
// internal/code uses. Positions here are the protocol's (0-based, UTF-16); the conversion from
// the hub's 1-based UTF-8 columns is in text.go.
package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"
)

// Options configure a client.
type Options struct {
	// Root is the workspace folder (absolute).
	Root string
	// InitializationOptions are sent as initialize's initializationOptions.
	InitializationOptions any
	// Settings answers workspace/configuration for a section ("" for the whole settings);
	// nil answers null for every section.
	Settings func(section string) any
	// Log receives the server's window/logMessage and showMessage texts.
	Log func(text string)
}

// Client is one initialized connection to a language server.
type Client struct {
	conn *conn
	opts Options
	caps map[string]json.RawMessage
	info struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	}

	nextID atomic.Uint64 // request ids: every request picks its own, so it can be cancelled
	syncMu sync.Mutex    // orders document notifications (Sync, CloseDocument)

	mu       sync.Mutex
	docs     map[string]*document
	diags    map[string]diagState
	seq      uint64        // increases with every publishDiagnostics
	changed  chan struct{} // closed (and replaced) at every publish or progress change
	progress map[string]bool
	epoch    uint64 // FilesChanged calls so far: cached outlines older than the last one are not used
}

type document struct {
	version int
	text    string
	// mark and baseline are the diagnostics stream's point and the document's diagnostics when
	// its text last changed: what the server's next publish is compared with.
	mark     DiagMark
	baseline []Diagnostic
	// symbols is the outline the server gave for this version of the text, while no change on
	// disk was announced since (symbolsAt.epoch): see DocumentSymbols.
	symbols   []DocumentSymbol
	symbolsAt outlineKey
}

// outlineKey is what an outline was answered for: a document's version and the client's epoch
// of announced disk changes. An outline is never cached at version 0 (no document has it).
type outlineKey struct {
	version int
	epoch   uint64
}

type diagState struct {
	seq     uint64
	version *int
	diags   []Diagnostic
}

// Start initializes the server at the other end of rwc (its stdout to read, its stdin to
// write). The context bounds the initialize handshake only.
func Start(ctx context.Context, rwc io.ReadWriteCloser, o Options) (*Client, error) {
	c := &Client{opts: o, docs: map[string]*document{}, diags: map[string]diagState{}, changed: make(chan struct{}), progress: map[string]bool{}}
	c.conn = newConn(rwc, c.handle)
	params := map[string]any{
		// null, not the hub's pid: servers built on vscode-languageserver (typescript-language-
		// server, pyright) check every 3 s that processId can be signalled and exit when it
		// cannot, which a server confined with Landlock's signal scope (ABI 6) never can. The
		// server ends with the hub anyway (parent-death signal, process group).
		"processId":             nil,
		"clientInfo":            map[string]string{"name": "switchboard"},
		"rootUri":               URI(o.Root),
		"rootPath":              o.Root,
		"workspaceFolders":      []map[string]string{{"uri": URI(o.Root), "name": "workspace"}},
		"capabilities":          clientCapabilities,
		"initializationOptions": o.InitializationOptions,
	}
	var res struct {
		Capabilities map[string]json.RawMessage `json:"capabilities"`
		ServerInfo   json.RawMessage            `json:"serverInfo"`
	}
	if err := c.Call(ctx, "initialize", params, &res); err != nil {
		c.conn.Close()
		return nil, fmt.Errorf("initialize: %w", err)
	}
	c.caps = res.Capabilities
	if len(res.ServerInfo) > 0 {
		_ = json.Unmarshal(res.ServerInfo, &c.info)
	}
	if err := c.conn.Notify("initialized", struct{}{}); err != nil {
		c.conn.Close()
		return nil, fmt.Errorf("initialized: %w", err)
	}
	return c, nil
}

// clientCapabilities are what the hub tells servers it understands. Positions stay in UTF-16
// (the protocol's default): every server speaks it, so the conversion is the same everywhere.
var clientCapabilities = map[string]any{
	"general": map[string]any{"positionEncodings": []string{"utf-16"}},
	"window":  map[string]any{"workDoneProgress": true},
	"workspace": map[string]any{
		"workspaceFolders":      true,
		"configuration":         true,
		"symbol":                map[string]any{},
		"didChangeWatchedFiles": map[string]any{"dynamicRegistration": true},
		"workspaceEdit":         map[string]any{"documentChanges": true, "resourceOperations": []string{"create", "rename", "delete"}},
	},
	"textDocument": map[string]any{
		"synchronization":    map[string]any{"didSave": true},
		"definition":         map[string]any{"linkSupport": true},
		"implementation":     map[string]any{"linkSupport": true},
		"references":         map[string]any{},
		"hover":              map[string]any{"contentFormat": []string{"markdown", "plaintext"}},
		"documentSymbol":     map[string]any{"hierarchicalDocumentSymbolSupport": true},
		"callHierarchy":      map[string]any{},
		"rename":             map[string]any{"prepareSupport": true},
		"publishDiagnostics": map[string]any{"versionSupport": true, "relatedInformation": false},
	},
}

// ServerName is the name the server gave itself at initialize ("" if none).
func (c *Client) ServerName() string { return c.info.Name }

// ServerVersion is the version the server gave at initialize ("" if none).
func (c *Client) ServerVersion() string { return c.info.Version }

// Supports reports whether the server declared capability name (e.g. "implementationProvider")
// as anything but absent, null or false.
func (c *Client) Supports(name string) bool {
	v, ok := c.caps[name]
	if !ok {
		return false
	}
	s := string(v)
	return s != "null" && s != "false"
}

// Done is closed when the connection ends (the server exited or closed its output).
func (c *Client) Done() <-chan struct{} { return c.conn.Done() }

// Close ends the connection without the shutdown handshake.
func (c *Client) Close() error { return c.conn.Close() }

// Shutdown asks the server to shut down and exit, then closes the connection.
func (c *Client) Shutdown(ctx context.Context) error {
	err := c.Call(ctx, "shutdown", nil, nil)
	if err == nil {
		err = c.conn.Notify("exit", nil)
	}
	c.conn.Close()
	return err
}

// ErrClosed is returned by calls on a connection that ended.
var ErrClosed = errors.New("the language server's connection is closed")

// Call sends a request and decodes its result into result (nil: discarded). When ctx ends
// first, the server is told to stop working on it ($/cancelRequest).
func (c *Client) Call(ctx context.Context, method string, params, result any) error {
	id := c.nextID.Add(1)
	err := c.conn.Call(ctx, id, method, params, result)
	if errors.Is(err, ErrClosed) {
		return ErrClosed
	}
	if err != nil && ctx.Err() != nil {
		_ = c.conn.Notify("$/cancelRequest", map[string]any{"id": id})
		return fmt.Errorf("%s: %w", method, context.Cause(ctx))
	}
	if err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	return nil
}

// Notify sends a notification.
func (c *Client) Notify(ctx context.Context, method string, params any) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return c.conn.Notify(method, params)
}

// handle answers the server's requests and takes its notifications.
func (c *Client) handle(method string, params json.RawMessage, notif bool) (any, error) {
	switch method {
	case "textDocument/publishDiagnostics":
		var p publishDiagnosticsParams
		if json.Unmarshal(params, &p) == nil {
			c.mu.Lock()
			c.seq++
			c.diags[p.URI] = diagState{seq: c.seq, version: p.Version, diags: p.Diagnostics}
			c.signalLocked()
			c.mu.Unlock()
		}
		return nil, nil
	case "$/progress":
		var p struct {
			Token json.RawMessage `json:"token"`
			Value struct {
				Kind string `json:"kind"`
			} `json:"value"`
		}
		if json.Unmarshal(params, &p) == nil {
			c.mu.Lock()
			switch p.Value.Kind {
			case "begin":
				c.progress[string(p.Token)] = true
			case "end":
				delete(c.progress, string(p.Token))
			}
			c.signalLocked()
			c.mu.Unlock()
		}
		return nil, nil
	case "window/logMessage", "window/showMessage":
		var p struct {
			Message string `json:"message"`
		}
		if c.opts.Log != nil && json.Unmarshal(params, &p) == nil {
			c.opts.Log(p.Message)
		}
		return nil, nil
	case "workspace/configuration":
		var p struct {
			Items []struct {
				Section string `json:"section"`
			} `json:"items"`
		}
		_ = json.Unmarshal(params, &p)
		out := make([]any, len(p.Items))
		for i, it := range p.Items {
			if c.opts.Settings != nil {
				out[i] = c.opts.Settings(it.Section)
			}
		}
		return out, nil
	case "workspace/workspaceFolders":
		return []map[string]string{{"uri": URI(c.opts.Root), "name": "workspace"}}, nil
	case "workspace/applyEdit":
		// Servers do not change files behind the hub's back: edits go through its own tools.
		return map[string]any{"applied": false, "failureReason": "the hub applies edits itself"}, nil
	case "client/registerCapability", "client/unregisterCapability", "window/workDoneProgress/create",
		"window/showMessageRequest", "workspace/diagnostic/refresh", "workspace/semanticTokens/refresh",
		"workspace/inlayHint/refresh", "workspace/codeLens/refresh", "workspace/inlineValue/refresh":
		return nil, nil
	}
	if notif {
		return nil, nil
	}
	return nil, &ResponseError{Code: codeMethodNotFound, Message: "not supported by this client: " + method}
}

func (c *Client) signalLocked() {
	close(c.changed)
	c.changed = make(chan struct{})
}

// Sync makes the server's view of the document at uri hold text: it is opened (didOpen) the
// first time and changed (didChange, the whole text) when text differs from what the server has.
// It returns the document's version and whether anything was sent.
func (c *Client) Sync(ctx context.Context, uri, languageID, text string) (int, bool, error) {
	// One sync at a time, from the version's choice to its notification: two callers syncing
	// the same document must not reach the server in the other order.
	c.syncMu.Lock()
	defer c.syncMu.Unlock()
	c.mu.Lock()
	d, open := c.docs[uri]
	if open && d.text == text {
		v := d.version
		c.mu.Unlock()
		return v, false, nil
	}
	if !open {
		d = &document{}
		c.docs[uri] = d
	}
	d.version++
	d.text = text
	d.mark = DiagMark(c.seq)
	d.baseline = c.diags[uri].diags
	v := d.version
	c.mu.Unlock()
	if !open {
		return v, true, c.Notify(ctx, "textDocument/didOpen", map[string]any{
			"textDocument": TextDocumentItem{URI: uri, LanguageID: languageID, Version: v, Text: text}})
	}
	return v, true, c.Notify(ctx, "textDocument/didChange", map[string]any{
		"textDocument":   VersionedTextDocumentIdentifier{URI: uri, Version: v},
		"contentChanges": []map[string]string{{"text": text}},
	})
}

// Baseline is, for an open document, the diagnostics published for it before its text last
// changed, the point in the diagnostics stream at that change and the version it made
// (ok false when the document is not open).
func (c *Client) Baseline(uri string) (diags []Diagnostic, mark DiagMark, version int, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	d, ok := c.docs[uri]
	if !ok {
		return nil, 0, 0, false
	}
	return d.baseline, d.mark, d.version, true
}

// Text is the text the server has of an open document.
func (c *Client) Text(uri string) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	d, ok := c.docs[uri]
	if !ok {
		return "", false
	}
	return d.text, true
}

// IsOpen reports whether the document at uri is open on the server.
func (c *Client) IsOpen(uri string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.docs[uri]
	return ok
}

// OpenDocuments lists the URIs of the open documents.
func (c *Client) OpenDocuments() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]string, 0, len(c.docs))
	for u := range c.docs {
		out = append(out, u)
	}
	return out
}

// CloseDocument closes the document at uri (didClose); a document not open is left alone.
func (c *Client) CloseDocument(ctx context.Context, uri string) error {
	c.syncMu.Lock()
	defer c.syncMu.Unlock()
	c.mu.Lock()
	_, open := c.docs[uri]
	delete(c.docs, uri)
	c.mu.Unlock()
	if !open {
		return nil
	}
	return c.Notify(ctx, "textDocument/didClose", map[string]any{"textDocument": TextDocumentIdentifier{URI: uri}})
}

// FilesChanged tells the server about changes on disk (workspace/didChangeWatchedFiles).
func (c *Client) FilesChanged(ctx context.Context, events []FileEvent) error {
	if len(events) == 0 {
		return nil
	}
	c.mu.Lock()
	c.epoch++
	c.mu.Unlock()
	return c.Notify(ctx, "workspace/didChangeWatchedFiles", map[string]any{"changes": events})
}

// DiagMark is a point in the stream of published diagnostics.
type DiagMark uint64

// Mark is the current point in the stream of published diagnostics.
func (c *Client) Mark() DiagMark {
	c.mu.Lock()
	defer c.mu.Unlock()
	return DiagMark(c.seq)
}

// Diagnostics are the diagnostics last published for uri, and whether any were.
func (c *Client) Diagnostics(uri string) ([]Diagnostic, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s, ok := c.diags[uri]
	return s.diags, ok
}

// AllDiagnostics are the diagnostics last published, by URI (documents with none left out).
func (c *Client) AllDiagnostics() map[string][]Diagnostic {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string][]Diagnostic{}
	for u, s := range c.diags {
		if len(s.diags) > 0 {
			out[u] = s.diags
		}
	}
	return out
}

// PublishedSince lists the URIs whose diagnostics were published after mark.
func (c *Client) PublishedSince(mark DiagMark) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for u, s := range c.diags {
		if s.seq > uint64(mark) {
			out = append(out, u)
		}
	}
	return out
}

// WaitDiagnostics waits until diagnostics for uri were published after mark for version
// (or later; servers that do not send versions: any publish after mark), or until ctx ends.
// It reports whether they were.
func (c *Client) WaitDiagnostics(ctx context.Context, uri string, mark DiagMark, version int) bool {
	for {
		c.mu.Lock()
		s, ok := c.diags[uri]
		ch := c.changed
		c.mu.Unlock()
		if ok && s.seq > uint64(mark) && (s.version == nil || *s.version >= version) {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-ch:
		case <-c.Done():
			return false
		}
	}
}

// WaitQuiet waits until the server reports no work in progress and has published nothing for
// d, or until ctx ends; it reports whether it got quiet.
func (c *Client) WaitQuiet(ctx context.Context, d time.Duration) bool {
	for {
		c.mu.Lock()
		busy := len(c.progress) > 0
		ch := c.changed
		c.mu.Unlock()
		if !busy {
			t := time.NewTimer(d)
			select {
			case <-t.C:
				return true
			case <-ch:
				t.Stop()
				continue
			case <-ctx.Done():
				t.Stop()
				return false
			}
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return false
		case <-c.Done():
			return false
		}
	}
}

// Busy reports whether the server has work in progress ($/progress begun and not ended).
func (c *Client) Busy() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.progress) > 0
}

func pos(uri string, p Position) TextDocumentPositionParams {
	return TextDocumentPositionParams{TextDocument: TextDocumentIdentifier{URI: uri}, Position: p}
}

// ErrUnsupported is wrapped by the errors of requests the server did not declare.
var ErrUnsupported = errors.New("not supported by this language server")

func (c *Client) need(capability, what string) error {
	if !c.Supports(capability) {
		name := c.info.Name
		if name == "" {
			name = "the language server"
		}
		return fmt.Errorf("%s: %s does not offer it: %w", what, name, ErrUnsupported)
	}
	return nil
}

func (c *Client) locations(ctx context.Context, method string, params any) ([]Location, error) {
	var raw json.RawMessage
	if err := c.Call(ctx, method, params, &raw); err != nil {
		return nil, err
	}
	return decodeLocations(raw)
}

// Definition is textDocument/definition.
func (c *Client) Definition(ctx context.Context, uri string, p Position) ([]Location, error) {
	if err := c.need("definitionProvider", "definition"); err != nil {
		return nil, err
	}
	return c.locations(ctx, "textDocument/definition", pos(uri, p))
}

// Implementation is textDocument/implementation.
func (c *Client) Implementation(ctx context.Context, uri string, p Position) ([]Location, error) {
	if err := c.need("implementationProvider", "implementations"); err != nil {
		return nil, err
	}
	return c.locations(ctx, "textDocument/implementation", pos(uri, p))
}

// References is textDocument/references.
func (c *Client) References(ctx context.Context, uri string, p Position, includeDeclaration bool) ([]Location, error) {
	if err := c.need("referencesProvider", "references"); err != nil {
		return nil, err
	}
	rp := referenceParams{TextDocumentPositionParams: pos(uri, p)}
	rp.Context.IncludeDeclaration = includeDeclaration
	return c.locations(ctx, "textDocument/references", rp)
}

// Hover is textDocument/hover's contents as text ("" when there is nothing to show).
func (c *Client) Hover(ctx context.Context, uri string, p Position) (string, error) {
	if err := c.need("hoverProvider", "hover"); err != nil {
		return "", err
	}
	var res *struct {
		Contents json.RawMessage `json:"contents"`
	}
	if err := c.Call(ctx, "textDocument/hover", pos(uri, p), &res); err != nil {
		return "", err
	}
	if res == nil {
		return "", nil
	}
	return decodeHoverContents(res.Contents), nil
}

// DocumentSymbols is textDocument/documentSymbol, in the hierarchical form; servers that answer
// flat SymbolInformation get it converted (no children).
func (c *Client) DocumentSymbols(ctx context.Context, uri string) ([]DocumentSymbol, error) {
	if err := c.need("documentSymbolProvider", "symbols"); err != nil {
		return nil, err
	}
	// An open document's outline depends on its text: the answer for this version is kept and
	// given again until the text changes (Sync) or a change on disk is announced (FilesChanged),
	// which saves the request and its decoding on every symbol named in a file (code_definition
	// {path, symbol}). The slice is shared: callers only read it.
	c.mu.Lock()
	var at outlineKey
	if d, open := c.docs[uri]; open {
		at = outlineKey{version: d.version, epoch: c.epoch}
		if d.symbols != nil && d.symbolsAt == at {
			out := d.symbols
			c.mu.Unlock()
			return out, nil
		}
	}
	c.mu.Unlock()
	// Either form in one decode: DocumentSymbol (hierarchical, what gopls answers) or
	// SymbolInformation (flat, with a location). Decoding each element once as a probe and again
	// in its form was a third of an outline's time in the hub.
	var raw []struct {
		DocumentSymbol
		Location      *Location `json:"location"`
		ContainerName string    `json:"containerName"`
	}
	if err := c.Call(ctx, "textDocument/documentSymbol", map[string]any{"textDocument": TextDocumentIdentifier{URI: uri}}, &raw); err != nil {
		return nil, err
	}
	out := make([]DocumentSymbol, 0, len(raw))
	for _, r := range raw {
		if r.Location != nil {
			out = append(out, DocumentSymbol{Name: r.Name, Kind: r.Kind, Range: r.Location.Range, SelectionRange: r.Location.Range, Detail: r.ContainerName})
			continue
		}
		out = append(out, r.DocumentSymbol)
	}
	if at.version != 0 {
		c.mu.Lock()
		if d, open := c.docs[uri]; open && (outlineKey{version: d.version, epoch: c.epoch}) == at {
			d.symbols, d.symbolsAt = out, at
		}
		c.mu.Unlock()
	}
	return out, nil
}

// WorkspaceSymbols is workspace/symbol.
func (c *Client) WorkspaceSymbols(ctx context.Context, query string) ([]SymbolInformation, error) {
	if err := c.need("workspaceSymbolProvider", "symbol search"); err != nil {
		return nil, err
	}
	var out []SymbolInformation
	if err := c.Call(ctx, "workspace/symbol", map[string]string{"query": query}, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// PrepareCallHierarchy is textDocument/prepareCallHierarchy.
func (c *Client) PrepareCallHierarchy(ctx context.Context, uri string, p Position) ([]CallHierarchyItem, error) {
	if err := c.need("callHierarchyProvider", "calls"); err != nil {
		return nil, err
	}
	var out []CallHierarchyItem
	if err := c.Call(ctx, "textDocument/prepareCallHierarchy", pos(uri, p), &out); err != nil {
		return nil, err
	}
	return out, nil
}

// IncomingCalls is callHierarchy/incomingCalls: the callers of item.
func (c *Client) IncomingCalls(ctx context.Context, item CallHierarchyItem) ([]Call, error) {
	var res []struct {
		From       CallHierarchyItem `json:"from"`
		FromRanges []Range           `json:"fromRanges"`
	}
	if err := c.Call(ctx, "callHierarchy/incomingCalls", map[string]any{"item": item}, &res); err != nil {
		return nil, err
	}
	out := make([]Call, len(res))
	for i, r := range res {
		out[i] = Call{Item: r.From, FromRanges: r.FromRanges}
	}
	return out, nil
}

// OutgoingCalls is callHierarchy/outgoingCalls: what item calls.
func (c *Client) OutgoingCalls(ctx context.Context, item CallHierarchyItem) ([]Call, error) {
	var res []struct {
		To         CallHierarchyItem `json:"to"`
		FromRanges []Range           `json:"fromRanges"`
	}
	if err := c.Call(ctx, "callHierarchy/outgoingCalls", map[string]any{"item": item}, &res); err != nil {
		return nil, err
	}
	out := make([]Call, len(res))
	for i, r := range res {
		out[i] = Call{Item: r.To, FromRanges: r.FromRanges}
	}
	return out, nil
}

// Rename is textDocument/rename.
func (c *Client) Rename(ctx context.Context, uri string, p Position, newName string) (WorkspaceEdit, error) {
	if err := c.need("renameProvider", "rename"); err != nil {
		return WorkspaceEdit{}, err
	}
	var out *WorkspaceEdit
	params := map[string]any{"textDocument": TextDocumentIdentifier{URI: uri}, "position": p, "newName": newName}
	if err := c.Call(ctx, "textDocument/rename", params, &out); err != nil {
		return WorkspaceEdit{}, err
	}
	if out == nil {
		return WorkspaceEdit{}, nil
	}
	return *out, nil
}

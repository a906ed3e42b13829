package webview

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/remote"
)

// Why this file exists: chromedp decodes every message of the browser on goroutines of its own
// (Browser.run, Target.run) and dereferences fields the protocol marks as required without a
// check, e.g. Target.pageEvent reads e.Frame.ID of Page.frameNavigated. A DevTools endpoint that
// sends "frame": null (a hostile server reached through webview_connect, or a broken browser)
// therefore panics on a goroutine no recover of ours can reach, and the whole hub exits. So the
// hub hands chromedp a transport that checks each message before chromedp sees it, and ends the
// connection (with the reason) on the first one that breaks the protocol.

// ProtocolError is why a browser connection was closed: the browser sent a message that breaks
// the DevTools protocol in a way chromedp cannot survive.
type ProtocolError struct {
	Method string // the event or the command of the reply
	Field  string // the JSON path of the offending field
	Detail string
}

// Error names the malformed message and says that the connection was ended because of it.
func (e *ProtocolError) Error() string {
	return fmt.Sprintf("the browser sent a malformed %s (%s %s); a DevTools endpoint that breaks the protocol is disconnected", e.Method, e.Field, e.Detail)
}

// guardAllocator is remote.NewAllocator's allocator with a checking transport: it dials the
// browser's websocket and wraps the connection in a checkedConn.
type guardAllocator struct {
	wsURL       string
	dialTimeout time.Duration

	mu   sync.Mutex
	conn *checkedConn // set by Allocate

	wg sync.WaitGroup
}

// newGuardedAllocator returns an allocator context for the browser at wsURL (a
// ws://.../devtools/browser/... URL) and the allocator, whose violation() tells why the
// connection was closed when a message was refused.
func newGuardedAllocator(parent context.Context, wsURL string, dialTimeout time.Duration) (context.Context, context.CancelFunc, *guardAllocator) {
	a := &guardAllocator{wsURL: wsURL, dialTimeout: dialTimeout}
	ctx, cancel := chromedp.NewAllocatorContext(parent, a)
	return ctx, cancel, a
}

// Allocate satisfies chromedp.Allocator; it follows remote.Allocator.Allocate.
func (a *guardAllocator) Allocate(ctx context.Context, opts ...chromedp.BrowserOption) (*chromedp.Browser, error) {
	if chromedp.FromContext(ctx) == nil {
		return nil, chromedp.ErrInvalidContext
	}
	// The websocket gets a context of its own, so the pages can be closed over it before it
	// goes (as remote.Allocator does).
	wctx, cancel := context.WithCancel(context.Background())
	a.wg.Go(func() {
		<-ctx.Done()
		_ = chromedp.Cancel(ctx) // blocks until the pages are closed
		cancel()
	})
	dialCtx, dialCancel := context.WithTimeout(wctx, a.dialTimeout)
	defer dialCancel()
	conn, err := remote.DialContext(dialCtx, a.wsURL)
	if err != nil {
		return nil, fmt.Errorf("could not open the DevTools websocket: %w", err)
	}
	cc := newCheckedConn(conn)
	a.mu.Lock()
	a.conn = cc
	a.mu.Unlock()
	return chromedp.NewBrowserTransport(wctx, cc, opts...)
}

// Wait satisfies chromedp.Allocator.
func (a *guardAllocator) Wait() { a.wg.Wait() }

// Attaches satisfies chromedp.Attacher: the browser runs already (we started it, or the user
// did), so a context is a tab of it, not the owner of its process.
func (a *guardAllocator) Attaches() bool { return true }

// violation is the message that made the transport close the connection, or nil.
func (a *guardAllocator) violation() *ProtocolError {
	a.mu.Lock()
	c := a.conn
	a.mu.Unlock()
	if c == nil {
		return nil
	}
	return c.violation()
}

// maxPending bounds the id→method table of commands awaiting a reply; calls whose reply never
// comes (a timeout) leave an entry behind, and a browser that never answers must not grow it.
const maxPending = 1 << 16

// checkedConn is a chromedp.Transport that checks the browser's messages before chromedp
// decodes them. Read is only called by chromedp's reader goroutine; Write from its run loop.
type checkedConn struct {
	inner chromedp.Transport

	mu      sync.Mutex
	pending map[int64]string          // command id → method, to decode its reply
	framed  map[target.SessionID]bool // sessions whose top-level frame chromedp knows
	bad     *ProtocolError            // set once; the connection is closed after it
}

func newCheckedConn(inner chromedp.Transport) *checkedConn {
	return &checkedConn{inner: inner, pending: map[int64]string{}, framed: map[target.SessionID]bool{}}
}

func (c *checkedConn) violation() *ProtocolError {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bad
}

// SetDebugf passes chromedp's protocol logger on to the websocket connection.
func (c *checkedConn) SetDebugf(f func(string, ...any)) {
	if s, ok := c.inner.(interface{ SetDebugf(func(string, ...any)) }); ok {
		s.SetDebugf(f)
	}
}

func (c *checkedConn) Close() error { return c.inner.Close() }

func (c *checkedConn) Write(ctx context.Context, msg *cdproto.Message) error {
	if msg.ID != 0 && msg.Method != "" {
		c.mu.Lock()
		if len(c.pending) >= maxPending {
			clear(c.pending) // the replies of these are long overdue; their calls have given up
		}
		c.pending[msg.ID] = string(msg.Method)
		c.mu.Unlock()
	}
	return c.inner.Write(ctx, msg)
}

// Read returns the next message that is safe for chromedp. A message that would crash it ends
// the connection: Read returns the *ProtocolError, and chromedp treats that as a lost connection.
func (c *checkedConn) Read(ctx context.Context, msg *cdproto.Message) error {
	for {
		*msg = cdproto.Message{}
		if err := c.inner.Read(ctx, msg); err != nil {
			return err
		}
		drop, err := c.check(msg)
		if err != nil {
			c.mu.Lock()
			if c.bad == nil {
				c.bad = err
			}
			c.mu.Unlock()
			return err
		}
		if !drop {
			return nil
		}
	}
}

// check decodes msg the way chromedp will (cdproto.UnmarshalMessage) and refuses it when a
// field chromedp may dereference is null. Messages cdproto cannot decode pass: chromedp drops
// them itself with a logged error. drop is set for messages that are well-formed but would
// still crash chromedp in its current state (see domNeedsFrame).
func (c *checkedConn) check(msg *cdproto.Message) (drop bool, _ *ProtocolError) {
	if msg.ID != 0 {
		c.mu.Lock()
		method, ok := c.pending[msg.ID]
		delete(c.pending, msg.ID)
		c.mu.Unlock()
		if ok && msg.Error == nil {
			if msg.Result == nil {
				// chromedp decodes a missing result as an error of its own; nothing to check.
				return false, nil
			}
			v, err := cdproto.UnmarshalMessage(&cdproto.Message{Method: cdproto.MethodType(method), Result: msg.Result}, chromedp.DefaultUnmarshalOptions)
			if err == nil {
				if perr := requireResults(method, v); perr != nil {
					return false, perr
				}
				if perr := requireFields(method+" reply", v); perr != nil {
					return false, perr
				}
				if method == page.CommandGetFrameTree {
					c.setFramed(msg.SessionID, true)
				}
			}
		}
	}
	if msg.Method == "" {
		return false, nil
	}
	if msg.Params == nil {
		return false, nil // chromedp logs ErrMsgMissingParamsOrResult and skips it
	}
	v, err := cdproto.UnmarshalMessage(msg, chromedp.DefaultUnmarshalOptions)
	if err != nil {
		return false, nil
	}
	if perr := requireFields(string(msg.Method), v); perr != nil {
		return false, perr
	}
	switch e := v.(type) {
	case *page.EventFrameNavigated:
		if e.Frame.ParentID == "" {
			c.setFramed(msg.SessionID, true)
		}
	case *target.EventDetachedFromTarget:
		c.setFramed(e.SessionID, false)
	}
	if msg.SessionID != "" && domNeedsFrame(string(msg.Method)) {
		c.mu.Lock()
		framed := c.framed[msg.SessionID]
		c.mu.Unlock()
		return !framed, nil
	}
	return false, nil
}

func (c *checkedConn) setFramed(s target.SessionID, on bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if on {
		if len(c.framed) >= maxPending {
			clear(c.framed)
		}
		c.framed[s] = true
	} else {
		delete(c.framed, s)
	}
}

// domNeedsFrame reports whether chromedp's Target.domEvent reads the top-level frame for this DOM
// event: all but DOM.documentUpdated (which checks) and DOM.topLayerElementsUpdated (which it
// ignores). Before the frame is known (a Page.frameNavigated of the top frame or the reply to
// Page.getFrameTree), such an event dereferences a nil *Frame. A real browser sends none then
// (DOM events name nodes, and no node ids exist before DOM.getDocument); dropping is harmless.
func domNeedsFrame(method string) bool {
	return strings.HasPrefix(method, "DOM.") && method != "DOM.documentUpdated" && method != "DOM.topLayerElementsUpdated"
}

// requiredResults are the results the protocol requires of commands whose replies chromedp or
// this package dereference. cdproto tags every result field omitempty (its generator does not
// carry the protocol's "optional" over to returns), so the struct tags cannot tell these apart
// from the optional ones (such as Runtime.evaluate's exceptionDetails); nested types' tags can.
var requiredResults = map[string][]string{
	"Page.getFrameTree":      {"frameTree"},  // chromedp: newTarget reads FrameTree.Frame.ID
	"Runtime.evaluate":       {"result"},     // chromedp: attachTarget reads Result.ClassName
	"DOM.getDocument":        {"root"},       // chromedp: documentUpdated sets Root.Invalidated; Query reads Root.NodeID
	"DOM.describeNode":       {"node"},       // Query reads Node.NodeName
	"Target.getTargetInfo":   {"targetInfo"}, // required by the protocol; checked anyway
	"Runtime.callFunctionOn": {"result"},
}

// requireResults reports a required result of method's reply that is null.
func requireResults(method string, v any) *ProtocolError {
	names := requiredResults[method]
	if len(names) == 0 {
		return nil
	}
	rv := reflect.Indirect(reflect.ValueOf(v))
	if rv.Kind() != reflect.Struct {
		return nil
	}
	for i := 0; i < rv.NumField(); i++ {
		name, _, _ := strings.Cut(rv.Type().Field(i).Tag.Get("json"), ",")
		f := rv.Field(i)
		if slices.Contains(names, name) && f.Kind() == reflect.Pointer && f.IsNil() {
			return &ProtocolError{Method: method + " reply", Field: "result." + name, Detail: "is null but required"}
		}
	}
	return nil
}

// requireFields walks a decoded cdproto value and reports the first null where the protocol
// requires a value: a pointer field whose JSON tag has no omitempty/omitzero, or a null element
// of a list or map (never valid in the protocol). chromedp and cdproto dereference both freely.
func requireFields(method string, v any) *ProtocolError {
	if v == nil {
		return nil
	}
	root := "params"
	if strings.HasSuffix(method, " reply") {
		root = "result"
	}
	return walkRequired(method, root, reflect.ValueOf(v), 0)
}

// maxWalkDepth stops a walk of absurdly nested values; the JSON decoder's own nesting limit
// (10000) is lower than what would hurt, so this is only a backstop.
const maxWalkDepth = 20000

var cdpPkg = reflect.TypeFor[cdp.Frame]().PkgPath()

func walkRequired(method, path string, v reflect.Value, depth int) *ProtocolError {
	if field, detail := nullIn(v, depth); detail != "" {
		return &ProtocolError{Method: method, Field: path + field, Detail: detail}
	}
	return nil
}

// nullIn finds the first forbidden null under v and returns its path below v and what is wrong
// ("" when there is none). The path is built only on the way out of a find: building it for
// every field visited cost more than the decode itself on large replies.
func nullIn(v reflect.Value, depth int) (string, string) {
	if depth > maxWalkDepth {
		return "", "is nested too deeply"
	}
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return "", "" // a required null is reported by the struct holding it
		}
		return nullIn(v.Elem(), depth+1)
	case reflect.Struct:
		for _, f := range fieldsOf(v.Type()) {
			fv := v.Field(f.index)
			if fv.Kind() == reflect.Pointer && fv.IsNil() {
				if f.required {
					return "." + f.name, "is null but required"
				}
				continue
			}
			if p, d := nullIn(fv, depth+1); d != "" {
				return "." + f.name + p, d
			}
		}
	case reflect.Slice, reflect.Array:
		if !holdsStructs(v.Type().Elem()) {
			return "", ""
		}
		for i := 0; i < v.Len(); i++ {
			e := v.Index(i)
			if e.Kind() == reflect.Pointer && e.IsNil() {
				return fmt.Sprintf("[%d]", i), "is null"
			}
			if p, d := nullIn(e, depth+1); d != "" {
				return fmt.Sprintf("[%d]", i) + p, d
			}
		}
	case reflect.Map:
		if !holdsStructs(v.Type().Elem()) {
			return "", ""
		}
		it := v.MapRange()
		for it.Next() {
			e := it.Value()
			if e.Kind() == reflect.Pointer && e.IsNil() {
				return fmt.Sprintf("[%v]", it.Key()), "is null"
			}
			if p, d := nullIn(e, depth+1); d != "" {
				return fmt.Sprintf("[%v]", it.Key()) + p, d
			}
		}
	}
	return "", ""
}

// walkField is a field of a protocol struct that can hold a null: a pointer, or a struct, list
// or map that can hold one.
type walkField struct {
	index    int
	name     string // in the protocol (JSON)
	required bool   // no omitempty/omitzero: null is a violation
}

// walkFields caches fieldsOf per type; reading the tags of every field of every node of a large
// reply cost twice the decode.
var walkFields sync.Map // reflect.Type → []walkField

// fieldsOf lists the fields of struct type t worth a look (none for types outside cdproto).
func fieldsOf(t reflect.Type) []walkField {
	if fs, ok := walkFields.Load(t); ok {
		return fs.([]walkField)
	}
	var out []walkField
	if fromCDProto(t) {
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			switch f.Type.Kind() {
			case reflect.Pointer, reflect.Struct:
			case reflect.Slice, reflect.Array, reflect.Map:
				if !holdsStructs(f.Type.Elem()) {
					continue
				}
			default:
				continue // strings, numbers, booleans hold no null
			}
			tag := f.Tag.Get("json")
			name, _, _ := strings.Cut(tag, ",")
			if name == "-" {
				continue
			}
			if name == "" {
				name = f.Name
			}
			out = append(out, walkField{index: i, name: name,
				required: f.Type.Kind() == reflect.Pointer && !strings.Contains(tag, "omitempty") && !strings.Contains(tag, "omitzero")})
		}
	}
	walkFields.Store(t, out)
	return out
}

// fromCDProto reports whether t is a protocol type (cdproto's packages), the only structs worth
// walking; others (time.Time, raw JSON) hold no protocol fields.
func fromCDProto(t reflect.Type) bool {
	return strings.HasPrefix(t.PkgPath(), strings.TrimSuffix(cdpPkg, "/cdp"))
}

// holdsStructs reports whether a list or map with elements of type t can hold protocol structs
// (a []byte or []string cannot, and is skipped without a look at each element).
func holdsStructs(t reflect.Type) bool {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array {
		if t.Kind() == reflect.Pointer {
			return true
		}
		t = t.Elem()
	}
	return t.Kind() == reflect.Struct || t.Kind() == reflect.Interface || t.Kind() == reflect.Map
}

// errPanic is returned by an operation whose code panicked; the connection is closed after it.
var errPanic = errors.New("the browser connection failed inside the DevTools client and was closed; call webview_launch or webview_connect again")

package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/internal/audit"
	"github.com/switchboard-hub/switchboard/internal/listeners"
	"github.com/switchboard-hub/switchboard/internal/metrics"
	sbtool "github.com/switchboard-hub/switchboard/mcp/tool"
	"github.com/switchboard-hub/switchboard/mcp/toolcall"
	"github.com/switchboard-hub/switchboard/mcp/tools"
	mcptransport "github.com/switchboard-hub/switchboard/mcp/transport"
)

// sessionID returns the registry ID for the request's connection and its transport
// (transport.Session).
func (s *Service) sessionID(ctx context.Context, req sdk.Request) (id, transport string) {
	return mcptransport.Session(ctx, s.sessions, req)
}

// BeginAction audits something a person does outside MCP — a dashboard or tray control (process
// start/stop/kill/input, transport switches) — with actor "dashboard" or "tray", like a mutating
// tool call: a Security-level "started" line now, and the outcome line (also shown in the
// activity feed) when the returned end is called with the action's error. args is a struct of
// the action's arguments; payloads such as input are summarised like tool arguments (size and
// sha256 only).
func (s *Service) BeginAction(actor, action string, args any) (end func(error)) {
	raw, _ := json.Marshal(args)
	start := time.Now()
	summary, values := audit.SummarizeArgsValues(raw)
	e := audit.Entry{Time: start.UTC(), CallID: "a" + strconv.FormatUint(s.callSeq.Add(1), 10), Actor: actor, Tool: action,
		Transport: actor, Args: summary}
	s.audit.Started(context.Background(), e)
	return func(err error) {
		e.Outcome, e.DurationMs = "ok", float64(time.Since(start).Microseconds())/1000
		if err != nil {
			e.Outcome, e.Error = "error", err.Error()
		}
		s.activity.add(ActivityEntry{Entry: s.audit.Record(context.Background(), e, true), Values: values})
	}
}

// auditMiddleware records client identity on initialize and audits every tool call: the audit
// log, the session registry, the dashboard's activity feed and a tool_call metrics event.
func (s *Service) auditMiddleware(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		if method != "tools/call" {
			if method == "initialize" {
				res, err := next(ctx, method, req)
				s.sessionID(ctx, req)
				return res, err
			}
			return next(ctx, method, req)
		}
		params, _ := req.GetParams().(*sdk.CallToolParamsRaw)
		var tool, args string
		var parent string // the outer call of an inner call (a script's)
		if in, ok := toolcall.InnerOf(ctx); ok {
			parent = in.Parent
		}
		var values map[string]string // for the activity feed only: never written
		var raw json.RawMessage
		if params != nil {
			tool, raw = params.Name, params.Arguments
		}
		// The arguments are split here, once, for every layer inside that reads them by name.
		c := toolcall.New(raw)
		if raw != nil {
			if a, keys, vals, ok := c.Split(); ok {
				args, values = audit.SummarizeSplitValues(a, keys, vals)
			} else {
				args, values = audit.SummarizeArgsValues(raw)
			}
		}
		security := s.toolsets.isSecurity(tool) || s.up.IsSecurity(tool)
		start := time.Now()
		if security {
			// A mutating call is on record before it runs: if it takes the hub down (exec of
			// "kill -9 $PPID", a fork bomb), the trail still shows what was asked and by whom.
			// The policy middleware (inside this one) writes the line once the call is allowed
			// to run, so a refused call or a question back to the client leaves no "started".
			c.OnStart(func() {
				callID := c.EnsureID(s.newCallID)
				id, transport := s.sessionID(ctx, req)
				s.audit.Started(ctx, audit.Entry{Time: start.UTC(), CallID: callID, Parent: parent, Tool: tool, Session: id, Client: callerName(req), Protocol: callerProtocol(req), Transport: transport, Args: args})
			})
		}
		ctx = toolcall.With(ctx, c)
		res, err := next(ctx, method, req)
		elapsed := time.Since(start)
		if r, ok := res.(*sdk.CallToolResult); ok && err == nil && r.NeedsInput() {
			// The hub asked the client something (multi round-trip); the call is recorded once,
			// when the client retries with the answers and it really runs or is refused.
			return res, err
		}

		id, transport := s.sessionID(ctx, req)
		e := audit.Entry{Time: start.UTC(), CallID: c.ID(), Parent: parent, Session: id, Client: callerName(req), Protocol: callerProtocol(req), Transport: transport, Outcome: "ok",
			DurationMs: float64(elapsed.Microseconds()) / 1000, Tool: tool, Args: args}
		var rpcErr *jsonrpc.Error
		refused := errors.As(err, &rpcErr) // go-sdk's answer without the tool: unknown tool, invalid params
		if err != nil {
			e.Outcome, e.Error = "error", err.Error()
		} else if r, ok := res.(*sdk.CallToolResult); ok {
			if r.IsError {
				e.Outcome = "error"
				e.Error = errorText(r)
			}
			if ig, ok := r.Meta[sbtool.IgnoredMetaKey].([]string); ok {
				e.Ignored = strings.Join(ig, ", ")
			}
		}
		r := c.Record()
		e.Decision, e.Rule, e.Approval, e.By = r.Decision, r.Rule, r.Approval, r.By
		e.Roots = strings.Join(r.Roots, "; ")
		refused = refused || r.Refused
		e = s.audit.Record(ctx, e, security || e.Decision != "allow")
		if id != "" {
			s.sessions.CountCall(id, e.Tool)
		}
		s.activity.add(ActivityEntry{Entry: e, Values: values, Refused: refused})
		s.recorder.record(e, elapsed)
		return res, err
	}
}

// callerName is the calling client's self-reported name, for the audit trail ("" before
// initialize, or for a request that carries no server session).
func callerName(req sdk.Request) string {
	ss, _ := req.GetSession().(*sdk.ServerSession)
	return mcptransport.ClientName(ss)
}

// callerProtocol is the MCP revision of the request's client ("" when unknown).
func callerProtocol(req sdk.Request) string {
	ss, _ := req.GetSession().(*sdk.ServerSession)
	return mcptransport.Protocol(ss)
}

func errorText(r *sdk.CallToolResult) string {
	for _, c := range r.Content {
		if t, ok := c.(*sdk.TextContent); ok {
			if len(t.Text) > 300 {
				return t.Text[:297] + "..."
			}
			return t.Text
		}
	}
	return ""
}

// activityLog keeps the newest tool calls for the dashboard's snapshot and fans them out. It is
// a ring: adding is O(1) however full it is.
type activityLog struct {
	mu        sync.Mutex
	entries   []ActivityEntry // ring storage, len <= max
	next      int             // where the next entry goes once the ring is full
	max       int
	listeners listeners.Set[ActivityEntry]
}

func newActivityLog(max int) *activityLog { return &activityLog{max: max} }

// activityArgsCap bounds the argument summary an activity entry carries: the audit log keeps
// values whole up to audit.ValueCap, but 500 entries of that in every dashboard snapshot would be
// megabytes. The dashboard shows the head; the audit file has the rest.
const activityArgsCap = 1024

func (a *activityLog) add(e ActivityEntry) {
	if len(e.Args) > activityArgsCap {
		cut := activityArgsCap
		for cut > 0 && !utf8.RuneStart(e.Args[cut]) {
			cut--
		}
		e.Args = e.Args[:cut] + fmt.Sprintf("… (%d bytes; whole in the audit log)", len(e.Args))
	}
	a.mu.Lock()
	if len(a.entries) < a.max {
		a.entries = append(a.entries, e)
	} else {
		a.entries[a.next] = e
		a.next = (a.next + 1) % a.max
	}
	a.mu.Unlock()
	a.listeners.Notify(e)
}

// list returns the entries oldest first.
func (a *activityLog) list() []ActivityEntry {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]ActivityEntry, 0, len(a.entries))
	out = append(out, a.entries[a.next:]...)
	return append(out, a.entries[:a.next]...)
}

func (a *activityLog) subscribe(fn func(ActivityEntry)) (cancel func()) { return a.listeners.Add(fn) }

// callRecorder writes tool_call metrics events off the request path: a bounded queue drained by
// one goroutine, so a slow disk never slows a tool call, and a full queue drops (and counts) events
// rather than block.
type callRecorder struct {
	store  *metrics.Store
	logger *slog.Logger
	queue  chan callEvent
	done   chan struct{}
	once   sync.Once

	mu      sync.Mutex // guards closed and dropped; sends are non-blocking so holding it is cheap
	closed  bool
	dropped int
}

func newCallRecorder(store *metrics.Store, logger *slog.Logger) *callRecorder {
	r := &callRecorder{store: store, logger: logger, queue: make(chan callEvent, 1024), done: make(chan struct{})}
	if store == nil {
		close(r.done)
		return r
	}
	go r.run()
	return r
}

// run drains the queue in batches: whatever has queued up while the previous write ran goes out
// in one write.
func (r *callRecorder) run() {
	defer close(r.done)
	batch := make([]metrics.Event, 0, 64)
	for ev := range r.queue {
		batch = append(batch[:0], ev.event())
	more:
		for len(batch) < cap(batch) {
			select {
			case ev, ok := <-r.queue:
				if !ok {
					break more
				}
				batch = append(batch, ev.event())
			default:
				break more
			}
		}
		if _, err := r.store.RecordBatch(batch); err != nil {
			r.logger.Warn("record tool_call metrics", "events", len(batch), "error", err)
		}
	}
}

// callEvent is what a tool call queues for its metrics event: the event itself (a map of boxed
// values) is built by the recorder's goroutine, off the request path.
type callEvent struct {
	session, tool, outcome, transport string
	durationMs                        float64
	d                                 time.Duration
}

func (c callEvent) event() metrics.Event {
	return metrics.Event{Type: tools.ToolCallEventType, AgentID: c.session, Duration: c.d, Data: map[string]any{
		"tool": c.tool, "outcome": c.outcome, "transport": c.transport, "duration_ms": c.durationMs,
	}}
}

func (r *callRecorder) record(e audit.Entry, d time.Duration) {
	if r.store == nil {
		return
	}
	ev := callEvent{session: e.Session, tool: e.Tool, outcome: e.Outcome, transport: e.Transport, durationMs: e.DurationMs, d: d}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return
	}
	select {
	case r.queue <- ev:
	default:
		r.dropped++
	}
}

// close drains the queue and stops the writer.
func (r *callRecorder) close() {
	r.once.Do(func() {
		if r.store != nil {
			r.mu.Lock()
			r.closed = true
			close(r.queue)
			r.mu.Unlock()
		}
	})
	<-r.done
}

// recoverMiddleware is the outermost receiving middleware: a panic while handling a request — in
// a tool handler or in a library it calls (the Qdrant client, chromedp's callers, a parser) —
// becomes an error for that one request, logged with its stack, instead of ending the process
// and every client's session with it. Being outermost, it is also the one place a tools/call result leaves the hub:
// it gives the hub's own results the resultType a 2026-07-28 client needs (withResultType).
func (s *Service) recoverMiddleware(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (res sdk.Result, err error) {
		defer func() {
			r := recover()
			if r == nil {
				return
			}
			name := method
			if p, ok := req.GetParams().(*sdk.CallToolParamsRaw); ok && p != nil {
				name = p.Name
			}
			s.logger.Error("recovered from a panic while handling a request; the hub keeps serving", "method", method, "name", name, "panic", r, "stack", string(debug.Stack()))
			if method == "tools/call" {
				res, err = withResultType(req, sbtool.ErrorText(fmt.Sprintf("%s: internal error (%v); the hub is still running — this is a bug in Switchboard, please report it with the hub's log", name, r))), nil
				return
			}
			res, err = nil, fmt.Errorf("%s: internal error (%v); the hub is still running", method, r)
		}()
		res, err = next(ctx, method, req)
		if err == nil {
			res = withResultType(req, res)
		}
		return res, err
	}
}

// withResultType is the one place a 2026-07-28 result gets its resultType: every result the
// hub returns for tools/call, prompts/get or resources/read passes here (recoverMiddleware is
// outermost), so no path can forget it. go-sdk sets "complete" on the results of the handlers it
// dispatches to and on every other result of a 2026-07-28 request; a result the hub built itself
// before go-sdk's dispatch (a policy refusal, an unanswerable ask, a held tool, a recovered
// panic, an upstream's result relayed by a middleware) has none, and clients of that revision
// reject a result without it (the AI SDK: "Modern MCP result is missing resultType"). go-sdk
// keeps the field unexported; it is read by reflection (resultTypeOf) and set through the
// type's JSON form, the supported way (as rounds.go does for input requests), so only results
// without one are re-encoded.
func withResultType(req sdk.Request, res sdk.Result) sdk.Result {
	var out sdk.Result
	switch res.(type) {
	case *sdk.CallToolResult:
		out = new(sdk.CallToolResult)
	case *sdk.GetPromptResult:
		out = new(sdk.GetPromptResult)
	case *sdk.ReadResourceResult:
		out = new(sdk.ReadResourceResult)
	default:
		return res // go-sdk sets it on every other result type of a 2026-07-28 request
	}
	if !modernSession(req) {
		return res
	}
	if rt, known := resultTypeOf(res); known && rt != "" {
		return res
	}
	raw, err := json.Marshal(res)
	if err != nil || bytes.Contains(raw, []byte(`"resultType"`)) {
		return res
	}
	var wire map[string]json.RawMessage
	if json.Unmarshal(raw, &wire) != nil {
		return res
	}
	wire["resultType"] = json.RawMessage(`"complete"`)
	if raw, err = json.Marshal(wire); err != nil {
		return res
	}
	if json.Unmarshal(raw, out) != nil {
		return res
	}
	return out
}

// resultTypeOf reads the unexported resultType of the go-sdk results that carry one; known is
// false when res has no such field (a go-sdk upgrade that renamed it falls back to encoding:
// TestResultTypeFieldReadable is its canary).
func resultTypeOf(res sdk.Result) (rt string, known bool) {
	v := reflect.ValueOf(res)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return "", false
	}
	f := v.Elem().FieldByName("resultType")
	if !f.IsValid() || f.Kind() != reflect.String {
		return "", false
	}
	return f.String(), true
}

// modernSession reports whether the request's session speaks 2026-07-28 or later, the revisions
// whose results carry resultType.
func modernSession(req sdk.Request) bool {
	ss, _ := req.GetSession().(*sdk.ServerSession)
	if ss == nil {
		return false
	}
	p := ss.InitializeParams()
	return p != nil && p.ProtocolVersion >= "2026-07-28"
}

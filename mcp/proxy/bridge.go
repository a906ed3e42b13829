package proxy

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/mcp/tool"
	mcptransport "github.com/switchboard-hub/switchboard/mcp/transport"
)

// The bridge between protocol eras for upstream calls. A server asks its client something
// during a call (elicitation, sampling) in one of two ways: a 2025-era server sends a request
// while the call waits; a 2026-era server (protocol 2026-07-28, multi round-trip requests)
// answers input_required and is called again with the answers (internal/upstream/rounds.go
// turns that into the same hook calls, with the call's context). Which way the question reaches
// the hub's client depends on the client's era, never the server's:
//
//   - a 2025-era client is sent the request during its call (ss.Elicit, ss.CreateMessage), as
//     go-sdk's server does;
//   - a 2026-era client cannot be sent requests: its call is held. The upstream call runs on
//     (heldCall), the client's tools/call is answered input_required with the question and a
//     requestState of the hub's, and the client's retry with that state feeds the answer to the
//     waiting question and goes on waiting for the same upstream call: its next question or
//     its result. The upstream's own requestState never leaves the hub, and the hub's is bound
//     to the session, tool and arguments that got it, and used once.
//
// A held call is bounded: a client that does not retry within holdTimeout ends it (the upstream
// gets an error for its question and the call is cancelled), a call asks at most
// maxBridgeRounds questions, and at most maxHeldCalls wait at once.

const (
	maxHeldCalls = 1000
	// maxBridgeRounds is below go-sdk's client's own bound (10 rounds of one call, the hub's
	// own questions — roots, approval — included), so a client is told why in a result
	// rather than failing the call itself.
	maxBridgeRounds = 8
	// DefaultHoldTimeout is how long a held call waits for its client's retry: a person reads
	// the question and answers it.
	DefaultHoldTimeout = 5 * time.Minute
)

// heldCall is an upstream call of a 2026-era client that outlives the client's tools/call
// requests: each request carries it one round further. Its goroutine (started by startHeld)
// owns the upstream call and ends with it; the call ends when the server answers, when the
// client cancels a round's request, or when its client does not come back (expire).
type heldCall struct {
	u       *Upstreams
	server  string
	exposed string
	bind    string // the calling client (sessionKey): a retry must come from it
	key     string // digest of tool and arguments: a retry must be the same call

	kind heldKind // what the call is: a tool call, a prompt's get or a resource's read

	ctx    context.Context // the upstream call's
	cancel context.CancelCauseFunc
	done   chan struct{} // closed when the upstream call returned (res, err set)
	res    sdk.Result
	err    error
	asks   chan *question // the server's questions, to the round waiting for them
	route  *callRoute     // its progress route, re-pointed at each round's progress token

	mu      sync.Mutex
	pending *question // asked to the client, waiting for its retry
	token   string    // the requestState the client got with pending
	timer   *time.Timer
	rounds  int // questions put to the client
	asked   int // questions the server asked (their ids)
}

// question is one request of the server's, waiting for the client's answer.
type question struct {
	id     string
	method string
	req    sdk.InputRequest
	answer chan answer // buffered: the round that answers never waits
}

type answer struct {
	res sdk.InputResponse
	err error
}

// heldCalls is the table of held calls waiting for their client's retry, by requestState.
type heldCalls struct {
	mu      sync.Mutex
	byToken map[string]*heldCall
	live    map[*heldCall]struct{} // held calls whose upstream call has not ended
	closed  bool                   // Close: no call is held any more
	// expired remembers, for a while, the requestStates of calls that were ended because
	// their client did not come back in time, so a late retry is told so rather than
	// running the call again.
	expired map[string]expiredCall
}

type expiredCall struct {
	bind string
	key  string
	msg  string
	at   time.Time
}

// expiredMemory is how long a late retry is recognized.
const expiredMemory = 10 * time.Minute

func callKey(p *sdk.CallToolParamsRaw) string { return heldKey(heldTool, p.Name, p.Arguments) }

// heldKey is the digest a retry must match: the kind of call, what it names and its arguments.
func heldKey(k heldKind, name string, args []byte) string {
	h := sha256.New()
	h.Write([]byte{byte(k)})
	h.Write([]byte(name))
	h.Write([]byte{0})
	h.Write(args)
	return hex.EncodeToString(h.Sum(nil))
}

// heldKind is which of a client's requests a held call carries. Each answers in its own result
// type: a tool call's failures are error results the model reads; a prompt's or a resource's
// are JSON-RPC errors, as their direct calls give.
type heldKind byte

const (
	heldTool heldKind = iota + 1
	heldPrompt
	heldResource
)

// inputRequired is the call's input_required answer in the kind's result type (protocol
// 2026-07-28; go-sdk's result type field is unexported, its JSON form sets it).
func (k heldKind) inputRequired(asks sdk.InputRequestMap, state string) (sdk.Result, error) {
	if k == heldTool {
		return tool.InputRequired(asks, state)
	}
	ir, err := json.Marshal(asks)
	if err != nil {
		return nil, err
	}
	body := map[string]any{"inputRequests": json.RawMessage(ir), "requestState": state, "resultType": "input_required"}
	var res sdk.Result
	switch k {
	case heldPrompt:
		body["messages"] = []any{}
		res = &sdk.GetPromptResult{}
	default:
		body["contents"] = []any{}
		res = &sdk.ReadResourceResult{}
	}
	raw, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(raw, res); err != nil {
		return nil, err
	}
	return res, nil
}

// failure is the call ending with msg, in the kind's way.
func (k heldKind) failure(msg string) (sdk.Result, error) {
	if k == heldTool {
		return tool.ErrorText(msg), nil
	}
	return nil, errors.New(msg)
}

// outcome is the upstream call's answer in the kind's way: a tool call's error is an error
// result (go-sdk would make it a protocol error).
func (k heldKind) outcome(res sdk.Result, err error) (sdk.Result, error) {
	if k == heldTool && err != nil {
		return tool.Error(err), nil
	}
	return res, err
}

// heldRound is one request of a 2026-era client that a held call serves: its first, or a
// retry carrying the hub's requestState and the client's answers.
type heldRound struct {
	kind      heldKind
	session   *sdk.ServerSession
	caller    Caller
	name      string // the tool or prompt as the client named it, or the resource's URI
	key       string // heldKey of the request
	state     string // RequestState
	responses sdk.InputResponseMap
	progress  any // the client's progress token
}

func toolRound(u *Upstreams, ctx context.Context, req *sdk.CallToolRequest) heldRound {
	return heldRound{kind: heldTool, session: req.Session, caller: u.callerOf(ctx, req), name: req.Params.Name,
		key: callKey(req.Params), state: req.Params.RequestState, responses: req.Params.InputResponses,
		progress: req.Params.GetProgressToken()}
}

// Resumes reports whether req is a 2026-era client's retry of one of its held upstream calls
// (its requestState is the hub's, for this session, tool and arguments): the call was already
// allowed when it started, so the policy does not ask again for its next round.
func (u *Upstreams) Resumes(ctx context.Context, req *sdk.CallToolRequest) bool {
	if u == nil || req == nil || req.Params == nil || req.Params.RequestState == "" {
		return false
	}
	u.held.mu.Lock()
	h := u.held.byToken[req.Params.RequestState]
	u.held.mu.Unlock()
	return h != nil && h.bind == u.sessionKey(ctx, req) && h.key == callKey(req.Params)
}

// Caller is the hub's record of a request's client: the Sessions view's id of it and its
// transport (what the audit log names).
type Caller struct{ ID, Transport string }

// callerOf is req's client as the hub records it (SetCallers); empty without a record.
func (u *Upstreams) callerOf(ctx context.Context, req sdk.Request) Caller {
	if f := u.callerRec; f != nil {
		return f(ctx, req)
	}
	return Caller{}
}

// bindKey names the calling client a held call is bound to: the hub's record of it when there
// is one (a stateless client's identity is not one session object: each of its requests may
// come on another), else its session.
func bindKey(c Caller, ss *sdk.ServerSession) string {
	if c.ID != "" {
		return c.ID
	}
	return fmt.Sprintf("session %p", ss)
}

func (u *Upstreams) sessionKey(ctx context.Context, req *sdk.CallToolRequest) string {
	return bindKey(u.callerOf(ctx, req), req.Session)
}

// SetCallers makes f the hub's record of a request's client, for binding held calls and for the
// audit lines of relayed questions.
func (u *Upstreams) SetCallers(f func(ctx context.Context, req sdk.Request) Caller) {
	u.callerRec = f
}

// callHeld serves a proxied tools/call of a 2026-era client (hold).
func (u *Upstreams) callHeld(ctx context.Context, req *sdk.CallToolRequest, name, upName string) (*sdk.CallToolResult, error) {
	args := req.Params.Arguments
	return holdAs(ctx, u, toolRound(u, ctx, req), name, func(ctx context.Context, upTok any) (*sdk.CallToolResult, error) {
		return u.m.CallTool(ctx, name, upName, args, upTok)
	})
}

// getPromptHeld serves a proxied prompts/get of a 2026-era client (hold).
func (u *Upstreams) getPromptHeld(ctx context.Context, req *sdk.GetPromptRequest, name string, params *sdk.GetPromptParams) (*sdk.GetPromptResult, error) {
	args, _ := json.Marshal(req.Params.Arguments)
	round := heldRound{kind: heldPrompt, session: req.Session, caller: u.callerOf(ctx, req), name: req.Params.Name,
		key: heldKey(heldPrompt, req.Params.Name, args), state: req.Params.RequestState, responses: req.Params.InputResponses,
		progress: req.Params.GetProgressToken()}
	return holdAs(ctx, u, round, name, func(ctx context.Context, _ any) (*sdk.GetPromptResult, error) {
		return u.m.GetPrompt(ctx, name, params)
	})
}

// readResourceHeld serves a proxied resources/read of a 2026-era client (hold).
func (u *Upstreams) readResourceHeld(ctx context.Context, req *sdk.ReadResourceRequest, name string, params *sdk.ReadResourceParams) (*sdk.ReadResourceResult, error) {
	round := heldRound{kind: heldResource, session: req.Session, caller: u.callerOf(ctx, req), name: req.Params.URI,
		key: heldKey(heldResource, req.Params.URI, nil), state: req.Params.RequestState, responses: req.Params.InputResponses,
		progress: req.Params.GetProgressToken()}
	return holdAs(ctx, u, round, name, func(ctx context.Context, _ any) (*sdk.ReadResourceResult, error) {
		return u.m.ReadResource(ctx, name, params)
	})
}

// holdAs is hold for a request whose result is R: the upstream call's answer in, the held
// call's answer (input_required, the result, a failure in the kind's way) out.
func holdAs[R sdk.Result](ctx context.Context, u *Upstreams, rq heldRound, name string, call func(ctx context.Context, upTok any) (R, error)) (R, error) {
	res, err := u.hold(ctx, rq, name, func(ctx context.Context, upTok any) (sdk.Result, error) { return call(ctx, upTok) })
	r, _ := res.(R)
	return r, err
}

// hold serves a proxied request of a 2026-era client to server name: a retry carrying one of
// the hub's requestStates continues its held call; anything else starts the upstream call
// (call, with the upstream progress token the hub made for it).
func (u *Upstreams) hold(ctx context.Context, rq heldRound, name string, call func(ctx context.Context, upTok any) (sdk.Result, error)) (sdk.Result, error) {
	key, bind := rq.key, bindKey(rq.caller, rq.session)
	if st := rq.state; st != "" {
		u.held.mu.Lock()
		h := u.held.byToken[st]
		if h != nil && h.bind == bind && h.key == key {
			delete(u.held.byToken, st) // one use
		} else {
			h = nil // another layer's state (the policy's approval round), or stale: a new call
		}
		u.held.mu.Unlock()
		if h != nil {
			return h.resume(ctx, rq)
		}
		u.held.mu.Lock()
		e, late := u.held.expired[st]
		if late && e.bind == bind && e.key == key {
			delete(u.held.expired, st)
		} else {
			late = false
		}
		u.held.mu.Unlock()
		if late {
			return rq.kind.failure(e.msg)
		}
	}
	hctx, cancel := context.WithCancelCause(context.Background())
	h := &heldCall{u: u, server: name, exposed: rq.name, bind: bind, key: key, kind: rq.kind, cancel: cancel,
		done: make(chan struct{}), asks: make(chan *question)}
	u.held.mu.Lock()
	switch {
	case u.held.closed:
		u.held.mu.Unlock()
		cancel(nil)
		return rq.kind.failure(rq.name + ": the hub is shutting down")
	case len(u.held.live) >= maxHeldCalls:
		u.held.mu.Unlock()
		cancel(nil)
		return rq.kind.failure(fmt.Sprintf("%s: %d upstream calls already wait for their clients' answers; answer those first", rq.name, maxHeldCalls))
	}
	u.held.live[h] = struct{}{}
	u.held.mu.Unlock()
	route := newRoute(rq.session, rq.caller, rq.name, h)
	h.route = route
	h.ctx = withRoute(hctx, route)
	upTok, untrack := u.track(name, route, rq.progress)
	go func() { // owned by h: ends when the upstream call returns (hctx bounds it)
		res, err := call(h.ctx, upTok)
		untrack()
		h.res, h.err = res, err
		close(h.done)
		cancel(errCallEnded)
		u.held.mu.Lock()
		delete(u.held.live, h)
		u.held.mu.Unlock()
	}()
	return h.wait(ctx, rq)
}

var errCallEnded = errors.New("the call has ended")

// wait carries the call one round: until the server answers (the result), asks (the call
// answers input_required) or the client's request ends (the upstream call is cancelled).
func (h *heldCall) wait(ctx context.Context, rq heldRound) (sdk.Result, error) {
	h.route.setRequest(rq.session, rq.caller, rq.progress)
	select {
	case <-h.done:
		return h.kind.outcome(h.res, h.err)
	case q := <-h.asks:
		h.mu.Lock()
		h.rounds++
		rounds := h.rounds
		h.mu.Unlock()
		if rounds > maxBridgeRounds {
			err := fmt.Errorf("server %q asked the client %d times during one call; the hub stops there", h.server, rounds)
			q.answer <- answer{err: err}
			h.cancel(err)
			<-h.done
			return h.kind.failure(fmt.Sprintf("%s: %v", h.exposed, err))
		}
		return h.ask(q)
	case <-ctx.Done():
		h.cancel(fmt.Errorf("the client cancelled the call: %w", context.Cause(ctx)))
		<-h.done
		return nil, ctx.Err()
	}
}

// ask answers the client's request with q as input_required, and keeps the call for the
// client's retry (at most holdTimeout).
func (h *heldCall) ask(q *question) (sdk.Result, error) {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	token := hex.EncodeToString(b)
	timeout := h.u.holdTimeout()
	h.route.setRequest(nil, Caller{}, nil) // the request ends with this answer: no progress for it until the retry
	h.mu.Lock()
	h.pending, h.token = q, token
	h.mu.Unlock()
	h.u.held.mu.Lock()
	h.u.held.byToken[token] = h // before the timer: expire must find it
	h.u.held.mu.Unlock()
	h.mu.Lock()
	h.timer = time.AfterFunc(timeout, func() { h.expire(token, timeout) })
	h.mu.Unlock()
	res, err := h.kind.inputRequired(sdk.InputRequestMap{q.id: q.req}, token)
	if err != nil {
		h.cancel(err)
		return nil, err
	}
	return res, nil
}

// expire ends a held call whose client did not retry in time: its question fails for the server
// and the upstream call is cancelled.
func (h *heldCall) expire(token string, after time.Duration) {
	err := fmt.Errorf("the client did not answer within %s (it did not retry the call with the answer)", after)
	now := time.Now()
	h.u.held.mu.Lock()
	mine := h.u.held.byToken[token] == h
	if mine {
		delete(h.u.held.byToken, token)
		for k, e := range h.u.held.expired { // sweep: late retries are recognized for a while only
			if now.Sub(e.at) > expiredMemory {
				delete(h.u.held.expired, k)
			}
		}
		if len(h.u.held.expired) < maxHeldCalls {
			h.u.held.expired[token] = expiredCall{bind: h.bind, key: h.key, at: now,
				msg: fmt.Sprintf("%s: the call waited %s for the answer to server %q's question and was ended; call it again", h.exposed, after, h.server)}
		}
	}
	h.u.held.mu.Unlock()
	if !mine {
		return // resumed meanwhile
	}
	h.mu.Lock()
	q := h.pending
	h.pending = nil
	h.mu.Unlock()
	if q != nil {
		q.answer <- answer{err: err}
	}
	h.cancel(err)
}

// resume feeds the client's answer to the waiting question and carries the call on.
func (h *heldCall) resume(ctx context.Context, rq heldRound) (sdk.Result, error) {
	h.mu.Lock()
	q := h.pending
	h.pending = nil
	if h.timer != nil {
		h.timer.Stop()
	}
	h.mu.Unlock()
	if q == nil { // expired between the lookup and now
		return h.kind.failure(fmt.Sprintf("%s: the call waited too long for the answer and was ended; call it again", h.exposed))
	}
	a, ok := rq.responses[q.id]
	switch {
	case !ok:
		q.answer <- answer{err: fmt.Errorf("the client retried without answering %s %q", q.method, q.id)}
	default:
		q.answer <- answer{res: a}
	}
	return h.wait(ctx, rq)
}

// question puts one of the server's requests to the held call's client and waits for the
// answer: the round waiting for the server returns it as input_required, and the client's retry
// brings the answer. It fails when the call ends first (the server asked after its result, the
// client cancelled or did not come back).
func (h *heldCall) question(ctx context.Context, method string, p sdk.InputRequest) (sdk.InputResponse, error) {
	h.mu.Lock()
	h.asked++
	id := fmt.Sprintf("%s-%d", h.server, h.asked)
	h.mu.Unlock()
	q := &question{id: id, method: method, req: p, answer: make(chan answer, 1)}
	select {
	case h.asks <- q:
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-h.ctx.Done():
		return nil, context.Cause(h.ctx)
	}
	select {
	case a := <-q.answer:
		return a.res, a.err
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-h.ctx.Done():
		select { // an answer that came with the end wins
		case a := <-q.answer:
			return a.res, a.err
		default:
		}
		return nil, context.Cause(h.ctx)
	}
}

// holdTimeout is how long a held call waits for its client's retry.
func (u *Upstreams) holdTimeout() time.Duration {
	if d := time.Duration(u.holdFor.Load()); d > 0 {
		return d
	}
	return DefaultHoldTimeout
}

// SetHoldTimeout changes how long a held call waits for its client's retry (d <= 0: the
// default).
func (u *Upstreams) SetHoldTimeout(d time.Duration) { u.holdFor.Store(int64(d)) }

// callRoute is one client call in flight on a server: where the server's requests and progress
// for it go. A held call's route follows each round's request (its session and progress token).
type callRoute struct {
	tool string    // the tool as the client called it
	held *heldCall // a 2026-era client's call (questions as input_required), else nil

	mu     sync.Mutex
	ss     *sdk.ServerSession // the session of the current request (the last one, between rounds)
	caller Caller             // the hub's record of that request's client
	token  any                // the client's progress token of the current request (nil between rounds)
}

func newRoute(ss *sdk.ServerSession, c Caller, tool string, held *heldCall) *callRoute {
	return &callRoute{ss: ss, caller: c, tool: tool, held: held}
}

// setRequest points the route at a request of its call (ss nil: the last one's session and
// caller stay, for the questions that come between rounds).
func (r *callRoute) setRequest(ss *sdk.ServerSession, c Caller, tok any) {
	r.mu.Lock()
	if ss != nil {
		r.ss, r.caller = ss, c
	}
	r.token = tok
	r.mu.Unlock()
}

func (r *callRoute) client() Caller {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.caller
}

// session is the client's session of the current (or last) request.
func (r *callRoute) session() *sdk.ServerSession {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.ss
}

// progressTarget is where the server's progress goes now: nil when no request of the call is
// waiting for it, or it sent no progress token.
func (r *callRoute) progressTarget() (*sdk.ServerSession, any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.token == nil {
		return nil, nil
	}
	return r.ss, r.token
}

type routeKey struct{}

func withRoute(ctx context.Context, r *callRoute) context.Context {
	return context.WithValue(ctx, routeKey{}, r)
}

// routeFrom is the call a server's question belongs to when the hub knows it: a 2026-era
// server's questions come back inside the call (internal/upstream/rounds.go), with its context.
func routeFrom(ctx context.Context) *callRoute {
	r, _ := ctx.Value(routeKey{}).(*callRoute)
	return r
}

// relay puts a server's question to the client of route r in the client's era: a request
// during the call for a 2025-era client, an input_required round of the held call for a
// 2026-era one. Each relayed question is audited with the server's name.
func (u *Upstreams) relay(ctx context.Context, r *callRoute, server, method string, p sdk.InputRequest) (sdk.InputResponse, error) {
	ss := r.session()
	if a := u.auditRound; a != nil {
		a(ss, r.client(), r.tool, server, method, bridgeKind(ctx, r))
	}
	if r.held != nil {
		return r.held.question(ctx, method, p)
	}
	if mcptransport.SpeaksMRTR(ss) {
		// A 2026-era client's call that is not held (it started before the hub could hold it):
		// nothing can carry the question.
		return nil, fmt.Errorf("%s: the calling client (%s) speaks protocol %s and its call cannot carry the question", method, mcptransport.ClientName(ss), ss.InitializeParams().ProtocolVersion)
	}
	switch p := p.(type) {
	case *sdk.ElicitParams:
		return ss.Elicit(ctx, p)
	case *sdk.CreateMessageParams:
		return ss.CreateMessage(ctx, p)
	}
	return nil, fmt.Errorf("%s: cannot relay %T", method, p)
}

// bridgeKind says which eras a relayed question crosses, for the audit line.
func bridgeKind(ctx context.Context, r *callRoute) string {
	from := "server request"
	if routeFrom(ctx) != nil {
		from = "input_required" // a 2026-era server's question comes back inside the call
	}
	to := "client request"
	if r.held != nil {
		to = "input_required"
	}
	return from + " → " + to
}

// Close ends every held call (the hub is shutting down): their servers' questions fail, their
// upstream calls are cancelled, and no call is held from now on. Call it before stopping the
// servers: a server's session does not close while a question of its waits for an answer.
func (u *Upstreams) Close() {
	if u == nil {
		return
	}
	u.held.mu.Lock()
	u.held.closed = true
	live := make([]*heldCall, 0, len(u.held.live))
	for h := range u.held.live {
		live = append(live, h)
	}
	u.held.mu.Unlock()
	for _, h := range live {
		h.cancel(errors.New("the hub is shutting down"))
	}
}

// EndHeldOf ends the held calls of the client named key (its sessionKey): its session ended,
// so no retry will come. Their servers' questions fail with why and their calls are cancelled.
func (u *Upstreams) EndHeldOf(key, why string) {
	if u == nil || key == "" {
		return
	}
	u.held.mu.Lock()
	var mine []*heldCall
	for h := range u.held.live {
		if h.bind == key {
			mine = append(mine, h)
		}
	}
	u.held.mu.Unlock()
	for _, h := range mine {
		h.cancel(errors.New(why))
	}
}

// SetAudit makes f record each question a server puts to a client through the hub: the
// session, the tool called, the server, the request's method and the eras it crossed.
func (u *Upstreams) SetAudit(f func(ss *sdk.ServerSession, c Caller, tool, server, method, bridge string)) {
	u.auditRound = f
}

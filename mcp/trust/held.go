package trust

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/mcp/tool"
	"github.com/switchboard-hub/switchboard/mcp/toolcall"
	mcptransport "github.com/switchboard-hub/switchboard/mcp/transport"
)

// Held outer calls. A call that makes inner calls (script_run's script, project_run's exec) may
// meet a question while it runs: an inner call the policy asks about. A 2025-era client is asked
// by elicitation while the call waits. A 2026-07-28 client takes questions only as an
// input_required result, and an inner call cannot return one: re-running the outer call with the
// answer, as a direct call's round does, would run the script's earlier calls again. So the outer
// call of such a client is held: it runs on a context of its own, and when an inner call asks,
// the client's tools/call is answered input_required with that question and a requestState; the
// client's retry (same session, tool and arguments) brings the answer to the inner call that
// waits for it, and waits in turn for the call's end or its next question. The inner call's own
// ask timeout bounds the wait for an answer that never comes (it then counts as unanswered, as on
// the dashboard), and the held call is forgotten once it ended and nobody came back for it.
//
// Only sessions are held: a stateless client (2026-07-28 over HTTP) has a session per request,
// and an inner call cannot outlive the one it was made in; its questions go to the dashboard.
// A call handed back as a task (the tasks middleware, outside this one) asks through its task
// when its client declared the Tasks extension (toolcall.TaskAsker), else on the dashboard.

type heldOuter struct {
	caller any    // the session whose retries may resume it
	key    string // callKey of the call held

	qs     chan *heldQuestion // an inner call's question, to the outer call's current request
	done   chan struct{}      // closed when the call has returned
	res    sdk.Result
	err    error
	cancel context.CancelFunc

	mu   sync.Mutex
	open *heldQuestion // the question the client was sent, until its retry
}

// heldQuestion is one inner question on its way to the client and its answer on the way back.
type heldQuestion struct {
	id     string
	req    sdk.InputRequest
	answer chan sdk.InputResponse // buffered: the asker may have given up
}

type heldOuterKey struct{}

// innerAsker is how an inner call's question reaches a 2026-07-28 client, nil when it cannot:
// through the task its outer call runs as (Tasks extension), or through its held outer call.
func innerAsker(ctx context.Context) toolcall.TaskAsker {
	if toolcall.HandedOff(ctx) {
		return toolcall.TaskAskerOf(ctx)
	}
	if h := heldOuterOf(ctx); h != nil {
		return h.ask
	}
	return nil
}

func heldOuterOf(ctx context.Context) *heldOuter {
	h, _ := ctx.Value(heldOuterKey{}).(*heldOuter)
	return h
}

// ask passes an inner call's question to the client through the outer call and returns the
// client's answer, or ctx's error (the ask timed out, or the call was cancelled).
func (h *heldOuter) ask(ctx context.Context, id string, req sdk.InputRequest) (sdk.InputResponse, error) {
	if toolcall.HandedOff(ctx) {
		// The outer call was answered with a task handle: nobody waits for an input_required.
		return nil, errors.New("the call runs as a task its client cannot be asked through")
	}
	q := &heldQuestion{id: id, req: req, answer: make(chan sdk.InputResponse, 1)}
	select {
	case h.qs <- q:
	case <-h.done:
		return nil, errors.New("the call ended")
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	select {
	case a := <-q.answer:
		return a, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// SetHoldsInner names the tools whose calls make inner calls (script_run, project_run): those
// calls are held for a 2026-07-28 session so that their inner questions reach the client.
func (tr *Trust) SetHoldsInner(tools ...string) {
	m := make(map[string]bool, len(tools))
	for _, t := range tools {
		m[t] = true
	}
	tr.holdsInner = m
}

// HoldMiddleware holds the calls named by SetHoldsInner for 2026-07-28 sessions whose client
// answers questions (see heldOuter), and takes their retries. It sits outside the policy and the
// audit, so that a held call is decided and audited once, and its retries are not new calls.
func (tr *Trust) HoldMiddleware(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		creq, ok := req.(*sdk.CallToolRequest)
		if method != "tools/call" || !ok || creq.Session == nil || creq.Params == nil {
			return next(ctx, method, req)
		}
		ss := creq.Session
		if _, inner := toolcall.InnerOf(ctx); inner || !mcptransport.CanElicit(ss) || !mcptransport.SpeaksMRTR(ss) ||
			mcptransport.Caller(ctx, ss) != any(ss) {
			return next(ctx, method, req)
		}
		p := creq.Params
		if p.RequestState != "" {
			if h, ok := tr.held.take(p.RequestState, ss, callKey(p)); ok {
				return tr.resumeHeld(ctx, h, p.InputResponses)
			}
		}
		if !tr.holdsInner[p.Name] {
			return next(ctx, method, req)
		}
		h := &heldOuter{caller: ss, key: callKey(p), qs: make(chan *heldQuestion), done: make(chan struct{})}
		runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		h.cancel = cancel
		runCtx = context.WithValue(runCtx, heldOuterKey{}, h)
		go func() { // owned by the held call: ends when the call returns; h.cancel ends the call
			defer func() {
				// The hub's recovery layer is outside this one, on the request's goroutine.
				if v := recover(); v != nil {
					tr.logger.Error("panic in a held call", "tool", p.Name, "panic", v, "stack", string(debug.Stack()))
					h.res, h.err = tool.ErrorText(fmt.Sprintf("%s: internal error in the hub (logged); the hub goes on serving", p.Name)), nil
				}
				cancel()
				close(h.done)
			}()
			h.res, h.err = next(runCtx, method, req)
		}()
		return tr.waitHeld(ctx, h)
	}
}

// waitHeld answers the client's current request: with the call's result when it ends, or
// input_required with the next question an inner call asks.
func (tr *Trust) waitHeld(ctx context.Context, h *heldOuter) (sdk.Result, error) {
	select {
	case <-h.done:
		return h.res, h.err
	case q := <-h.qs:
		return tr.sendQuestion(h, q)
	case <-ctx.Done():
		// The client cancelled its request (or went away) while no question was out.
		h.cancel()
		<-h.done
		return h.res, h.err
	}
}

func (tr *Trust) sendQuestion(h *heldOuter, q *heldQuestion) (sdk.Result, error) {
	h.mu.Lock()
	h.open = q
	h.mu.Unlock()
	token, ok := tr.held.put(h, h.caller, h.key, tr.policy.Policy().AskTimeout+time.Minute)
	if !ok {
		h.cancel() // nobody could bring the answer: the call ends here
		return tool.ErrorText(fmt.Sprintf("%d calls already wait for answers from their clients; answer those first", maxPending)), nil
	}
	return tool.InputRequired(sdk.InputRequestMap{q.id: q.req}, token)
}

// resumeHeld gives the open question its answer from the client's retry and waits again.
func (tr *Trust) resumeHeld(ctx context.Context, h *heldOuter, answers sdk.InputResponseMap) (sdk.Result, error) {
	h.mu.Lock()
	q := h.open
	h.open = nil
	h.mu.Unlock()
	if q != nil {
		a, ok := answers[q.id]
		if !ok {
			return tr.sendQuestion(h, q) // the retry did not answer it: ask again
		}
		q.answer <- a
	}
	return tr.waitHeld(ctx, h)
}

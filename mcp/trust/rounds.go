package trust

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/mcp/tool"
	"github.com/switchboard-hub/switchboard/mcp/toolcall"
	mcptransport "github.com/switchboard-hub/switchboard/mcp/transport"
)

// Questions to the client travel two ways, depending on the protocol version it negotiated:
//
//   - up to 2025-11-25 the hub sends elicitation/create and roots/list requests while the call
//     waits;
//   - from 2026-07-28 (SEP-2322, multi round-trip requests) a server may no longer send those
//     requests; the call instead answers "input_required" with the questions, and the client
//     retries it with the answers and the requestState the hub gave it.
//
// A round is one tools/call attempt. It collects the questions that still need an answer and
// remembers, server-side under a random requestState, the answers earlier attempts brought, so
// a retry is tied to the same session, tool and arguments and cannot be pre-answered. A stateless
// client (2026-07-28 over HTTP) has a new session for every request, so its retries are tied to
// its identity instead (the token it presented and its clientInfo: mcptransport.Caller).

type round struct {
	tr      *Trust
	ctx     context.Context
	req     *sdk.CallToolRequest
	ss      *sdk.ServerSession
	caller  any // who may bring the answers back (mcptransport.Caller)
	mrtr    bool
	answers sdk.InputResponseMap
	ask     sdk.InputRequestMap
}

func callKey(p *sdk.CallToolParamsRaw) string {
	h := sha256.New()
	h.Write([]byte(p.Name))
	h.Write([]byte{0})
	h.Write(p.Arguments)
	return hex.EncodeToString(h.Sum(nil))
}

func (tr *Trust) newRound(ctx context.Context, req *sdk.CallToolRequest) *round {
	r := &round{tr: tr, ctx: ctx, req: req, ss: req.Session, caller: mcptransport.Caller(ctx, req.Session)} // maps made on demand: most calls ask nothing
	// An inner call (a script's) cannot answer input_required: its questions go to the client
	// while the outer call waits, or to the dashboard (askUser).
	if _, inner := toolcall.InnerOf(ctx); r.ss != nil && !inner {
		if p := r.ss.InitializeParams(); p != nil && p.ProtocolVersion >= mcptransport.MRTRProtocol {
			r.mrtr = true
		}
	}
	if !r.mrtr || req.Params.RequestState == "" {
		return r
	}
	answers, ok := tr.rounds.take(req.Params.RequestState, r.caller, callKey(req.Params))
	if !ok {
		tr.rounds.drop(req.Params.RequestState) // one use, whoever presents it
		return r                                // unknown, foreign or stale state: every question is asked afresh
	}
	r.answers = maps.Clone(answers)
	if r.answers == nil {
		r.answers = sdk.InputResponseMap{}
	}
	maps.Copy(r.answers, req.Params.InputResponses)
	return r
}

func (r *round) queue(id string, q sdk.InputRequest) {
	if r.ask == nil {
		r.ask = sdk.InputRequestMap{}
	}
	r.ask[id] = q
}

// needsInput reports whether questions are waiting for the client.
func (r *round) needsInput() bool { return len(r.ask) > 0 }

// inputRequired is the "input_required" result carrying the open questions.
func (r *round) inputRequired() (*sdk.CallToolResult, error) {
	token, ok := r.tr.rounds.put(maps.Clone(r.answers), r.caller, callKey(r.req.Params), r.tr.policy.Policy().AskTimeout+time.Minute)
	if !ok {
		return tool.ErrorText(fmt.Sprintf("%s: %d calls already wait for answers from their clients; answer those first", r.req.Params.Name, maxPending)), nil
	}
	return tool.InputRequired(r.ask, token)
}

// elicit returns the client's answer to an elicitation. ok is false when the question was
// queued for the client (multi round-trip) and the call must answer input_required.
func (r *round) elicit(ctx context.Context, id string, p *sdk.ElicitParams) (res *sdk.ElicitResult, ok bool, err error) {
	if !r.mrtr {
		if ask := innerAsker(r.ctx); ask != nil && mcptransport.SpeaksMRTR(r.ss) {
			// An inner call of a held outer call or of a task: the question goes to the
			// client as the outer call's input_required (the answer comes back with its
			// retry), or as the task's (the answer comes with tasks/update).
			a, err := ask(ctx, id, p)
			if err != nil {
				return nil, true, err
			}
			res, isElicit := a.(*sdk.ElicitResult)
			if !isElicit {
				return nil, true, fmt.Errorf("the client answered the question with %T, not an elicitation result", a)
			}
			return res, true, nil
		}
		res, err = r.ss.Elicit(ctx, p)
		return res, true, err
	}
	if v, found := r.answers[id].(*sdk.ElicitResult); found {
		return v, true, nil
	}
	r.queue(id, p)
	return nil, false, nil
}

// listRoots returns the client's roots, or ok=false when the request was queued.
func (r *round) listRoots(ctx context.Context) (res *sdk.ListRootsResult, ok bool, err error) {
	const id = "switchboard-roots"
	if !r.mrtr {
		res, err = r.ss.ListRoots(ctx, nil)
		return res, true, err
	}
	if v, found := r.answers[id].(*sdk.ListRootsResult); found {
		return v, true, nil
	}
	r.queue(id, &sdk.ListRootsParams{})
	return nil, false, nil
}

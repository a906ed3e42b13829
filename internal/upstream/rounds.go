package upstream

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Multi round-trip requests (SEP-2322) from servers on protocol 2026-07-28 or later: instead of
// sending its client requests during a call, such a server answers the call "input_required"
// with the questions (elicitation, sampling, roots) and a requestState, and the client calls
// again with the answers. go-sdk's client does that loop itself by default, but through the
// client's own handlers with none of the call's context; the hub turns it off
// (MultiRoundTripOptions.Disabled in newClient) and runs the loop here, so that each question
// reaches the hooks with the context of the call that caused it: the hub then knows exactly
// which client's call asked (no guessing between calls of several clients, as a 2025-era
// server's request forces), and can relay the question to that client in its own era.

// maxInputRounds bounds the rounds of one call on a server that keeps asking (go-sdk's own
// client stops at 10 too).
const maxInputRounds = 10

// maxLoadShedding bounds the retries of a server that answers input_required with no question
// (the spec's way to say "busy, retry"), each after loadSheddingPause.
const (
	maxLoadShedding   = 3
	loadSheddingPause = 200 * time.Millisecond
)

// withRounds runs one request of a multi round-trip method (tools/call, prompts/get,
// resources/read) on a session of protocol 2026-07-28 or later: send sends it with the answers
// and requestState of the round before (none the first time) and says whether the server
// asked for input; each question is answered through the hooks and the request sent again,
// with the server's requestState (opaque to the hub, never shown to a client), up to
// maxInputRounds.
func withRounds[R any](ctx context.Context, m *Manager, name string, send func(answers sdk.InputResponseMap, state string) (res R, asks sdk.InputRequestMap, state2 string, needs bool, err error)) (R, error) {
	var (
		zero    R
		answers sdk.InputResponseMap
		state   string
		shed    int
	)
	for round := 1; ; round++ {
		res, asks, st, needs, err := send(answers, state)
		if err != nil || !needs {
			return res, err
		}
		if len(asks) == 0 {
			shed++
			if shed > maxLoadShedding {
				return zero, fmt.Errorf("server %q stayed busy (input_required with no question %d times)", name, shed)
			}
			select {
			case <-ctx.Done():
				return zero, ctx.Err()
			case <-time.After(loadSheddingPause):
			}
		}
		if round >= maxInputRounds {
			return zero, fmt.Errorf("server %q asked for input %d times during one request; the hub stops there (a server that keeps asking would hold the call forever)", name, round)
		}
		if answers, err = m.answerInputRequests(ctx, name, asks); err != nil {
			return zero, err
		}
		state = st
	}
}

func (m *Manager) callToolRounds(ctx context.Context, name string, cs *sdk.ClientSession, params *sdk.CallToolParams) (*sdk.CallToolResult, error) {
	return withRounds(ctx, m, name, func(a sdk.InputResponseMap, st string) (*sdk.CallToolResult, sdk.InputRequestMap, string, bool, error) {
		p := *params
		p.InputResponses, p.RequestState = a, st
		res, err := cs.CallTool(ctx, &p)
		if err != nil || res == nil {
			return res, nil, "", false, err
		}
		return res, res.InputRequests, res.RequestState, res.NeedsInput(), nil
	})
}

func (m *Manager) getPromptRounds(ctx context.Context, name string, cs *sdk.ClientSession, params *sdk.GetPromptParams) (*sdk.GetPromptResult, error) {
	return withRounds(ctx, m, name, func(a sdk.InputResponseMap, st string) (*sdk.GetPromptResult, sdk.InputRequestMap, string, bool, error) {
		p := *params
		p.InputResponses, p.RequestState = a, st
		res, err := cs.GetPrompt(ctx, &p)
		if err != nil || res == nil {
			return res, nil, "", false, err
		}
		return res, res.InputRequests, res.RequestState, res.NeedsInput(), nil
	})
}

func (m *Manager) readResourceRounds(ctx context.Context, name string, cs *sdk.ClientSession, params *sdk.ReadResourceParams) (*sdk.ReadResourceResult, error) {
	return withRounds(ctx, m, name, func(a sdk.InputResponseMap, st string) (*sdk.ReadResourceResult, sdk.InputRequestMap, string, bool, error) {
		p := *params
		p.InputResponses, p.RequestState = a, st
		res, err := cs.ReadResource(ctx, &p)
		if err != nil || res == nil {
			return res, nil, "", false, err
		}
		return res, res.InputRequests, res.RequestState, res.NeedsInput(), nil
	})
}

// answerInputRequests answers a server's questions through the hooks, one at a time in the
// order of their ids (a client of the 2026 era gets them one round each).
func (m *Manager) answerInputRequests(ctx context.Context, name string, reqs sdk.InputRequestMap) (sdk.InputResponseMap, error) {
	m.mu.Lock()
	h := m.opts.Hooks
	m.mu.Unlock()
	ids := make([]string, 0, len(reqs))
	for id := range reqs {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	out := make(sdk.InputResponseMap, len(reqs))
	for _, id := range ids {
		var (
			resp   sdk.InputResponse
			err    error
			method string
		)
		switch p := reqs[id].(type) {
		case *sdk.ElicitParams:
			method = "elicitation/create"
			if h.Elicit == nil {
				err = errors.New("no client of the hub can answer")
				break
			}
			var r *sdk.ElicitResult
			if r, err = h.Elicit(ctx, name, &sdk.ElicitRequest{Params: p}); err == nil {
				resp = r
			}
		case *sdk.CreateMessageParams, *sdk.CreateMessageWithToolsParams:
			method = "sampling/createMessage"
			if h.Sampling == nil {
				err = errors.New("no client of the hub can answer")
				break
			}
			var base *sdk.CreateMessageParams
			if base, err = baseSampling(p); err != nil {
				break
			}
			var r *sdk.CreateMessageResult
			if r, err = h.Sampling(ctx, name, &sdk.CreateMessageRequest{Params: base}); err == nil {
				resp = r
			}
		case *sdk.ListRootsParams:
			method = "roots/list"
			if h.Roots == nil {
				resp = &sdk.ListRootsResult{Roots: []*sdk.Root{}}
				break
			}
			var r *sdk.ListRootsResult
			if r, err = h.Roots(ctx, name); err == nil {
				resp = r
			}
		default:
			return nil, fmt.Errorf("server %q asked for input the hub does not know (%T, input request %q)", name, p, id)
		}
		if err != nil {
			return nil, fmt.Errorf("server %q asked for %s during the call (input request %q): %w", name, method, id, err)
		}
		out[id] = resp
	}
	return out, nil
}

// baseSampling is a sampling request in the form the hub's hooks and 2025-era clients take (one
// content block per message). Sampling with tools is not relayed: a client's model would be
// offered tools of a server it never approved.
func baseSampling(p sdk.InputRequest) (*sdk.CreateMessageParams, error) {
	switch p := p.(type) {
	case *sdk.CreateMessageParams:
		return p, nil
	case *sdk.CreateMessageWithToolsParams:
		if len(p.Tools) > 0 || p.ToolChoice != nil {
			return nil, errors.New("sampling with tools is not relayed to clients")
		}
		out := &sdk.CreateMessageParams{Meta: p.Meta, IncludeContext: p.IncludeContext, MaxTokens: p.MaxTokens, Metadata: p.Metadata,
			ModelPreferences: p.ModelPreferences, StopSequences: p.StopSequences, SystemPrompt: p.SystemPrompt, Temperature: p.Temperature}
		for _, msg := range p.Messages {
			if len(msg.Content) != 1 {
				return nil, fmt.Errorf("a sampling message with %d content blocks cannot be relayed (one is)", len(msg.Content))
			}
			out.Messages = append(out.Messages, &sdk.SamplingMessage{Content: msg.Content[0], Role: msg.Role})
		}
		return out, nil
	}
	return nil, fmt.Errorf("not a sampling request: %T", p)
}

// SamplingResult is a client's answer to a sampling question as a 2025-era server takes it:
// the multi round-trip answer (with an array of content) reduced to its one content block.
func SamplingResult(r sdk.InputResponse) (*sdk.CreateMessageResult, error) {
	switch r := r.(type) {
	case *sdk.CreateMessageResult:
		return r, nil
	case *sdk.CreateMessageWithToolsResult:
		if len(r.Content) != 1 {
			return nil, fmt.Errorf("the client's sampling answer has %d content blocks; a server of protocol before 2026-07-28 takes one", len(r.Content))
		}
		return &sdk.CreateMessageResult{Meta: r.Meta, Content: r.Content[0], Model: r.Model, Role: r.Role, StopReason: r.StopReason}, nil
	}
	return nil, fmt.Errorf("the client answered a sampling question with %T", r)
}

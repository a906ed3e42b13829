package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	sbtool "github.com/switchboard-hub/switchboard/mcp/tool"
	"github.com/switchboard-hub/switchboard/mcp/toolcall"
)

// Inner calls: a tool call made on behalf of a call that is running (a script's
// `await tools.file_read(…)` inside script_run) goes through the very handler chain a client's
// call goes through — the receiving middleware as composed on the hub's go-sdk server (modes,
// audit, policy with its approvals, the workspace and roots checks, the upstream servers'
// quarantine) and go-sdk's own dispatch to the tools on the server (the toolsets switched on) —
// with the calling client's session, so it is attributed, asked about and confined exactly as if
// the client had made it. Its audit line names the outer call as its parent.

// captureChain is the outermost receiving middleware: it keeps the composed handler for
// CallInner and changes nothing.
func (s *Service) captureChain(next sdk.MethodHandler) sdk.MethodHandler {
	s.chain = next
	return next
}

// CallInner calls tool name with args (a JSON object; nil for none) on behalf of the call in
// parent, from inside parent's handler (ctx is the handler's). The result is the tool's, or an
// error result when a layer refused it (denied by the policy, declined or unanswered approval, a
// held or quarantined server tool, a tool not offered); the error is only for a call that could
// not be made at all (no session, ctx ended). name may not be script_run: a script cannot start
// another.
func (s *Service) CallInner(ctx context.Context, parent *sdk.CallToolRequest, name string, args json.RawMessage) (*sdk.CallToolResult, error) {
	if parent == nil || parent.Session == nil {
		return nil, errors.New("inner call: no calling session; an inner call is made from inside a client's call")
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if name == ToolScriptRun {
		return sbtool.ErrorText(ToolScriptRun + ": a script cannot run another script; call the tools it would call directly"), nil
	}
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	ctx = toolcall.WithInner(ctx, s.callIDOf(ctx))
	req := &sdk.CallToolRequest{Session: parent.Session, Extra: parent.Extra,
		Params: &sdk.CallToolParamsRaw{Name: name, Arguments: args}}
	res, err := s.chain(ctx, "tools/call", req)
	var rpcErr *jsonrpc.Error
	switch {
	case errors.As(err, &rpcErr):
		// go-sdk's answer without the tool: not on the server (a toolset switched off), or
		// arguments it could not take.
		return sbtool.ErrorText(fmt.Sprintf("%s: %s; find the tools offered with tools_search", name, rpcErr.Message)), nil
	case err != nil:
		return nil, err
	}
	r, ok := res.(*sdk.CallToolResult)
	if !ok || r == nil {
		return nil, fmt.Errorf("%s: the hub answered %T, not a tool result", name, res)
	}
	if r.NeedsInput() {
		return sbtool.ErrorText(name + ": not run: it needs an answer from the client (approval or roots) that a script cannot pass on; the user can answer on the dashboard, or run the call directly"), nil
	}
	return r, nil
}

// callIDOf is the audit id of the call ctx carries, given one now if it had none (a read-only
// call is audited without one unless something links to it).
func (s *Service) callIDOf(ctx context.Context) string {
	c, ok := toolcall.Carried(ctx)
	if !ok {
		return ""
	}
	return c.EnsureID(s.newCallID)
}

// newCallID is a fresh audit call id.
func (s *Service) newCallID() string { return "c" + strconv.FormatUint(s.callSeq.Add(1), 10) }

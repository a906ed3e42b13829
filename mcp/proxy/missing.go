package proxy

import (
	"context"
	"fmt"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/internal/upstream"
	"github.com/switchboard-hub/switchboard/mcp/tool"
	"github.com/switchboard-hub/switchboard/mcp/toolcall"
)

// A client that calls an upstream tool the hub does not offer (the server's command or tools
// are not approved yet, the tool is held, the server is disabled or its toolset off) gets the
// reason and how to change it as the tool's error, not go-sdk's bare "unknown tool": the user
// reading the agent's transcript then knows where to click.

// MissingToolMiddleware answers a tools/call of a <server>__<tool> name that is not served with
// why, when the server is configured; every other call passes through untouched.
func (u *Upstreams) MissingToolMiddleware(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		if method == "tools/call" {
			if p, ok := req.GetParams().(*sdk.CallToolParamsRaw); ok && p != nil && strings.Contains(p.Name, upstream.NameSeparator) && !u.toolsets.ServesUpstream(p.Name) {
				if why, ok := u.WhyNotOffered(p.Name); ok {
					toolcall.Refuse(ctx)
					return tool.ErrorText(why), nil
				}
			}
		}
		return next(ctx, method, req)
	}
}

// WhyNotOffered says why the upstream tool named exposed is not offered, when its server is
// configured.
func (u *Upstreams) WhyNotOffered(exposed string) (string, bool) {
	if u == nil {
		return "", false
	}
	server, _, _ := strings.Cut(exposed, upstream.NameSeparator)
	st, err := u.m.Status(server)
	if err != nil {
		return "", false
	}
	where := "on the dashboard's Servers view or with `switchboard servers approve " + server
	switch {
	case st.State == upstream.StateUnapproved:
		return fmt.Sprintf("%s: server %q does not run: its command (%s) is not approved yet; the user approves it %s`", exposed, server, st.Command, where), true
	case st.State == upstream.StateSignin:
		return exposed + ": " + upstream.SignInMessage(server), true
	case st.State == upstream.StateDisabled:
		return fmt.Sprintf("%s: server %q is disabled; the user enables it on the dashboard's Servers view or with `switchboard servers enable %s`", exposed, server, server), true
	case !st.Approved:
		return fmt.Sprintf("%s: server %q is quarantined: its tools reach clients once the user approves them %s`", exposed, server, where), true
	}
	for _, t := range st.Tools {
		if t.Exposed != exposed {
			continue
		}
		switch t.State {
		case upstream.ToolChanged:
			return fmt.Sprintf("%s is held: its definition changed since the user approved it; the user reviews the change and approves it %s %s`", exposed, where, t.Name), true
		case upstream.ToolNew:
			return fmt.Sprintf("%s is held: the server started offering it after the user approved the server; the user approves it %s %s`", exposed, where, t.Name), true
		case upstream.ToolApproved:
			return fmt.Sprintf("%s is not offered: its toolset %q is switched off (the dashboard's Overview, or the toolsets key)", exposed, server), true
		}
	}
	if st.State != upstream.StateRunning {
		return fmt.Sprintf("%s: server %q is %s: %s", exposed, server, st.State, st.LastError), true
	}
	return fmt.Sprintf("%s: server %q offers no such tool; `switchboard tools` lists what it offers", exposed, server), true
}

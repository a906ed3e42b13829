package mcp

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/internal/authserver"
	"github.com/switchboard-hub/switchboard/mcp/tool"
	mcptransport "github.com/switchboard-hub/switchboard/mcp/transport"
)

// grantKey is where an OAuth client's identity (authserver.Identity) travels in its requests'
// TokenInfo.Extra.
const grantKey = "switchboard.grant"

// NewOAuthResource puts the hub's authorization server on the HTTP endpoint
// (TransportConfig.HTTPOAuth).
func NewOAuthResource(as *authserver.Server) mcptransport.OAuthResource { return oauthResource{as} }

type oauthResource struct{ as *authserver.Server }

func (o oauthResource) Handler() http.Handler { return o.as.Handler() }

func (o oauthResource) ResourceMetadataURL(r *http.Request) string {
	return o.as.ResourceMetadataURL(r)
}

func (o oauthResource) Identify(r *http.Request, token string) *auth.TokenInfo {
	id, err := o.as.Verify(token, o.as.Resource(r))
	if err != nil {
		return nil
	}
	// UserID binds an MCP session to the grant that opened it: another grant's token, or the
	// static token, cannot continue it (go-sdk checks it on every request).
	return &auth.TokenInfo{Scopes: id.Scopes, Expiration: id.Expires, UserID: "grant:" + id.Grant,
		Extra: map[string]any{grantKey: id}}
}

// OnRevoke calls f with the client identity (UserID) of each grant revoked, so the endpoint
// closes what that client has open (mcp/transport's revokeNotifier).
func (o oauthResource) OnRevoke(f func(client string)) (cancel func()) {
	return o.as.OnRevoke(func(grant string) { f("grant:" + grant) })
}

// grantOf returns the identity of the OAuth client a request comes from (false: the static
// token, or another transport).
func grantOf(req sdk.Request) (authserver.Identity, bool) {
	if req == nil {
		return authserver.Identity{}, false
	}
	ex := req.GetExtra()
	if ex == nil || ex.TokenInfo == nil {
		return authserver.Identity{}, false
	}
	id, ok := ex.TokenInfo.Extra[grantKey].(authserver.Identity)
	return id, ok
}

// toolGranted says whether a grant's scopes let it use t: its toolset among them (tools outside
// every toolset are the hub's own and always served), and with readonly only tools annotated
// read-only.
func toolGranted(scopes []string, t *sdk.Tool) bool {
	if set := tool.ToolsetOf(t); set != "" && !slices.Contains(scopes, set) {
		return false
	}
	if slices.Contains(scopes, authserver.ScopeReadOnly) {
		return t.Annotations != nil && t.Annotations.ReadOnlyHint
	}
	return true
}

// GrantMiddleware limits an OAuth client to its grant: tools/list shows only the tools its
// scopes cover, and a tools/call outside them is refused before the policy is asked. Clients on
// the static token and other transports pass through unchanged.
func (s *Service) grantMiddleware(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		id, ok := grantOf(req)
		if !ok {
			return next(ctx, method, req)
		}
		switch method {
		case "tools/list":
			res, err := next(ctx, method, req)
			if lr, ok := res.(*sdk.ListToolsResult); ok && err == nil {
				lr.Tools = slices.DeleteFunc(slices.Clone(lr.Tools), func(t *sdk.Tool) bool { return !toolGranted(id.Scopes, t) })
			}
			return res, err
		case "resources/list", "resources/templates/list", "prompts/list":
			res, err := next(ctx, method, req)
			if err == nil {
				s.filterUpstreamLists(id.Scopes, res)
			}
			return res, err
		case "resources/read", "resources/subscribe", "resources/unsubscribe", "prompts/get":
			// Resources and prompts come from upstream servers: the grant covers them when it
			// covers the server's toolset.
			if server, ok := s.upstreamOf(req); ok && !slices.Contains(id.Scopes, server) {
				return nil, fmt.Errorf("not granted to %s on %s: it comes from the server %s, outside its grant (%s)",
					id.ClientName, id.Device, server, strings.Join(id.Scopes, " "))
			}
		case "tools/call":
			creq, ok := req.(*sdk.CallToolRequest)
			if !ok || creq.Params == nil {
				return next(ctx, method, req)
			}
			var def *sdk.Tool
			for _, t := range s.toolsets.ActiveTools() {
				if t.Name == creq.Params.Name {
					def = t
					break
				}
			}
			if def == nil || !toolGranted(id.Scopes, def) { // a tool not served now is not granted either
				return tool.ErrorText(fmt.Sprintf("%s: not granted to %s on %s (its grant covers %s); the user can grant more by approving the client again",
					creq.Params.Name, id.ClientName, id.Device, strings.Join(id.Scopes, " "))), nil
			}
		}
		return next(ctx, method, req)
	}
}

// upstreamOf names the upstream server a resource or prompt request addresses.
func (s *Service) upstreamOf(req sdk.Request) (string, bool) {
	if s.up == nil {
		return "", false
	}
	switch r := req.(type) {
	case *sdk.ReadResourceRequest:
		if r.Params != nil {
			return s.up.ServerOfResource(r.Params.URI)
		}
	case *sdk.SubscribeRequest:
		if r.Params != nil {
			return s.up.ServerOfResource(r.Params.URI)
		}
	case *sdk.UnsubscribeRequest:
		if r.Params != nil {
			return s.up.ServerOfResource(r.Params.URI)
		}
	case *sdk.GetPromptRequest:
		if r.Params != nil {
			return s.up.ServerOfPrompt(r.Params.Name)
		}
	}
	return "", false
}

// filterUpstreamLists drops from a resources or prompts list what comes from a server outside
// the grant's scopes.
func (s *Service) filterUpstreamLists(scopes []string, res sdk.Result) {
	if s.up == nil {
		return
	}
	out := func(server string, ok bool) bool { return ok && !slices.Contains(scopes, server) }
	switch lr := res.(type) {
	case *sdk.ListResourcesResult:
		lr.Resources = slices.DeleteFunc(slices.Clone(lr.Resources), func(r *sdk.Resource) bool { return out(s.up.ServerOfResource(r.URI)) })
	case *sdk.ListResourceTemplatesResult:
		lr.ResourceTemplates = slices.DeleteFunc(slices.Clone(lr.ResourceTemplates), func(t *sdk.ResourceTemplate) bool { return out(s.up.ServerOfTemplate(t.URITemplate)) })
	case *sdk.ListPromptsResult:
		lr.Prompts = slices.DeleteFunc(slices.Clone(lr.Prompts), func(p *sdk.Prompt) bool { return out(s.up.ServerOfPrompt(p.Name)) })
	}
}

package proxy

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/internal/upstream"
	"github.com/switchboard-hub/switchboard/internal/wshub"
	"github.com/switchboard-hub/switchboard/mcp/channel"
	"github.com/switchboard-hub/switchboard/mcp/tool"
	mcptransport "github.com/switchboard-hub/switchboard/mcp/transport"
)

// Upstream servers (internal/upstream) on the hub: each configured server's approved tools are
// registered on the hub's one go-sdk server as <server>__<tool>, so they pass through the same
// receiving middleware as built-in tools — policy rules and approvals, the audit log (before the
// fact for tools not annotated read-only), toolsets (each server is one) and the dashboard's
// activity. Resources, resource templates and prompts are offered too; requests a server sends
// its client (sampling, elicitation, roots) go to the client whose call is in flight on it.

// Upstreams is the hub's side of the upstream servers: what is registered for each, and the
// calls in flight on each (to route the server's requests to a client). A hub without upstream
// servers has none: the methods the rest of the hub calls (isSecurity, instructions,
// registerToolSearch) answer for a nil *Upstreams as for servers that offer nothing.
type Upstreams struct {
	m          *upstream.Manager
	toolSearch bool // servers_search / servers_call served (server_tools = "search")

	// Set by wire, once the hub's server exists.
	server     *sdk.Server
	toolsets   Toolsets   // each server's tools are a toolset
	workspaces Workspaces // what a server's roots/list answers: the calling client's workspace

	mu         sync.Mutex
	registered map[string]*servedUpstream // server → what is on the hub's server for it
	security   map[string]bool            // exposed tool → audited before the fact
	resOwner   map[string]string          // resource URI → server
	tmplOwner  map[string]string          // URI template → server
	prompts    map[string][2]string       // exposed prompt → server, upstream name
	callers    map[string][]*callRoute
	progress   map[string]*callRoute // upstream progress token → the call it is for
	progSeq    atomic.Uint64

	held    heldCalls    // 2026-era clients' calls waiting for their retry (bridge.go)
	holdFor atomic.Int64 // SetHoldTimeout
	// auditRound records each question relayed from a server to a client (SetAudit).
	auditRound func(ss *sdk.ServerSession, c Caller, tool, server, method, bridge string)
	callerRec  func(ctx context.Context, req sdk.Request) Caller // SetCallers
}

// Workspaces is what the upstream servers need of the hub's workspace handling
// (mcp/trust/roots.go): the directory a client session works in.
type Workspaces interface {
	// DisplayWorkspace is the directory ss's relative paths resolve against, without asking
	// anyone ("" when there is none).
	DisplayWorkspace(ss *sdk.ServerSession) string
}

// Toolsets is what the upstream servers need of the hub's toolsets: each server's tools are a
// toolset of its own, served or not like any other.
type Toolsets interface {
	// MirrorServer brings server name's tools in line with its catalogue: the tools named in
	// gone leave, those in regs join or replace their earlier definition; whileLocked runs
	// first under the toolsets' lock. With notify the toolsets' listeners hear of the change.
	MirrorServer(name string, gone []string, regs []tool.Tool, notify bool, whileLocked func())
	// ServesUpstream reports whether name is an upstream tool clients are served now.
	ServesUpstream(name string) bool
	// ActiveTools is the tools clients are served now.
	ActiveTools() []*sdk.Tool
}

// New is the hub's side of the servers m runs; toolSearch hides their tools behind
// servers_search and servers_call.
func New(m *upstream.Manager, toolSearch bool) *Upstreams {
	return &Upstreams{
		m: m, toolSearch: toolSearch,
		registered: map[string]*servedUpstream{},
		security:   map[string]bool{},
		resOwner:   map[string]string{},
		tmplOwner:  map[string]string{},
		prompts:    map[string][2]string{},
		callers:    map[string][]*callRoute{},
		progress:   map[string]*callRoute{},
		held:       heldCalls{byToken: map[string]*heldCall{}, live: map[*heldCall]struct{}{}, expired: map[string]expiredCall{}},
	}
}

// Manager is the manager of the servers.
func (u *Upstreams) Manager() *upstream.Manager { return u.m }

// ToolSearch reports whether the servers' tools are hidden behind servers_search and
// servers_call.
func (u *Upstreams) ToolSearch() bool { return u != nil && u.toolSearch }

type servedUpstream struct {
	version   uint64
	tools     []string
	resources []string
	templates []string
	prompts   []string
	instr     string
}

// ServerOptions adds what the hub needs to proxy resources and prompts: the capabilities
// (servers may add them after a client initialized), subscriptions and completion.
func (u *Upstreams) ServerOptions(o *sdk.ServerOptions) {
	// Servers may add prompts and resources after a client initialized: declare both from the
	// start, so clients ask for them and heed list_changed.
	if o.Capabilities == nil {
		o.Capabilities = &sdk.ServerCapabilities{}
	}
	if o.Capabilities.Prompts == nil {
		o.Capabilities.Prompts = &sdk.PromptCapabilities{ListChanged: true}
	}
	if o.Capabilities.Resources == nil {
		o.Capabilities.Resources = &sdk.ResourceCapabilities{ListChanged: true}
	}
	prevSub, prevUnsub, prevComplete := o.SubscribeHandler, o.UnsubscribeHandler, o.CompletionHandler
	o.SubscribeHandler = func(ctx context.Context, req *sdk.SubscribeRequest) error {
		if name, ok := u.ownerOfURI(req.Params.URI); ok {
			return u.m.Subscribe(ctx, name, req.Params.URI)
		}
		if prevSub != nil {
			return prevSub(ctx, req)
		}
		return fmt.Errorf("uri: no resource %q to subscribe to", req.Params.URI)
	}
	o.UnsubscribeHandler = func(ctx context.Context, req *sdk.UnsubscribeRequest) error {
		if name, ok := u.ownerOfURI(req.Params.URI); ok {
			return u.m.Unsubscribe(ctx, name, req.Params.URI)
		}
		if prevUnsub != nil {
			return prevUnsub(ctx, req)
		}
		return nil
	}
	o.CompletionHandler = func(ctx context.Context, req *sdk.CompleteRequest) (*sdk.CompleteResult, error) {
		if ref := req.Params.Ref; ref != nil {
			switch ref.Type {
			case "ref/prompt":
				if p, ok := u.promptOwner(ref.Name); ok {
					params := *req.Params
					r := *ref
					r.Name = p[1]
					params.Ref = &r
					return u.m.Complete(ctx, p[0], &params)
				}
			case "ref/resource":
				if name, ok := u.ownerOfTemplate(ref.URI); ok {
					return u.m.Complete(ctx, name, req.Params)
				}
			}
		}
		if prevComplete != nil {
			return prevComplete(ctx, req)
		}
		return &sdk.CompleteResult{Completion: sdk.CompletionResultDetails{Values: []string{}}}, nil
	}
}

// Wire connects the manager to the hub: its hooks route server requests to clients, and every
// change of what a server offers is mirrored on the hub's server (and, with a WebSocket hub h,
// on the dashboard's "servers" channel).
func (u *Upstreams) Wire(server *sdk.Server, toolsets Toolsets, workspaces Workspaces, h *wshub.Hub) {
	u.server, u.toolsets, u.workspaces = server, toolsets, workspaces
	u.m.SetHooks(upstream.Hooks{
		Sampling: func(ctx context.Context, name string, req *sdk.CreateMessageRequest) (*sdk.CreateMessageResult, error) {
			const method = "sampling/createMessage"
			r, err := u.routeOf(ctx, name, method)
			if err != nil {
				return nil, err
			}
			if caps := clientCaps(r.session()); caps == nil || caps.Sampling == nil {
				return nil, fmt.Errorf("%s: server %q asked the calling client (%s) for sampling, which it does not support", method, name, mcptransport.ClientName(r.session()))
			}
			res, err := u.relay(ctx, r, name, method, req.Params)
			if err != nil {
				return nil, err
			}
			return upstream.SamplingResult(res)
		},
		Elicit: func(ctx context.Context, name string, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			const method = "elicitation/create"
			r, err := u.routeOf(ctx, name, method)
			if err != nil {
				return nil, err
			}
			if !mcptransport.CanElicit(r.session()) {
				return nil, fmt.Errorf("%s: server %q asked the calling client (%s) for elicitation, which it does not support", method, name, mcptransport.ClientName(r.session()))
			}
			res, err := u.relay(ctx, r, name, method, req.Params)
			if err != nil {
				return nil, err
			}
			er, ok := res.(*sdk.ElicitResult)
			if !ok {
				return nil, fmt.Errorf("%s: the client answered with %T", method, res)
			}
			return er, nil
		},
		Roots: func(ctx context.Context, name string) (*sdk.ListRootsResult, error) {
			// The server works for whichever client calls it: it sees that client's workspace,
			// from the hub (never asked of the client, in either era).
			r, err := u.routeOf(ctx, name, "")
			if err != nil {
				return nil, err
			}
			var dir string
			if r != nil {
				dir = u.workspaces.DisplayWorkspace(r.session())
			}
			if dir == "" {
				return &sdk.ListRootsResult{Roots: []*sdk.Root{}}, nil // no project chosen yet: no root to offer
			}
			return &sdk.ListRootsResult{Roots: []*sdk.Root{{URI: "file://" + dir, Name: "workspace"}}}, nil
		},
		Log: func(name string, p *sdk.LoggingMessageParams) {
			lp := *p
			lp.Logger = name + loggerSuffix(p.Logger)
			targets := u.callersOf(name)
			if len(targets) == 0 {
				for ss := range u.server.Sessions() {
					targets = append(targets, ss)
				}
			}
			for _, ss := range targets {
				_ = ss.Log(context.Background(), &lp)
			}
		},
		Progress: func(name string, p *sdk.ProgressNotificationParams) {
			u.mu.Lock()
			r, ok := u.progress[fmt.Sprint(p.ProgressToken)]
			u.mu.Unlock()
			if !ok {
				return
			}
			ss, tok := r.progressTarget()
			if tok == nil {
				return // no request of the call waits for progress (a held call between rounds)
			}
			np := *p
			np.ProgressToken = tok
			_ = ss.NotifyProgress(context.Background(), &np)
		},
		ResourceUpdated: func(name string, p *sdk.ResourceUpdatedNotificationParams) {
			_ = u.server.ResourceUpdated(context.Background(), p)
		},
	})
	u.m.OnChange(u.sync)
	if h != nil {
		h.SetSnapshotProvider(channel.Servers, func(string) (any, bool) {
			return ServersFeed{Servers: u.m.Statuses()}, true
		})
		// One publish at a time, each computed when its turn comes: two notifications on two
		// goroutines must not publish their lists in the other order (a stale list last).
		var feedMu sync.Mutex
		u.m.OnChange(func(string) {
			feedMu.Lock()
			defer feedMu.Unlock()
			h.Publish(channel.Servers, wshub.TypeEvent, ServersFeed{Servers: u.m.Statuses()})
		})
	}
}

func loggerSuffix(l string) string {
	if l == "" {
		return ""
	}
	return "/" + l
}

func clientCaps(ss *sdk.ServerSession) *sdk.ClientCapabilities {
	if ss == nil {
		return nil
	}
	p := ss.InitializeParams()
	if p == nil {
		return nil
	}
	return p.Capabilities
}

// routeOf is the client call a server's request (sampling, elicitation, roots) belongs to. A
// 2026-era server's question comes back inside the call, so the hub knows it (routeFrom). A
// 2025-era server's request on stdio or a session carries nothing that ties it to one of
// several calls: it belongs to the one client call in flight on the server, and with calls of
// two clients in flight (or two held calls of one 2026-era client) it is refused, never
// guessed: answered by the wrong client it would show one user's question to another, or take
// another's answer. (what == "" asks without an error for none: roots/list from an idle server
// is answered with no roots.)
func (u *Upstreams) routeOf(ctx context.Context, name, what string) (*callRoute, error) {
	if r := routeFrom(ctx); r != nil {
		return r, nil
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	var one *callRoute
	for _, r := range u.callers[name] {
		switch {
		case one == nil:
			one = r
		case r.session() != one.session() || r.held != nil || one.held != nil:
			if what == "" {
				what = "roots/list"
			}
			if r.session() == one.session() {
				return nil, fmt.Errorf("%s: several calls of one client are in flight on server %q, and the request does not say which call it belongs to; refused rather than answering the wrong call (it succeeds with one call at a time)", what, name)
			}
			return nil, fmt.Errorf("%s: calls of several clients are in flight on server %q, and the request does not say which call it belongs to; refused rather than asking the wrong client (it succeeds when one client calls the server at a time)", what, name)
		}
	}
	if one == nil && what != "" {
		return nil, fmt.Errorf("%s: no client call is in flight on server %q, so no client can answer", what, name)
	}
	return one, nil
}

func (u *Upstreams) callersOf(name string) []*sdk.ServerSession {
	u.mu.Lock()
	defer u.mu.Unlock()
	var out []*sdk.ServerSession
	for _, r := range u.callers[name] {
		if ss := r.session(); !slices.Contains(out, ss) {
			out = append(out, ss)
		}
	}
	return out
}

// track records a client call in flight on a server (and its progress route) until done.
func (u *Upstreams) track(name string, r *callRoute, token any) (upToken any, done func()) {
	u.mu.Lock()
	u.callers[name] = append(u.callers[name], r)
	var key string
	if r.session() != nil && (token != nil || r.held != nil) {
		// A held call gets a token upstream even when the first round has none: a later
		// round's may have one.
		key = "sb-" + strconv.FormatUint(u.progSeq.Add(1), 10)
		u.progress[key] = r
		upToken = key
	}
	u.mu.Unlock()
	r.setRequest(nil, Caller{}, token)
	return upToken, func() {
		u.mu.Lock()
		defer u.mu.Unlock()
		if key != "" {
			delete(u.progress, key)
		}
		c := u.callers[name]
		if i := slices.Index(c, r); i >= 0 {
			u.callers[name] = slices.Delete(c, i, i+1)
		}
	}
}

// ServerOfResource names the upstream server a resource URI (or a URI its templates make), a
// URI template or a prompt's exposed name comes from; false: none does. A client's OAuth grant
// covers them when it covers that server's toolset.
func (u *Upstreams) ServerOfResource(uri string) (string, bool) { return u.ownerOfURI(uri) }

// ServerOfTemplate is ServerOfResource for a URI template.
func (u *Upstreams) ServerOfTemplate(t string) (string, bool) { return u.ownerOfTemplate(t) }

// ServerOfPrompt is ServerOfResource for a prompt's exposed name.
func (u *Upstreams) ServerOfPrompt(exposed string) (string, bool) {
	p, ok := u.promptOwner(exposed)
	return p[0], ok
}

func (u *Upstreams) ownerOfURI(uri string) (string, bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if n, ok := u.resOwner[uri]; ok {
		return n, true
	}
	for tmpl, n := range u.tmplOwner {
		if templateMatches(tmpl, uri) {
			return n, true
		}
	}
	return "", false
}

func (u *Upstreams) ownerOfTemplate(t string) (string, bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	n, ok := u.tmplOwner[t]
	return n, ok
}

func (u *Upstreams) promptOwner(exposed string) ([2]string, bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	p, ok := u.prompts[exposed]
	return p, ok
}

// templateMatches reports whether uri could come from an RFC 6570 template: the literal parts
// in order (a cheap match that routes to the right server; the server checks the rest).
func templateMatches(tmpl, uri string) bool {
	var lits []string
	for rest := tmpl; rest != ""; {
		i := strings.IndexByte(rest, '{')
		if i < 0 {
			lits = append(lits, rest)
			break
		}
		lits = append(lits, rest[:i])
		j := strings.IndexByte(rest[i:], '}')
		if j < 0 {
			return false
		}
		rest = rest[i+j+1:]
	}
	if len(lits) == 0 || !strings.HasPrefix(uri, lits[0]) {
		return false
	}
	uri = uri[len(lits[0]):]
	for _, l := range lits[1:] {
		i := strings.Index(uri, l)
		if i < 0 {
			return false
		}
		uri = uri[i+len(l):]
	}
	return true
}

// IsSecurity reports whether an upstream tool is audited before the fact.
func (u *Upstreams) IsSecurity(name string) bool {
	if u == nil {
		return false
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.security[name]
}

// sync mirrors one server's catalogue on the hub's server.
func (u *Upstreams) sync(name string) {
	ver := u.m.CatalogueVersion(name)
	u.mu.Lock()
	cur := u.registered[name]
	if cur != nil && cur.version == ver && ver != 0 {
		u.mu.Unlock()
		return
	}
	u.mu.Unlock()
	cat, _ := u.m.Catalogue(name) // a removed server's is empty: everything it had goes
	next := &servedUpstream{version: ver, instr: cat.Instructions}

	var regs []tool.Tool
	audited := map[string]bool{} // exposed name → audited before the fact (not read-only)
	for _, o := range cat.Tools {
		t := proxiedTool(name, o)
		upName := o.Tool.Name
		handler := func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			if req.Session != nil && mcptransport.SpeaksMRTR(req.Session) {
				return u.callHeld(ctx, req, name, upName) // bridge.go
			}
			route := newRoute(req.Session, u.callerOf(ctx, req), req.Params.Name, nil)
			upTok, done := u.track(name, route, req.Params.GetProgressToken())
			defer done()
			res, err := u.m.CallTool(withRoute(ctx, route), name, upName, req.Params.Arguments, upTok)
			if err != nil {
				return tool.Error(err), nil
			}
			return res, nil
		}
		regs = append(regs, tool.Proxied(t, name, handler))
		audited[t.Name] = o.Tool.Annotations == nil || !o.Tool.Annotations.ReadOnlyHint
		next.tools = append(next.tools, t.Name)
	}

	var gone []string
	if cur != nil {
		for _, n := range cur.tools {
			if !slices.Contains(next.tools, n) {
				gone = append(gone, n)
			}
		}
	}
	u.toolsets.MirrorServer(name, gone, regs, len(gone) > 0 || len(regs) > 0 || cur != nil, func() {
		u.mu.Lock()
		defer u.mu.Unlock()
		for _, n := range gone {
			delete(u.security, n)
		}
		maps.Copy(u.security, audited)
	})

	u.syncResources(name, cur, next, cat)
	configured := slices.Contains(u.m.Names(), name)
	u.mu.Lock()
	if configured {
		u.registered[name] = next
	} else {
		delete(u.registered, name)
	}
	u.mu.Unlock()
}

// syncResources mirrors a server's resources, templates and prompts.
func (u *Upstreams) syncResources(name string, cur, next *servedUpstream, cat upstream.Catalogue) {
	m := u.m
	u.mu.Lock()
	defer u.mu.Unlock()
	if cur != nil {
		var uris, tmpls, prompts []string
		for _, r := range cur.resources {
			if u.resOwner[r] == name {
				delete(u.resOwner, r)
				uris = append(uris, r)
			}
		}
		for _, t := range cur.templates {
			if u.tmplOwner[t] == name {
				delete(u.tmplOwner, t)
				tmpls = append(tmpls, t)
			}
		}
		for _, p := range cur.prompts {
			delete(u.prompts, p)
			prompts = append(prompts, p)
		}
		if len(uris) > 0 {
			u.server.RemoveResources(uris...)
		}
		if len(tmpls) > 0 {
			u.server.RemoveResourceTemplates(tmpls...)
		}
		if len(prompts) > 0 {
			u.server.RemovePrompts(prompts...)
		}
	}
	read := func(ctx context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
		// A 2026-era server's questions during the read come back with this context.
		params := *req.Params
		params.Meta = forwardedMeta(params.Meta)
		params.InputResponses, params.RequestState = nil, "" // the hub's own, when it holds the read
		if req.Session != nil && mcptransport.SpeaksMRTR(req.Session) {
			return u.readResourceHeld(ctx, req, name, &params) // bridge.go
		}
		// In flight on the server while it runs: a 2025-era server's question during the read
		// (an elicitation) is put to this client.
		route := newRoute(req.Session, u.callerOf(ctx, req), req.Params.URI, nil)
		_, done := u.track(name, route, nil)
		defer done()
		return m.ReadResource(withRoute(ctx, route), name, &params)
	}
	for _, r := range cat.Resources {
		if owner, taken := u.resOwner[r.URI]; taken && owner != name {
			continue // the first server to offer a URI keeps it
		}
		u.resOwner[r.URI] = name
		next.resources = append(next.resources, r.URI)
		rc := *r
		u.server.AddResource(&rc, read)
	}
	for _, t := range cat.Templates {
		if owner, taken := u.tmplOwner[t.URITemplate]; taken && owner != name {
			continue
		}
		u.tmplOwner[t.URITemplate] = name
		next.templates = append(next.templates, t.URITemplate)
		tc := *t
		u.server.AddResourceTemplate(&tc, read)
	}
	for _, p := range cat.Prompts {
		exposed := upstream.ExposedName(name, p.Name)
		upName := p.Name
		u.prompts[exposed] = [2]string{name, upName}
		next.prompts = append(next.prompts, exposed)
		pc := *p
		pc.Name = exposed
		u.server.AddPrompt(&pc, func(ctx context.Context, req *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
			params := *req.Params
			params.Name = upName
			params.Meta = forwardedMeta(params.Meta)
			params.InputResponses, params.RequestState = nil, "" // the hub's own, when it holds the get
			if req.Session != nil && mcptransport.SpeaksMRTR(req.Session) {
				return u.getPromptHeld(ctx, req, name, &params) // bridge.go
			}
			route := newRoute(req.Session, u.callerOf(ctx, req), exposed, nil)
			_, done := u.track(name, route, nil)
			defer done()
			return m.GetPrompt(withRoute(ctx, route), name, &params)
		})
	}
}

// forwardedMeta is a client request's _meta as the hub passes it on to an upstream server:
// without the per-request keys of the 2026-07-28 protocol (the client's protocol version, info,
// capabilities, log level, subscription), which describe the client's exchange with the hub,
// not the hub's with the server; a server on a 2025 session refuses a request that names
// 2026-07-28. The hub's own client adds its keys where its session needs them.
func forwardedMeta(m sdk.Meta) sdk.Meta {
	if len(m) == 0 {
		return m
	}
	out := make(sdk.Meta, len(m))
	for k, v := range m {
		switch k {
		case sdk.MetaKeyProtocolVersion, sdk.MetaKeyClientInfo, sdk.MetaKeyClientCapabilities, sdk.MetaKeyLogLevel, sdk.MetaKeySubscriptionID:
		default:
			out[k] = v
		}
	}
	return out
}

// proxiedTool is the definition clients see for an upstream tool: its name namespaced, its
// schemas made portable like the hub's own, and the server it comes from in _meta.
func proxiedTool(server string, o upstream.OfferedTool) *sdk.Tool {
	up := o.Tool
	t := &sdk.Tool{
		Name:        o.Exposed,
		Title:       up.Title,
		Description: up.Description,
		Annotations: up.Annotations,
		Icons:       up.Icons,
		Meta:        sdk.Meta{UpstreamMetaKey: map[string]string{"server": server, "tool": up.Name}},
	}
	t.InputSchema = portableSchema(up.InputSchema, true)
	if up.OutputSchema != nil {
		t.OutputSchema = portableSchema(up.OutputSchema, false)
	}
	return t
}

// UpstreamMetaKey is the tool definition's _meta key naming the upstream server and the tool's
// own name there.
const UpstreamMetaKey = "switchboard/upstream"

// portableSchema converts an upstream schema (decoded JSON) to the hub's form and makes it
// portable. An input schema always ends up an object schema: go-sdk requires one.
func portableSchema(v any, input bool) any {
	b, err := json.Marshal(v)
	var sch jsonschema.Schema
	if err == nil {
		err = json.Unmarshal(b, &sch)
	}
	if err != nil {
		if input {
			return &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{}}
		}
		return nil
	}
	if input && sch.Type == "" && len(sch.Types) == 0 {
		sch.Type = "object"
	}
	tool.Portable(&sch)
	return &sch
}

// Instructions adds each approved server's own instructions to the hub's.
func (u *Upstreams) Instructions() string {
	if u == nil {
		return ""
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	var b strings.Builder
	for _, name := range u.m.Names() {
		r := u.registered[name]
		if r == nil || strings.TrimSpace(r.instr) == "" || len(r.tools)+len(r.prompts)+len(r.resources) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n\nServer %q (tools %s%s*): %s", name, name, upstream.NameSeparator, strings.TrimSpace(r.instr))
	}
	return b.String()
}

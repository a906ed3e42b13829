package transport

import (
	"context"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/internal/sessions"
)

// Conn is one client connection as the hub knows it. It travels in the context of every request
// of the connection: a transport puts it there before the session starts, and go-sdk hands that
// context to every handler of the session. Its fields are the transport's; the hub reads them
// through Session and RelayDir.
type Conn struct {
	transport string
	peer      string

	mu    sync.Mutex
	id    string // session registry ID; set at accept (sockets) or lazily (HTTP)
	named bool   // client name/version recorded
	relay string // the directory a connect relay announced (RelayMethod), "" when none

	// stateless marks the Conn of a 2026-07-28 client identity over HTTP: it stands for every
	// request of that identity (stateless.go), each of which go-sdk serves on a session of its own.
	stateless bool
	identity  string // the client a per-client token names ("" for the shared token or none)
	// toolsMode is the tools mode the client asked for (the relay's hello, the HTTP URL's
	// tools_mode parameter), "" for the hub's.
	toolsMode string
}

// Stateless reports whether the request comes from a stateless (2026-07-28 over HTTP) client,
// whose go-sdk session lasts one request: what the hub keeps about the client is keyed by its
// identity (Caller), and it has no roots to list.
func Stateless(ctx context.Context) bool {
	ci, _ := ctx.Value(connKey{}).(*Conn)
	return ci != nil && ci.stateless
}

// Identity is the client a per-client token proved for the request ("" when none did).
func Identity(ctx context.Context) string {
	ci, _ := ctx.Value(connKey{}).(*Conn)
	if ci == nil {
		return ""
	}
	ci.mu.Lock()
	defer ci.mu.Unlock()
	return ci.identity
}

// ProjectIdentity is the client whose `[clients.NAME] project` is the request's workspace: a
// stateless client's identity, or the identity a connect relay's client token proved on a line
// connection (the relay's client, set up by `switchboard clients connect NAME`). A session over
// HTTP keeps its own roots, so it has none. "" when none applies.
func ProjectIdentity(ctx context.Context) string {
	ci, _ := ctx.Value(connKey{}).(*Conn)
	if ci == nil {
		return ""
	}
	ci.mu.Lock()
	defer ci.mu.Unlock()
	if ci.stateless || ci.transport != "http" {
		return ci.identity
	}
	return ""
}

// Caller is the key under which the hub keeps what outlives one request of a client (the
// answers of a multi round-trip call): the session, or for a stateless client the identity's
// Conn, since each of its requests has a session of its own.
func Caller(ctx context.Context, ss *sdk.ServerSession) any {
	if ci, _ := ctx.Value(connKey{}).(*Conn); ci != nil && ci.stateless {
		return ci
	}
	return ss
}

// ToolsModeParam is the HTTP endpoint's query parameter (and the relay hello's member) naming
// the tools mode a client wants for its session: "full", "search" or "script".
const ToolsModeParam = "tools_mode"

// ToolsMode is the tools mode the connection's client asked for, "" when it asked for none.
func ToolsMode(ctx context.Context) string {
	if m, ok := ctx.Value(requestModeKey{}).(string); ok {
		return m // a stateless request's own (the URL it was sent to)
	}
	ci, _ := ctx.Value(connKey{}).(*Conn)
	if ci == nil {
		return ""
	}
	ci.mu.Lock()
	defer ci.mu.Unlock()
	return ci.toolsMode
}

// RelayDir is the directory the connection's relay announced, "" when none.
func RelayDir(ctx context.Context) string {
	ci, _ := ctx.Value(connKey{}).(*Conn)
	if ci == nil {
		return ""
	}
	ci.mu.Lock()
	defer ci.mu.Unlock()
	return ci.relay
}

type connKey struct{}

// requestModeKey carries the tools mode one stateless request asked for: the identity's Conn
// is shared by all its requests, each of which states its own.
type requestModeKey struct{}

func withConnInfo(ctx context.Context, ci *Conn) context.Context {
	return context.WithValue(ctx, connKey{}, ci)
}

// Session returns the registry ID for the request's connection, registering HTTP sessions on
// first sight (their connection has no accept moment we can hook).
//
// It also records the client's name and version the first time they are known: from initialize
// in the classic protocol, or from the per-request metadata of the sessionless protocol
// (2026-07-28), which go-sdk exposes the same way through InitializeParams.
func Session(ctx context.Context, reg *sessions.Registry, req sdk.Request) (id, transport string) {
	ci, _ := ctx.Value(connKey{}).(*Conn)
	if ci == nil {
		return "", "inmemory"
	}
	ci.mu.Lock()
	defer ci.mu.Unlock()
	defer func() {
		if ci.named {
			return
		}
		var p *sdk.InitializeParams
		if ip, ok := req.GetParams().(*sdk.InitializeParams); ok {
			p = ip
		} else if ss, ok := req.GetSession().(*sdk.ServerSession); ok {
			p = ss.InitializeParams()
		}
		if p != nil && p.ClientInfo != nil {
			reg.SetClient(ci.id, p.ClientInfo.Name, p.ClientInfo.Version, p.ProtocolVersion)
			ci.named = true
		}
	}()
	if ci.id == "" {
		ci.id = reg.Add(ci.transport, ci.peer)
		if ci.identity != "" {
			reg.SetIdentity(ci.id, ci.identity, false) // a session opened with a client's own token
		}
		if ci.toolsMode != "" {
			reg.SetToolsMode(ci.id, ci.toolsMode)
		}
		if ss, ok := req.GetSession().(*sdk.ServerSession); ok {
			id := ci.id
			// Owned by the session: returns when the session closes (DELETE, idle timeout, shutdown).
			go func() { _ = ss.Wait(); reg.Remove(id) }()
		}
	}
	return ci.id, ci.transport
}

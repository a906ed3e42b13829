package transport

import (
	"bytes"
	"encoding/json"
	"net/http"
	"sync"
	"time"

	"github.com/switchboard-hub/switchboard/internal/sessions"
)

// Stateless clients over Streamable HTTP (protocol 2026-07-28): no initialize, no session; every
// request carries its protocol version, client capabilities and clientInfo in _meta, and go-sdk
// (StreamableHTTPOptions.Stateless) serves each on a session of its own that ends with the
// request. What the hub gives a client across requests — its entry in the Sessions view, the
// answers of a multi round-trip call, its todos and approvals — it keys by the client's
// identity instead: the per-client token it presented (or the shared token) and the name in its
// clientInfo. One Conn per identity stands for all of its requests.

// statelessIdle is how long an identity's Sessions entry outlives its last request (as an idle
// HTTP session does: StreamableHTTPOptions.SessionTimeout).
const statelessIdle = 30 * time.Minute

type statelessKey struct{ identity, name string }

type statelessClient struct {
	conn   *Conn
	seen   time.Time
	active int // requests running; an identity with a call in flight is never idle
}

// statelessClients is the endpoint's stateless client identities. Entries leave the registry
// when idle for statelessIdle (checked on each request), when their token is revoked (forget),
// and when the endpoint closes (closeAll).
type statelessClients struct {
	reg *sessions.Registry

	mu sync.Mutex
	m  map[statelessKey]*statelessClient
}

func newStatelessClients(reg *sessions.Registry) *statelessClients {
	return &statelessClients{reg: reg, m: map[statelessKey]*statelessClient{}}
}

// enter returns the Conn of the identity (creating its Sessions entry on first sight) and the
// function that marks the request done.
func (sc *statelessClients) enter(identity, name, peer string) (*Conn, func()) {
	now := time.Now()
	key := statelessKey{identity, name}
	var gone []string
	sc.mu.Lock()
	for k, c := range sc.m {
		if c.active == 0 && now.Sub(c.seen) > statelessIdle {
			delete(sc.m, k)
			gone = append(gone, c.conn.id)
		}
	}
	c := sc.m[key]
	if c == nil {
		ci := &Conn{transport: "http", peer: peer, stateless: true, identity: identity}
		ci.id = sc.reg.Add("http", peer)
		sc.reg.SetIdentity(ci.id, identity, true)
		c = &statelessClient{conn: ci}
		sc.m[key] = c
	}
	c.seen, c.active = now, c.active+1
	sc.mu.Unlock()
	for _, id := range gone {
		sc.reg.Remove(id)
	}
	return c.conn, func() {
		sc.mu.Lock()
		c.active--
		c.seen = time.Now()
		sc.mu.Unlock()
	}
}

// forget removes every entry of identity (its token was revoked).
func (sc *statelessClients) forget(identity string) {
	var gone []string
	sc.mu.Lock()
	for k, c := range sc.m {
		if k.identity == identity {
			delete(sc.m, k)
			gone = append(gone, c.conn.id)
		}
	}
	sc.mu.Unlock()
	for _, id := range gone {
		sc.reg.Remove(id)
	}
}

// closeAll removes every entry (the endpoint stopped).
func (sc *statelessClients) closeAll() {
	sc.mu.Lock()
	m := sc.m
	sc.m = map[statelessKey]*statelessClient{}
	sc.mu.Unlock()
	for _, c := range m {
		sc.reg.Remove(c.conn.id)
	}
}

// peeked is what routing needs to know of a POST body, read without decoding the params.
type peeked struct {
	method      string
	metaVersion string // params._meta["io.modelcontextprotocol/protocolVersion"]
	clientName  string // params._meta["io.modelcontextprotocol/clientInfo"].name
}

func peekBody(body []byte) peeked {
	var m struct {
		Method string `json:"method"`
		Params struct {
			Meta struct {
				Version    string `json:"io.modelcontextprotocol/protocolVersion"`
				ClientInfo struct {
					Name string `json:"name"`
				} `json:"io.modelcontextprotocol/clientInfo"`
			} `json:"_meta"`
		} `json:"params"`
	}
	t := bytes.TrimSpace(body)
	if len(t) == 0 || t[0] != '{' || json.Unmarshal(t, &m) != nil {
		return peeked{} // a batch or garbage: the session-based handler answers it as before
	}
	return peeked{method: m.Method, metaVersion: m.Params.Meta.Version, clientName: m.Params.Meta.ClientInfo.Name}
}

// statelessRequest reports whether a request is for the stateless (2026-07-28) handler: it names
// no session, is no initialize, and declares 2026-07-28 or later in its Mcp-Protocol-Version
// header or its _meta. A GET or DELETE that declares it goes there too, to be answered 405.
func statelessRequest(r *http.Request, p peeked) bool {
	if r.Header.Get("Mcp-Session-Id") != "" || p.method == "initialize" {
		return false
	}
	return r.Header.Get("Mcp-Protocol-Version") >= MRTRProtocol || p.metaVersion >= MRTRProtocol
}

package transport

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// clientCalls is the one protocol layer every transport shares between a client and go-sdk: the
// record of the calls a client has in flight, by the ids the client wrote, for the two things
// go-sdk v1.8.0 does not do and every transport must do the same way.
//
//   - Ids go-sdk cannot carry. go-sdk squeezes a request id into an int64 or a string (1.5 is
//     answered as 1; 1e400 and 2^63 are refused), while JSON-RPC lets a client use any number.
//     Such a call gets a stand-in string id (aliasPrefix…) for go-sdk, and its reply gets the
//     client's own id back, byte for byte. A client string id that starts with aliasPrefix is
//     aliased too, so the two never collide.
//   - Cancellation. A notifications/cancelled marks the call it names, so its reply, if the
//     handler still produces one, is not sent (the spec: the receiver of a cancellation should
//     not answer), and the notification is rewritten to the stand-in id so go-sdk cancels the
//     handler of the right call. go-sdk cancels the handler's context but still writes its
//     result; nothing in go-sdk lets a server skip that write.
//
// The line transports (stdio, Unix socket, TCP: mcp/transport/linetransport.go) keep one table per
// connection; Streamable HTTP (mcp/transport/http.go, httpcancel.go) one per endpoint, with the session
// id as the scope. Each transport drops a marked reply in its own framing: a line, a batch
// member, an SSE event or a JSON body.
type clientCalls struct {
	mu     sync.Mutex
	calls  map[clientCallKey]*clientCall
	next   atomic.Int64 // stand-in ids handed out
	prefix string       // aliasPrefix plus the table's tag, so stand-ins of two tables differ in logs
}

type clientCallKey struct {
	scope string // the HTTP session; "" for a line connection
	id    string // wireIDKey of the client's id
}

// clientCall is one call in flight.
type clientCall struct {
	wire      json.RawMessage // the id exactly as the client wrote it
	alias     string          // the stand-in id go-sdk knows the call by; "" when it has the client's id
	cancelled atomic.Bool     // the client cancelled it: its reply is not sent
	key       clientCallKey
	indexed   bool // registered under key (a duplicate in-flight id is not)
}

// aliasPrefix starts the stand-in ids go-sdk sees for client ids it cannot carry.
const aliasPrefix = "\x00switchboard-id-"

func newClientCalls(tag string) *clientCalls {
	return &clientCalls{calls: map[clientCallKey]*clientCall{}, prefix: aliasPrefix + tag}
}

// standIn returns a fresh stand-in id.
func (t *clientCalls) standIn() string {
	return t.prefix + strconv.FormatInt(t.next.Add(1), 10)
}

// open registers a call by the id its client wrote. alias is the stand-in go-sdk was given (""
// when none). A call whose id is already in flight in the same scope is returned unregistered:
// a cancellation names the first one.
func (t *clientCalls) open(scope string, wire json.RawMessage, alias string) *clientCall {
	c := &clientCall{wire: wire, alias: alias}
	key, ok := wireIDKey(wire)
	if !ok {
		return c
	}
	c.key = clientCallKey{scope, key}
	t.mu.Lock()
	if _, dup := t.calls[c.key]; !dup {
		t.calls[c.key] = c
		c.indexed = true
	}
	t.mu.Unlock()
	return c
}

// close forgets a call once its reply is written (or dropped).
func (t *clientCalls) close(c *clientCall) {
	if c == nil || !c.indexed {
		return
	}
	t.mu.Lock()
	if t.calls[c.key] == c {
		delete(t.calls, c.key)
	}
	t.mu.Unlock()
}

// cancel applies a notifications/cancelled of scope: it marks the call its requestId names and
// returns the params to pass to go-sdk (requestId rewritten to the stand-in when the call has
// one). c is nil when no call in flight has that id (unknown, or already answered): the
// notification then goes on unchanged.
func (t *clientCalls) cancel(scope string, params json.RawMessage) (out json.RawMessage, c *clientCall) {
	var p map[string]json.RawMessage
	if json.Unmarshal(params, &p) != nil {
		return params, nil
	}
	key, ok := wireIDKey(p["requestId"])
	if !ok {
		return params, nil
	}
	t.mu.Lock()
	c = t.calls[clientCallKey{scope, key}]
	t.mu.Unlock()
	if c == nil {
		return params, nil
	}
	c.cancelled.Store(true)
	if c.alias == "" {
		return params, c
	}
	p["requestId"], _ = json.Marshal(c.alias)
	np, err := json.Marshal(p)
	if err != nil {
		return params, c
	}
	return np, c
}

// wireIDKey normalizes a JSON-RPC id so that the id of a request, of its reply and of a
// notifications/cancelled naming it compare equal: strings by their value, numbers by their text.
func wireIDKey(raw json.RawMessage) (string, bool) {
	raw = bytes.TrimSpace(raw)
	switch {
	case len(raw) == 0 || string(raw) == "null":
		return "", false
	case raw[0] == '"':
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return "", false
		}
		return "s:" + s, true
	default:
		return "n:" + string(raw), true
	}
}

var intLiteral = regexp.MustCompile(`^-?(?:0|[1-9][0-9]*)$`)

// needsAlias reports whether a request id cannot pass through go-sdk unchanged: a number that is
// not an exact integer within ±2^53 (what go-sdk's float64 decoding keeps exact), or a string
// that looks like one of our stand-ins.
func needsAlias(id json.RawMessage) bool {
	id = bytes.TrimSpace(id)
	switch {
	case len(id) == 0 || string(id) == "null":
		return false
	case id[0] == '"':
		var s string
		return json.Unmarshal(id, &s) == nil && strings.HasPrefix(s, aliasPrefix)
	case id[0] == '-' || (id[0] >= '0' && id[0] <= '9'):
		n, err := strconv.ParseInt(string(id), 10, 64)
		return err != nil || !intLiteral.Match(id) || string(id) == "-0" || n < -1<<53 || n > 1<<53
	}
	return false
}

package mcp

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// Cancellation over Streamable HTTP.
//
// go-sdk v1.8.0 cancels a handler's context on notifications/cancelled, but the handler's result
// still goes through streamableServerConn.Write, which writes it as an SSE event on the stream of
// the POST that carried the request (or, with JSONResponse, as that POST's JSON body) and then
// ends the POST. Nothing in go-sdk lets a server skip that write: dropping the reply inside the
// connection would leave the stream waiting for it forever. So the endpoint keeps the reply off
// the wire itself, in front of go-sdk:
//
//   - every call of a POST that names a session is registered under (session, id) while the POST
//     runs (ids as the client wrote them, before aliasing);
//   - a notifications/cancelled on that session marks the call it names, before go-sdk sees the
//     notification (so before the handler's context is cancelled), and is rewritten to the
//     stand-in id when the call was aliased (1.5, 1e400, ...), so go-sdk cancels the handler;
//   - the POST's response writer drops the reply to a marked call: go-sdk writes one SSE event
//     per Write, so the event whose data is that reply is left out; a JSON body loses that reply
//     (a batch keeps the others). The POST then ends as usual, with no reply for that id.

// httpCalls is the registry of calls in flight on one HTTP endpoint's sessions.
type httpCalls struct {
	mu sync.Mutex
	m  map[httpCallKey]*httpCall
}

type httpCallKey struct {
	session string
	id      string // wireIDKey of the client's id
}

type httpCall struct {
	alias     string // the stand-in id go-sdk knows the call by; "" when it has the client's id
	cancelled atomic.Bool
}

func newHTTPCalls() *httpCalls { return &httpCalls{m: map[httpCallKey]*httpCall{}} }

// wireIDKey normalizes a JSON-RPC id so that the id of a request, of its reply (as go-sdk encodes
// it) and of a notifications/cancelled naming it compare equal: strings by their value, numbers
// by their text (ids go-sdk cannot carry come back byte for byte, see idRestorer).
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

// prepare readies a POST body for go-sdk. It gives requests whose ids go-sdk cannot carry
// stand-in string ids (repl restores the originals in the response; nil when none), registers
// the body's calls under session sid (release them with done once the POST has ended) and marks
// the calls named by notifications/cancelled. A body that does not parse is passed on unchanged
// for go-sdk to refuse.
func (h *httpCalls) prepare(sid string, body []byte) (out []byte, repl *strings.Replacer, calls map[string]*httpCall, done func()) {
	done = func() {}
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 || (!bytes.Contains(trimmed, []byte(`"id"`)) && !bytes.Contains(trimmed, []byte("notifications/cancelled"))) {
		return body, nil, nil, done
	}
	var msgs []map[string]json.RawMessage
	batch := trimmed[0] == '['
	if batch {
		if json.Unmarshal(trimmed, &msgs) != nil {
			return body, nil, nil, done
		}
	} else {
		var m map[string]json.RawMessage
		if json.Unmarshal(trimmed, &m) != nil {
			return body, nil, nil, done
		}
		msgs = []map[string]json.RawMessage{m}
	}
	var pairs []string
	changed := false
	var registered []httpCallKey
	for _, m := range msgs {
		method, isReq := m["method"]
		if !isReq {
			continue
		}
		if id, hasID := m["id"]; hasID {
			var alias string
			if needsAlias(id) {
				a, _ := json.Marshal(aliasPrefix + "http-" + strconv.FormatInt(httpAliases.Add(1), 10))
				m["id"], alias, changed = a, string(a), true
				pairs = append(pairs, string(a), string(bytes.TrimSpace(id)))
			}
			key, ok := wireIDKey(id)
			if sid == "" || !ok {
				continue
			}
			k := httpCallKey{sid, key}
			c := &httpCall{}
			if alias != "" {
				_ = json.Unmarshal([]byte(alias), &c.alias)
			}
			h.mu.Lock()
			if _, dup := h.m[k]; !dup { // a duplicate in-flight id: go-sdk refuses the POST
				h.m[k] = c
				registered = append(registered, k)
				if calls == nil {
					calls = map[string]*httpCall{}
				}
				calls[key] = c
			}
			h.mu.Unlock()
			continue
		}
		if sid == "" || string(bytes.TrimSpace(method)) != `"notifications/cancelled"` {
			continue
		}
		var p map[string]json.RawMessage
		if json.Unmarshal(m["params"], &p) != nil {
			continue
		}
		key, ok := wireIDKey(p["requestId"])
		if !ok {
			continue
		}
		h.mu.Lock()
		c := h.m[httpCallKey{sid, key}]
		h.mu.Unlock()
		if c == nil { // unknown, or already answered: nothing to hold back
			continue
		}
		c.cancelled.Store(true)
		if c.alias != "" {
			p["requestId"], _ = json.Marshal(c.alias)
			if np, err := json.Marshal(p); err == nil {
				m["params"], changed = np, true
			}
		}
	}
	if len(registered) > 0 {
		done = func() {
			h.mu.Lock()
			for _, k := range registered {
				if c, ok := h.m[k]; ok && c == calls[k.id] {
					delete(h.m, k)
				}
			}
			h.mu.Unlock()
		}
	}
	if pairs != nil {
		repl = strings.NewReplacer(pairs...)
	}
	if !changed {
		return body, repl, calls, done
	}
	var err error
	if batch {
		out, err = json.Marshal(msgs)
	} else {
		out, err = json.Marshal(msgs[0])
	}
	if err != nil {
		done()
		return body, nil, nil, func() {}
	}
	return out, repl, calls, done
}

// cancelFilter is the response writer of a POST that carries calls: it leaves out the replies
// to those of them the client has cancelled. It sees the ids as the client sent them (it sits
// outside idRestorer).
type cancelFilter struct {
	http.ResponseWriter
	calls map[string]*httpCall // by wireIDKey
}

func (w *cancelFilter) Write(p []byte) (int, error) {
	if out, drop := w.filter(p); drop {
		if len(out) > 0 {
			if _, err := w.ResponseWriter.Write(out); err != nil {
				return 0, err
			}
		}
		return len(p), nil
	}
	return w.ResponseWriter.Write(p)
}

// filter says whether p must not be written as is, and what to write instead.
func (w *cancelFilter) filter(p []byte) (out []byte, drop bool) {
	some := false
	for _, c := range w.calls {
		if c.cancelled.Load() {
			some = true
			break
		}
	}
	if !some {
		return nil, false
	}
	ct := w.Header().Get("Content-Type")
	switch {
	case strings.HasPrefix(ct, "text/event-stream"):
		// go-sdk writes one whole event per Write ("event: message\ndata: {...}\n\n").
		return nil, w.cancelledReply(sseData(p))
	case strings.HasPrefix(ct, "application/json"):
		body := bytes.TrimSpace(p)
		if len(body) > 0 && body[0] == '[' {
			var msgs []json.RawMessage
			if json.Unmarshal(body, &msgs) != nil {
				return nil, false
			}
			kept := msgs[:0]
			for _, m := range msgs {
				if !w.cancelledReply(m) {
					kept = append(kept, m)
				}
			}
			if len(kept) == len(msgs) {
				return nil, false
			}
			if len(kept) == 0 { // every reply of the batch was cancelled: nothing to say
				return nil, true
			}
			b, err := json.Marshal(kept)
			if err != nil {
				return nil, false
			}
			return b, true
		}
		return nil, w.cancelledReply(body)
	}
	return nil, false
}

// cancelledReply reports whether msg is a reply (not a request or notification) to a call of
// this POST that the client cancelled.
func (w *cancelFilter) cancelledReply(msg []byte) bool {
	if len(msg) == 0 {
		return false
	}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method *string         `json:"method"`
	}
	if json.Unmarshal(msg, &m) != nil || m.Method != nil {
		return false
	}
	key, ok := wireIDKey(m.ID)
	if !ok {
		return false
	}
	c := w.calls[key]
	return c != nil && c.cancelled.Load()
}

// sseData returns the data of one SSE event (its data lines joined by newlines).
func sseData(ev []byte) []byte {
	var data [][]byte
	for _, line := range bytes.Split(ev, []byte("\n")) {
		line = bytes.TrimSuffix(line, []byte("\r"))
		if v, ok := bytes.CutPrefix(line, []byte("data:")); ok {
			data = append(data, bytes.TrimPrefix(v, []byte(" ")))
		}
	}
	return bytes.Join(data, []byte("\n"))
}

func (w *cancelFilter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *cancelFilter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

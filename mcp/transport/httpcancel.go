package transport

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
)

// Cancellation and id aliasing over Streamable HTTP, on the call table every transport shares
// (clientCalls, mcp/transport/clientcalls.go).
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

// prepare readies a POST body of session sid for go-sdk through the endpoint's call table
// (mcp/transport/clientcalls.go). It gives requests whose ids go-sdk cannot carry stand-in string ids
// (repl restores the originals in the response; nil when none), registers the body's calls
// (release them with done once the POST has ended) and marks the calls named by
// notifications/cancelled. A body that does not parse is passed on unchanged for go-sdk to refuse.
func prepareBody(t *clientCalls, sid string, body []byte) (out []byte, repl *strings.Replacer, calls map[string]*clientCall, done func()) {
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
	var opened []*clientCall
	for _, m := range msgs {
		method, isReq := m["method"]
		if !isReq {
			continue
		}
		if id, hasID := m["id"]; hasID {
			var alias string
			if needsAlias(id) {
				alias = t.standIn()
				a, _ := json.Marshal(alias)
				m["id"], changed = a, true
				pairs = append(pairs, string(a), string(bytes.TrimSpace(id)))
			}
			if sid == "" {
				continue // no session: nothing can cancel it
			}
			c := t.open(sid, id, alias)
			if !c.indexed {
				continue // a duplicate in-flight id: go-sdk refuses the POST
			}
			opened = append(opened, c)
			if calls == nil {
				calls = map[string]*clientCall{}
			}
			calls[c.key.id] = c
			continue
		}
		if sid == "" || string(bytes.TrimSpace(method)) != `"notifications/cancelled"` {
			continue
		}
		if np, c := t.cancel(sid, m["params"]); c != nil && c.alias != "" {
			m["params"], changed = np, true
		}
	}
	if len(opened) > 0 {
		done = func() {
			for _, c := range opened {
				t.close(c)
			}
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
	calls map[string]*clientCall // by wireIDKey
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

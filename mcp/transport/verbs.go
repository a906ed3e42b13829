package transport

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// The hub's own verbs on a line connection — the token handshake (AuthMethod), the connect
// relay's hello (RelayMethod) and the CLI's control requests (ControlMethod) — are answered in
// a layer of their own, above the framing (lineConn: lines, ids, batches, bounds) and below
// go-sdk: a message they consume never reaches the MCP server, and the framing knows nothing
// of what they mean.

// verbs answers the hub's own verbs for one connection, replying through its framing.
type verbs struct{ c *lineConn }

func (c *lineConn) verbs() verbs { return verbs{c} }

// handle answers d when it is one of the hub's verbs, or checks the token a connection's first
// message must carry, and reports whether it consumed d; an error ends the connection.
func (v verbs) handle(ctx context.Context, d decoded, first bool) (consumed bool, err error) {
	o := &v.c.opts
	req, isReq := d.msg.(*jsonrpc.Request)
	switch {
	case isReq && first && o.socket && o.token == "" && req.Method == AuthMethod:
		// No token needed here: accept the handshake as a no-op, so a client configured with
		// a token works against either kind of listener.
		if req.IsCall() {
			v.c.writeRaw(d.wire, []byte(`{}`), nil)
		}
		return true, nil
	case isReq && o.socket && req.Method == RelayMethod:
		return true, v.relayHello(req, d.wire)
	case isReq && req.Method == ControlMethod:
		v.answerControl(ctx, req, d.wire)
		return true, nil
	case first && o.token != "":
		return v.authenticate(d)
	}
	return false, nil
}

// authenticate checks the first message of a connection that requires a token. consumed reports
// that the message was the handshake itself (not for the server).
func (v verbs) authenticate(d decoded) (consumed bool, err error) {
	req, ok := d.msg.(*jsonrpc.Request)
	var token string
	switch {
	case ok && req.Method == AuthMethod:
		var p struct {
			Token string `json:"token"`
		}
		_ = json.Unmarshal(req.Params, &p)
		token, consumed = p.Token, true
	case ok && req.Method == "initialize":
		var p struct {
			Meta map[string]any `json:"_meta"`
		}
		_ = json.Unmarshal(req.Params, &p)
		token, _ = p.Meta[AuthMetaKey].(string)
	}
	want := sha256.Sum256([]byte(v.c.opts.token))
	got := sha256.Sum256([]byte(token))
	if token != "" && subtle.ConstantTimeCompare(want[:], got[:]) == 1 {
		if consumed && req.IsCall() {
			v.c.writeRaw(d.wire, []byte(`{}`), nil)
		}
		return consumed, nil
	}
	wire := json.RawMessage(nil)
	if ok && req.IsCall() {
		wire = d.wire
	}
	reason := "missing token"
	if token != "" {
		reason = "wrong token"
	}
	v.c.replyError(wire, CodeUnauthorized, fmt.Sprintf("authentication required (%s): this connection needs a token; send first {\"jsonrpc\":\"2.0\",\"method\":%q,\"params\":{\"token\":\"<token>\"}} or put the token in the initialize request's params._meta[%q]; `switchboard token` prints it, and `switchboard connect --tcp ADDR` sends it for you", reason, AuthMethod, AuthMetaKey))
	return false, v.c.rejectConn("TCP authentication failed: " + reason)
}

// answerControl answers a ControlMethod request in the background (an approval may wait for an
// on-demand server to start) with the control function's result or error.
func (v verbs) answerControl(ctx context.Context, req *jsonrpc.Request, wire json.RawMessage) {
	if !req.IsCall() {
		return
	}
	if v.c.opts.control == nil {
		v.c.replyError(wire, jsonrpc.CodeMethodNotFound, ControlMethod+": only on the hub's Unix socket")
		return
	}
	var p struct {
		Action string `json:"action"`
	}
	if err := json.Unmarshal(req.Params, &p); err != nil || p.Action == "" {
		v.c.replyError(wire, jsonrpc.CodeInvalidParams, ControlMethod+": params.action: required")
		return
	}
	go func() {
		res, err := v.c.opts.control(ctx, p.Action, req.Params)
		if err != nil {
			v.c.replyError(wire, jsonrpc.CodeInvalidParams, err.Error())
			return
		}
		b, err := json.Marshal(res)
		if err != nil {
			v.c.replyError(wire, jsonrpc.CodeInternalError, err.Error())
			return
		}
		v.c.writeRaw(wire, b, nil)
	}()
}

// relayHello takes a RelayMethod message: its directory counts only before the first request.
// A client token in it must be valid (see ClientTokenRefused): an error ends the connection.
func (v verbs) relayHello(req *jsonrpc.Request, wire json.RawMessage) error {
	v.c.mu.Lock()
	started := v.c.admitted
	v.c.mu.Unlock()
	var p RelayHello
	if err := json.Unmarshal(req.Params, &p); err != nil {
		if req.IsCall() {
			v.c.replyError(wire, jsonrpc.CodeInvalidParams, RelayMethod+": params: "+err.Error())
		}
		return nil
	}
	identity := ""
	if p.ClientToken != "" {
		// A relay presents its client's token, written by `switchboard clients connect NAME`.
		// An unknown or revoked one ends the connection rather than serving it as an anonymous
		// socket client: the socket is 0600, so the peer is the user, but the user configured
		// this client to be NAME, and serving it as nobody would quietly change whose workspace,
		// tasks and todos it gets. The error says how to mend it.
		client, ok := "", false
		if v.c.opts.clients != nil {
			client, ok = v.c.opts.clients.Verify(p.ClientToken)
		}
		if !ok || started {
			msg := ClientTokenRefused
			if started {
				msg = RelayMethod + ": a client token counts only before the connection's first request"
			}
			if !req.IsCall() {
				wire = nil // a notification's refusal goes out with a null id
			}
			v.c.replyError(wire, CodeUnauthorized, msg)
			return v.c.rejectConn("client token refused")
		}
		identity = client
	}
	if req.IsCall() {
		v.c.writeRaw(wire, []byte(`{}`), nil)
	}
	if started || v.c.opts.onRelay == nil || (p.Cwd == "" && p.ToolsMode == "" && identity == "") {
		return nil
	}
	v.c.opts.onRelay(p, identity)
	return nil
}

// ClientTokenRefused is the error a relay gets for a client token the hub does not know (never
// issued, revoked, or replaced by a newer `clients connect`).
const ClientTokenRefused = "client token refused: it is unknown to this hub or was revoked (or replaced by a newer one); run `switchboard clients connect NAME` again to give the client a new token, then restart the client"

// RelayHello is a RelayMethod message's params: the directory the relay runs in and the tools
// mode its client was set up with (`switchboard connect --tools-mode`), each "" when not given.
//
// ClientToken is the client's own token (clienttokens; `switchboard clients connect` writes it
// into the client's entry, clientconf.TokenEnv), which names the client as a per-client token
// does over HTTP. It is never logged.
type RelayHello struct {
	Cwd         string `json:"cwd,omitempty"`
	ToolsMode   string `json:"tools_mode,omitempty"`
	ClientToken string `json:"client_token,omitempty"`
}

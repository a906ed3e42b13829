package tools

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"syscall"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/internal/wshub"
	"github.com/switchboard-hub/switchboard/mcp/channel"
	"github.com/switchboard-hub/switchboard/mcp/tool"
)

// WebSocket tools: ws_start opens the hub's own listener (the hub itself always exists when these
// tools are registered; the dashboard may already reach it through another server), ws_info reports
// on it. Channels, frames and auth are documented in internal/wshub's package comment.

// DefaultWSAddr is the documented default ":8080" (docs/tools.md), bound to loopback: the hub streams process
// output and tool activity, which should not reach other machines unless the caller says so.
const DefaultWSAddr = "127.0.0.1:8080"

// WSStartInput is ws_start's arguments: where the hub's WebSocket listener binds.
type WSStartInput struct {
	Addr string `json:"addr,omitempty" jsonschema:"listen address host:port; default \":8080\" on loopback (127.0.0.1). A bare \":PORT\" also binds loopback; name a host such as 0.0.0.0 to listen on other interfaces. Port 0 picks a free port"`
}

// WSStartOutput is ws_start's result: the listener's address and the caller's token for connecting
// to it.
type WSStartOutput struct {
	Success bool   `json:"success" jsonschema:"whether the server started or was already running"`
	Addr    string `json:"addr" jsonschema:"address the server is bound to"`
	Message string `json:"message" jsonschema:"status message with the full WebSocket URL"`
	Token   string `json:"token" jsonschema:"this client's token to present when connecting (?token= or Authorization: Bearer): it subscribes to the processes this client started (process:ID) and the shared processes, toolsets, ml and rag channels, nothing else"`
}

// WSInfoInput is ws_info's arguments: none.
type WSInfoInput struct{}

// WSInfoOutput is ws_info's result: the hub's clients and channels, and the ws_start listener if it
// runs.
type WSInfoOutput struct {
	Clients  int    `json:"clients" jsonschema:"number of connected WebSocket clients"`
	Channels int    `json:"channels" jsonschema:"number of channels with at least one subscriber"`
	Running  bool   `json:"running" jsonschema:"whether the listener opened by ws_start is up"`
	Addr     string `json:"addr,omitempty" jsonschema:"address of that listener, when running"`
	URL      string `json:"url,omitempty" jsonschema:"WebSocket URL of that listener (ws://ADDR/ws), when running"`
}

// WSTools are ws_start and ws_info, on the hub's WebSocket hub (WithHub).
type WSTools struct {
	hub *wshub.Hub
	// startedBy: process id → the *sdk.ServerSession that started it (the hub's record,
	// clientlog.go), for the channels a session's scoped token may stream.
	startedBy *sync.Map
	wsTokens  sync.Map // *sdk.ServerSession → its scoped hub token
}

// NewWSTools is the WebSocket tools' dependencies: the hub, and the hub's record of which
// session started which process (process id → *sdk.ServerSession).
func NewWSTools(h *wshub.Hub, startedBy *sync.Map) *WSTools {
	return &WSTools{hub: h, startedBy: startedBy}
}

// WSGroup declares the group's tools (toolset ws) as values that need no hub;
// NewWSTools builds the dependencies they are bound to.
func WSGroup() tool.Group {
	return tool.NewGroup("ws",
		tool.Func(sdk.Tool{Name: "ws_start", Annotations: tool.Write("Start WebSocket server", false, true),
			Description: "Start the WebSocket hub's listener for real-time streams (process output, tool activity, sessions). " +
				"Binds loopback unless addr names a host. If it is already running, returns the existing address. " +
				"Clients connect to ws://ADDR/ws with the token this tool returns (?token= or Authorization: Bearer) and send " +
				`{"type":"subscribe","channel":"process:ID"}.`}, (*WSTools).wsStart),
		tool.Func(sdk.Tool{Name: "ws_info", Annotations: tool.ReadOnly("WebSocket hub info"),
			Description: "Report the WebSocket hub's connected clients and active channels, and whether its listener is running."}, (*WSTools).wsInfo),
	)
}

func (g *WSTools) wsStart(_ context.Context, req *sdk.CallToolRequest, in WSStartInput) (*sdk.CallToolResult, WSStartOutput, error) {
	addr, defaulted, err := wsListenAddr(in.Addr)
	if err != nil {
		return nil, WSStartOutput{}, err
	}
	bound, already, err := g.hub.Start(addr)
	if err != nil {
		return nil, WSStartOutput{}, wsStartError(addr, err)
	}
	url := g.hub.URL()
	var msg string
	switch {
	case already:
		msg = fmt.Sprintf("WebSocket server already running at %s", url)
		if in.Addr != "" && addr != bound && !strings.HasSuffix(addr, ":0") {
			msg += fmt.Sprintf(" (requested %s ignored; the running listener keeps its address)", in.Addr)
		}
	case isLoopbackBind(bound):
		msg = fmt.Sprintf("WebSocket server started at %s", url)
		if defaulted {
			msg += " (bound to loopback 127.0.0.1; name a host in addr, e.g. \"0.0.0.0:8080\", to accept other machines)"
		}
	default:
		msg = fmt.Sprintf("WebSocket server started at %s, listening on %s: reachable from other machines", url, bound)
	}
	msg += "; connect with the token field of this result as ?token= or Authorization: Bearer"
	return nil, WSStartOutput{Success: true, Addr: bound, Message: msg, Token: g.wsToken(req)}, nil
}

// wsScopeShared are the hub channels any client's token may stream: what every client sees
// through its own tools anyway.
var wsScopeShared = map[string]bool{channel.Processes: true, channel.Toolsets: true, channel.ML: true, channel.RAG: true}

// wsToken is the calling session's hub token: it streams the session's own processes
// (process:ID of processes it started) and the shared channels, not other sessions' calls
// (activity), sessions, approvals or todos — those are the user's, on the dashboard's token. One
// token per session, revoked when the session ends. A call without a session (the CLI's
// in-process hub) gets the hub token: the user runs it.
func (g *WSTools) wsToken(req *sdk.CallToolRequest) string {
	if req == nil || req.Session == nil {
		return g.hub.Token()
	}
	ss := req.Session
	if v, ok := g.wsTokens.Load(ss); ok {
		return v.(string)
	}
	token, revoke := g.hub.ScopedToken(wshub.Scope{
		Allow: func(ch string) bool {
			if id, ok := strings.CutPrefix(ch, channel.ProcessPrefix); ok {
				v, ok := g.startedBy.Load(id)
				return ok && v.(*sdk.ServerSession) == ss
			}
			return wsScopeShared[ch]
		},
		Refusal: "a token from ws_start streams the processes this client started (process:ID) and the shared processes, toolsets, ml and rag channels; other sessions' activity, approvals and todos are shown on the dashboard",
	})
	if prev, loaded := g.wsTokens.LoadOrStore(ss, token); loaded {
		revoke()
		return prev.(string)
	}
	go func() { // owned by the session: ends with it
		_ = ss.Wait()
		revoke()
		g.wsTokens.Delete(ss)
		g.startedBy.Range(func(k, v any) bool {
			if v.(*sdk.ServerSession) == ss {
				g.startedBy.Delete(k)
			}
			return true
		})
	}()
	return token
}

// wsListenAddr applies the documented default and the loopback rule. defaulted reports that the
// host was filled in (so the message can say it was loopback by default).
func wsListenAddr(in string) (addr string, defaulted bool, err error) {
	in = strings.TrimSpace(in)
	if in == "" {
		return DefaultWSAddr, true, nil
	}
	host, port, err := net.SplitHostPort(in)
	if err != nil {
		return "", false, fmt.Errorf("addr: %q is not host:port; use e.g. \":8080\", \"127.0.0.1:8080\" or \"0.0.0.0:8080\"", in)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return "", false, fmt.Errorf("addr: port %q in %q is not a number from 0 to 65535 (0 picks a free port)", port, in)
	}
	if host == "" {
		return net.JoinHostPort("127.0.0.1", port), true, nil
	}
	return in, false, nil
}

func wsStartError(addr string, err error) error {
	switch {
	case errors.Is(err, syscall.EADDRINUSE):
		return fmt.Errorf("addr: %s is already in use by another program; pick another port, or \"127.0.0.1:0\" for a free one", addr)
	case errors.Is(err, syscall.EADDRNOTAVAIL):
		return fmt.Errorf("addr: %s is not an address of this machine; use 127.0.0.1, 0.0.0.0 or one of its interface addresses", addr)
	case errors.Is(err, syscall.EACCES):
		return fmt.Errorf("addr: not permitted to listen on %s (ports below 1024 need privileges); use a port above 1024", addr)
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return fmt.Errorf("addr: host in %s cannot be resolved (%v); use an IP address such as 127.0.0.1", addr, dnsErr)
	}
	return fmt.Errorf("addr: cannot start the WebSocket server on %s: %w", addr, err)
}

func isLoopbackBind(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return host == "localhost" || (ip != nil && ip.IsLoopback())
}

func (g *WSTools) wsInfo(_ context.Context, _ *sdk.CallToolRequest, _ WSInfoInput) (*sdk.CallToolResult, WSInfoOutput, error) {
	st := g.hub.Stats()
	return nil, WSInfoOutput{
		Clients:  st.Clients,
		Channels: st.Channels,
		Running:  g.hub.Running(),
		Addr:     g.hub.Addr(),
		URL:      g.hub.URL(),
	}, nil
}

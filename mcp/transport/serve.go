package transport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/internal/policy"
	"github.com/switchboard-hub/switchboard/internal/sessions"
)

// DrainTimeout bounds how long shutdown waits for in-flight calls before closing connections.
const DrainTimeout = 10 * time.Second

// Server gives every client connection its own session on the hub's one go-sdk server:
// line-delimited JSON-RPC streams here (stdio, Unix socket, TCP), Streamable HTTP in http.go.
// It records each connection in the session registry, and withdraws a client's open questions
// as soon as its input ends.
type Server struct {
	server    *sdk.Server
	sessions  *sessions.Registry
	approvals *policy.Broker
	logger    *slog.Logger
}

// Logger is the logger the server reports to.
func (c *Server) Logger() *slog.Logger { return c.logger }

// NewServer serves connections on server, recording them in reg; approvals is where a client's
// open questions are withdrawn when its input ends.
func NewServer(server *sdk.Server, reg *sessions.Registry, approvals *policy.Broker, logger *slog.Logger) *Server {
	return &Server{server: server, sessions: reg, approvals: approvals, logger: logger}
}

// ServeStdio serves one client over stdin/stdout until the client closes stdin or ctx ends.
func (c *Server) ServeStdio(ctx context.Context) error {
	return c.ServeStream(ctx, "stdio", "stdin/stdout", pollableStdin(), os.Stdout, nil)
}

// ServeStream serves one client over a newline-delimited JSON stream. It returns when the client
// disconnects; when ctx ends it stops reading, lets in-flight calls finish (up to DrainTimeout)
// and closes the session.
func (c *Server) ServeStream(ctx context.Context, transport, peer string, r io.ReadCloser, w io.Writer, closeFn func() error) error {
	return c.serveStream(ctx, transport, peer, r, w, closeFn, lineOptions{})
}

func (c *Server) serveStream(ctx context.Context, transport, peer string, r io.ReadCloser, w io.Writer, closeFn func() error, o lineOptions) error {
	ci := &Conn{transport: transport, peer: peer}
	ci.id = c.sessions.Add(transport, peer)
	defer c.sessions.Remove(ci.id)
	var lt *lineTransport
	var revokeMu sync.Mutex
	var stopRevoke func()
	o.onRelay = func(h RelayHello, identity string) {
		ci.mu.Lock()
		ci.relay, ci.toolsMode = h.Cwd, h.ToolsMode
		// One identity per connection: the first token's. A later hello (before the first
		// request) may move the directory, never the credential.
		if ci.identity != "" {
			identity = ""
		} else {
			ci.identity = identity
		}
		ci.mu.Unlock()
		if h.ToolsMode != "" {
			c.sessions.SetToolsMode(ci.id, h.ToolsMode)
		}
		if identity == "" {
			return
		}
		c.sessions.SetIdentity(ci.id, identity, false)
		// A revoked token ends the connection it opened, as it ends an HTTP client's next
		// request: revoking is how the user cuts a client off. Owned by the connection
		// (stopped when it ends); the hello comes once, before the first request.
		revokeMu.Lock()
		defer revokeMu.Unlock()
		if rn, ok := o.clients.(revokeNotifier); ok && stopRevoke == nil {
			conn := lt.conn
			stopRevoke = rn.OnRevoke(func(client string) {
				if client == identity {
					_ = conn.rejectConn("client token revoked")
				}
			})
		}
	}
	defer func() {
		revokeMu.Lock()
		defer revokeMu.Unlock()
		if stopRevoke != nil {
			stopRevoke()
		}
	}()
	// A client whose input ended can no longer use an answer: its questions leave the
	// dashboard now, not when its calls end.
	o.onInputClosed = func() { c.approvals.Withdraw(ci.id, "withdrawn: the client's connection closed") }
	lt = &lineTransport{r: r, w: w, closeFn: closeFn, opts: o}
	ss, err := c.server.Connect(withConnInfo(ctx, ci), lt, nil)
	if err != nil {
		return fmt.Errorf("%s session: %w", transport, err)
	}
	stop := context.AfterFunc(ctx, func() {
		lt.conn.Drain()
		t := time.AfterFunc(DrainTimeout, func() { _ = ss.Close() })
		go func() { _ = ss.Wait(); t.Stop() }()
	})
	defer stop()
	err = ss.Wait()
	if lt.conn.SawBigReplies() {
		releaseMemory()
	}
	if errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) {
		return nil
	}
	return err
}

var lastRelease atomic.Int64

// releaseMemory returns freed heap to the OS after a connection that moved large replies has
// closed (at most every 5 s). Without it the runtime keeps the pages of a heap goal set while
// that connection's replies were live, and the hub's RSS stays high long after the client left.
func releaseMemory() {
	now := time.Now().UnixNano()
	last := lastRelease.Load()
	if now-last < int64(5*time.Second) || !lastRelease.CompareAndSwap(last, now) {
		return
	}
	go debug.FreeOSMemory() // a full collection: off the caller's path
}

// ServeOptions tune a listener's connections.
type ServeOptions struct {
	// Token, when set, must be presented by each connection's first message (see AuthMethod).
	Token string
	// Control answers ControlMethod requests; set for the Unix socket only.
	Control ControlFunc
	// ClientTokens verifies the client token a connect relay presents in its hello, which
	// names the client as on HTTP (nil: a relay's client token is refused).
	ClientTokens ClientTokens
}

// Serve accepts connections on ln until ctx ends, one MCP session per connection. It closes ln
// and returns once every connection has finished.
func (c *Server) Serve(ctx context.Context, ln net.Listener, transport string) error {
	return c.ServeListener(ctx, ln, transport, ServeOptions{})
}

// ServeListener is Serve with options. A connection whose first line is not a JSON-RPC message
// (say, an HTTP request a web page sent to the TCP port) is closed unread. Accept errors — out of
// descriptors (EMFILE, ENFILE), a connection aborted before it was accepted, anything else — are
// retried with backoff: only ctx (shutdown, the user's toggle) or closing ln ends the listener.
func (c *Server) ServeListener(ctx context.Context, ln net.Listener, transport string, so ServeOptions) error {
	var wg sync.WaitGroup
	stop := context.AfterFunc(ctx, func() { _ = ln.Close() })
	defer stop()
	var backoff time.Duration
	for {
		conn, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				break
			}
			// Only shutdown or the user's toggle (which close ln) end a listener. Temporary errors
			// (out of descriptors, an aborted connection) pass; anything else is retried too,
			// more slowly, and logged as an error.
			backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
			if temporaryAcceptError(err) {
				c.logger.Warn("accept failed; retrying", "transport", transport, "error", err, "retry_in", backoff)
			} else {
				backoff = time.Second
				c.logger.Error("accept failed; retrying", "transport", transport, "error", err, "retry_in", backoff)
			}
			select {
			case <-time.After(backoff):
			case <-ctx.Done():
			}
			continue
		}
		backoff = 0
		peer := peerOf(conn)
		o := lineOptions{socket: true, token: so.Token, control: so.Control, clients: so.ClientTokens, reject: func(reason string) {
			c.logger.Warn("closed a connection unserved", "transport", transport, "peer", peer, "reason", reason)
		}}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer conn.Close()
			if err := c.serveStream(ctx, transport, peer, conn, conn, conn.Close, o); err != nil {
				c.logger.Debug("connection ended", "transport", transport, "error", err)
			}
		}()
	}
	_ = ln.Close()
	wg.Wait()
	return nil
}

// temporaryAcceptError reports accept errors that pass: descriptor or buffer exhaustion and
// connections reset before they were accepted.
func temporaryAcceptError(err error) bool {
	for _, e := range []error{syscall.EMFILE, syscall.ENFILE, syscall.ECONNABORTED, syscall.ENOBUFS, syscall.ENOMEM, syscall.EINTR, syscall.EAGAIN, syscall.EPROTO, syscall.ECONNRESET} {
		if errors.Is(err, e) {
			return true
		}
	}
	var te interface{ Temporary() bool }
	return errors.As(err, &te) && te.Temporary()
}

// ListenUnix creates the hub's Unix socket: parent directory 0700, socket 0600. A stale socket
// file (nobody answering) is replaced; a live one belongs to another running hub and is never
// stolen. The socket file is removed when the listener closes.
func ListenUnix(path string) (net.Listener, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("unix socket dir: %w", err)
	}
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode()&os.ModeSocket == 0 {
			return nil, fmt.Errorf("unix socket %s: a non-socket file is in the way; remove it or pass --unix with another path", path)
		}
		if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
			c.Close()
			return nil, fmt.Errorf("unix socket %s: another Switchboard hub is listening there; connect to it with `switchboard connect --socket %s` or pass --unix with another path", path, path)
		}
		if err := os.Remove(path); err != nil {
			return nil, fmt.Errorf("remove stale socket %s: %w", path, err)
		}
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("listen unix %s: %w", path, err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("chmod socket %s: %w", path, err)
	}
	return ln, nil
}

// ListenTCP listens on addr and warns loudly when the address is reachable from other machines.
// authenticated says whether connections will have to present a token.
func ListenTCP(addr string, logger *slog.Logger, authenticated bool) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen tcp %s: %w", addr, err)
	}
	if !IsLoopback(ln.Addr()) {
		msg := fmt.Sprintf("WARNING: MCP over TCP is listening on %s, reachable from other machines, WITHOUT authentication. Anyone who can reach it can read and write your workspace and run processes. Bind 127.0.0.1 unless you mean it.", ln.Addr())
		if authenticated {
			msg = fmt.Sprintf("WARNING: MCP over TCP is listening on %s, reachable from other machines. Connections must present the token, but the traffic (token included) is not encrypted: use it only on networks you trust, or tunnel it (ssh -L).", ln.Addr())
		}
		fmt.Fprintln(os.Stderr, msg)
		logger.Warn(msg)
	}
	return ln, nil
}

// IsLoopback reports whether a listener's address is a loopback one (a Unix socket is).
func IsLoopback(a net.Addr) bool {
	if ta, ok := a.(*net.TCPAddr); ok {
		return ta.IP.IsLoopback()
	}
	return true
}

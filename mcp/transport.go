package mcp

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// DrainTimeout bounds how long shutdown waits for in-flight calls before closing connections.
const DrainTimeout = 10 * time.Second

// ServeStdio serves one client over stdin/stdout until the client closes stdin or ctx ends.
func (s *Service) ServeStdio(ctx context.Context) error {
	return s.ServeStream(ctx, "stdio", "stdin/stdout", os.Stdin, os.Stdout, nil)
}

// ServeStream serves one client over a newline-delimited JSON stream. It returns when the client
// disconnects; when ctx ends it stops reading, lets in-flight calls finish (up to DrainTimeout)
// and closes the session.
func (s *Service) ServeStream(ctx context.Context, transport, peer string, r io.ReadCloser, w io.Writer, closeFn func() error) error {
	ci := &connInfo{transport: transport, peer: peer}
	ci.id = s.sessions.Add(transport, peer)
	defer s.sessions.Remove(ci.id)
	lt := &lineTransport{r: r, w: w, closeFn: closeFn}
	ss, err := s.server.Connect(withConnInfo(ctx, ci), lt, nil)
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
	if errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) {
		return nil
	}
	return err
}

// Serve accepts connections on ln until ctx ends, one MCP session per connection. It closes ln
// and returns once every connection has finished.
func (s *Service) Serve(ctx context.Context, ln net.Listener, transport string) error {
	var wg sync.WaitGroup
	stop := context.AfterFunc(ctx, func() { _ = ln.Close() })
	defer stop()
	var acceptErr error
	for {
		conn, err := ln.Accept()
		if err != nil {
			if ctx.Err() == nil && !errors.Is(err, net.ErrClosed) {
				acceptErr = fmt.Errorf("%s accept: %w", transport, err)
			}
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer conn.Close()
			if err := s.ServeStream(ctx, transport, peerOf(conn), conn, conn, conn.Close); err != nil {
				s.logger.Debug("connection ended", "transport", transport, "error", err)
			}
		}()
	}
	_ = ln.Close()
	wg.Wait()
	return acceptErr
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

// ListenTCP listens on addr and warns loudly when the address is reachable from other machines:
// MCP over TCP carries no authentication.
func ListenTCP(addr string, logger *slog.Logger) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen tcp %s: %w", addr, err)
	}
	if !isLoopback(ln.Addr()) {
		msg := fmt.Sprintf("WARNING: MCP over TCP is listening on %s, reachable from other machines, WITHOUT authentication. Anyone who can reach it can read and write your workspace and run processes. Bind 127.0.0.1 unless you mean it.", ln.Addr())
		fmt.Fprintln(os.Stderr, msg)
		logger.Warn(msg)
	}
	return ln, nil
}

func isLoopback(a net.Addr) bool {
	if ta, ok := a.(*net.TCPAddr); ok {
		return ta.IP.IsLoopback()
	}
	return true
}

// HTTPOptions configure the Streamable HTTP endpoint.
type HTTPOptions struct {
	Token string // required bearer token
	// AllowedOrigins are browser origins allowed besides the endpoint's own loopback origins.
	AllowedOrigins []string
}

// HTTPHandler serves MCP (Streamable HTTP) at /mcp behind three checks: a bearer token (401),
// a Host header naming this machine (403, against DNS rebinding) and, when a browser sends one,
// an allowed Origin (403). Request bodies are capped at MaxMessageSize.
func (s *Service) HTTPHandler(o HTTPOptions) http.Handler {
	stream := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s.server }, &sdk.StreamableHTTPOptions{
		SessionTimeout: 30 * time.Minute,
		Logger:         s.logger,
	})
	mux := http.NewServeMux()
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		if !validBearer(r, o.Token) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="switchboard"`)
			http.Error(w, "missing or wrong bearer token: send Authorization: Bearer <token> (printed by `switchboard serve --http`, or set with --token / SWITCHBOARD_TOKEN)", http.StatusUnauthorized)
			return
		}
		if !localHost(r.Host) {
			http.Error(w, fmt.Sprintf("Host %q is not this machine; connect to 127.0.0.1 or localhost", r.Host), http.StatusForbidden)
			return
		}
		if origin := r.Header.Get("Origin"); origin != "" && !originAllowed(origin, r.Host, o.AllowedOrigins) {
			http.Error(w, fmt.Sprintf("Origin %q is not allowed", origin), http.StatusForbidden)
			return
		}
		if r.ContentLength > MaxMessageSize {
			http.Error(w, fmt.Sprintf("request body of %d bytes exceeds the %d MiB limit", r.ContentLength, MaxMessageSize>>20), http.StatusRequestEntityTooLarge)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, MaxMessageSize)
		r = r.WithContext(withConnInfo(r.Context(), &connInfo{transport: "http", peer: r.RemoteAddr}))
		stream.ServeHTTP(w, r)
	})
	return mux
}

func validBearer(r *http.Request, token string) bool {
	if token == "" {
		return false
	}
	got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	return ok && subtle.ConstantTimeCompare([]byte(got), []byte(token)) == 1
}

func localHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func originAllowed(origin, host string, extra []string) bool {
	for _, o := range extra {
		if origin == o {
			return true
		}
	}
	for _, scheme := range []string{"http://", "https://"} {
		if origin == scheme+host {
			return true
		}
	}
	return false
}

// ServeHTTP runs the HTTP endpoint on ln until ctx ends, then shuts down gracefully.
func (s *Service) ServeHTTP(ctx context.Context, ln net.Listener, o HTTPOptions) error {
	srv := &http.Server{Handler: s.HTTPHandler(o), ReadHeaderTimeout: 10 * time.Second}
	drained := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		defer close(drained)
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), DrainTimeout)
		defer cancel()
		_ = srv.Shutdown(sctx) // waits for in-flight requests, up to DrainTimeout
		_ = srv.Close()        // then cuts long-lived streams
	})
	err := srv.Serve(ln)
	if stop() { // ctx never ended: Serve failed on its own
		_ = srv.Close()
	} else {
		<-drained
	}
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("http: %w", err)
	}
	return nil
}

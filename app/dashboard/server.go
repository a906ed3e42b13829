// Package dashboard serves the dashboard over loopback HTTP: the built frontend, the control table
// of package app as the JSON API under /api, and the hub's WebSocket at /ws. It is the front end of
// headless mode (Run): no display, or a binary built without the desktop UI.
package dashboard

import (
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"path"
	"strings"

	"github.com/switchboard-hub/switchboard/app"
	"github.com/switchboard-hub/switchboard/frontend"
)

// Server serves the dashboard over loopback HTTP for headless mode: the built frontend
// plus the Controller as a JSON API. Static files are public (they hold no data); every /api call
// needs the dashboard token, and only loopback Host names are accepted, against DNS rebinding.
type Server struct {
	ctl    *app.Controller
	token  string
	assets fs.FS
}

// APIError is the body of every failed /api call.
type APIError struct {
	Error string `json:"error"`
}

// NewServer serves ctl's controls to callers holding token (the dashboard token).
func NewServer(ctl *app.Controller, token string) *Server {
	return &Server{ctl: ctl, token: token, assets: frontend.Dist()}
}

// Handler is the whole dashboard: static files, /api and /ws, behind the loopback Host check.
func (d *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	api := func(pattern string, h func(w http.ResponseWriter, r *http.Request) (any, error)) {
		mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
			if !d.authorized(r) {
				w.Header().Set("Connection", "close") // never wait for the body of a stranger
				writeJSON(w, http.StatusUnauthorized, APIError{Error: "missing or wrong dashboard token: open the URL printed at start-up (it carries ?token=)"})
				return
			}
			if o := r.Header.Get("Origin"); o != "" && o != "http://"+r.Host {
				writeJSON(w, http.StatusForbidden, APIError{Error: fmt.Sprintf("Origin %q is not allowed", o)})
				return
			}
			v, err := h(w, r)
			if err != nil {
				writeJSON(w, http.StatusBadRequest, APIError{Error: err.Error()})
				return
			}
			writeJSON(w, http.StatusOK, v)
		})
	}
	// Bootstrap is served by hand: the page reaches the hub through this server's own /ws (same
	// origin, one port to open), so the URL depends on the request's Host.
	api("GET /api/bootstrap", func(w http.ResponseWriter, r *http.Request) (any, error) {
		b, err := d.ctl.Bootstrap()
		b.HubURL = "ws://" + r.Host + "/ws"
		return b, err
	})
	// Every other control, as app/controls.go declares it.
	for _, rt := range app.Controls().Routes() {
		api(rt.Pattern, func(_ http.ResponseWriter, r *http.Request) (any, error) { return rt.Serve(d.ctl, r) })
	}
	if h := d.ctl.Hub(); h != nil {
		mux.Handle("/ws", h) // token and Origin checks are the hub's own
	}
	mux.Handle("/", d.static())
	return hostGuard(d.securityHeaders(mux))
}

// securityHeaders sets the browser policy of every dashboard response: scripts, images and fonts
// from this server only; styles from this server plus inline ones (xterm.js, the process
// terminal, injects <style> elements for its theme and cell size; scripts stay 'self' only);
// connections to this server and the hub's WebSocket; no framing, no referrer, no MIME sniffing.
func (d *Server) securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		connect := "'self' ws://" + r.Host
		if h := d.ctl.Hub(); h != nil {
			if u := h.URL(); u != "" {
				connect += " " + u
			}
		}
		hd := w.Header()
		hd.Set("Content-Security-Policy", "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self'; connect-src "+connect+
			"; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
		hd.Set("X-Frame-Options", "DENY")
		hd.Set("Referrer-Policy", "no-referrer")
		hd.Set("X-Content-Type-Options", "nosniff")
		next.ServeHTTP(w, r)
	})
}

func (d *Server) static() http.Handler {
	if _, err := fs.Stat(d.assets, "index.html"); err != nil { // not built into this binary
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_, _ = io.WriteString(w, `<!doctype html><title>Switchboard</title><h1>Switchboard</h1><p>The dashboard has not been built into this binary. Run <code>make build</code> (or <code>cd frontend && npm ci && npm run build</code>, then rebuild).</p>`)
		})
	}
	files := http.FileServerFS(d.assets)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// No directory listings: a directory is served only through its index.html.
		name := strings.Trim(path.Clean("/"+r.URL.Path), "/")
		if name == "" {
			name = "."
		}
		if fi, err := fs.Stat(d.assets, name); err == nil && fi.IsDir() {
			if _, err := fs.Stat(d.assets, path.Join(name, "index.html")); err != nil {
				http.NotFound(w, r)
				return
			}
		}
		files.ServeHTTP(w, r)
	})
}

func (d *Server) authorized(r *http.Request) bool {
	got := r.URL.Query().Get("token")
	if scheme, cred, ok := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " "); ok && strings.EqualFold(scheme, "Bearer") {
		got = strings.TrimSpace(cred)
	}
	return got != "" && subtle.ConstantTimeCompare([]byte(got), []byte(d.token)) == 1
}

// hostGuard refuses requests whose Host is not a loopback name (DNS rebinding defence).
func hostGuard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host := r.Host
		if h, _, err := net.SplitHostPort(host); err == nil {
			host = h
		}
		host = strings.Trim(host, "[]")
		if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
			w.Header().Set("Connection", "close")
			http.Error(w, "dashboard is served on loopback only", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

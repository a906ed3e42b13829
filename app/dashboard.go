package app

import (
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"path"
	"strconv"
	"strings"

	"github.com/switchboard-hub/switchboard/frontend"
	"github.com/switchboard-hub/switchboard/internal/upstream"
)

// dashboardServer serves the dashboard over loopback HTTP for headless mode: the built frontend
// plus the Controller as a JSON API. Static files are public (they hold no data); every /api call
// needs the dashboard token, and only loopback Host names are accepted, against DNS rebinding.
type dashboardServer struct {
	ctl    *Controller
	token  string
	assets fs.FS
}

// APIError is the body of every failed /api call.
type APIError struct {
	Error string `json:"error"`
}

func newDashboardServer(ctl *Controller, token string) *dashboardServer {
	return &dashboardServer{ctl: ctl, token: token, assets: frontend.Dist()}
}

func (d *dashboardServer) Handler() http.Handler {
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
	api("GET /api/bootstrap", func(w http.ResponseWriter, r *http.Request) (any, error) {
		b, err := d.ctl.Bootstrap()
		// The page reaches the hub through this server's own /ws: same origin, one port to open.
		b.HubURL = "ws://" + r.Host + "/ws"
		return b, err
	})
	api("GET /api/transports", func(http.ResponseWriter, *http.Request) (any, error) { return d.ctl.Transports(), nil })
	api("POST /api/transports/{name}", func(w http.ResponseWriter, r *http.Request) (any, error) {
		var body struct {
			Enabled *bool `json:"enabled"`
		}
		if err := decode(r, &body); err != nil || body.Enabled == nil {
			return nil, fmt.Errorf("body: want {\"enabled\": true|false}")
		}
		return d.ctl.SetTransport(r.PathValue("name"), *body.Enabled)
	})
	api("GET /api/toolsets", func(http.ResponseWriter, *http.Request) (any, error) { return d.ctl.Toolsets(), nil })
	api("POST /api/toolsets/{name}", func(w http.ResponseWriter, r *http.Request) (any, error) {
		var body struct {
			Enabled *bool `json:"enabled"`
		}
		if err := decode(r, &body); err != nil || body.Enabled == nil {
			return nil, fmt.Errorf("body: want {\"enabled\": true|false}")
		}
		return d.ctl.SetToolset(r.PathValue("name"), *body.Enabled)
	})
	api("POST /api/processes", func(w http.ResponseWriter, r *http.Request) (any, error) {
		var body struct {
			Command string   `json:"command"`
			Args    []string `json:"args"`
		}
		if err := decode(r, &body); err != nil {
			return nil, err
		}
		return d.ctl.StartProcess(body.Command, body.Args)
	})
	api("POST /api/processes/{id}/stop", func(w http.ResponseWriter, r *http.Request) (any, error) {
		return d.ctl.StopProcess(r.PathValue("id"))
	})
	api("POST /api/processes/{id}/kill", func(w http.ResponseWriter, r *http.Request) (any, error) {
		return d.ctl.KillProcess(r.PathValue("id"))
	})
	api("POST /api/processes/{id}/input", func(w http.ResponseWriter, r *http.Request) (any, error) {
		var body struct {
			Input string `json:"input"`
		}
		if err := decode(r, &body); err != nil {
			return nil, err
		}
		return InputResult{Success: true}, d.ctl.SendInput(r.PathValue("id"), body.Input)
	})
	api("POST /api/ide/sessions", func(w http.ResponseWriter, r *http.Request) (any, error) {
		var body struct {
			Name string `json:"name"`
		}
		if err := decode(r, &body); err != nil {
			return nil, err
		}
		return d.ctl.CreateIDESession(body.Name)
	})
	api("POST /api/ide/chat", func(w http.ResponseWriter, r *http.Request) (any, error) {
		var body struct {
			SessionID string `json:"sessionId"`
			Message   string `json:"message"`
		}
		if err := decode(r, &body); err != nil {
			return nil, err
		}
		return d.ctl.SendChat(body.SessionID, body.Message)
	})
	api("GET /api/approvals", func(http.ResponseWriter, *http.Request) (any, error) { return d.ctl.Approvals(), nil })
	api("POST /api/approvals/{id}", func(w http.ResponseWriter, r *http.Request) (any, error) {
		var body struct {
			Decision string `json:"decision"`
		}
		if err := decode(r, &body); err != nil {
			return nil, fmt.Errorf("body: want {\"decision\": \"allow\"|\"deny\"}")
		}
		return d.ctl.DecideApproval(r.PathValue("id"), body.Decision)
	})
	api("POST /api/sessions/{id}/workspace", func(w http.ResponseWriter, r *http.Request) (any, error) {
		var body struct {
			Dir   string `json:"dir"`
			Allow *bool  `json:"allow"`
		}
		if err := decode(r, &body); err != nil {
			return nil, fmt.Errorf("%v; want {\"dir\": \"/path\", \"allow\": true|false}", err)
		}
		if body.Allow == nil {
			return nil, fmt.Errorf("allow: required, true to grant the directory or false to revoke it")
		}
		return d.ctl.GrantWorkspace(r.PathValue("id"), body.Dir, *body.Allow)
	})
	api("GET /api/rag/collections", func(http.ResponseWriter, *http.Request) (any, error) { return d.ctl.RAGCollections() })
	api("POST /api/rag/query", func(w http.ResponseWriter, r *http.Request) (any, error) {
		var body struct {
			Collection string `json:"collection"`
			Question   string `json:"question"`
			TopK       int    `json:"topK"`
		}
		if err := decode(r, &body); err != nil {
			return nil, err
		}
		return d.ctl.RAGQuery(body.Collection, body.Question, body.TopK)
	})
	api("GET /api/clients", func(http.ResponseWriter, *http.Request) (any, error) { return d.ctl.ListClients() })
	api("POST /api/clients/{name}", func(w http.ResponseWriter, r *http.Request) (any, error) {
		var body struct {
			Scope  string `json:"scope"`
			Action string `json:"action"`
			DryRun bool   `json:"dryRun"`
		}
		if err := decode(r, &body); err != nil {
			return nil, fmt.Errorf("%v; want {\"scope\": \"user\"|\"project\", \"action\": \"connect\"|\"disconnect\", \"dryRun\": true|false}", err)
		}
		if body.DryRun {
			return d.ctl.PreviewClient(r.PathValue("name"), body.Scope, body.Action)
		}
		return d.ctl.ApplyClient(r.PathValue("name"), body.Scope, body.Action)
	})
	api("GET /api/servers", func(http.ResponseWriter, *http.Request) (any, error) { return d.ctl.ListServers() })
	api("POST /api/servers", func(w http.ResponseWriter, r *http.Request) (any, error) {
		var spec upstream.Spec
		if err := decode(r, &spec); err != nil {
			return nil, fmt.Errorf("%v; want a server like {\"name\": \"memory\", \"command\": \"npx\", \"args\": [\"-y\", \"@modelcontextprotocol/server-memory\"]}", err)
		}
		return d.ctl.AddServer(spec)
	})
	api("DELETE /api/servers/{name}", func(w http.ResponseWriter, r *http.Request) (any, error) {
		return d.ctl.RemoveServer(r.PathValue("name"))
	})
	api("GET /api/servers/{name}/log", func(w http.ResponseWriter, r *http.Request) (any, error) {
		n := 500
		if v := r.URL.Query().Get("lines"); v != "" {
			var err error
			if n, err = strconv.Atoi(v); err != nil {
				return nil, fmt.Errorf("lines: %q is not a number", v)
			}
		}
		return d.ctl.ServerLogs(r.PathValue("name"), n)
	})
	api("POST /api/servers/{name}/approve", func(w http.ResponseWriter, r *http.Request) (any, error) {
		var body struct {
			Tools []string `json:"tools"`
		}
		if err := decode(r, &body); err != nil {
			return nil, fmt.Errorf("%v; want {} to approve the server and pin its tools, or {\"tools\": [\"name\"]} for held tools", err)
		}
		return d.ctl.ApproveServer(r.PathValue("name"), body.Tools)
	})
	api("POST /api/servers/{name}/restart", func(w http.ResponseWriter, r *http.Request) (any, error) {
		return d.ctl.RestartServer(r.PathValue("name"))
	})
	api("POST /api/servers/{name}/enabled", func(w http.ResponseWriter, r *http.Request) (any, error) {
		var body struct {
			Enabled *bool `json:"enabled"`
		}
		if err := decode(r, &body); err != nil || body.Enabled == nil {
			return nil, fmt.Errorf("body: want {\"enabled\": true|false}")
		}
		return d.ctl.SetServerEnabled(r.PathValue("name"), *body.Enabled)
	})
	api("GET /api/clientconfig", func(http.ResponseWriter, *http.Request) (any, error) { return d.ctl.ClientConfig(), nil })
	d.settingsAPI(api)
	d.projectAPI(api)
	api("GET /api/audit", func(w http.ResponseWriter, r *http.Request) (any, error) {
		v := r.URL.Query()
		limit, err := queryInt(v.Get("limit"), "limit")
		if err != nil {
			return nil, err
		}
		return d.ctl.Audit(AuditQuery{Client: v.Get("client"), Tool: v.Get("tool"), Decision: v.Get("decision"),
			Outcome: v.Get("outcome"), Limit: limit, Before: v.Get("before")})
	})
	api("GET /api/hublog", func(w http.ResponseWriter, r *http.Request) (any, error) {
		limit, err := queryInt(r.URL.Query().Get("limit"), "limit")
		if err != nil {
			return nil, err
		}
		return d.ctl.HubLog(r.URL.Query().Get("level"), limit)
	})
	if h := d.ctl.st.WSHub; h != nil {
		mux.Handle("/ws", h) // token and Origin checks are the hub's own
	}
	mux.Handle("/", d.static())
	return hostGuard(d.securityHeaders(mux))
}

// securityHeaders sets the browser policy of every dashboard response: scripts, images and fonts
// from this server only; styles from this server plus inline ones (xterm.js, the process
// terminal, injects <style> elements for its theme and cell size; scripts stay 'self' only);
// connections to this server and the hub's WebSocket; no framing, no referrer, no MIME sniffing.
func (d *dashboardServer) securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		connect := "'self' ws://" + r.Host
		if h := d.ctl.st.WSHub; h != nil {
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

func (d *dashboardServer) static() http.Handler {
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

func (d *dashboardServer) authorized(r *http.Request) bool {
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

// queryInt reads a number from a query parameter ("" is 0).
func queryInt(v, name string) (int, error) {
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, fmt.Errorf("%s: %q is not a number", name, v)
	}
	return n, nil
}

func decode(r *http.Request, v any) error {
	dec := json.NewDecoder(http.MaxBytesReader(nil, r.Body, 1<<20))
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("body: invalid JSON: %v", err)
	}
	return nil
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

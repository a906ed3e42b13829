package authserver

import (
	"context"
	"html/template"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

// authCode is an authorization code's record, kept by the code's hash. A used code stays until
// it expires, so a replay can be told apart from a typo and revokes what the code produced.
type authCode struct {
	clientID    string
	clientName  string
	device      string
	redirectURI string
	challenge   string
	scopes      []string
	resource    string
	expires     time.Time
	used        bool
	grantID     string // the grant the code was exchanged for
}

// pendingAuth is an authorization waiting for the user's answer; the browser that started it
// holds its id (unguessable) and polls it.
type pendingAuth struct {
	id       string
	done     chan struct{} // closed once redirect is set
	redirect string
	doneAt   time.Time
}

// authorize serves the authorization endpoint: the request is checked (client, redirect URI,
// PKCE S256, resource, scopes), put to the user, and the browser waits for the answer.
// Until the redirect URI is known good, errors are shown on a page, never redirected (no open
// redirect).
func (s *Server) authorize(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodPost {
		w.Header().Set("Allow", "GET, POST")
		errorPage(w, http.StatusMethodNotAllowed, "Use GET to authorize.")
		return
	}
	if err := r.ParseForm(); err != nil {
		errorPage(w, http.StatusBadRequest, "The request could not be read: "+err.Error())
		return
	}
	q := r.Form
	if q.Get("client_id") == "" {
		errorPage(w, http.StatusBadRequest, "client_id is missing.")
		return
	}
	c, err := s.client(r.Context(), q.Get("client_id"))
	if err != nil {
		errorPage(w, http.StatusBadRequest, "Unknown client: "+err.Error())
		return
	}
	redirectURI := q.Get("redirect_uri")
	if redirectURI == "" && len(c.RedirectURIs) == 1 {
		redirectURI = c.RedirectURIs[0]
	}
	if !redirectMatches(c.RedirectURIs, redirectURI) {
		errorPage(w, http.StatusBadRequest, "redirect_uri "+redirectURI+" is not one this client registered; nothing was sent to it.")
		return
	}
	issuer := Origin(r)
	fail := func(code, desc string) {
		http.Redirect(w, r, withParams(redirectURI, url.Values{"error": {code}, "error_description": {desc},
			"state": nonEmpty(q.Get("state")), "iss": {issuer}}), http.StatusFound)
	}
	if q.Get("response_type") != "code" {
		fail("unsupported_response_type", "only response_type=code is served")
		return
	}
	challenge := q.Get("code_challenge")
	if challenge == "" {
		fail("invalid_request", "code_challenge is required (PKCE with S256)")
		return
	}
	if q.Get("code_challenge_method") != "S256" {
		fail("invalid_request", "code_challenge_method must be S256")
		return
	}
	if len(challenge) != 43 || strings.Trim(challenge, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_") != "" {
		fail("invalid_request", "code_challenge is not a base64url SHA-256 (43 characters)")
		return
	}
	resource := s.Resource(r)
	if res := q["resource"]; len(res) > 0 {
		if len(res) > 1 || !sameResource(res[0], resource) {
			fail("invalid_target", "this server issues tokens for "+resource+" only")
			return
		}
	}
	scopes, err := s.parseScopes(q.Get("scope"))
	if err != nil {
		fail("invalid_scope", err.Error())
		return
	}
	state := q.Get("state") // read now: the goroutine outlives the request
	p := &pendingAuth{id: randomToken(""), done: make(chan struct{})}
	req := Request{ClientID: c.ID, ClientName: c.Name, Device: remoteHost(r), RedirectURI: redirectURI, Scopes: scopes}
	if req.ClientName == "" {
		req.ClientName = "an unnamed client"
	}
	s.mu.Lock()
	s.sweepPendingLocked()
	if len(s.pending) >= MaxPending {
		s.mu.Unlock()
		fail("temporarily_unavailable", "too many authorizations are waiting for the user; try again later")
		return
	}
	s.pending[p.id] = p
	s.mu.Unlock()
	s.wg.Add(1)
	go func() { // owned by the Server: ends with the user's answer, ApprovalTimeout or Close
		defer s.wg.Done()
		ctx, cancel := context.WithTimeout(s.ctx, s.opts.ApprovalTimeout)
		defer cancel()
		d := s.opts.Approve(ctx, req)
		params := url.Values{"state": nonEmpty(state), "iss": {issuer}}
		if !d.Allow {
			reason := d.Reason
			if reason == "" {
				reason = "the user denied this client"
			}
			params.Set("error", "access_denied")
			params.Set("error_description", reason)
		} else {
			granted := scopes
			if len(d.Scopes) > 0 {
				granted = d.Scopes
			}
			code := randomToken("sbk_")
			s.mu.Lock()
			s.codes[hashToken(code)] = &authCode{clientID: c.ID, clientName: req.ClientName, device: req.Device,
				redirectURI: redirectURI, challenge: challenge, scopes: granted, resource: resource,
				expires: s.opts.Now().Add(s.opts.CodeTTL)}
			s.mu.Unlock()
			params.Set("code", code)
			s.opts.Logger.Info("oauth: client approved", "client", req.ClientName, "device", req.Device, "scopes", strings.Join(granted, " "))
		}
		s.mu.Lock()
		p.redirect, p.doneAt = withParams(redirectURI, params), s.opts.Now()
		s.mu.Unlock()
		close(p.done)
	}()
	s.await(w, r, p)
}

// authorizeWait serves the page the waiting browser reloads.
func (s *Server) authorizeWait(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	p := s.pending[r.URL.Query().Get("request")]
	s.mu.Unlock()
	if p == nil {
		errorPage(w, http.StatusNotFound, "This authorization is over (answered, expired or unknown). Start again from your client.")
		return
	}
	s.await(w, r, p)
}

// await waits up to WaitStep for the user's answer: redirects with it, or shows the waiting page
// that reloads itself.
func (s *Server) await(w http.ResponseWriter, r *http.Request, p *pendingAuth) {
	t := time.NewTimer(s.opts.WaitStep)
	defer t.Stop()
	select {
	case <-p.done:
		s.mu.Lock()
		delete(s.pending, p.id) // the code goes to one browser load only
		to := p.redirect
		s.mu.Unlock()
		w.Header().Set("Cache-Control", "no-store")
		http.Redirect(w, r, to, http.StatusFound)
	case <-t.C:
		waitingPage(w, PathAuthorizeWait+"?request="+url.QueryEscape(p.id))
	case <-s.ctx.Done():
		errorPage(w, http.StatusServiceUnavailable, "The hub is shutting down; start again from your client once it runs.")
	case <-r.Context().Done():
	}
}

// sweepPendingLocked forgets answered authorizations nobody collected.
func (s *Server) sweepPendingLocked() {
	now := s.opts.Now()
	for id, p := range s.pending {
		if !p.doneAt.IsZero() && now.Sub(p.doneAt) > s.opts.CodeTTL {
			delete(s.pending, id)
		}
	}
	for h, c := range s.codes {
		if now.After(c.expires) {
			delete(s.codes, h)
		}
	}
}

// parseScopes reads a scope parameter: empty means every toolset; offline_access is dropped;
// anything else must be a scope this hub serves.
func (s *Server) parseScopes(raw string) ([]string, error) {
	known := append(s.opts.Scopes(), ScopeReadOnly)
	var out []string
	for _, sc := range strings.Fields(raw) {
		if sc == ScopeOfflineAccess || slices.Contains(out, sc) {
			continue
		}
		if !slices.Contains(known, sc) {
			return nil, &scopeError{sc, known}
		}
		out = append(out, sc)
	}
	if len(out) == 0 {
		out = s.opts.Scopes()
	}
	return out, nil
}

type scopeError struct {
	scope string
	known []string
}

func (e *scopeError) Error() string {
	return "scope " + e.scope + " is not served here; the scopes are " + strings.Join(e.known, " ")
}

func remoteHost(r *http.Request) string {
	if h, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		return h
	}
	return r.RemoteAddr
}

func nonEmpty(v string) []string {
	if v == "" {
		return nil
	}
	return []string{v}
}

// withParams adds params to a redirect URI's query, keeping the query it has.
func withParams(uri string, params url.Values) string {
	u, err := url.Parse(uri)
	if err != nil {
		return uri
	}
	q := u.Query()
	for k, vs := range params {
		for _, v := range vs {
			q.Set(k, v)
		}
	}
	u.RawQuery = q.Encode()
	return u.String()
}

var pageTemplate = template.Must(template.New("page").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Switchboard</title>
{{if .Refresh}}<meta http-equiv="refresh" content="0;url={{.Refresh}}">{{end}}
<style>body{font:16px system-ui,sans-serif;max-width:36em;margin:4em auto;padding:0 1em;color:#222}</style>
</head><body><h1>Switchboard</h1><p>{{.Text}}</p></body></html>
`))

func waitingPage(w http.ResponseWriter, next string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'")
	w.Header().Set("X-Frame-Options", "DENY")
	_ = pageTemplate.Execute(w, struct{ Text, Refresh string }{
		"Waiting for your answer on the hub: allow or deny this client on Switchboard's dashboard or tray, on the machine it runs on. This page goes on by itself.", next})
}

func errorPage(w http.ResponseWriter, status int, text string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'")
	w.Header().Set("X-Frame-Options", "DENY")
	w.WriteHeader(status)
	_ = pageTemplate.Execute(w, struct{ Text, Refresh string }{text, ""})
}

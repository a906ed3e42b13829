package authserver

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
)

// Handler serves the metadata, registration, authorization, token and revocation endpoints.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	prm := http.HandlerFunc(s.resourceMetadata)
	mux.Handle(PathResourceMetadata, prm)
	mux.Handle(PathResourceMetadata+"/", prm)
	mux.HandleFunc(PathServerMetadata, s.serverMetadata)
	mux.HandleFunc(PathServerMetadata+"/", s.serverMetadata)
	mux.HandleFunc(PathRegister, s.register)
	mux.HandleFunc(PathAuthorize, s.authorize)
	mux.HandleFunc(PathAuthorizeWait, s.authorizeWait)
	mux.HandleFunc(PathToken, s.token)
	mux.HandleFunc(PathRevoke, s.revoke)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/.well-known/") {
			// Metadata is public (RFC 9728 §3, RFC 8414 §3): browser clients may read it.
			w.Header().Set("Access-Control-Allow-Origin", "*")
			if r.Method == http.MethodOptions {
				w.Header().Set("Access-Control-Allow-Methods", "GET, OPTIONS")
				w.WriteHeader(http.StatusNoContent)
				return
			}
		}
		mux.ServeHTTP(w, r)
	})
}

// resourceMetadata serves RFC 9728 metadata for the MCP endpoint.
func (s *Server) resourceMetadata(w http.ResponseWriter, r *http.Request) {
	if rest := strings.TrimPrefix(r.URL.Path, PathResourceMetadata); rest != "" && rest != s.opts.ResourcePath {
		http.NotFound(w, r)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"resource":                 s.Resource(r),
		"authorization_servers":    []string{Origin(r)},
		"scopes_supported":         s.opts.Scopes(),
		"bearer_methods_supported": []string{"header"},
		"resource_name":            "Switchboard",
	})
}

// serverMetadata serves RFC 8414 metadata.
func (s *Server) serverMetadata(w http.ResponseWriter, r *http.Request) {
	if rest := strings.TrimPrefix(r.URL.Path, PathServerMetadata); rest != "" && rest != "/" {
		http.NotFound(w, r)
		return
	}
	o := Origin(r)
	writeJSON(w, http.StatusOK, map[string]any{
		"issuer":                                         o,
		"authorization_endpoint":                         o + PathAuthorize,
		"token_endpoint":                                 o + PathToken,
		"registration_endpoint":                          o + PathRegister,
		"revocation_endpoint":                            o + PathRevoke,
		"scopes_supported":                               s.scopesSupported(),
		"response_types_supported":                       []string{"code"},
		"grant_types_supported":                          []string{"authorization_code", "refresh_token"},
		"token_endpoint_auth_methods_supported":          []string{"none", "client_secret_post", "client_secret_basic"},
		"revocation_endpoint_auth_methods_supported":     []string{"none", "client_secret_post", "client_secret_basic"},
		"code_challenge_methods_supported":               []string{"S256"},
		"client_id_metadata_document_supported":          !s.opts.NoMetadataDocuments,
		"authorization_response_iss_parameter_supported": true,
	})
}

// token serves the token endpoint: authorization_code (PKCE checked) and refresh_token
// (rotated; a rotated-away token presented again revokes the grant, OAuth 2.1 §4.3.1).
func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		oauthError(w, http.StatusMethodNotAllowed, "invalid_request", "use POST")
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_request", "the body is not a form: "+err.Error())
		return
	}
	c, ok := s.authenticateClient(w, r)
	if !ok {
		return
	}
	resource := s.Resource(r)
	if res := r.PostForm["resource"]; len(res) > 0 && (len(res) > 1 || !sameResource(res[0], resource)) {
		oauthError(w, http.StatusBadRequest, "invalid_target", "this server issues tokens for "+resource+" only")
		return
	}
	switch r.PostForm.Get("grant_type") {
	case "authorization_code":
		s.exchangeCode(w, r, c, resource)
	case "refresh_token":
		s.refresh(w, r, c, resource)
	default:
		oauthError(w, http.StatusBadRequest, "unsupported_grant_type", "use authorization_code or refresh_token")
	}
}

// authenticateClient finds the client a token or revocation request names and checks its secret
// when it has one.
func (s *Server) authenticateClient(w http.ResponseWriter, r *http.Request) (*Client, bool) {
	id, secret, basic := r.BasicAuth()
	if !basic {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	if id == "" {
		oauthError(w, http.StatusUnauthorized, "invalid_client", "client_id is missing")
		return nil, false
	}
	c, err := s.client(r.Context(), id)
	if err != nil {
		oauthError(w, http.StatusUnauthorized, "invalid_client", err.Error())
		return nil, false
	}
	if c.SecretHash != "" {
		got := hashToken(secret)
		if secret == "" || subtle.ConstantTimeCompare([]byte(got), []byte(c.SecretHash)) != 1 {
			oauthError(w, http.StatusUnauthorized, "invalid_client", "wrong or missing client_secret")
			return nil, false
		}
	}
	return c, true
}

func (s *Server) exchangeCode(w http.ResponseWriter, r *http.Request, c *Client, resource string) {
	f := r.PostForm
	h := hashToken(f.Get("code"))
	now := s.opts.Now()
	s.mu.Lock()
	code, ok := s.codes[h]
	switch {
	case !ok || f.Get("code") == "" || now.After(code.expires):
		s.mu.Unlock()
		oauthError(w, http.StatusBadRequest, "invalid_grant", "the code is unknown or expired")
		return
	case code.used:
		// A replayed code: someone else may hold it. Revoke what it produced (RFC 6749 §4.1.2).
		if g := s.st.Grants[code.grantID]; g != nil {
			s.revokeLocked(g)
		}
		s.mu.Unlock()
		s.opts.Logger.Warn("oauth: an authorization code was presented twice; its grant is revoked", "client", code.clientName)
		oauthError(w, http.StatusBadRequest, "invalid_grant", "the code was already used; the tokens it produced are revoked")
		return
	case code.clientID != c.ID:
		s.mu.Unlock()
		oauthError(w, http.StatusBadRequest, "invalid_grant", "the code was issued to another client")
		return
	case f.Get("redirect_uri") != "" && f.Get("redirect_uri") != code.redirectURI:
		s.mu.Unlock()
		oauthError(w, http.StatusBadRequest, "invalid_grant", "redirect_uri differs from the authorization request's")
		return
	case !sameResource(code.resource, resource):
		s.mu.Unlock()
		oauthError(w, http.StatusBadRequest, "invalid_target", "the code was issued for another resource")
		return
	case !pkceMatches(f.Get("code_verifier"), code.challenge):
		code.used = true // a wrong verifier burns the code: no guessing
		s.mu.Unlock()
		oauthError(w, http.StatusBadRequest, "invalid_grant", "code_verifier is missing or does not match the code_challenge (PKCE S256)")
		return
	}
	code.used = true
	g := &grant{ID: randomToken("g")[:16], ClientID: c.ID, ClientName: code.clientName, Device: code.device,
		Scopes: code.scopes, Resource: code.resource, CreatedAt: now.UTC()}
	code.grantID = g.ID
	access, refresh := s.issueLocked(g)
	s.st.Grants[g.ID] = g
	s.indexLocked(g.ID, g)
	s.saveLocked()
	s.mu.Unlock()
	s.writeTokens(w, g, access, refresh)
}

func (s *Server) refresh(w http.ResponseWriter, r *http.Request, c *Client, resource string) {
	f := r.PostForm
	h := hashToken(f.Get("refresh_token"))
	now := s.opts.Now()
	s.mu.Lock()
	id, ok := s.byRefresh[h]
	g := s.st.Grants[id]
	switch {
	case !ok || g == nil || f.Get("refresh_token") == "":
		s.mu.Unlock()
		oauthError(w, http.StatusBadRequest, "invalid_grant", "the refresh token is unknown, expired or revoked")
		return
	case g.Refresh.Hash != h:
		// A rotated-away refresh token presented again: it was copied. End the grant.
		s.revokeLocked(g)
		s.mu.Unlock()
		s.opts.Logger.Warn("oauth: a used refresh token was presented again; the grant is revoked", "client", g.ClientName, "device", g.Device)
		oauthError(w, http.StatusBadRequest, "invalid_grant", "the refresh token was already used; the grant is revoked")
		return
	case g.ClientID != c.ID:
		s.mu.Unlock()
		oauthError(w, http.StatusBadRequest, "invalid_grant", "the refresh token was issued to another client")
		return
	case !now.Before(g.Refresh.Expires):
		s.mu.Unlock()
		oauthError(w, http.StatusBadRequest, "invalid_grant", "the refresh token expired; authorize again")
		return
	case !sameResource(g.Resource, resource):
		s.mu.Unlock()
		oauthError(w, http.StatusBadRequest, "invalid_target", "the grant is for another resource")
		return
	}
	if sc := strings.Fields(f.Get("scope")); len(sc) > 0 {
		for _, x := range sc {
			if x != ScopeOfflineAccess && !slices.Contains(g.Scopes, x) {
				s.mu.Unlock()
				oauthError(w, http.StatusBadRequest, "invalid_scope", "scope "+x+" was not granted; a refresh cannot widen a grant")
				return
			}
		}
	}
	s.unindexLocked(g)
	g.UsedRefresh = append(g.UsedRefresh, g.Refresh.Hash)
	if len(g.UsedRefresh) > maxUsedRefresh {
		g.UsedRefresh = g.UsedRefresh[len(g.UsedRefresh)-maxUsedRefresh:]
	}
	access, refresh := s.issueLocked(g)
	s.indexLocked(g.ID, g)
	s.saveLocked()
	s.mu.Unlock()
	s.writeTokens(w, g, access, refresh)
}

// issueLocked makes a new access token and refresh token for g, dropping expired access tokens.
func (s *Server) issueLocked(g *grant) (access, refresh string) {
	now := s.opts.Now()
	access, refresh = randomToken("sba_"), randomToken("sbr_")
	g.Access = slices.DeleteFunc(g.Access, func(t tokenHash) bool {
		if !now.Before(t.Expires) {
			delete(s.byAccess, t.Hash)
			return true
		}
		return false
	})
	g.Access = append(g.Access, tokenHash{Hash: hashToken(access), Expires: now.Add(s.opts.AccessTTL)})
	if len(g.Access) > 4 { // a client refreshing early keeps its previous tokens a while, not forever
		for _, t := range g.Access[:len(g.Access)-4] {
			delete(s.byAccess, t.Hash)
		}
		g.Access = g.Access[len(g.Access)-4:]
	}
	g.Refresh = tokenHash{Hash: hashToken(refresh), Expires: now.Add(s.opts.RefreshTTL)}
	return access, refresh
}

func (s *Server) writeTokens(w http.ResponseWriter, g *grant, access, refresh string) {
	w.Header().Set("Pragma", "no-cache")
	writeJSON(w, http.StatusOK, map[string]any{
		"access_token": access, "token_type": "Bearer", "expires_in": int(s.opts.AccessTTL.Seconds()),
		"refresh_token": refresh, "scope": strings.Join(g.Scopes, " "),
	})
}

// revoke serves RFC 7009: a client ends its own grant with its access or refresh token.
func (s *Server) revoke(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		oauthError(w, http.StatusMethodNotAllowed, "invalid_request", "use POST")
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_request", "the body is not a form")
		return
	}
	c, ok := s.authenticateClient(w, r)
	if !ok {
		return
	}
	h := hashToken(r.PostForm.Get("token"))
	s.mu.Lock()
	id, found := s.byRefresh[h]
	if !found {
		id, found = s.byAccess[h]
	}
	if g := s.st.Grants[id]; found && g != nil && g.ClientID == c.ID {
		s.revokeLocked(g)
	}
	s.mu.Unlock()
	w.WriteHeader(http.StatusOK) // RFC 7009 §2.2: also for a token that is not valid
}

// pkceMatches checks an S256 code_verifier (RFC 7636 §4.6).
func pkceMatches(verifier, challenge string) bool {
	if len(verifier) < 43 || len(verifier) > 128 {
		return false
	}
	sum := sha256.Sum256([]byte(verifier))
	got := base64.RawURLEncoding.EncodeToString(sum[:])
	return subtle.ConstantTimeCompare([]byte(got), []byte(challenge)) == 1
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func oauthError(w http.ResponseWriter, status int, code, desc string) {
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, status, map[string]string{"error": code, "error_description": desc})
}

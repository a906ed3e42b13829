package config

// Edits for the Settings view's transport security, web_fetch and RAG key sections, on the same
// terms as edit.go: values are checked first (an error names the key as the file spells it and
// says what would be valid), and the file keeps its comments, order and every other setting.

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/switchboard-hub/switchboard/internal/fetch"
	"github.com/switchboard-hub/switchboard/internal/secrets"
	"github.com/switchboard-hub/switchboard/internal/tomledit"
)

// ---- transport security ----

// SecurityEdit is what the Settings view edits of the transports' security: whether TCP asks
// for the token on loopback too, and the browser origins the HTTP endpoint lets in. Tokens are
// not edited as values (the view never shows them); they are regenerated (EditToken).
type SecurityEdit struct {
	TCPRequireToken    bool
	HTTPAllowedOrigins []string
}

var schemeRE = regexp.MustCompile(`^[a-z][a-z0-9+.-]*$`)

// ValidateOrigins checks [http] allowed_origins: each an origin exactly as a browser sends it in
// the Origin header (scheme://host[:port], lower case, no path), no wildcard, no "null", none
// twice. The endpoint compares origins as strings, so anything else would never match — or, for
// "*" and "null", would let in pages nobody meant to.
func ValidateOrigins(origins []string) error {
	var errs []error
	seen := map[string]int{}
	for i, o := range origins {
		field := fmt.Sprintf("http.allowed_origins[%d]", i+1)
		if err := validateOrigin(o); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", field, err))
			continue
		}
		if j, dup := seen[o]; dup {
			errs = append(errs, fmt.Errorf("%s: %q is also entry %d; list each origin once", field, o, j))
			continue
		}
		seen[o] = i + 1
	}
	return errors.Join(errs...)
}

func validateOrigin(o string) error {
	const example = `write it as the browser sends it, e.g. "http://localhost:6274" (the MCP Inspector)`
	switch {
	case o == "":
		return errors.New("empty; " + example)
	case o == "*" || strings.Contains(o, "*"):
		return fmt.Errorf("%q: wildcards are not allowed: any web page you visit could drive your tools; list each origin", o)
	case o == "null":
		return errors.New(`"null" is what sandboxed frames and file:// pages send: allowing it lets any of them in; serve the page from an http(s) origin and list that`)
	case strings.TrimSpace(o) != o:
		return fmt.Errorf("%q has spaces around it; %s", o, example)
	case strings.ToLower(o) != o:
		return fmt.Errorf("%q: browsers send origins in lower case, so this would never match; write %q", o, strings.TrimRight(strings.ToLower(o), "/"))
	}
	scheme, rest, ok := strings.Cut(o, "://")
	if !ok || !schemeRE.MatchString(scheme) || rest == "" {
		return fmt.Errorf("%q is not an origin; %s", o, example)
	}
	u, err := url.Parse(o)
	if err != nil || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
		return fmt.Errorf("%q is not an origin; %s", o, example)
	}
	if u.Path != "" {
		return fmt.Errorf("%q has a path; an origin is only scheme://host[:port]: write %q", o, scheme+"://"+u.Host)
	}
	return nil
}

// EditSecurity writes [tcp] require_token and [http] allowed_origins (an empty list removes the
// key: only the endpoint's own origin is allowed).
func EditSecurity(data []byte, e SecurityEdit) ([]byte, error) {
	if err := ValidateOrigins(e.HTTPAllowedOrigins); err != nil {
		return nil, err
	}
	out, err := setKey(data, []string{"tcp"}, "require_token", e.TCPRequireToken, Default().TCP.RequireToken)
	if err != nil {
		return nil, err
	}
	if len(e.HTTPAllowedOrigins) == 0 {
		return tomledit.Delete(out, []string{"http"}, "allowed_origins")
	}
	return tomledit.Set(out, []string{"http"}, "allowed_origins", e.HTTPAllowedOrigins)
}

// EditToken writes a transport's token ([tcp] token or [http] token) in the file: used to
// regenerate a token the file already holds, so it stays where the user keeps it.
func EditToken(data []byte, transport, token string) ([]byte, error) {
	if transport != "tcp" && transport != "http" {
		return nil, fmt.Errorf("token: %q has no token key in the file; use tcp or http", transport)
	}
	if token == "" {
		return nil, fmt.Errorf("%s.token: empty", transport)
	}
	return tomledit.Set(data, []string{transport}, "token", token)
}

// ---- web_fetch ----

// WebEdit is the [web] section as the Settings view edits it.
type WebEdit struct {
	Allow   []string
	Timeout string // a Go duration; "" for the default (30s)
}

// Bounds of [web] timeout: a whole request, redirects included.
const (
	minWebTimeout = time.Second
	maxWebTimeout = 10 * time.Minute
)

// Validate checks the allow-list entries as web_fetch reads them (fetch.ParseAllow) and the
// timeout; it returns the timeout (0 for the default).
func (e WebEdit) Validate() (time.Duration, error) {
	var errs []error
	seen := map[string]int{}
	for i, a := range e.Allow {
		field := fmt.Sprintf("web.allow[%d]", i+1)
		if strings.TrimSpace(a) == "" {
			errs = append(errs, fmt.Errorf("%s: empty; write a host, host:port, an IP address or a CIDR such as 10.0.0.0/8", field))
			continue
		}
		if strings.Contains(a, "://") {
			host := a
			if u, err := url.Parse(a); err == nil && u.Host != "" {
				host = u.Host
			}
			errs = append(errs, fmt.Errorf("%s: %q is a URL; write the host alone, such as %q", field, a, host))
			continue
		}
		if _, err := fetch.ParseAllow([]string{a}); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", field, err))
			continue
		}
		if j, dup := seen[a]; dup {
			errs = append(errs, fmt.Errorf("%s: %q is also entry %d", field, a, j))
			continue
		}
		seen[a] = i + 1
	}
	var d time.Duration
	if e.Timeout != "" {
		v, err := time.ParseDuration(e.Timeout)
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("web.timeout: %q is not a duration; write it like \"30s\" or \"2m\"", e.Timeout))
		case v < minWebTimeout || v > maxWebTimeout:
			errs = append(errs, fmt.Errorf("web.timeout: %s is out of range; choose from %s to %s (empty: %s)", v, minWebTimeout, maxWebTimeout, fetch.DefaultTimeout))
		default:
			d = v
		}
	}
	return d, errors.Join(errs...)
}

// EditWeb writes [web] allow (empty removes it) and timeout (empty removes it: the default).
func EditWeb(data []byte, e WebEdit) ([]byte, error) {
	d, err := e.Validate()
	if err != nil {
		return nil, err
	}
	out := data
	if len(e.Allow) == 0 {
		out, err = tomledit.Delete(out, []string{"web"}, "allow")
	} else {
		out, err = tomledit.Set(out, []string{"web"}, "allow", e.Allow)
	}
	if err != nil {
		return nil, err
	}
	if d == 0 {
		return tomledit.Delete(out, []string{"web"}, "timeout")
	}
	// Written as typed when it reads back as the same duration ("90s" stays "90s").
	return setKey(out, []string{"web"}, "timeout", e.Timeout, Default().Web.Timeout.String())
}

// ---- the RAG backend's API key ----

var envRefRE = regexp.MustCompile(`^\$\{([A-Za-z_][A-Za-z0-9_]*)\}$`)

// KeyRef reads a reference to a secret: ${secret:NAME} (the desktop keyring) or ${VAR} (the hub's
// environment). kind is "secret" or "env"; ok is false when v is not one whole reference (a
// literal key, or text around a reference).
func KeyRef(v string) (kind, name string, ok bool) {
	if n, found := strings.CutPrefix(v, "${secret:"); found && strings.HasSuffix(n, "}") {
		n = strings.TrimSuffix(n, "}")
		if secrets.ValidName(n) == nil {
			return "secret", n, true
		}
		return "", "", false
	}
	if m := envRefRE.FindStringSubmatch(v); m != nil {
		return "env", m[1], true
	}
	return "", "", false
}

// ValidateKeyRef checks a value for rag.api_key written from the Settings view: one reference,
// never the key itself, so the file holds no secret.
func ValidateKeyRef(v string) error {
	if _, _, ok := KeyRef(v); ok {
		return nil
	}
	if strings.HasPrefix(v, "${secret:") {
		n := strings.TrimSuffix(strings.TrimPrefix(v, "${secret:"), "}")
		if err := secrets.ValidName(n); err != nil {
			return fmt.Errorf("rag.api_key: %w", err)
		}
	}
	return errors.New(`rag.api_key: write a reference, ${secret:NAME} for a keyring secret or ${VAR} for an environment variable; to use a new key, paste it in the key field instead (it goes to the keyring, never to the file)`)
}

// EditRAGAPIKey writes [rag] api_key as a reference (ValidateKeyRef); "" removes the key.
func EditRAGAPIKey(data []byte, ref string) ([]byte, error) {
	if ref == "" {
		return tomledit.Delete(data, []string{"rag"}, "api_key")
	}
	if err := ValidateKeyRef(ref); err != nil {
		return nil, err
	}
	return tomledit.Set(data, []string{"rag"}, "api_key", ref)
}

// RedactURL hides a password in a URL ("http://user:xxxxx@host"), for showing a URL the file
// holds; a URL without one comes back as it is.
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return raw
	}
	if _, has := u.User.Password(); !has {
		return raw
	}
	return u.Redacted()
}

// hasPassword reports whether a URL carries a password.
func hasPassword(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return false
	}
	_, has := u.User.Password()
	return has
}

// ---- secrets in the file ----

// secretKeyRE matches the names of env and header entries that hold credentials.
var secretKeyRE = regexp.MustCompile(`(?i)token|key|secret|pass|auth|credential|cookie`)

// Secrets lists the secret values a config file's text holds literally: the transports', hub's,
// dashboard's and IDE backend's tokens, a RAG API key that is not a reference, the password of
// ml.influx_url, and the credential-looking env and header values of [[servers]]. A diff shown to
// a person is passed through Redact with them, so saving one section never shows a token that
// happens to sit beside it. Values shorter than 4 bytes are left out: replacing them would mangle
// the diff and hide nothing worth hiding.
func Secrets(data []byte) []string {
	var c Config
	if len(data) == 0 {
		return nil
	}
	if _, err := toml.Decode(string(data), &c); err != nil {
		return nil
	}
	vals := []string{c.TCP.Token, c.HTTP.Token, c.Hub.Token, c.Dashboard.Token, c.IDE.Token}
	if _, _, ref := KeyRef(c.RAG.APIKey); !ref {
		vals = append(vals, c.RAG.APIKey)
	}
	if u, err := url.Parse(c.ML.InfluxURL); err == nil && u.User != nil {
		if p, ok := u.User.Password(); ok {
			vals = append(vals, p)
		}
	}
	for _, s := range c.Servers {
		for _, m := range []map[string]string{s.Env, s.Headers} {
			for k, v := range m {
				if secretKeyRE.MatchString(k) && !strings.HasPrefix(strings.TrimSpace(v), "${") {
					vals = append(vals, v)
					if scheme, cred, ok := strings.Cut(v, " "); ok && (strings.EqualFold(scheme, "Bearer") || strings.EqualFold(scheme, "Basic")) {
						vals = append(vals, cred)
					}
				}
			}
		}
	}
	var out []string
	for _, v := range vals {
		if len(v) >= 4 {
			out = append(out, v)
		}
	}
	return out
}

// Redact replaces each secret in text with a placeholder, longest first (so a secret that holds
// another is hidden whole).
func Redact(text string, secrets ...string) string {
	secrets = slices.Clone(secrets)
	slices.SortFunc(secrets, func(a, b string) int { return len(b) - len(a) })
	for _, s := range secrets {
		if s != "" {
			text = strings.ReplaceAll(text, s, "(not shown)")
		}
	}
	return text
}

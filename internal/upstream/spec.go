// Package upstream runs the user's other MCP servers behind the hub: one supervised instance per
// configured server ([[servers]] in the config file), shared by every client. It starts each
// server (a process in its own process group, or a Streamable HTTP / SSE connection), restarts it
// with backoff when it dies, captures its stderr to a bounded log, lists what it offers and keeps
// each tool's definition pinned by hash so a server cannot change a tool under the user (tool
// poisoning): a new server is quarantined and a new or changed tool is held until the user
// approves it.
//
// The package knows nothing of the hub's clients: the mcp package puts the approved tools,
// resources and prompts on the hub's server under the hub's policy and audit (mcp/proxy/upstream.go).
package upstream

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/switchboard-hub/switchboard/internal/hubtls"
)

// Spec is one configured server, as written in a [[servers]] table.
type Spec struct {
	// Name is [a-z0-9-]{1,32}; the server's tools appear to clients as <name>__<tool>.
	Name string `toml:"name" json:"name"`

	// Command and Args start a stdio server. Env adds to the hub's environment: ${VAR} is read
	// from the hub's environment and ${secret:NAME} from the desktop keyring when the server
	// starts; neither value is ever logged, audited or shown.
	Command string            `toml:"command,omitempty" json:"command,omitempty"`
	Args    []string          `toml:"args,omitempty" json:"args,omitempty"`
	Env     map[string]string `toml:"env,omitempty" json:"env,omitempty"`
	// Cwd is the server's working directory (default: the hub's workspace).
	Cwd string `toml:"cwd,omitempty" json:"cwd,omitempty"`

	// URL reaches a remote server over Streamable HTTP, or legacy SSE when Transport is "sse".
	// Headers are sent with every request, expanded like Env.
	URL       string            `toml:"url,omitempty" json:"url,omitempty"`
	Headers   map[string]string `toml:"headers,omitempty" json:"headers,omitempty"`
	Transport string            `toml:"transport,omitempty" json:"transport,omitempty"` // "", "stdio", "http" or "sse"
	// OAuth configures signing in to a remote server (oauth = { … }). Without it a remote
	// server that answers 401 with a Bearer challenge is signed in to all the same, the hub
	// identifying itself (Client ID Metadata Document) or registering (RFC 7591).
	OAuth *OAuth `toml:"oauth,omitempty" json:"oauth,omitempty"`
	// TLSFingerprint pins the certificate of an https server: "sha256:AB:CD:…", the SHA-256 of
	// the certificate it must present, whoever signed it (another Switchboard hub's own,
	// self-signed certificate, whose fingerprint that hub's Settings show). A certificate with
	// another fingerprint is refused.
	TLSFingerprint string `toml:"tls_fingerprint,omitempty" json:"tls_fingerprint,omitempty"`

	// Enabled: nil (unset) means on.
	Enabled *bool `toml:"enabled,omitempty" json:"enabled,omitempty"`
	// Start is "eager" (with the hub, the default) or "on-demand" (at the first call that needs it).
	Start string `toml:"start,omitempty" json:"start,omitempty"`

	// EnvPassthrough names variables of the hub's environment a local server gets as they are,
	// beyond the allow-list every server gets (PATH, HOME, LANG, ...: baseEnvNames in env.go).
	EnvPassthrough []string `toml:"env_passthrough,omitempty" json:"env_passthrough,omitempty"`
	// Sandbox widens a local server's confinement ([servers.sandbox]) or turns it off
	// (sandbox = "off"); nil: the default confinement.
	Sandbox *Sandbox `toml:"sandbox,omitempty" json:"sandbox,omitempty"`
}

// Sandbox is a local server's [servers.sandbox] table: what it may touch beyond the default
// (the system read-only, its own install location read-only, the hub's project folder, the
// folders [roots] allow grants and its own state directory read-write).
type Sandbox struct {
	// Off runs the server unconfined (written sandbox = "off"): it can then reach everything
	// the user can. The dashboard and doctor warn about it.
	Off bool `json:"off,omitempty"`
	// Read and Write are more paths to read, or to read and write (absolute, or ~/ for the
	// home).
	Read  []string `json:"read,omitempty"`
	Write []string `json:"write,omitempty"`
	// Network false denies the server TCP connections (nil or true: allowed).
	Network *bool `json:"network,omitempty"`
}

// OAuth is a remote server's oauth = { client_id, client_secret, scopes } table: the client the
// user registered with the server's authorization server by hand, and the scopes to ask for.
type OAuth struct {
	ClientID string `toml:"client_id,omitempty" json:"client_id,omitempty"`
	// ClientSecret is a ${secret:NAME} reference (or ${VAR}), never the secret itself.
	ClientSecret string   `toml:"client_secret,omitempty" json:"client_secret,omitempty"`
	Scopes       []string `toml:"scopes,omitempty" json:"scopes,omitempty"`
}

// UnmarshalTOML reads sandbox = "off" or a [servers.sandbox] table.
func (b *Sandbox) UnmarshalTOML(v any) error {
	switch v := v.(type) {
	case string:
		if v != "off" {
			return fmt.Errorf("sandbox: %q: write sandbox = \"off\" to run a server unconfined, or a [servers.sandbox] table with read, write and network to widen it", v)
		}
		*b = Sandbox{Off: true}
		return nil
	case map[string]any:
		*b = Sandbox{}
		for k, val := range v {
			switch k {
			case "read", "write":
				list, ok := val.([]any)
				if !ok {
					return fmt.Errorf("sandbox: %s: a list of paths, like %s = [\"~/data\"]", k, k)
				}
				for _, e := range list {
					p, ok := e.(string)
					if !ok {
						return fmt.Errorf("sandbox: %s: a list of paths, like %s = [\"~/data\"]", k, k)
					}
					if k == "read" {
						b.Read = append(b.Read, p)
					} else {
						b.Write = append(b.Write, p)
					}
				}
			case "network":
				on, ok := val.(bool)
				if !ok {
					return errors.New("sandbox: network: true or false")
				}
				b.Network = &on
			default:
				return fmt.Errorf("sandbox: unknown key %q; [servers.sandbox] takes read, write and network", k)
			}
		}
		return nil
	}
	return errors.New("sandbox: write sandbox = \"off\" or a [servers.sandbox] table with read, write and network")
}

// NetworkAllowed reports whether the server may use the network.
func (b *Sandbox) NetworkAllowed() bool { return b == nil || b.Network == nil || *b.Network }

// Start modes.
const (
	StartEager    = "eager"
	StartOnDemand = "on-demand"
)

// Transports.
const (
	TransportStdio = "stdio"
	TransportHTTP  = "http"
	TransportSSE   = "sse"
)

// NameSeparator joins a server's name and its tool's name in the name clients see.
const NameSeparator = "__"

var nameRE = regexp.MustCompile(`^[a-z0-9-]{1,32}$`)

// IsEnabled reports whether the server should run.
func (s Spec) IsEnabled() bool { return s.Enabled == nil || *s.Enabled }

// Kind is the transport the server is reached over.
func (s Spec) Kind() string {
	switch {
	case s.Transport != "":
		return s.Transport
	case s.URL != "":
		return TransportHTTP
	default:
		return TransportStdio
	}
}

// StartMode is Start with its default.
func (s Spec) StartMode() string {
	if s.Start == "" {
		return StartEager
	}
	return s.Start
}

// Validate checks one spec; reserved are names the server may not take (the hub's own
// toolsets). Every error names the field at fault and how to fix it.
func (s Spec) Validate(reserved []string) error {
	where := fmt.Sprintf("servers: %q", s.Name)
	switch {
	case s.Name == "":
		return fmt.Errorf("servers: name: required; give each [[servers]] entry a name like \"github\" ([a-z0-9-], at most 32 characters)")
	case !nameRE.MatchString(s.Name):
		return fmt.Errorf("%s: name: use lower-case letters, digits and '-' only, at most 32 characters (tools appear as <name>__<tool>)", where)
	case strings.Contains(s.Name, "--") || strings.HasPrefix(s.Name, "-") || strings.HasSuffix(s.Name, "-"):
		return fmt.Errorf("%s: name: no leading, trailing or doubled '-'", where)
	case slices.Contains(reserved, s.Name):
		return fmt.Errorf("%s: name: %q is one of the hub's own toolsets (%s); choose another name", where, s.Name, strings.Join(reserved, ", "))
	}
	switch s.Start {
	case "", StartEager, StartOnDemand:
	default:
		return fmt.Errorf("%s: start: %q is not a start mode; use \"eager\" or \"on-demand\"", where, s.Start)
	}
	if s.Command != "" && s.URL != "" {
		return fmt.Errorf("%s: set either command (a local server) or url (a remote one), not both", where)
	}
	switch s.Kind() {
	case TransportStdio:
		if s.Command == "" {
			return fmt.Errorf("%s: command: required for a stdio server (or set url for a remote one)", where)
		}
		if len(s.Headers) > 0 {
			return fmt.Errorf("%s: headers: only for a remote server (url); a local server gets env", where)
		}
	case TransportHTTP, TransportSSE:
		if s.URL == "" {
			return fmt.Errorf("%s: url: required for transport %q", where, s.Kind())
		}
		if s.Command != "" || len(s.Args) > 0 || len(s.Env) > 0 || s.Cwd != "" {
			return fmt.Errorf("%s: command, args, env and cwd are for a local server; a remote one (url) takes headers", where)
		}
		u, err := url.Parse(s.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("%s: url: %q is not an http(s) URL like https://example.com/mcp", where, s.URL)
		}
	default:
		return fmt.Errorf("%s: transport: %q is not a transport; use \"stdio\", \"http\" or \"sse\"", where, s.Transport)
	}
	if s.TLSFingerprint != "" {
		if u, err := url.Parse(s.URL); s.Kind() == TransportStdio || err != nil || u.Scheme != "https" {
			return fmt.Errorf("%s: tls_fingerprint: only for a server reached over https (url = \"https://…\")", where)
		}
		if _, err := hubtls.ParsePin(s.TLSFingerprint); err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
	}
	if s.Kind() != TransportStdio && (s.Sandbox != nil || len(s.EnvPassthrough) > 0) {
		return fmt.Errorf("%s: sandbox and env_passthrough are for a local server (command); a remote one runs elsewhere", where)
	}
	if o := s.OAuth; o != nil {
		switch {
		case s.Kind() == TransportStdio:
			return fmt.Errorf("%s: oauth: only for a remote server (url); a local server gets its credentials in env", where)
		case hasHeader(s.Headers, "Authorization"):
			return fmt.Errorf("%s: oauth: the server already gets an Authorization header (headers); remove one of them", where)
		case o.ClientSecret != "" && o.ClientID == "":
			return fmt.Errorf("%s: oauth: client_secret without client_id; add client_id = \"…\" (the client registered with the server's authorization server)", where)
		case o.ClientSecret != "" && !refRE.MatchString(o.ClientSecret):
			return fmt.Errorf("%s: oauth: client_secret: write a reference to the keyring, like client_secret = \"${secret:%s-client-secret}\" (store it with `switchboard secret set %s-client-secret`), not the secret itself", where, s.Name, s.Name)
		case strings.TrimSpace(o.ClientID) != o.ClientID || strings.ContainsAny(o.ClientID, "\x00\n"):
			return fmt.Errorf("%s: oauth: client_id: %q has surrounding spaces or control characters", where, o.ClientID)
		}
		if err := checkRefs(o.ClientSecret); err != nil {
			return fmt.Errorf("%s: oauth: client_secret: %w", where, err)
		}
		for _, sc := range o.Scopes {
			if sc == "" || strings.ContainsAny(sc, " \t\n\"\\") {
				return fmt.Errorf("%s: oauth: scopes: %q is not a scope; give each scope as its own string, like scopes = [\"read\", \"write\"]", where, sc)
			}
		}
	}
	for _, k := range s.EnvPassthrough {
		if !EnvNameRE.MatchString(k) {
			return fmt.Errorf("%s: env_passthrough: %q is not a variable name", where, k)
		}
	}
	if sb := s.Sandbox; sb != nil {
		if sb.Off && (len(sb.Read) > 0 || len(sb.Write) > 0 || sb.Network != nil) {
			return fmt.Errorf("%s: sandbox: \"off\" runs the server unconfined; remove read, write and network, or keep the sandbox and widen it", where)
		}
		for _, p := range append(slices.Clone(sb.Read), sb.Write...) {
			if !filepath.IsAbs(p) && !strings.HasPrefix(p, "~/") {
				return fmt.Errorf("%s: sandbox: %q: give an absolute path or one under ~/", where, p)
			}
		}
	}
	for k := range s.Env {
		if k == "" || strings.ContainsAny(k, "=\x00") {
			return fmt.Errorf("%s: env: %q is not a variable name", where, k)
		}
	}
	for _, v := range s.Env {
		if err := checkRefs(v); err != nil {
			return fmt.Errorf("%s: env: %w", where, err)
		}
	}
	for _, v := range s.Headers {
		if err := checkRefs(v); err != nil {
			return fmt.Errorf("%s: headers: %w", where, err)
		}
	}
	return nil
}

func hasHeader(h map[string]string, name string) bool {
	for k := range h {
		if strings.EqualFold(k, name) {
			return true
		}
	}
	return false
}

// ValidateAll checks every spec and that names are unique.
func ValidateAll(specs []Spec, reserved []string) error {
	seen := map[string]bool{}
	for _, s := range specs {
		if err := s.Validate(reserved); err != nil {
			return err
		}
		if seen[s.Name] {
			return fmt.Errorf("servers: %q: name: configured twice; each [[servers]] entry needs its own name", s.Name)
		}
		seen[s.Name] = true
	}
	return nil
}

// CommandLine is the command line for people: the command and its arguments, never the
// environment.
func (s Spec) CommandLine() string {
	if s.Kind() != TransportStdio {
		return s.URL
	}
	return strings.Join(append([]string{s.Command}, s.Args...), " ")
}

// CommandHash identifies what the user approves of a server before it runs: what runs on this
// machine and with what (command, arguments, directory, environment templates, passthrough,
// sandbox) or where requests and credentials go (URL, transport, header templates, the OAuth
// client and scopes, the pinned certificate). Values are
// hashed as written (${secret:NAME}, never a resolved secret). Its name, start mode and enabled
// switch are not part of it.
func (s Spec) CommandHash() string {
	b, _ := json.Marshal(struct {
		Kind           string            `json:"kind"`
		Command        string            `json:"command,omitempty"`
		Args           []string          `json:"args,omitempty"`
		Cwd            string            `json:"cwd,omitempty"`
		Env            map[string]string `json:"env,omitempty"`
		EnvPassthrough []string          `json:"env_passthrough,omitempty"`
		Sandbox        *Sandbox          `json:"sandbox,omitempty"`
		URL            string            `json:"url,omitempty"`
		Headers        map[string]string `json:"headers,omitempty"`
		OAuth          *OAuth            `json:"oauth,omitempty"`
		TLSFingerprint string            `json:"tls_fingerprint,omitempty"`
	}{s.Kind(), s.Command, s.Args, s.Cwd, s.Env, s.EnvPassthrough, s.Sandbox, s.URL, s.Headers, s.OAuth, s.TLSFingerprint})
	h := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(h[:])
}

// SecretLookup finds a secret by name in the desktop keyring.
type SecretLookup func(name string) (string, error)

var refRE = regexp.MustCompile(`\$\{([^}]*)\}`)

// checkRefs validates the ${...} references in a value without resolving them.
func checkRefs(v string) error {
	for _, m := range refRE.FindAllStringSubmatch(v, -1) {
		ref := m[1]
		if name, ok := strings.CutPrefix(ref, "secret:"); ok {
			if name == "" {
				return fmt.Errorf("${secret:} needs a name, like ${secret:github-token}")
			}
			continue
		}
		if !EnvNameRE.MatchString(ref) {
			return fmt.Errorf("${%s} is not a reference; write ${VAR} for an environment variable or ${secret:NAME} for a keyring secret", ref)
		}
	}
	return nil
}

// EnvNameRE matches a valid environment variable name.
var EnvNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// Expand resolves ${VAR} from getenv and ${secret:NAME} from secret in v. A variable that is not
// set, or a secret that cannot be read, is an error naming it (never its value).
func Expand(v string, getenv func(string) (string, bool), secret SecretLookup) (string, error) {
	var firstErr error
	out := refRE.ReplaceAllStringFunc(v, func(m string) string {
		ref := m[2 : len(m)-1]
		if name, ok := strings.CutPrefix(ref, "secret:"); ok {
			if secret == nil {
				if firstErr == nil {
					firstErr = fmt.Errorf("${secret:%s}: no keyring available", name)
				}
				return ""
			}
			val, err := secret(name)
			if err != nil && firstErr == nil {
				firstErr = fmt.Errorf("${secret:%s}: %w", name, err)
			}
			return val
		}
		val, ok := getenv(ref)
		if !ok && firstErr == nil {
			firstErr = fmt.Errorf("${%s}: not set in the hub's environment; set it or store the value in the keyring and write ${secret:NAME}", ref)
		}
		return val
	})
	return out, firstErr
}

package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/switchboard-hub/switchboard/internal/config"
	"github.com/switchboard-hub/switchboard/internal/secrets"
	"github.com/switchboard-hub/switchboard/internal/tomledit"
	"github.com/switchboard-hub/switchboard/internal/upstream"
	"github.com/switchboard-hub/switchboard/mcp"
	mcptransport "github.com/switchboard-hub/switchboard/mcp/transport"
)

// The Settings view's sections for what protects the hub and what it reaches: transport
// security (TCP's require_token, HTTP's allowed origins, the tokens), web_fetch's allow-list, the
// RAG backend's API key, and which keys this run took from command-line flags. Saved like the
// other sections (checked first, comments kept, audited, applied live where the hub can).
//
// Secrets are never shown, never written to the audit log and never sent back: a token is
// described by where it is kept and regenerated in place; the RAG key is a reference in the file
// (${secret:NAME} or ${VAR}), and a new key typed in the form goes to the desktop keyring.

// SecuritySettings is how TCP and HTTP clients are let in: the file's require_token and
// allowed_origins, what the running transports enforce, and where each token is kept.
type SecuritySettings struct {
	TCPRequireToken    bool     `json:"tcpRequireToken"`
	HTTPAllowedOrigins []string `json:"httpAllowedOrigins"`
	// Running is what the transports enforce now (the same after a save: it applies at once).
	RunningTCPRequireToken    bool           `json:"runningTcpRequireToken"`
	RunningHTTPAllowedOrigins []string       `json:"runningHttpAllowedOrigins"`
	Tokens                    []TokenSetting `json:"tokens"`
}

// Where a token comes from (TokenSetting.Source).
const (
	tokenFromFile   = "file"   // the client token file (config.TokenPath)
	tokenFromConfig = "config" // [tcp] token or [http] token in the config file
	tokenFromEnv    = "env"    // SWITCHBOARD_TOKEN, SWITCHBOARD_TCP_TOKEN
	tokenFromFlag   = "flag"   // serve --token
	tokenFromClient = "client" // a transport that uses the client token
)

// TokenSetting describes one token without its value: where it is kept, whether the Settings
// view can regenerate it, and who has to be told the new one.
type TokenSetting struct {
	// Name is "client" (the client token file), "tcp" or "http" (each transport's token).
	Name   string `json:"name"`
	Source string `json:"source" tstype:"'file' | 'config' | 'env' | 'flag' | 'client'"`
	// Where: the file's path, the config key, the variable or the flag.
	Where string `json:"where"`
	// Exists: for the client token file, whether it has been created.
	Exists bool `json:"exists"`
	// UsedBy lists the transports that use this token (the client token: those without their own).
	UsedBy     []string `json:"usedBy"`
	Regenerate bool     `json:"regenerate"`
	// Reconfigure says which clients need the new token after a regeneration, and how to get it.
	Reconfigure string `json:"reconfigure"`
}

// SecurityInput is what the form saves of the transports' security.
type SecurityInput struct {
	TCPRequireToken    bool     `json:"tcpRequireToken"`
	HTTPAllowedOrigins []string `json:"httpAllowedOrigins"`
}

// TokenRegenerated is RegenerateToken's answer: which token changed and where it is kept (never
// its value), what to tell which clients, and the settings after it.
type TokenRegenerated struct {
	Token string `json:"token"`
	Path  string `json:"path"`
	// Diff is the config file's diff for a token kept there, with the tokens replaced by a
	// placeholder; "" for the client token file.
	Diff        string   `json:"diff"`
	Reconfigure string   `json:"reconfigure"`
	Settings    Settings `json:"settings"`
}

// WebSettings is web_fetch's [web] section: hosts allowed although internal, and the timeout.
type WebSettings struct {
	Allow []string `json:"allow"`
	// Timeout as the file writes it; "" when it leaves it out (30s).
	Timeout string `json:"timeout"`
	// EnvAllow are SWITCHBOARD_FETCH_ALLOW's entries, allowed besides the file's.
	EnvAllow []string `json:"envAllow"`
}

// WebInput is what the form saves of [web].
type WebInput struct {
	Allow   []string `json:"allow"`
	Timeout string   `json:"timeout"`
}

// RAGAPIKeySetting is how the config file holds the RAG backend's API key, never the key.
type RAGAPIKeySetting struct {
	// State: none, secret (${secret:NAME}), env (${VAR}) or literal (a key written in the file:
	// it works, but the file is no place for it).
	State string `json:"state" tstype:"'none' | 'secret' | 'env' | 'literal'"`
	// Name is the keyring secret's or the variable's name (secret, env).
	Name string `json:"name,omitempty"`
}

// RAGAPIKeyInput changes the RAG backend's API key.
type RAGAPIKeyInput struct {
	// Action: "reference" writes Ref (${secret:NAME} or ${VAR}); "store" puts Value in the
	// keyring as Name and writes ${secret:Name}; "remove" deletes the key from the file.
	Action string `json:"action" tstype:"'reference' | 'store' | 'remove'"`
	Ref    string `json:"ref,omitempty"`
	Name   string `json:"name,omitempty"`
	// Value is the key itself (store only): it goes to the keyring, never to the file, the audit
	// log or an answer.
	Value string `json:"value,omitempty"`
}

// SettingFlag is a command-line flag of this run that set a key to something other than the
// file's value.
type SettingFlag struct {
	Flag string `json:"flag"`
	Key  string `json:"key"`
	// Value is what the flag gave ("" for a token: never shown).
	Value string `json:"value"`
}

// defaultRAGSecret is the keyring name a new RAG key is stored under when the form names none.
const defaultRAGSecret = "rag-api-key"

// ---- reading ----

// tokenSource is where a transport's token comes from in this hub: a flag, the environment, the
// config file, else the client token file (as ResolveClientToken fills it at start).
func (c *Controller) tokenSource(file config.Config, transport string) (source, where string) {
	env, key, fileTok := "SWITCHBOARD_TCP_TOKEN", "tcp.token", file.TCP.Token
	if transport == mcp.TransportHTTP {
		env, key, fileTok = "SWITCHBOARD_TOKEN", "http.token", file.HTTP.Token
	}
	for _, f := range c.st.Config.Flags {
		if f.Key == key {
			return tokenFromFlag, f.Flag
		}
	}
	switch {
	case c.st.Config.Env.Getenv(env) != "":
		return tokenFromEnv, env
	case fileTok != "":
		return tokenFromConfig, "[" + transport + "] token in " + c.st.Config.Path
	}
	return tokenFromClient, config.TokenPath()
}

func (c *Controller) securitySettings(file config.Config) SecuritySettings {
	live := c.st.Transports.Security()
	s := SecuritySettings{TCPRequireToken: file.TCP.RequireToken, HTTPAllowedOrigins: orEmpty(file.HTTP.AllowedOrigins),
		RunningTCPRequireToken: live.TCPRequireToken, RunningHTTPAllowedOrigins: orEmpty(live.HTTPAllowedOrigins)}
	path := config.TokenPath()
	_, statErr := os.Stat(path)
	client := TokenSetting{Name: "client", Source: tokenFromFile, Where: path, Exists: statErr == nil, UsedBy: []string{}, Regenerate: true}
	var own []TokenSetting
	for _, t := range []string{mcp.TransportHTTP, mcp.TransportTCP} {
		src, where := c.tokenSource(file, t)
		if src == tokenFromClient {
			client.UsedBy = append(client.UsedBy, t)
		}
		ts := TokenSetting{Name: t, Source: src, Where: where, UsedBy: []string{t}, Regenerate: src == tokenFromConfig}
		if ts.Regenerate {
			ts.Reconfigure = reconfigureText([]string{t}, "it is in "+where)
		}
		own = append(own, ts)
	}
	client.Reconfigure = reconfigureText(client.UsedBy, "`switchboard token` prints it")
	s.Tokens = append([]TokenSetting{client}, own...)
	return s
}

// reconfigureText says which clients need a new token for the transports that use it, and how
// to read it.
func reconfigureText(usedBy []string, read string) string {
	var who []string
	if slices.Contains(usedBy, mcp.TransportHTTP) {
		who = append(who, "Streamable HTTP clients that send it as \"Authorization: Bearer …\" in their own config (as the Overview's HTTP snippet does): give them the new token")
	}
	if slices.Contains(usedBy, mcp.TransportTCP) {
		who = append(who, "TCP clients that send it in the switchboard/auth handshake themselves (`switchboard connect --tcp` reads the new one when it next starts)")
	}
	if len(who) == 0 {
		return "No running transport uses this token now; clients that kept a copy need the new one (" + read + ")."
	}
	return "Reconfigure: " + strings.Join(who, "; ") + ". New token: " + read + ". Clients set up in the Clients tab (`switchboard connect`, over the Unix socket) need nothing."
}

// webSettings reads [web] as the file writes it (the timeout as typed, "" when left out).
func webSettings(file config.Config, data []byte, env config.Env) WebSettings {
	w := WebSettings{Allow: orEmpty(file.Web.Allow), EnvAllow: orEmpty(env.FetchAllowList())}
	if v, set, err := tomledit.Lookup(data, "web", "timeout"); err == nil && set {
		w.Timeout = fmt.Sprint(v)
	}
	return w
}

func ragAPIKeySetting(v string) *RAGAPIKeySetting {
	if v == "" {
		return &RAGAPIKeySetting{State: "none"}
	}
	if kind, name, ok := config.KeyRef(v); ok {
		return &RAGAPIKeySetting{State: kind, Name: name}
	}
	return &RAGAPIKeySetting{State: "literal"}
}

// flagOverrides lists this run's flags that set a key to something other than the file's value.
// A toolsets flag stops counting once the sets served were switched (the switch saved them).
func (c *Controller) flagOverrides(file config.Config) []SettingFlag {
	out := []SettingFlag{}
	for _, f := range c.st.Config.Flags {
		var saved string
		switch f.Key {
		case "workspace":
			saved = file.Workspace
		case "toolsets":
			saved = strings.Join(file.Toolsets, ",")
			var on, servers []string
			for _, ts := range c.st.Service.Toolsets() {
				if ts.Upstream {
					servers = append(servers, ts.Name)
				}
				if ts.Enabled {
					on = append(on, ts.Name)
				}
			}
			if flagSets, err := mcp.ParseToolsets(strings.Split(f.Value, ","), servers...); err == nil && !sameSet(flagSets, on) {
				continue
			}
		case "tcp.addr":
			saved = file.TCP.Addr
		case "unix.path":
			saved = file.Unix.Path
		case "http.addr":
			saved = file.HTTP.Addr
		case "read_only":
			saved = strconv.FormatBool(file.ReadOnly)
		case "http.token":
			out = append(out, SettingFlag{Flag: f.Flag, Key: f.Key})
			continue
		}
		if f.Value != saved {
			out = append(out, SettingFlag{Flag: f.Flag, Key: f.Key, Value: f.Value})
		}
	}
	return out
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// ---- saving ----

// SaveSecurity saves [tcp] require_token and [http] allowed_origins and applies them now: a
// running TCP or HTTP transport reopens on its port under the new rules (connections let in
// under the old ones are closed; clients reconnect). When the hub refuses (require_token with no
// token), nothing is saved.
func (c *Controller) SaveSecurity(in SecurityInput) (SettingsChange, error) {
	origins := make([]string, 0, len(in.HTTPAllowedOrigins))
	for _, o := range in.HTTPAllowedOrigins {
		origins = append(origins, strings.TrimSpace(o))
	}
	if err := config.ValidateOrigins(origins); err != nil {
		return SettingsChange{}, err
	}
	sec := c.st.Transports.Security()
	if in.TCPRequireToken && sec.TCPToken == "" {
		return SettingsChange{}, errors.New("tcp.require_token: this hub has no TCP token; set [tcp] token or SWITCHBOARD_TCP_TOKEN, or create the client token with `switchboard token`, then restart Switchboard")
	}
	sec.TCPRequireToken, sec.HTTPAllowedOrigins = in.TCPRequireToken, origins
	live := func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 2*mcptransport.DrainTimeout+5*time.Second)
		defer cancel()
		if err := c.st.Transports.SetSecurity(ctx, sec); err != nil {
			return fmt.Errorf("transports: %w; nothing saved", err)
		}
		return nil
	}
	args := struct {
		TCPRequireToken    bool     `json:"tcpRequireToken"`
		HTTPAllowedOrigins []string `json:"httpAllowedOrigins"`
	}{in.TCPRequireToken, origins}
	return c.save("settings_security", args, appliesNow,
		"In force now: TCP and HTTP reopened on their ports, so clients let in under the old rules reconnect under the new ones.",
		func(b []byte) ([]byte, error) {
			return config.EditSecurity(b, config.SecurityEdit{TCPRequireToken: in.TCPRequireToken, HTTPAllowedOrigins: origins})
		}, live, nil)
}

// RegenerateToken replaces a token with a new random one where it is kept — the client token
// file ("client"), or [tcp] token / [http] token in the config file ("tcp", "http") — and puts it
// in force now (the transports that use it reopen on their ports). The answer says which clients
// need the new token and how to read it; it never holds the token. A token set by the
// environment or a flag is not Switchboard's to change: the error says where it is set.
func (c *Controller) RegenerateToken(name string) (TokenRegenerated, error) {
	path := c.st.Config.Path
	if path == "" {
		return TokenRegenerated{}, errNoConfigPath
	}
	file, _, err := config.ReadFile(path)
	if err != nil {
		return TokenRegenerated{}, err
	}
	var usedBy []string
	switch name {
	case "client":
		for _, t := range []string{mcp.TransportHTTP, mcp.TransportTCP} {
			if src, _ := c.tokenSource(file, t); src == tokenFromClient {
				usedBy = append(usedBy, t)
			}
		}
	case mcp.TransportTCP, mcp.TransportHTTP:
		switch src, where := c.tokenSource(file, name); src {
		case tokenFromConfig:
			usedBy = []string{name}
		case tokenFromEnv:
			return TokenRegenerated{}, fmt.Errorf("%s.token: set by %s in Switchboard's environment; change it where that variable is set, then restart Switchboard", name, where)
		case tokenFromFlag:
			return TokenRegenerated{}, fmt.Errorf("%s.token: set by %s for this run; change it on the command line", name, where)
		default:
			return TokenRegenerated{}, fmt.Errorf("%s.token: %s uses the client token; regenerate that one", name, strings.ToUpper(name))
		}
	default:
		return TokenRegenerated{}, fmt.Errorf("token: %q is not a token here; use client, tcp or http", name)
	}
	token, err := config.NewToken()
	if err != nil {
		return TokenRegenerated{}, fmt.Errorf("token: %w", err)
	}
	old := c.st.Transports.Security()
	sec := old
	for _, t := range usedBy {
		if t == mcp.TransportTCP {
			sec.TCPToken = token
		} else {
			sec.HTTPToken = token
		}
	}
	live := func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 2*mcptransport.DrainTimeout+5*time.Second)
		defer cancel()
		if err := c.st.Transports.SetSecurity(ctx, sec); err != nil {
			return fmt.Errorf("transports: %w; the token was not changed", err)
		}
		return nil
	}
	end := c.begin("token_regenerate", struct {
		Token string `json:"token"`
	}{name})
	out := TokenRegenerated{Token: name}
	if name == "client" {
		out.Path = config.TokenPath()
		out.Reconfigure = reconfigureText(usedBy, "`switchboard token` prints it")
		err = c.rotateClientToken(out.Path, token, live, old)
	} else {
		out.Path = path
		out.Reconfigure = reconfigureText(usedBy, "it is in ["+name+"] token of "+path)
		var diff string
		diff, err = c.editConfig(func(b []byte) ([]byte, error) { return config.EditToken(b, name, token) }, live, nil)
		oldTok := file.TCP.Token
		if name == mcp.TransportHTTP {
			oldTok = file.HTTP.Token
		}
		out.Diff = config.Redact(diff, token, oldTok)
	}
	end(err)
	if err != nil {
		return TokenRegenerated{}, err
	}
	if out.Settings, err = c.Settings(); err != nil {
		return TokenRegenerated{}, err
	}
	return out, nil
}

// rotateClientToken puts token in force (live), then writes it to the client token file; when
// the file cannot be written, the transports go back to the old token.
func (c *Controller) rotateClientToken(path, token string, live func() error, old mcp.TransportSecurity) error {
	c.st.serversMu.Lock() // one change of the hub's files at a time
	defer c.st.serversMu.Unlock()
	if err := live(); err != nil {
		return err
	}
	if err := config.WriteToken(path, token); err != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 2*mcptransport.DrainTimeout+5*time.Second)
		defer cancel()
		return errors.Join(fmt.Errorf("token file: %w; the old token stays", err), c.st.Transports.SetSecurity(ctx, old))
	}
	return nil
}

// SaveWeb saves [web] allow and timeout and applies them to web_fetch now (the next fetch uses
// them; SWITCHBOARD_FETCH_ALLOW's hosts stay allowed besides the file's).
func (c *Controller) SaveWeb(in WebInput) (SettingsChange, error) {
	e := config.WebEdit{Timeout: strings.TrimSpace(in.Timeout)}
	for _, a := range in.Allow {
		e.Allow = append(e.Allow, strings.TrimSpace(a))
	}
	timeout, err := e.Validate()
	if err != nil {
		return SettingsChange{}, err
	}
	var live func() error
	if c.st.Fetcher != nil {
		live = func() error {
			if err := c.st.Fetcher.Configure(append(slices.Clone(e.Allow), c.st.Config.Env.FetchAllowList()...), timeout); err != nil {
				return fmt.Errorf("web.allow: %w", err)
			}
			return nil
		}
	}
	return c.save("settings_web", struct {
		Allow   []string `json:"allow"`
		Timeout string   `json:"timeout"`
	}{e.Allow, e.Timeout}, appliesNow, "web_fetch uses it from its next call.",
		func(b []byte) ([]byte, error) { return config.EditWeb(b, e) }, live, nil)
}

// SetRAGAPIKey changes how the config file holds the RAG backend's API key: a reference
// (${secret:NAME}, ${VAR}), a new key stored in the desktop keyring and referenced as
// ${secret:NAME}, or none. The key itself never reaches the file, the audit log or an answer.
// Like the rest of [rag] it is put in force before the file is written (Stack.SetRAG): a Qdrant
// server that refuses the new key refuses the save, and a new key reaches the keyring only once
// the server has taken it.
func (c *Controller) SetRAGAPIKey(in RAGAPIKeyInput) (SettingsChange, error) {
	var (
		ref   string
		key   *string      // the new key itself, before the keyring holds it
		ready func() error // stores it, once the server took it
		note  = "In force now: RAG connects with the key from its next call (the key is used when [rag] backend is qdrant)."
	)
	args := struct {
		Action string `json:"action"`
		Ref    string `json:"ref,omitempty"`
	}{Action: in.Action}
	switch in.Action {
	case "reference":
		ref = strings.TrimSpace(in.Ref)
		if err := config.ValidateKeyRef(ref); err != nil {
			return SettingsChange{}, err
		}
	case "store":
		name := strings.TrimSpace(in.Name)
		if name == "" {
			name = defaultRAGSecret
		}
		if err := secrets.ValidName(name); err != nil {
			return SettingsChange{}, fmt.Errorf("rag.api_key: %w", err)
		}
		value := strings.TrimSpace(in.Value)
		switch {
		case value == "":
			return SettingsChange{}, errors.New("rag.api_key: the key is empty; paste the key your Qdrant server expects")
		case len(value) > secrets.MaxValue:
			return SettingsChange{}, fmt.Errorf("rag.api_key: the key is %d bytes, more than the keyring takes (%d)", len(value), secrets.MaxValue)
		case strings.ContainsAny(value, "\r\n"):
			return SettingsChange{}, errors.New("rag.api_key: the key has a line break; paste the key alone")
		}
		ref, key = "${secret:"+name+"}", &value
		// Stored before the file is written: a keyring that refuses leaves the file and the
		// engine in force as they were.
		ready = func() error {
			ctx, cancel := context.WithTimeout(context.Background(), SecretTimeout)
			defer cancel()
			k, err := secrets.Open(ctx, SessionBus(c.st.Config.Env))
			if err != nil {
				return fmt.Errorf("rag.api_key: %w", err)
			}
			defer k.Close()
			if err := k.Store(ctx, name, value); err != nil {
				return fmt.Errorf("rag.api_key: %w", err)
			}
			return nil
		}
		note = "The key is in the keyring as " + name + "; the file refers to it. In force now: RAG connects with it from its next call (when [rag] backend is qdrant)."
	case "remove":
		note = "In force now: RAG connects without a key from its next call."
		if file, _, err := config.ReadFile(c.st.Config.Path); err == nil {
			if kind, name, ok := config.KeyRef(file.RAG.APIKey); ok && kind == "secret" {
				note += " The keyring still holds " + name + ": `switchboard secret delete " + name + "` removes it."
			}
		}
	default:
		return SettingsChange{}, fmt.Errorf("action: %q is not an action; use reference, store or remove", in.Action)
	}
	args.Ref = ref
	live := func() error { // under the file's lock: the rest of [rag] is the file's
		file, _, err := config.ReadFile(c.st.Config.Path)
		if err != nil {
			return err
		}
		next := file.RAG
		next.APIKey = ref
		if err := c.st.switchRAG(next.WithEnv(c.st.Config.Env), key, ready); err != nil {
			return fmt.Errorf("%w; nothing saved", err)
		}
		return nil
	}
	return c.save("settings_rag_api_key", args, appliesNow, note,
		func(b []byte) ([]byte, error) { return config.EditRAGAPIKey(b, ref) }, live, nil)
}

// ResolveRAGAPIKey resolves a reference in [rag] api_key (${secret:NAME} from the keyring,
// ${VAR} from the environment); any other value is the key itself.
func ResolveRAGAPIKey(env config.Env, v string) (string, error) {
	if !strings.Contains(v, "${") {
		return v, nil
	}
	return upstream.Expand(v, env.Lookup, KeyringLookup(env))
}

// Package importer finds the MCP servers the user's other clients are configured with (Claude
// Desktop and Code, Cursor, VS Code, Gemini CLI, Codex, … through internal/clientconf) and maps
// each to a Switchboard server entry (upstream.Spec), with a note of whatever did not carry over
// as it was; `switchboard servers import` shows them for the user to approve one by one. It is
// apart from internal/upstream, which runs the servers, because reading other programs' files is
// a concern of its own.
package importer

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/switchboard-hub/switchboard/internal/clientconf"
	"github.com/switchboard-hub/switchboard/internal/upstream"
)

// Found is a server found in an MCP client's own configuration, mapped to a Spec.
type Found struct {
	Spec upstream.Spec
	// Client is the client's name (clientconf: "claude-desktop", "vscode", ...); Scope is "user",
	// "project" or "local" (Claude Code's per-project entries in ~/.claude.json); Path the file.
	Client, Scope, Path string
	// Original is the entry's key in the client's file (Spec.Name is derived from it).
	Original string
	// Note tells the user what did not carry over as it was: a rename, keys not imported, a
	// reference that cannot be expressed, a literal secret to move to the keyring. "" when
	// everything did.
	Note string
	// Also lists the other clients' entries for the same server (same command, args and env, or
	// same URL), imported once.
	Also []Source
}

// Source is one entry in a client's file.
type Source struct {
	Client, Scope, Path, Original string
}

// ScopeLocal is Claude Code's local scope: servers for one project kept in the user's file.
const ScopeLocal = "local"

// Import reads the MCP servers configured in every client's own files (each scope whose file
// exists) and maps them to specs, in the order `switchboard clients list` shows the clients.
// The project scope (.mcp.json, .vscode/, .cursor/, ... in env.Project: files that come with a
// repository, written by whoever wrote it) is read only with project; the user's own files
// always.
// Switchboard's own entry, the relay to this hub, is left out. A file that cannot be read does not
// stop the others: found holds what could be read and err joins one error per file that could not.
func Import(env clientconf.Env, project bool) (found []Found, err error) {
	var errs []error
	seen := map[string]bool{}
	byKey := map[string]int{}
	for _, c := range clientconf.Clients() {
		for _, scope := range c.Scopes() {
			if scope == clientconf.ScopeProject && !project {
				continue
			}
			path, err := c.Path(env, scope)
			if err != nil || seen[path] {
				continue // the project is the home directory: a user file read already
			}
			seen[path] = true
			data, err := os.ReadFile(path)
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err != nil {
				errs = append(errs, err)
				continue
			}
			raws, err := c.Servers(data, path)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			type batch struct {
				scope string
				raws  []clientconf.RawServer
			}
			batches := []batch{{string(scope), raws}}
			if scope == clientconf.ScopeUser {
				local, err := c.LocalServers(data, env.Project, path)
				if err != nil {
					errs = append(errs, err)
				}
				batches = append(batches, batch{ScopeLocal, local})
			}
			for _, b := range batches {
				for _, raw := range b.raws {
					m := mapper{client: c.Name, scope: b.scope, env: env}
					s, own := m.spec(raw)
					if own {
						continue
					}
					src := Source{Client: c.Name, Scope: b.scope, Path: path, Original: raw.Name}
					key := identity(s, true)
					if i, dup := byKey[key]; dup && key != "" {
						merge(&found[i], s, src)
						continue
					}
					if key != "" {
						byKey[key] = len(found)
					}
					found = append(found, Found{Spec: s, Client: src.Client, Scope: src.Scope, Path: path,
						Original: raw.Name, Note: strings.Join(m.notes, "; ")})
				}
			}
		}
	}
	nameAll(found)
	return found, errors.Join(errs...)
}

// merge folds another client's entry for the same server into f: on when on in any client;
// headers the first entry lacks (the same URL, configured with a token in one client only) are
// taken, and noted.
func merge(f *Found, s upstream.Spec, src Source) {
	f.Also = append(f.Also, src)
	if s.IsEnabled() {
		f.Spec.Enabled = nil
	}
	var took []string
	keys := make([]string, 0, len(s.Headers))
	for k := range s.Headers {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		v := s.Headers[k]
		if _, ok := f.Spec.Headers[k]; !ok {
			f.Spec.Headers = mergeMaps(f.Spec.Headers, map[string]string{k: v})
			took = append(took, k)
			if LooksSecret(k, v) {
				f.Note = joinNote(f.Note, fmt.Sprintf("headers %s holds a literal secret, copied as is so the server works: move it to the keyring and write ${secret:%s} in its place", k, secretName(k)))
			}
		}
	}
	if len(took) > 0 {
		f.Note = joinNote(f.Note, fmt.Sprintf("headers %s from %s", strings.Join(took, ", "), src.Client))
	}
}

// nameAll gives every found server a valid, unique name derived from its key in the client's file.
func nameAll(found []Found) {
	taken := map[string]bool{}
	for i := range found {
		f := &found[i]
		base := SanitizeName(f.Original)
		var why string
		if slices.Contains(upstream.ReservedNames(), base) {
			why = fmt.Sprintf("%q is one of the hub's own toolsets", base)
			base = withSuffix(base, "-mcp")
		}
		name := base
		for n := 2; taken[name] || slices.Contains(upstream.ReservedNames(), name); n++ {
			name = withSuffix(base, fmt.Sprintf("-%d", n))
			why = "another imported server has that name"
		}
		taken[name] = true
		f.Spec.Name = name
		if name != f.Original {
			if why == "" {
				why = "names are lower-case letters, digits and '-', at most 32"
			}
			f.Note = joinNote(fmt.Sprintf("named %s (%s: %s)", name, f.Original, why), f.Note)
		}
	}
}

func joinNote(a, b string) string {
	if a == "" || b == "" {
		return a + b
	}
	return a + "; " + b
}

func withSuffix(base, suffix string) string {
	if len(base)+len(suffix) > 32 {
		base = strings.TrimRight(base[:32-len(suffix)], "-")
	}
	return base + suffix
}

// SanitizeName turns any label (a client's key for a server, a name someone typed) into a valid
// server name: lower case, every other rune '-', no leading, trailing or doubled '-', at most 32
// characters; "server" when nothing is left.
func SanitizeName(raw string) string {
	var b strings.Builder
	dash := true // no leading '-'
	for _, r := range strings.ToLower(raw) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
			dash = false
		} else if !dash {
			b.WriteByte('-')
			dash = true
		}
	}
	s := strings.TrimRight(b.String(), "-")
	if len(s) > 32 {
		s = strings.TrimRight(s[:32], "-")
	}
	if s == "" {
		return "server"
	}
	return s
}

// identity is what makes two specs the same server: the URL of a remote one; the command, args
// (and, withEnv, env) of a local one. "" for a spec with neither.
func identity(s upstream.Spec, withEnv bool) string {
	if s.URL != "" {
		return "url\x00" + s.URL
	}
	if s.Command == "" {
		return ""
	}
	parts := append([]string{"cmd", s.Command}, s.Args...)
	if withEnv {
		keys := make([]string, 0, len(s.Env))
		for k := range s.Env {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		parts = append(parts, "\x01env")
		for _, k := range keys {
			parts = append(parts, k+"="+s.Env[k])
		}
	}
	return strings.Join(parts, "\x00")
}

// MergeImports picks the found servers to add to a config that has existing: it leaves out those
// configured already (the same name, or the same command and args, or the same URL) and those
// that cannot be imported as they are (their Note says why); skipped says, for each, which and why.
func MergeImports(existing []upstream.Spec, found []Found) (add []upstream.Spec, skipped []string) {
	names := map[string]bool{}
	ids := map[string]string{}
	for _, s := range existing {
		names[s.Name] = true
		if k := identity(s, false); k != "" {
			ids[k] = s.Name
		}
	}
	for _, f := range found {
		s := f.Spec
		from := fmt.Sprintf("%s (%s in %s)", s.Name, f.Original, f.Client)
		if err := s.Validate(upstream.ReservedNames()); err != nil {
			why := err.Error()
			if f.Note != "" {
				why += " (" + f.Note + ")"
			}
			skipped = append(skipped, fmt.Sprintf("%s: cannot be imported as it is: %s", from, why))
			continue
		}
		if names[s.Name] {
			skipped = append(skipped, fmt.Sprintf("%s: a server named %s is configured already", from, s.Name))
			continue
		}
		if other, ok := ids[identity(s, false)]; ok {
			skipped = append(skipped, fmt.Sprintf("%s: configured already as %s (same %s)", from, other, sameWhat(s)))
			continue
		}
		names[s.Name] = true
		ids[identity(s, false)] = s.Name
		add = append(add, s)
	}
	return add, skipped
}

func sameWhat(s upstream.Spec) string {
	if s.URL != "" {
		return "URL"
	}
	return "command"
}

// ---- mapping one entry ----

// mapper maps one client entry to a Spec, collecting notes.
type mapper struct {
	client, scope string
	env           clientconf.Env
	notes         []string
}

func (m *mapper) note(format string, args ...any) {
	n := fmt.Sprintf(format, args...)
	if !slices.Contains(m.notes, n) {
		m.notes = append(m.notes, n)
	}
}

// keys every client may write that carry nothing to import (metadata of the client's own UI).
var ignoredKeys = []string{"description", "gallery", "version", "source", "$schema"}

// spec maps raw; own reports Switchboard's own entry (the relay to this hub), which is skipped.
func (m *mapper) spec(raw clientconf.RawServer) (s upstream.Spec, own bool) {
	f := raw.Fields
	if raw.Name == clientconf.ServerName {
		return s, true
	}
	if f == nil {
		m.note("the entry is not an object: nothing to import")
		s.Transport = "unknown" // fails validation: skipped, with the note
		return s, false
	}
	used := map[string]bool{}
	str := func(k string) string {
		v, ok := f[k]
		if !ok {
			return ""
		}
		used[k] = true
		sv, ok := v.(string)
		if !ok {
			m.note("%s is not a string: not imported", k)
		}
		return sv
	}
	strs := func(k string, v any) []string {
		used[k] = true
		list, ok := v.([]any)
		if !ok {
			m.note("%s is not a list: not imported", k)
			return nil
		}
		out := make([]string, 0, len(list))
		for _, e := range list {
			if sv, ok := e.(string); ok {
				out = append(out, sv)
			} else {
				out = append(out, fmt.Sprint(e))
			}
		}
		return out
	}
	strMap := func(k string, v any) map[string]string {
		used[k] = true
		obj, ok := v.(map[string]any)
		if !ok {
			m.note("%s is not an object: not imported", k)
			return nil
		}
		out := make(map[string]string, len(obj))
		for key, e := range obj {
			if sv, ok := e.(string); ok {
				out[key] = sv
			} else {
				out[key] = fmt.Sprint(e)
			}
		}
		return out
	}

	// command: a string, or Zed's older {path, args, env}
	switch c := f["command"].(type) {
	case string:
		used["command"] = true
		s.Command = c
	case map[string]any:
		used["command"] = true
		s.Command, _ = c["path"].(string)
		if a, ok := c["args"]; ok {
			s.Args = strs("command.args", a)
		}
		if e, ok := c["env"]; ok && e != nil {
			s.Env = strMap("command.env", e)
		}
	case nil:
	default:
		used["command"] = true
		m.note("command is neither a string nor an object: not imported")
	}
	if a, ok := f["args"]; ok {
		s.Args = append(s.Args, strs("args", a)...)
	}
	if e, ok := f["env"]; ok && e != nil {
		env := strMap("env", e)
		if s.Env == nil {
			s.Env = env
		} else {
			for k, v := range env {
				s.Env[k] = v
			}
		}
	}
	s.Cwd = str("cwd")

	// remote
	var typ string
	for _, k := range []string{"type", "transport"} {
		if v := str(k); v != "" {
			typ = v
		}
	}
	for _, k := range []string{"url", "serverUrl", "httpUrl"} {
		if v := str(k); v != "" && s.URL == "" {
			s.URL = v
			if k == "httpUrl" && typ == "" {
				typ = "http"
			}
			if k == "url" && m.client == "gemini-cli" && typ == "" {
				typ = "sse" // Gemini CLI: url is an SSE endpoint, httpUrl a Streamable HTTP one
			}
		}
	}
	if h, ok := f["headers"]; ok {
		s.Headers = strMap("headers", h)
	}
	if h, ok := f["http_headers"]; ok { // Codex
		s.Headers = mergeMaps(s.Headers, strMap("http_headers", h))
	}
	if h, ok := f["env_http_headers"]; ok { // Codex: header -> environment variable
		for k, v := range strMap("env_http_headers", h) {
			s.Headers = mergeMaps(s.Headers, map[string]string{k: "${" + v + "}"})
		}
	}
	if v := str("bearer_token_env_var"); v != "" { // Codex
		s.Headers = mergeMaps(s.Headers, map[string]string{"Authorization": "Bearer ${" + v + "}"})
	}
	if _, ok := f["env_vars"]; ok { // Codex: names of variables passed through; the hub passes its whole environment
		used["env_vars"] = true
	}

	switch strings.ToLower(typ) {
	case "", "stdio":
		if s.URL != "" && s.Command == "" {
			if strings.HasSuffix(strings.TrimRight(urlPath(s.URL), "/"), "/sse") {
				s.Transport = upstream.TransportSSE
				m.note("transport sse guessed from the URL (the client did not say); remove transport if it speaks Streamable HTTP")
			}
		}
	case "http", "streamable-http", "streamablehttp", "streamable_http":
		if s.URL != "" && s.Command == "" {
			s.Transport = "" // Streamable HTTP is the default for a url
		}
	case "sse":
		s.Transport = upstream.TransportSSE
	default:
		s.Transport = typ // fails validation, with the note
		m.note("transport %q is not one the hub speaks (stdio, Streamable HTTP, SSE)", typ)
	}

	// on or off in the client
	if v, ok := f["disabled"].(bool); ok {
		used["disabled"] = true
		if v {
			s.Enabled = ptrFalse()
		}
	}
	if v, ok := f["enabled"].(bool); ok {
		used["enabled"] = true
		if !v {
			s.Enabled = ptrFalse()
		}
	}

	if isSwitchboardRelay(s) {
		return s, true
	}
	if s.Command == "" && s.URL == "" && s.Transport == "" {
		if _, ok := f["settings"]; ok && m.client == "zed" {
			used["settings"] = true
			m.note("provided by a Zed extension (no command in settings.json): add it with `switchboard servers add` and the extension's command")
		} else {
			m.note("neither a command nor a URL: nothing to run")
		}
		s.Transport = "unknown"
	}
	if s.URL != "" && s.Command != "" {
		m.note("has both a command and a URL: the URL was dropped")
		s.URL, s.Headers, s.Transport = "", nil, ""
	}
	if s.URL != "" && (len(s.Env) > 0 || s.Cwd != "" || len(s.Args) > 0) {
		m.note("env, cwd and args of a remote server were dropped")
		s.Env, s.Cwd, s.Args = nil, "", nil
	}
	if s.Command != "" && len(s.Headers) > 0 {
		m.note("headers of a local server were dropped")
		s.Headers = nil
	}
	if s.Command != "" && (m.scope == string(clientconf.ScopeProject) || m.scope == ScopeLocal) && s.Cwd == "" {
		s.Cwd = m.env.Project // the client runs a project's servers in the project
	}
	if s.Cwd != "" && !filepath.IsAbs(s.Cwd) && !strings.HasPrefix(s.Cwd, "~") {
		if m.scope != string(clientconf.ScopeUser) {
			s.Cwd = filepath.Join(m.env.Project, s.Cwd)
		} else {
			m.note("cwd %q is relative: the hub resolves it against its own working directory; make it absolute", s.Cwd)
		}
	}

	// references and literal secrets
	s.Command = m.refsInArg("command", s.Command)
	for i, a := range s.Args {
		s.Args[i] = m.refsInArg("args", a)
		_, after, _ := strings.Cut(a, "=")
		if looksLikeToken(a) || looksLikeToken(after) {
			m.note("an argument looks like a literal token (copied as is): pass it in env as ${secret:NAME} if the server can read it from there")
		}
	}
	s.URL = m.refsInArg("url", s.URL)
	s.Cwd = m.refsInArg("cwd", s.Cwd)
	for _, kv := range []struct {
		field string
		m     map[string]string
	}{{"env", s.Env}, {"headers", s.Headers}} {
		keys := make([]string, 0, len(kv.m))
		for k := range kv.m {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			v := m.refs(kv.field, kv.m[k])
			kv.m[k] = v
			if LooksSecret(k, v) {
				m.note("%s %s holds a literal secret, copied as is so the server works: move it to the keyring and write ${secret:%s} in its place",
					kv.field, k, secretName(k))
			}
		}
	}

	var rest []string
	for k := range f {
		if !used[k] && !slices.Contains(ignoredKeys, k) {
			rest = append(rest, k)
		}
	}
	if len(rest) > 0 {
		slices.Sort(rest)
		m.note("not imported: %s", strings.Join(rest, ", "))
	}
	return s, false
}

func ptrFalse() *bool { b := false; return &b }

func mergeMaps(a, b map[string]string) map[string]string {
	if a == nil {
		a = map[string]string{}
	}
	for k, v := range b {
		a[k] = v
	}
	return a
}

func urlPath(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return u.Path
}

// isSwitchboardRelay reports an entry that starts `switchboard connect`: a relay to a hub,
// perhaps this one, which must not become one of its own servers.
func isSwitchboardRelay(s upstream.Spec) bool {
	base := strings.TrimSuffix(filepath.Base(s.Command), ".exe")
	return base == "switchboard" && slices.Contains(s.Args, "connect")
}

var anyRefRE = regexp.MustCompile(`\$\{([^}]*)\}`)

// bareRefRE: $VAR, which Gemini CLI expands in env values besides ${VAR}.
var bareRefRE = regexp.MustCompile(`\$([A-Za-z_][A-Za-z0-9_]*)`)

// refs rewrites the client's references in an env or header value into the hub's: ${VAR} stays,
// ${env:VAR} (VS Code, Cursor) becomes ${VAR}, ${VAR:-default} (Claude Code) ${VAR} (noted),
// ${input:ID} (VS Code asks the user) ${secret:ID} (noted: the value goes in the keyring),
// ${userHome} and ${workspaceFolder} (a project's) their value. What has no counterpart is left
// as it is and noted; the spec then fails validation and is not imported.
func (m *mapper) refs(field, v string) string {
	if m.client == "gemini-cli" && !strings.Contains(v, "${") {
		v = bareRefRE.ReplaceAllString(v, "$${$1}")
	}
	return anyRefRE.ReplaceAllStringFunc(v, func(ref string) string {
		inner := ref[2 : len(ref)-1]
		if lit, ok := m.literal(inner, false); ok {
			return lit
		}
		switch {
		case upstream.EnvNameRE.MatchString(inner):
			return ref
		case strings.HasPrefix(inner, "secret:"):
			return ref
		case strings.HasPrefix(inner, "env:") && upstream.EnvNameRE.MatchString(inner[4:]):
			return "${" + inner[4:] + "}"
		case strings.HasPrefix(inner, "input:") && len(inner) > 6:
			id := inner[6:]
			m.note("%s: the client asks for input %q when it starts the server; store the value in the keyring as %s (it is written ${secret:%s})", field, id, id, id)
			return "${secret:" + id + "}"
		case strings.Contains(inner, ":-") && upstream.EnvNameRE.MatchString(inner[:strings.Index(inner, ":-")]):
			name := inner[:strings.Index(inner, ":-")]
			m.note("%s: the default of ${%s} was dropped; the hub needs %s set", field, inner, name)
			return "${" + name + "}"
		}
		m.note("%s: %s has no counterpart in Switchboard's config; the server cannot be imported until it is replaced", field, ref)
		return ref
	})
}

// refsInArg resolves what can be resolved in a command, argument, URL or cwd, which the hub
// passes as written (it expands only env and headers).
func (m *mapper) refsInArg(field, v string) string {
	return anyRefRE.ReplaceAllStringFunc(v, func(ref string) string {
		if lit, ok := m.literal(ref[2:len(ref)-1], true); ok {
			return lit
		}
		m.note("%s: %s is passed as written (the hub expands references only in env and headers)", field, ref)
		return ref
	})
}

// literal is the value of a client variable that names a place: the home directory, the
// project, the path separator. inArg: in a command, argument, URL or cwd, where the hub expands
// nothing, so ${HOME} is resolved too (elsewhere it stays a reference the hub expands).
func (m *mapper) literal(name string, inArg bool) (string, bool) {
	switch name {
	case "userHome":
		return m.env.Home, true
	case "HOME":
		return m.env.Home, inArg
	case "workspaceFolder", "workspaceRoot", "CLAUDE_PROJECT_DIR":
		if m.scope != string(clientconf.ScopeUser) && m.env.Project != "" {
			return m.env.Project, true
		}
	case "pathSeparator", "/":
		return string(filepath.Separator), true
	}
	return "", false
}

var secretKeyRE = regexp.MustCompile(`(?i)(token|secret|passw|api[_-]?key|apikey|auth|credential|private[_-]?key|access[_-]?key|(^|_)pat$)`)

// LooksSecret reports a literal env or header value that is probably a credential: under a key
// named like one (API_KEY, GITHUB_TOKEN, Authorization) or shaped like a token. A value with a
// ${...} reference is not literal.
func LooksSecret(key, v string) bool {
	if v == "" || strings.Contains(v, "${") {
		return false
	}
	if secretKeyRE.MatchString(key) && len(v) >= 8 && !strings.ContainsAny(v[:1], "/~.") && !strings.Contains(v, "://") {
		return true
	}
	return looksLikeToken(v)
}

var tokenPrefixes = []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "glpat-", "sk-", "sk_live_", "sk_test_",
	"rk_live_", "xoxb-", "xoxp-", "xoxa-", "xapp-", "AKIA", "ASIA", "AIza", "hf_", "npm_", "shpat_", "pypi-", "lin_api_", "ntn_", "secret_"}

// looksLikeToken: a known token prefix, or a long run of letters and digits with no spaces and no
// path or URL shape.
func looksLikeToken(v string) bool {
	for _, p := range []string{"Bearer ", "bearer ", "Basic ", "token ", "Token "} {
		v = strings.TrimPrefix(v, p)
	}
	for _, p := range tokenPrefixes {
		if strings.HasPrefix(v, p) && len(v) >= len(p)+12 {
			return true
		}
	}
	if len(v) < 32 || strings.ContainsAny(v, " \t/\\:@") {
		return false
	}
	var letters, digits bool
	for _, r := range v {
		switch {
		case r >= '0' && r <= '9':
			digits = true
		case r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z':
			letters = true
		case strings.ContainsRune("-_.=+", r):
		default:
			return false
		}
	}
	return letters && digits
}

// secretName suggests a keyring name for the value of key: API_KEY -> api-key.
func secretName(key string) string { return SanitizeName(key) }

// ProjectFiles lists the client files of the project scope that exist in env.Project (what
// Import leaves out without project).
func ProjectFiles(env clientconf.Env) []string {
	var out []string
	for _, c := range clientconf.Clients() {
		for _, scope := range c.Scopes() {
			if scope != clientconf.ScopeProject {
				continue
			}
			path, err := c.Path(env, scope)
			if err != nil || slices.Contains(out, path) {
				continue
			}
			if _, err := os.Stat(path); err == nil {
				out = append(out, path)
			}
		}
	}
	return out
}

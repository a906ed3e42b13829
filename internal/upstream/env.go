package upstream

import (
	"path/filepath"
	"slices"
	"strings"
)

// A local server gets its environment by allow-list, never the hub's whole environment: the
// hub's own tokens (SWITCHBOARD_TOKEN, the TCP and IDE tokens), API keys (OPENAI_API_KEY) and
// whatever else the user's session holds stay with the hub. What a server needs beyond the
// list, the user names: env (values, ${VAR} and ${secret:NAME} expanded) or env_passthrough.

// baseEnvNames are passed on as the hub has them: where programs, the user and the terminal
// are, the language, and how the machine reaches the network and trusts certificates.
var baseEnvNames = []string{
	"PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "COLORTERM", "TZ", "LANG", "LANGUAGE",
	"XDG_CONFIG_DIRS", "XDG_DATA_DIRS",
	"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "no_proxy", "all_proxy",
	"SSL_CERT_FILE", "SSL_CERT_DIR", "NODE_EXTRA_CA_CERTS", "REQUESTS_CA_BUNDLE",
}

// baseEnvPrefixes are passed on by prefix (the locale categories).
var baseEnvPrefixes = []string{"LC_"}

// privateDirEnv point a confined server's own files (caches, state, configuration, temporary
// files) into its state directory, where it may write: below the home it may not.
var privateDirEnv = [][2]string{
	{"TMPDIR", "tmp"},
	{"XDG_CACHE_HOME", "cache"},
	{"XDG_CONFIG_HOME", "config"},
	{"XDG_DATA_HOME", "data"},
	{"XDG_STATE_HOME", "state"},
	// npm and npx keep their own cache per server: a server cannot plant a package that
	// another server, or the user's own npx, would then run.
	{"npm_config_cache", "npm"},
	{"UV_CACHE_DIR", "cache/uv"},
	{"PIP_CACHE_DIR", "cache/pip"},
}

// StateDirEnv names the server's state directory in its environment, and may be used in env
// values (MEMORY_FILE_PATH = "${SWITCHBOARD_STATE_DIR}/memory.json").
const StateDirEnv = "SWITCHBOARD_STATE_DIR"

// serverEnv is a local server's environment: the allow-list and passthrough from environ (the
// hub's, as KEY=VALUE), its private directories when confined (stateDir != ""), then its
// configured env (already expanded), which wins.
func serverEnv(environ []string, passthrough []string, stateDir string, confined bool, configured map[string]string) []string {
	var env []string
	seen := map[string]int{}
	set := func(k, v string) {
		if i, ok := seen[k]; ok {
			env[i] = k + "=" + v
			return
		}
		seen[k] = len(env)
		env = append(env, k+"="+v)
	}
	for _, kv := range environ {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		if slices.Contains(baseEnvNames, k) || slices.Contains(passthrough, k) || hasAnyPrefix(k, baseEnvPrefixes) {
			set(k, v)
		}
	}
	if stateDir != "" {
		set(StateDirEnv, stateDir)
		if confined {
			for _, d := range privateDirEnv {
				set(d[0], filepath.Join(stateDir, d[1]))
			}
		}
	}
	keys := make([]string, 0, len(configured))
	for k := range configured {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		set(k, configured[k])
	}
	return env
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

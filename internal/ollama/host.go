// Package ollama knows where the Ollama server is: OLLAMA_HOST read the way the ollama CLI reads
// it, shared by the inference backends (internal/ml) and the RAG embedder (internal/rag) so both
// reach the same server for the same setting.
package ollama

import (
	"net"
	"net/url"
	"strconv"
	"strings"
)

// DefaultHost is where the ollama CLI looks when OLLAMA_HOST is unset.
const DefaultHost = "http://localhost:11434"

// Host resolves an OLLAMA_HOST value: empty → http://localhost:11434; "host" →
// http://host:11434; "host:port"; ":port" → localhost; "scheme://host[:port][/path]" keeps the
// scheme, with the port defaulting to 80/443 for http/https; surrounding quotes are dropped; an
// invalid port falls back to the default.
func Host(v string) *url.URL {
	s := strings.Trim(strings.TrimSpace(v), "\"'")
	if s == "" {
		u, _ := url.Parse(DefaultHost)
		return u
	}
	defaultPort := "11434"
	scheme, hostport, ok := strings.Cut(s, "://")
	switch {
	case !ok:
		scheme, hostport = "http", s
	case scheme == "http":
		defaultPort = "80"
	case scheme == "https":
		defaultPort = "443"
	}
	hostport, path, _ := strings.Cut(hostport, "/")
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		host, port = "localhost", defaultPort
		if ip := net.ParseIP(strings.Trim(hostport, "[]")); ip != nil {
			host = ip.String()
		} else if hostport != "" {
			host = hostport
		}
	}
	if host == "" {
		host = "localhost"
	}
	if n, err := strconv.ParseInt(port, 10, 32); err != nil || n > 65535 || n < 0 {
		port = defaultPort
	}
	u := &url.URL{Scheme: scheme, Host: net.JoinHostPort(host, port)}
	if path != "" {
		u.Path = "/" + path
	}
	return u
}

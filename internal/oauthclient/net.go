package oauthclient

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/switchboard-hub/switchboard/internal/fetch"
)

// HTTPClient is the client for every request the hub makes on the metadata's word (resource
// and authorization server metadata, registration, token requests): web_fetch's SSRF rules
// (internal/fetch) apply to the address actually dialed, after DNS and on every redirect, so
// metadata cannot point the hub at a loopback, private, link-local (cloud metadata) or other
// internal address. The server's own host (the URL the user configured and approved) is
// trusted, with any port: an authorization server beside a server on the user's machine or
// network is the common case. allow adds hosts the user trusts (SWITCHBOARD_FETCH_ALLOW).
func HTTPClient(serverURL string, allow []string) (*http.Client, error) {
	u, err := url.Parse(serverURL)
	if err != nil || u.Hostname() == "" {
		return nil, fmt.Errorf("url: %q is not an http(s) URL", serverURL)
	}
	list, err := fetch.ParseAllow(append([]string{u.Hostname()}, allow...))
	if err != nil {
		return nil, err
	}
	dialer := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	tr := &http.Transport{
		Proxy: nil, // a proxy would dial for us and bypass the address check
		DialContext: fetch.GuardedDial(dialer, func() *fetch.Allow { return list }, func(host, address, reason string) error {
			return &RefusedError{Addr: address, Host: host, Reason: reason}
		}),
		ForceAttemptHTTP2:     true,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: 20 * time.Second,
		IdleConnTimeout:       60 * time.Second,
	}
	return &http.Client{Transport: tr, Timeout: 30 * time.Second}, nil
}

// RefusedError is a request the SSRF rules refused.
type RefusedError struct{ Addr, Host, Reason string }

func (e *RefusedError) Error() string {
	return fmt.Sprintf("refused to connect to %s (%s) on the word of the server's OAuth metadata: it is %s, not the server's own host; if you trust it, add %s to SWITCHBOARD_FETCH_ALLOW", e.Host, e.Addr, e.Reason, e.Host)
}

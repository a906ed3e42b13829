package webview

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/chromedp/cdproto/target"
)

// devtoolsClient is the only HTTP client of this package. webview_connect takes any URL from an
// agent, so the client must not turn it into a probe of the hub's network: it talks to the
// address given and nowhere else (no redirects, no proxy from the environment), gives up soon,
// and reads little.
var devtoolsClient = &http.Client{
	Transport: &http.Transport{
		Proxy:                  nil,
		DialContext:            (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
		TLSHandshakeTimeout:    5 * time.Second,
		ResponseHeaderTimeout:  5 * time.Second,
		MaxResponseHeaderBytes: 16 << 10,
		DisableKeepAlives:      true,
	},
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	Timeout:       10 * time.Second,
}

// maxVersionBytes bounds the /json/version answer (Chrome's is under 1 KiB).
const maxVersionBytes = 64 << 10

// noDevTools is the one error for an address that is not a usable DevTools endpoint, whatever
// the reason (refused, a timeout, another service, an HTTP error): the details would tell an
// agent what else listens there.
func noDevTools(raw string) error {
	return fmt.Errorf("debug_url: no Chrome DevTools endpoint at %s; start Chrome with --remote-debugging-port=9222, or call webview_launch to start the hub's own Chromium", strings.TrimSpace(raw))
}

// resolveDevTools turns a DevTools address into the browser's websocket URL. The websocket URL
// always points at the host and port that were given: Chrome reports its own idea of its address
// (often 127.0.0.1 or localhost, wrong behind a port forward), and an endpoint must not be able
// to send the hub's websocket dial elsewhere.
func resolveDevTools(ctx context.Context, raw string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("debug_url: %q is not a URL; give e.g. http://127.0.0.1:9222", raw)
	}
	switch u.Scheme {
	case "ws", "wss":
		if strings.Contains(u.Path, "/devtools/browser/") {
			return u.String(), nil
		}
		u.Scheme = map[string]string{"ws": "http", "wss": "https"}[u.Scheme]
	case "http", "https":
	default:
		return "", fmt.Errorf("debug_url: scheme %q is not supported; give http://host:port or ws://host:port/devtools/browser/<id>", u.Scheme)
	}
	v := url.URL{Scheme: u.Scheme, Host: u.Host, Path: "/json/version"}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, v.String(), nil)
	if err != nil {
		return "", noDevTools(raw)
	}
	resp, err := devtoolsClient.Do(req)
	if err != nil {
		return "", noDevTools(raw)
	}
	defer resp.Body.Close()
	var info struct {
		WS string `json:"webSocketDebuggerUrl"`
	}
	if resp.StatusCode != http.StatusOK {
		return "", noDevTools(raw)
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxVersionBytes)).Decode(&info); err != nil {
		return "", noDevTools(raw)
	}
	ws, err := url.Parse(info.WS)
	if err != nil || (ws.Scheme != "ws" && ws.Scheme != "wss") || !strings.HasPrefix(ws.Path, "/devtools/browser/") {
		return "", noDevTools(raw)
	}
	out := url.URL{Scheme: map[string]string{"http": "ws", "https": "wss"}[u.Scheme], Host: u.Host, Path: ws.Path}
	return out.String(), nil
}

// firstPage returns the id of a page target of the browser at wsURL, from its HTTP endpoint.
func firstPage(ctx context.Context, wsURL string) (target.ID, error) {
	u, err := url.Parse(wsURL)
	if err != nil {
		return "", err
	}
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+u.Host+"/json/list", nil)
		resp, err := devtoolsClient.Do(req)
		if err == nil {
			var list []struct {
				ID   string `json:"id"`
				Type string `json:"type"`
			}
			_ = json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&list) // an unreadable list reads as "no page yet"
			resp.Body.Close()
			for _, t := range list {
				if t.Type == "page" {
					return target.ID(t.ID), nil
				}
			}
		}
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("no page target appeared: %w", ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

package webview

import (
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
)

// Resolver confines a file path to the workspace: it returns the real path of p when p (and
// every symlink on the way) lies inside, or an error. *workspace.Root.Resolve satisfies it.
type Resolver func(p string) (string, error)

// CheckURL applies the navigation policy to a URL a client asked for: http and https (any
// host), about:blank, and file:// URLs whose path lies inside the workspace (checked with
// resolve, symlinks included). Everything else (javascript:, data:, chrome:, file:// outside the
// workspace, relative URLs) is refused with an error that starts with field. It returns the URL
// to navigate to (file:// URLs rewritten to the resolved real path).
func CheckURL(field, raw string, resolve Resolver) (string, error) {
	const allowed = "use an http(s) URL, about:blank, or a file:// URL inside the workspace"
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return "", fmt.Errorf("%s: required; %s", field, allowed)
	}
	if strings.ContainsAny(raw, "\x00\r\n\t") {
		return "", fmt.Errorf("%s: contains control characters; %s", field, allowed)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("%s: not a valid URL (%v); %s", field, err, allowed)
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
		if u.Host == "" {
			return "", fmt.Errorf("%s: %q has no host; %s", field, raw, allowed)
		}
		return u.String(), nil
	case "about":
		if strings.EqualFold(u.Opaque, "blank") && u.RawQuery == "" {
			return "about:blank", nil
		}
		return "", fmt.Errorf("%s: only about:blank is allowed of the about: pages; %s", field, allowed)
	case "file":
		if u.Host != "" && u.Host != "localhost" {
			return "", fmt.Errorf("%s: file URLs on other hosts (%q) are not allowed; %s", field, u.Host, allowed)
		}
		if u.Path == "" || !filepath.IsAbs(u.Path) {
			return "", fmt.Errorf("%s: a file URL needs an absolute path (file:///...); %s", field, allowed)
		}
		if resolve == nil {
			return "", fmt.Errorf("%s: file URLs are not allowed without a workspace; %s", field, allowed)
		}
		real, err := resolve(u.Path)
		if err != nil {
			return "", fmt.Errorf("%s: file %s is not inside the workspace (%v); %s", field, u.Path, err, allowed)
		}
		out := url.URL{Scheme: "file", Path: real, RawQuery: u.RawQuery, Fragment: u.Fragment}
		return out.String(), nil
	case "":
		return "", fmt.Errorf("%s: %q is not an absolute URL; give the scheme, e.g. http://127.0.0.1:8080/ (%s)", field, raw, allowed)
	default:
		return "", fmt.Errorf("%s: scheme %q is not allowed; %s", field, strings.ToLower(u.Scheme)+":", allowed)
	}
}

package policy

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
)

// cleanDir makes a [roots] allow entry absolute (~ expands to the home directory) and resolves
// its symlinks when it exists, so it compares equal to roots spelled through a link.
func cleanDir(dir string) (string, error) {
	if strings.TrimSpace(dir) == "" {
		return "", errors.New("empty; give an absolute directory such as \"~/src\"")
	}
	if strings.IndexByte(dir, 0) >= 0 {
		return "", fmt.Errorf("%q contains a NUL byte", dir)
	}
	if dir == "~" || strings.HasPrefix(dir, "~/") {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("%q: no home directory to expand ~ against: %w", dir, err)
		}
		dir = filepath.Join(home, strings.TrimPrefix(dir, "~"))
	}
	if !filepath.IsAbs(dir) {
		return "", fmt.Errorf("%q is relative; write an absolute directory (or ~/...)", dir)
	}
	dir = filepath.Clean(dir)
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	return dir, nil
}

// RootGranted reports whether dir (absolute, symlinks resolved) lies inside a [roots] allow
// directory, and which one.
func (p *Policy) RootGranted(dir string) (string, bool) {
	for _, a := range p.RootsAllow {
		if Within(a, dir) {
			return a, true
		}
	}
	return "", false
}

// Within reports whether dir is parent or lies below it (both absolute and clean). A sibling
// sharing a prefix ("/w/proj-evil" next to "/w/proj") is not within.
func Within(parent, dir string) bool {
	if parent == dir {
		return true
	}
	if parent == string(filepath.Separator) {
		return strings.HasPrefix(dir, parent)
	}
	return strings.HasPrefix(dir, parent+string(filepath.Separator))
}

// RootDir turns an MCP root URI into an absolute, cleaned, symlink-resolved directory. Only
// file:// URIs on this machine name a directory; anything else is an error saying so.
func RootDir(uri string) (string, error) {
	u, err := url.Parse(uri)
	if err != nil {
		return "", fmt.Errorf("root %q is not a URI: %w", uri, err)
	}
	if u.Scheme != "file" {
		return "", fmt.Errorf("root %q: only file:// roots name a directory", uri)
	}
	if u.Host != "" && u.Host != "localhost" {
		return "", fmt.Errorf("root %q: host %q is not this machine", uri, u.Host)
	}
	p := u.Path
	if p == "" || !filepath.IsAbs(p) || strings.IndexByte(p, 0) >= 0 {
		return "", fmt.Errorf("root %q has no absolute path", uri)
	}
	p = filepath.Clean(p)
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", fmt.Errorf("root %q: %w", uri, err)
	}
	st, err := os.Stat(real)
	if err != nil {
		return "", fmt.Errorf("root %q: %w", uri, err)
	}
	if !st.IsDir() {
		return "", fmt.Errorf("root %q is not a directory", uri)
	}
	return real, nil
}

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

// Places a session's workspace can come from (sessions.Info.WorkspaceFrom).
const (
	FromRoot  = "root"  // the client's MCP root
	FromRelay = "relay" // the directory the client started `switchboard connect` in
	FromHub   = "hub"   // the hub's own workspace
)

// Grounds are what a directory is judged against when a client wants it as its workspace.
type Grounds struct {
	Workspace string   // the hub's workspace
	Relay     string   // the connect relay's working directory, "" when the client has none
	Home      string   // the user's home directory, "" when unknown
	HubState  []string // the hub's own config, data and runtime directories
}

// AutoGrant decides whether dir (absolute, clean, symlinks resolved) may become a session's
// workspace without asking anyone, and says why either way. Granted without asking:
//   - the hub's workspace or a directory inside it, and directories inside [roots] allow: the
//     user chose those;
//   - the relay's directory or one inside it, and any directory below the home directory: where
//     users keep their projects;
//
// unless the directory is one that only consent may open: the home directory itself or any
// directory above it (/ included), a hidden directory directly in the home (~/.ssh, ~/.gnupg,
// ~/.aws, ~/.config, ~/.local, … — where programs keep settings and credentials) or anything
// inside one, and any directory that is, contains or lies inside the hub's own state. Every
// other directory (outside the home, such as /srv/x or /tmp/x) is asked about.
func (p *Policy) AutoGrant(dir string, g Grounds) (reason string, ok bool) {
	if g.Workspace != "" && Within(g.Workspace, dir) {
		return "inside the hub's workspace " + g.Workspace, true
	}
	if allow, ok := p.RootGranted(dir); ok {
		return "inside [roots] allow " + allow, true
	}
	if why := Protected(dir, g); why != "" {
		return why, false
	}
	if g.Relay != "" && Within(g.Relay, dir) && Protected(g.Relay, g) == "" {
		return "inside the directory the client started in (" + g.Relay + ")", true
	}
	if g.Home != "" && dir != g.Home && Within(g.Home, dir) {
		return "a project directory in your home", true
	}
	return dir + " is outside your home directory", false
}

// Protected says why dir may become a workspace only with the user's consent, or "" when
// nothing protects it (see AutoGrant).
func Protected(dir string, g Grounds) string {
	if g.Home != "" {
		if Within(dir, g.Home) {
			return dir + " is your home directory or above it"
		}
		rel, err := filepath.Rel(g.Home, dir)
		if err == nil && strings.HasPrefix(rel, ".") && rel != "." && !strings.HasPrefix(rel, "..") {
			first, _, _ := strings.Cut(rel, string(filepath.Separator))
			return dir + " is in ~/" + first + ", where programs keep settings and credentials"
		}
	}
	for _, s := range g.HubState {
		if s != "" && (Within(s, dir) || Within(dir, s)) {
			return dir + " holds the hub's own state (" + s + ")"
		}
	}
	return ""
}

package upstream

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/switchboard-hub/switchboard/internal/sandbox"
)

// A local server runs confined (internal/sandbox): it reads the system and its own install
// location, reads and writes the hub's project folder, the folders [roots] allow grants clients
// and its own state directory, and nothing else of the home (no ~/.ssh, ~/.config, keyrings,
// other projects, the hub's config, data or audit log). [servers.sandbox] widens that;
// sandbox = "off" turns it off.

// homeToolDirs are where language toolchains and their package managers install programs
// under the home: read-only, so a server installed with them can start.
var homeToolDirs = []string{
	".nvm", ".volta", ".fnm", ".bun/bin", ".deno/bin", ".cargo/bin", ".rustup", "go/bin", ".pyenv",
	".local/bin", ".local/lib", ".local/pipx", ".local/share/pnpm", ".local/share/uv", ".local/share/mise",
	".asdf", ".npm-global", ".linuxbrew", ".sdkman",
}

// confinement is the policy and status of one start of a local server.
type confinement struct {
	policy sandbox.Policy
	status SandboxStatus
}

// confine works out what a server started as command (resolved to path) with args in dir may
// touch. stateDir is the server's own writable directory.
func (s *server) confine(path, dir, stateDir string) confinement {
	sb := s.spec.Sandbox
	if sb != nil && sb.Off {
		return confinement{status: SandboxStatus{Mode: SandboxOff, Detail: "sandbox = \"off\" in the config: the server can reach everything you can", Read: []string{}, Write: []string{}}}
	}
	home, _ := os.UserHomeDir()
	expand := func(p string) string {
		if rest, ok := strings.CutPrefix(p, "~/"); ok && home != "" {
			return filepath.Join(home, rest)
		}
		return p
	}
	var read, write []string
	read = append(read, installDirs(path, s.spec.Args)...)
	if home != "" {
		for _, d := range homeToolDirs {
			read = append(read, filepath.Join(home, d))
		}
	}
	// The project folder, the server's directory and the granted folders, unless one is the
	// home or holds it: that would open everything the sandbox is for.
	broad := func(p string) bool {
		p = filepath.Clean(p)
		return p == "/" || home != "" && (p == home || strings.HasPrefix(home, p+"/"))
	}
	granted := []string{dir, s.m.Workspace()}
	if s.m.opts.GrantedDirs != nil {
		granted = append(granted, s.m.opts.GrantedDirs()...)
	}
	for _, d := range granted {
		if d != "" && !broad(d) {
			write = append(write, d)
		}
	}
	if stateDir != "" {
		write = append(write, stateDir)
	}
	if sb != nil {
		for _, p := range sb.Read {
			read = append(read, expand(p))
		}
		for _, p := range sb.Write {
			write = append(write, expand(p))
		}
	}
	read, write = existing(read), existing(write)
	p := sandbox.Policy{
		Read:      append(sandbox.SystemRead(), read...),
		Write:     append(sandbox.SystemWrite(), write...),
		NoNetwork: !sb.NetworkAllowed(),
	}
	return confinement{policy: p, status: SandboxStatus{Mode: SandboxConfined, Read: read, Write: write}}
}

// installDirs are the server's own install locations: the program's directory (and its
// target's, through a symlink) and, for each file among the arguments given by absolute path (a
// script), the node_modules tree it lies in or else its directory. A directory among the
// arguments (a folder a server is to serve) gets nothing: what it may reach is the user's to
// grant ([servers.sandbox] write).
func installDirs(path string, args []string) []string {
	home, _ := os.UserHomeDir()
	var out []string
	add := func(p string) {
		out = append(out, packageRoot(p, home))
		if real, err := filepath.EvalSymlinks(p); err == nil && real != p {
			out = append(out, packageRoot(real, home))
		}
	}
	add(path)
	for _, a := range args {
		if !filepath.IsAbs(a) {
			continue
		}
		if fi, err := os.Stat(a); err != nil || fi.IsDir() {
			continue
		}
		add(a)
	}
	return out
}

// packageRoot is the outermost node_modules directory above the file p (where a package's
// dependencies are found), or else p's directory; p alone where that directory is the home, or
// holds it (a script saved straight into the home must not open the whole home).
func packageRoot(p, home string) string {
	parts := strings.Split(filepath.Clean(p), string(filepath.Separator))
	if i := slices.Index(parts, "node_modules"); i > 0 {
		return string(filepath.Separator) + filepath.Join(parts[:i+1]...)
	}
	dir := filepath.Dir(p)
	if dir == "/" || home != "" && (dir == home || strings.HasPrefix(home, dir+"/")) {
		return p
	}
	return dir
}

// existing keeps the paths that exist, cleaned and without duplicates, in order.
func existing(paths []string) []string {
	out := []string{}
	for _, p := range paths {
		if p == "" || !filepath.IsAbs(p) {
			continue
		}
		p = filepath.Clean(p)
		if _, err := os.Stat(p); err != nil || slices.Contains(out, p) {
			continue
		}
		out = append(out, p)
	}
	return out
}

// plannedSandbox is a server's sandbox before it first starts (or for a remote one).
func plannedSandbox(s Spec) SandboxStatus {
	st := SandboxStatus{Read: []string{}, Write: []string{}}
	switch {
	case s.Kind() != TransportStdio:
		st.Mode, st.Detail = SandboxRemote, "a remote server: nothing runs on this machine; its headers go to "+s.URL+" only"
	case s.Sandbox != nil && s.Sandbox.Off:
		st.Mode, st.Detail = SandboxOff, "sandbox = \"off\" in the config: the server can reach everything you can"
	case sandbox.ABI() > 0:
		st.Mode, st.Detail = SandboxConfined, "confined with Landlock when it starts"
	default:
		st.Mode, st.Detail = SandboxUnconfined, "this kernel has no Landlock: the server would reach everything you can"
	}
	return st
}

// envNames are the names of the variables a server is configured with, sorted.
func envNames(s Spec) []string {
	names := make([]string, 0, len(s.Env)+len(s.Headers))
	for k := range s.Env {
		names = append(names, k)
	}
	for k := range s.Headers {
		names = append(names, "header "+k)
	}
	slices.Sort(names)
	return names
}

// makeStateDir creates a server's state directory and the private directories its environment
// points into (TMPDIR must exist for programs that write temporary files).
func makeStateDir(dir string) error {
	for _, d := range privateDirEnv {
		if err := os.MkdirAll(filepath.Join(dir, d[1]), 0o700); err != nil {
			return fmt.Errorf("state directory: %w", err)
		}
	}
	return nil
}

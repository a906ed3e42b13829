// Package build holds tests of the build and install scripts in this directory.
package build

import (
	"bytes"
	"image/png"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

const testVersion = "install-test"

// tool finds an external program. Under CI it must be there (build/setup-deps.sh installs it).
func tool(t *testing.T, name, pkg string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s not installed (build/setup-deps.sh installs the Debian package %s): %v", name, pkg, err)
		}
		t.Skipf("%s not installed (apt-get install %s): %v", name, pkg, err)
	}
	return p
}

// cheapBinary builds the pure-Go switchboard (no cgo desktop build) with a known version.
func cheapBinary(t *testing.T) string {
	t.Helper()
	goTool := tool(t, "go", "golang")
	out := filepath.Join(t.TempDir(), "switchboard")
	cmd := exec.Command(goTool, "build", "-ldflags", "-X main.version="+testVersion, "-o", out, "..")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
	return out
}

// tree lists every file and directory under root (relative, directories with a trailing /).
func tree(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == root {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() {
			rel += "/"
		}
		out = append(out, rel)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

// entryValue undoes the desktop entry string escapes (\s \n \t \r \\).
func entryValue(v string) string {
	return strings.NewReplacer(`\s`, " ", `\n`, "\n", `\t`, "\t", `\r`, "\r", `\\`, `\`).Replace(v)
}

// execArgv splits an Exec value into arguments as the Desktop Entry Specification says: double
// quotes group, and inside them \ escapes ", `, $ and \. Field codes (%f, %u, ...) are dropped
// and %% is a literal %.
func execArgv(t *testing.T, v string) []string {
	t.Helper()
	var args []string
	var cur strings.Builder
	inQuote, have := false, false
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case inQuote && c == '\\' && i+1 < len(v):
			i++
			cur.WriteByte(v[i])
		case c == '"':
			inQuote, have = !inQuote, true
		case !inQuote && c == ' ':
			if have {
				args = append(args, cur.String())
				cur.Reset()
				have = false
			}
		case c == '%' && i+1 < len(v):
			i++
			if v[i] == '%' {
				cur.WriteByte('%')
				have = true
			}
		default:
			cur.WriteByte(c)
			have = true
		}
	}
	if inQuote {
		t.Fatalf("Exec=%q: unterminated quote", v)
	}
	if have {
		args = append(args, cur.String())
	}
	return args
}

func entryKeys(t *testing.T, path string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	keys := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok && !strings.HasPrefix(line, "#") {
			keys[k] = entryValue(v)
		}
	}
	return keys
}

var iconName = regexp.MustCompile(`^switchboard-(\d+)\.png$`)

// checkInstall checks what an install into destdir+prefix wrote: the binary, an entry that
// validates and whose Exec starts the installed binary, every icon, and a manifest naming exactly
// the files and directories the install added.
func checkInstall(t *testing.T, destdir, prefix string, before []string) {
	t.Helper()
	root := destdir + prefix
	entry := filepath.Join(root, "share/applications/switchboard.desktop")
	if out, err := exec.Command(tool(t, "desktop-file-validate", "desktop-file-utils"), entry).CombinedOutput(); err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Errorf("desktop-file-validate %s: %v\n%s", entry, err, out)
	}
	keys := entryKeys(t, entry)
	bin := filepath.Join(prefix, "bin/switchboard")
	argv := execArgv(t, keys["Exec"])
	if len(argv) != 1 || argv[0] != bin {
		t.Fatalf("Exec=%s: want the installed binary %q alone, got %q", keys["Exec"], bin, argv)
	}
	if keys["TryExec"] != bin {
		t.Errorf("TryExec=%q, want %q", keys["TryExec"], bin)
	}
	if keys["Icon"] != "switchboard" {
		t.Errorf("Icon=%q, want switchboard (the hicolor theme name)", keys["Icon"])
	}
	// Launch what the Exec line names (under DESTDIR: it is staged there).
	out, err := exec.Command(destdir+argv[0], "version").CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "switchboard "+testVersion {
		t.Errorf("%s version: %v: %q, want %q", destdir+argv[0], err, out, "switchboard "+testVersion)
	}

	srcIcons, err := filepath.Glob("icons/switchboard-*.png")
	if err != nil || len(srcIcons) == 0 {
		t.Fatalf("no icons in build/icons: %v", err)
	}
	sizes := map[string]bool{}
	for _, src := range srcIcons {
		m := iconName.FindStringSubmatch(filepath.Base(src))
		if m == nil {
			t.Fatalf("unexpected icon name %s", src)
		}
		n := m[1]
		sizes[n] = true
		dst := filepath.Join(root, "share/icons/hicolor", n+"x"+n, "apps/switchboard.png")
		want, _ := os.ReadFile(src)
		got, err := os.ReadFile(dst)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("icon %s: %v (same bytes as %s: %v)", dst, err, src, bytes.Equal(got, want))
			continue
		}
		cfg, err := png.DecodeConfig(bytes.NewReader(got))
		if err != nil || n != strconv.Itoa(cfg.Width) || n != strconv.Itoa(cfg.Height) {
			t.Errorf("icon %s: %v, %dx%d, want %sx%s", dst, err, cfg.Width, cfg.Height, n, n)
		}
	}
	for _, n := range []string{"48", "128", "256", "512"} {
		if !sizes[n] {
			t.Errorf("no %sx%s icon installed", n, n)
		}
	}

	// The manifest names exactly what is new under the prefix.
	manifest := filepath.Join(root, "share/switchboard/install-manifest.txt")
	b, err := os.ReadFile(manifest)
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		rel, err := filepath.Rel(prefix, strings.TrimSuffix(line, "/"))
		if err != nil || strings.HasPrefix(rel, "..") {
			t.Fatalf("manifest line %q is not under %s", line, prefix)
		}
		if strings.HasSuffix(line, "/") {
			rel += "/"
		}
		listed = append(listed, rel)
	}
	listed = append(listed, "share/switchboard/install-manifest.txt")
	sort.Strings(listed)
	old := map[string]bool{}
	for _, p := range before {
		old[p] = true
	}
	var added []string
	for _, p := range tree(t, root) {
		if !old[p] {
			added = append(added, p)
		}
	}
	if !slices.Equal(added, listed) {
		t.Errorf("manifest lists\n  %s\nthe install added\n  %s", strings.Join(listed, "\n  "), strings.Join(added, "\n  "))
	}
}

func run(t *testing.T, env []string, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}

// TestInstallUninstall installs into a temporary PREFIX (with a space in it, which the Exec line
// must quote) that already holds another application's files, checks the install, uninstalls,
// and checks that exactly the other application's files are left.
func TestInstallUninstall(t *testing.T) {
	tool(t, "desktop-file-validate", "desktop-file-utils")
	bin := cheapBinary(t)
	prefix := filepath.Join(t.TempDir(), "my prefix")
	for _, f := range []string{"bin/other", "share/applications/other.desktop", "share/icons/hicolor/48x48/apps/other.png"} {
		p := filepath.Join(prefix, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("not switchboard's\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	before := tree(t, prefix)
	env := []string{"PREFIX=" + prefix, "BIN=" + bin, "DESTDIR="}
	run(t, env, "bash", "install.sh", "install")
	checkInstall(t, "", prefix, before)
	// A second install over the first is fine and changes nothing in what uninstall removes.
	run(t, env, "bash", "install.sh", "install")
	checkInstall(t, "", prefix, before)
	run(t, env, "bash", "install.sh", "uninstall")
	if after := tree(t, prefix); !slices.Equal(after, before) {
		t.Errorf("after uninstall the prefix holds\n  %s\nwant what was there before\n  %s", strings.Join(after, "\n  "), strings.Join(before, "\n  "))
	}
}

// TestInstallDestdir stages an install through `make install` with DESTDIR, as a packager
// does: the entry names PREFIX, the files land under DESTDIR, uninstall with the same DESTDIR
// leaves DESTDIR empty.
func TestInstallDestdir(t *testing.T) {
	tool(t, "desktop-file-validate", "desktop-file-utils")
	mk := tool(t, "make", "make")
	bin := cheapBinary(t)
	destdir := t.TempDir()
	args := []string{"-s", "-C", "..", "PREFIX=/usr/local", "DESTDIR=" + destdir, "BIN=" + bin}
	run(t, nil, mk, append(args, "install")...)
	checkInstall(t, destdir, "/usr/local", nil)
	run(t, nil, mk, append(args, "uninstall")...)
	// DESTDIR/usr/local was made for the install but is PREFIX itself, which the manifest never
	// records; nothing else may be left.
	if after := tree(t, destdir); !slices.Equal(after, []string{"usr/", "usr/local/"}) {
		t.Errorf("after uninstall DESTDIR holds %q, want only usr/ usr/local/", after)
	}
}

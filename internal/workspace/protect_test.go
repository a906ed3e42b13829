package workspace

import (
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzCanonical: whatever spelling a client sends, the canonical path is either refused or a
// clean workspace-relative slash path that stays inside (no "..", not absolute), and a spelling
// that reaches the hub's protected state is always refused.
func FuzzCanonical(f *testing.F) {
	for _, s := range []string{"src/a.txt", "./src/a.txt", "x/../src/a.txt", "src//a.txt", "/", "..", "../x", "link/a.txt",
		"state/token", "./state/../state/token", "linkstate/token", "a\x00b", "", ".", "src/../../x", "//x"} {
		f.Add(s)
	}
	dir := f.TempDir()
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	for _, d := range []string{"src", "state", "other"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			f.Fatal(err)
		}
	}
	_ = os.WriteFile(filepath.Join(dir, "state", "token"), []byte("x"), 0o600)
	_ = os.Symlink(filepath.Join(dir, "src"), filepath.Join(dir, "link"))
	_ = os.Symlink(filepath.Join(dir, "state"), filepath.Join(dir, "linkstate"))
	_ = os.Symlink("/etc", filepath.Join(dir, "out"))
	r, err := Open(dir)
	if err != nil {
		f.Fatal(err)
	}
	r.Protect(filepath.Join(dir, "state"))
	f.Cleanup(func() { r.Close() })
	f.Fuzz(func(t *testing.T, p string) {
		c, err := r.Canonical(p)
		if err != nil {
			return
		}
		if c != "." && (path.IsAbs(c) || c != path.Clean(c) || c == ".." || strings.HasPrefix(c, "../")) {
			t.Fatalf("Canonical(%q) = %q: not a clean path inside the workspace", p, c)
		}
		if c == "state" || strings.HasPrefix(c, "state/") {
			t.Fatalf("Canonical(%q) = %q reaches the protected state", p, c)
		}
		if strings.HasPrefix(c, "out/") || c == "out" {
			// "out" is a symlink to /etc: a path through it resolves outside and must be refused,
			// unless it names the link itself (which stays inside).
			if c != "out" {
				t.Fatalf("Canonical(%q) = %q goes through a link out of the workspace", p, c)
			}
		}
	})
}

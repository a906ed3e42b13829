package workspace

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// layout builds:
//
//	base/proj            <- workspace root
//	base/proj/a.txt
//	base/proj/sub/b.txt
//	base/proj-evil/secret.txt   (sibling sharing the root's prefix, CVE-2025-53110 class)
//	base/outside/secret.txt
//	base/proj/link-out  -> base/outside        (symlink escape, CVE-2025-53109 class)
//	base/proj/link-file -> base/outside/secret.txt
//	base/proj/link-in   -> sub                 (symlink that stays inside)
//	base/proj/link-missing -> base/outside/nope (dangling, outside)
func layout(t *testing.T) (root *Root, base string) {
	t.Helper()
	base = t.TempDir()
	proj := filepath.Join(base, "proj")
	must(t, os.MkdirAll(filepath.Join(proj, "sub"), 0o755))
	must(t, os.MkdirAll(filepath.Join(base, "proj-evil"), 0o755))
	must(t, os.MkdirAll(filepath.Join(base, "outside"), 0o755))
	must(t, os.WriteFile(filepath.Join(proj, "a.txt"), []byte("alpha\nbeta\ngamma\n"), 0o640))
	must(t, os.WriteFile(filepath.Join(proj, "sub", "b.txt"), []byte("bee"), 0o644))
	must(t, os.WriteFile(filepath.Join(base, "proj-evil", "secret.txt"), []byte("evil"), 0o644))
	must(t, os.WriteFile(filepath.Join(base, "outside", "secret.txt"), []byte("secret"), 0o644))
	must(t, os.Symlink(filepath.Join(base, "outside"), filepath.Join(proj, "link-out")))
	must(t, os.Symlink(filepath.Join(base, "outside", "secret.txt"), filepath.Join(proj, "link-file")))
	must(t, os.Symlink("sub", filepath.Join(proj, "link-in")))
	must(t, os.Symlink(filepath.Join(base, "outside", "nope"), filepath.Join(proj, "link-missing")))
	r, err := Open(proj)
	must(t, err)
	t.Cleanup(func() { r.Close() })
	return r, base
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// escapes are paths that must be refused by every operation.
func escapes(base string) []string {
	return []string{
		"../outside/secret.txt",
		"sub/../../outside/secret.txt",
		"..",
		filepath.Join(base, "outside", "secret.txt"),   // absolute, outside
		filepath.Join(base, "proj-evil", "secret.txt"), // sibling prefix
		filepath.Join(base, "proj") + "-evil/secret.txt",
		"link-out/secret.txt",
		"link-file",
		"link-out",
		"link-missing",
		"/etc/passwd",
		"a.txt\x00.png",
	}
}

func TestEveryOperationRefusesEscapes(t *testing.T) {
	_, base0 := layout(t)
	for i := range escapes(base0) {
		opNames := []string{"read", "lines", "write", "edit", "delete", "rename-from", "rename-to", "list", "mkdir", "resolve"}
		for _, opName := range opNames {
			// A fresh tree per operation: an operation that wrongly succeeded must not hide another.
			r, base := layout(t)
			p := escapes(base)[i]
			ops := map[string]func() error{
				"read":  func() error { _, err := r.ReadFile(p); return err },
				"lines": func() error { _, err := r.ReadLines(p, 0, 1); return err },
				"write": func() error { return r.WriteFile(p, []byte("pwned")) },
				"edit":  func() error { _, err := r.Edit(p, "secret", "pwned", false); return err },
				"delete": func() error {
					return r.Delete(p)
				},
				"rename-from": func() error { return r.Rename(p, "stolen.txt") },
				"rename-to":   func() error { return r.Rename("a.txt", p) },
				"list":        func() error { _, err := r.List(p); return err },
				"mkdir":       func() error { return r.Mkdir(p + "/newdir") },
				"resolve":     func() error { _, err := r.Resolve(p); return err },
			}
			err := ops[opName]()
			if opName == "delete" && strings.HasPrefix(p, "link-") && !strings.Contains(p, "/") {
				// Deleting a link entry is allowed: the target outside must survive (checked below).
				if err != nil {
					t.Errorf("delete(%q) = %v; deleting the link itself is harmless", p, err)
				}
				if _, lerr := os.Lstat(filepath.Join(base, "proj", p)); lerr == nil {
					t.Errorf("delete(%q) left the link", p)
				}
			} else if err == nil {
				t.Errorf("%s(%q) succeeded; want refusal", opName, p)
			}
			// Nothing outside changed, and nothing was moved in.
			for file, want := range map[string]string{"outside/secret.txt": "secret", "proj-evil/secret.txt": "evil"} {
				got, err := os.ReadFile(filepath.Join(base, file))
				if err != nil || string(got) != want {
					t.Errorf("%s(%q): %s = %q, %v; outside file was touched", opName, p, file, got, err)
				}
			}
			if _, err := os.Lstat(filepath.Join(base, "proj", "stolen.txt")); err == nil {
				t.Errorf("%s(%q): rename moved an escaping entry", opName, p)
			}
			if _, err := os.Stat(filepath.Join(base, "outside", "newdir")); err == nil {
				t.Errorf("%s(%q): mkdir created a directory outside the workspace", opName, p)
			}
		}
	}
}

func TestExistsDoesNotRevealOutside(t *testing.T) {
	r, base := layout(t)
	// An existing and a missing outside target must be indistinguishable.
	_, _, errExisting := r.Exists("link-file")
	_, _, errMissing := r.Exists("link-missing")
	if errExisting == nil || errMissing == nil {
		t.Fatalf("escaping links accepted: %v / %v", errExisting, errMissing)
	}
	norm := func(err error, p string) string { return strings.ReplaceAll(err.Error(), p, "P") }
	if norm(errExisting, "link-file") != norm(errMissing, "link-missing") {
		t.Errorf("errors differ, revealing existence:\n%v\n%v", errExisting, errMissing)
	}
	a := filepath.Join(base, "outside", "secret.txt")
	b := filepath.Join(base, "outside", "nope.txt")
	_, _, ea := r.Exists(a)
	_, _, eb := r.Exists(b)
	if ea == nil || eb == nil || norm(ea, a) != norm(eb, b) {
		t.Errorf("absolute outside paths distinguishable: %v / %v", ea, eb)
	}
	if !errors.Is(ea, ErrOutside) {
		t.Errorf("error %v does not wrap ErrOutside", ea)
	}
	ok, isDir, err := r.Exists("sub")
	if err != nil || !ok || !isDir {
		t.Errorf("Exists(sub) = %v %v %v", ok, isDir, err)
	}
	ok, _, err = r.Exists("missing.txt")
	if err != nil || ok {
		t.Errorf("Exists(missing) = %v %v", ok, err)
	}
}

func TestInsideOperations(t *testing.T) {
	r, _ := layout(t)
	if got, err := r.ReadFile("link-in/b.txt"); err != nil || got != "bee" {
		t.Fatalf("read through inside symlink = %q, %v", got, err)
	}
	if got, err := r.ReadFile(filepath.Join(r.Dir(), "a.txt")); err != nil || !strings.HasPrefix(got, "alpha") {
		t.Fatalf("absolute path inside root = %q, %v", got, err)
	}
	must(t, r.WriteFile("new/deep/c.txt", []byte("sea")))
	if got, _ := r.ReadFile("new/deep/c.txt"); got != "sea" {
		t.Fatalf("write+read = %q", got)
	}
	// Mode is kept on overwrite; no temp files are left behind.
	must(t, r.WriteFile("a.txt", []byte("one\none\n")))
	st, err := os.Stat(filepath.Join(r.Dir(), "a.txt"))
	must(t, err)
	if st.Mode().Perm() != 0o640 {
		t.Errorf("mode after write = %v, want 0640", st.Mode().Perm())
	}
	entries, err := r.List(".")
	must(t, err)
	for _, e := range entries {
		if strings.Contains(e.Name, ".tmp") {
			t.Errorf("temp file left behind: %s", e.Name)
		}
	}
	// Writing through an inside symlink updates its target and keeps the link.
	must(t, r.WriteFile("link-in/b.txt", []byte("bee2")))
	if got, _ := os.ReadFile(filepath.Join(r.Dir(), "sub", "b.txt")); string(got) != "bee2" {
		t.Errorf("write through link-in = %q", got)
	}
	res, err := r.Edit("a.txt", "one", "two", true)
	if err != nil || res.Replacements != 2 {
		t.Fatalf("edit all = %+v, %v", res, err)
	}
	if _, err := r.Edit("a.txt", "zzz", "y", false); err == nil || !strings.Contains(err.Error(), `"zzz"`) {
		t.Errorf("edit of missing text: error %v should name it", err)
	}
	must(t, r.Rename("a.txt", "moved/a2.txt"))
	if ok, _, _ := r.Exists("moved/a2.txt"); !ok {
		t.Error("rename target missing")
	}
	if err := r.Delete("sub"); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Errorf("delete non-empty dir: %v", err)
	}
	must(t, r.Mkdir("x/y/z"))
	must(t, r.Mkdir("x/y/z")) // mkdir -p: existing is fine
	must(t, r.Delete("x/y/z"))
	if err := r.Delete("."); err == nil {
		t.Error("deleting the root was allowed")
	}
}

func TestReadLimitsAndWindows(t *testing.T) {
	r, _ := layout(t)
	r.SetMaxReadBytes(8)
	_, err := r.ReadFile("a.txt")
	if err == nil || !strings.Contains(err.Error(), "offset and limit") {
		t.Fatalf("oversized read error %v should suggest offset/limit", err)
	}
	r.SetMaxReadBytes(0)
	res, err := r.ReadLines("a.txt", 1, 1)
	if err != nil || res.Content != "beta\n" || res.TotalLines != 3 || !res.Truncated {
		t.Fatalf("window = %+v, %v", res, err)
	}
	res, err = r.ReadLines("a.txt", 2, 0)
	if err != nil || res.Content != "gamma\n" || res.Truncated {
		t.Fatalf("tail window = %+v, %v", res, err)
	}
}

// FuzzRelNeverEscapes checks that no client path makes an operation touch the outside tree, and
// that no rename leaves a symlink in the workspace that points outside it. Seeds run in every
// `go test`; `go test -fuzz FuzzRelNeverEscapes ./internal/workspace` explores further.
func FuzzRelNeverEscapes(f *testing.F) {
	for _, s := range []string{"a.txt", "../x", "sub/../../x", "/etc/passwd", "link-out/x", "./././..", "a\x00b", "sub//..//..//outside",
		"sub/l", "l", "deep/er/l", strings.Repeat("a/", 2100), strings.Repeat("n", 256), "sub/" + strings.Repeat("é", 128)} {
		f.Add(s)
	}
	base := f.TempDir()
	proj := filepath.Join(base, "proj")
	os.MkdirAll(filepath.Join(proj, "sub"), 0o755)
	os.MkdirAll(filepath.Join(base, "outside"), 0o755)
	os.Symlink(filepath.Join(base, "outside"), filepath.Join(proj, "link-out"))
	r, err := Open(proj)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, p string) {
		// A fresh tree per input (what one input created must not slow down the next), with a
		// relative link that is inside where it stands; renames may try to carry it outside.
		if des, err := os.ReadDir(proj); err == nil {
			for _, d := range des {
				os.RemoveAll(filepath.Join(proj, d.Name()))
			}
		}
		os.MkdirAll(filepath.Join(proj, "sub"), 0o755)
		os.WriteFile(filepath.Join(proj, "a.txt"), []byte("a"), 0o644)
		os.Symlink(filepath.Join(base, "outside"), filepath.Join(proj, "link-out"))
		os.Symlink("../a.txt", filepath.Join(proj, "sub", "l"))
		_ = r.WriteFile(p, []byte("x"))
		_ = r.Mkdir(p)
		_, _ = r.ReadBytes(p, 0, 16)
		if real, err := r.Resolve(p); err == nil && real != r.Dir() && !strings.HasPrefix(real, r.Dir()+string(filepath.Separator)) {
			t.Fatalf("Resolve(%q) = %q, outside the root", p, real)
		}
		if d, name, err := r.OpenDir(p); err == nil {
			got, _ := filepath.EvalSymlinks("/proc/self/fd/" + strconv.Itoa(int(d.Fd())))
			d.Close()
			if got != r.Dir() && !strings.HasPrefix(got, r.Dir()+string(filepath.Separator)) {
				t.Fatalf("OpenDir(%q) opened %q (named %q), outside the root", p, got, name)
			}
		}
		_ = r.Rename("sub/l", p)
		_ = r.Rename("sub", p)
		_ = r.Delete(p)
		entries, err := os.ReadDir(filepath.Join(base, "outside"))
		if err != nil || len(entries) != 0 {
			t.Fatalf("path %q wrote outside the workspace: %v", p, entries)
		}
		if des, _ := os.ReadDir(base); len(des) != 2 {
			t.Fatalf("path %q created %v next to the workspace", p, des)
		}
		// Every relative symlink in the workspace still points inside it.
		_ = filepath.WalkDir(proj, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.Type()&fs.ModeSymlink == 0 {
				return nil
			}
			target, _ := os.Readlink(path)
			if filepath.IsAbs(target) {
				return nil // link-out: planted outside the fuzzed operations
			}
			dest := filepath.Clean(filepath.Join(filepath.Dir(path), target))
			if dest != proj && !strings.HasPrefix(dest, proj+string(filepath.Separator)) {
				t.Fatalf("after %q, symlink %s -> %s points outside the workspace", p, path, target)
			}
			return nil
		})
	})
}

// A rename that would make a relative symlink lead out of the root is refused: the link itself
// moved up, or a directory holding a climbing link moved up.
func TestRenameKeepsLinksInside(t *testing.T) {
	r, base := layout(t)
	proj := filepath.Join(base, "proj")
	must(t, os.MkdirAll(filepath.Join(proj, "a", "b"), 0o755))
	// a/b/up -> ../../sub : inside (resolves to sub). Moved to the root it would be ../../sub, outside.
	must(t, os.Symlink("../../sub", filepath.Join(proj, "a", "b", "up")))
	must(t, os.MkdirAll(filepath.Join(proj, "deep", "er"), 0o755))
	must(t, os.Symlink("../secret.txt", filepath.Join(proj, "a", "s")))
	for _, tc := range []struct{ from, to string }{
		{"a/b/up", "up"},         // the link itself moves up two levels
		{"a/b", "b"},             // a directory holding a climbing link moves up
		{"a/b/up", "deep/er/up"}, // same depth elsewhere: deep/er/up -> ../../sub still inside
		{"deep/er/up", "a/b/up"}, // and back
		{"a", "x"},               // a/s -> ../secret.txt becomes x/s -> ../secret.txt: inside
	} {
		err := r.Rename(tc.from, tc.to)
		wantRefused := tc.to == "up" || tc.to == "b"
		if wantRefused {
			if err == nil || !errors.Is(err, ErrOutside) || !strings.HasPrefix(err.Error(), "newPath:") {
				t.Errorf("Rename(%q, %q) = %v; want a newPath refusal", tc.from, tc.to, err)
			}
			if _, lerr := os.Lstat(filepath.Join(proj, tc.from)); lerr != nil {
				t.Errorf("refused rename still moved %q", tc.from)
			}
			continue
		}
		if err != nil {
			t.Errorf("Rename(%q, %q) = %v; want success", tc.from, tc.to, err)
		}
	}
	// After "a" -> "x", x/b/up -> ../../sub still resolves inside; reading through it works.
	if _, err := r.List("x/b/up"); err != nil {
		t.Errorf("List through the moved link: %v", err)
	}
}

// Paths longer than PATH_MAX or with a component over NAME_MAX are refused by every operation.
func TestPathLimits(t *testing.T) {
	r, base := layout(t)
	deep := strings.Repeat("a/", 20000) // 40,000 bytes, 20,000 levels
	long := strings.Repeat("n", 256)
	for _, p := range []string{deep, long, "sub/" + long + "/x", filepath.Join(base, "proj", long)} {
		for name, op := range map[string]func() error{
			"mkdir":  func() error { return r.Mkdir(p) },
			"write":  func() error { return r.WriteFile(p, []byte("x")) },
			"read":   func() error { _, err := r.ReadFile(p); return err },
			"lines":  func() error { _, err := r.ReadLines(p, 0, 1); return err },
			"delete": func() error { return r.Delete(p) },
			"rename": func() error { return r.Rename("a.txt", p) },
			"list":   func() error { _, err := r.List(p); return err },
			"exists": func() error { _, _, err := r.Exists(p); return err },
			"open":   func() error { _, _, err := r.OpenDir(p); return err },
		} {
			err := op()
			if err == nil || !(strings.Contains(err.Error(), "PATH_MAX") || strings.Contains(err.Error(), "NAME_MAX")) {
				t.Errorf("%s(%d-byte path) = %v; want a limit error", name, len(p), err)
			}
		}
	}
	if ents, _ := os.ReadDir(filepath.Join(base, "proj")); len(ents) != 6 {
		t.Errorf("something was created: %v", ents)
	}
	// At the limits exactly: accepted.
	ok := strings.Repeat("b", 255)
	must(t, r.Mkdir(ok))
}

// FuzzReadBytesWindows: reading a file in byte windows of any size from 0, following Next,
// reassembles it exactly; for valid UTF-8 every window is valid UTF-8; a window is never empty
// (an unsplittable character is an error, not a stall).
func FuzzReadBytesWindows(f *testing.F) {
	f.Add([]byte("héllo wörld ✓ 𝄞"), uint8(3))
	f.Add([]byte(strings.Repeat("é", 100)), uint8(1))
	f.Add([]byte{0xff, 0xfe, 'a'}, uint8(2))
	dir := f.TempDir()
	r, err := Open(dir)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, content []byte, size uint8) {
		if err := os.WriteFile(filepath.Join(dir, "f"), content, 0o644); err != nil {
			t.Fatal(err)
		}
		max := int(size%16) + 1
		var got []byte
		var off int64
		for steps := 0; ; steps++ {
			w, err := r.ReadBytes("f", off, max)
			if err != nil {
				if max < 4 && strings.Contains(err.Error(), "max_bytes") {
					return // a character longer than the window: refused, as documented
				}
				if len(content) == 0 && off == 0 {
					t.Fatalf("empty file: %v", err)
				}
				t.Fatalf("window at %d of %d: %v", off, len(content), err)
			}
			if w.Next <= off && len(content) > 0 {
				t.Fatalf("window at %d did not advance", off)
			}
			if utf8.Valid(content) && !utf8.ValidString(w.Content) {
				t.Fatalf("window at %d splits a character: %q", off, w.Content)
			}
			got = append(got, w.Content...)
			off = w.Next
			if off >= w.TotalBytes || steps > len(content) {
				break
			}
		}
		if !bytes.Equal(got, content) {
			t.Fatalf("windows reassembled %q, want %q", got, content)
		}
	})
}

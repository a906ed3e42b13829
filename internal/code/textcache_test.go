package code

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestTextCacheSeesEveryChange: a cached text is served only while the file is the same file
// with the same size and modification time, and no change of it was heard of; an edit of the
// same length (the time differs), an edit that keeps even the time but is notified (Changed),
// a file replaced by a rename (another inode, same size and time), a removed file and a symlink
// that leads out of the workspace all miss.
func TestTextCacheSeesEveryChange(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	abs := filepath.Join(root, "a.go")
	write := func(p, text string, mtime time.Time) {
		t.Helper()
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	write(abs, "package a\n// one\n", t0)
	p := &Pool{}
	c, err := p.newCall(root)
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	fresh := func() *call {
		c.close()
		c, err = p.newCall(root)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	lines, ok := c.textLines(abs)
	if !ok || len(lines) != 3 || lines[1] != "// one" {
		t.Fatalf("first read: %q %v", lines, ok)
	}
	fresh()
	if ct, ok := p.texts.get(root, abs); !ok || ct.lines[1] != "// one" {
		t.Fatalf("unchanged file not served from the cache: %v", ok)
	}

	write(abs, "package a\n// two\n", t0.Add(time.Second)) // same length, later time
	if lines, _ := fresh().textLines(abs); lines[1] != "// two" {
		t.Fatalf("an edit of the same length was not seen: %q", lines)
	}

	// An edit in place of the same length that keeps the time (as one within the file
	// system's timestamp granularity can): the stat cannot tell, the change notice can.
	write(abs, "package a\n// ten\n", t0.Add(time.Second))
	p.Changed(root, "a.go")
	if lines, _ := fresh().textLines(abs); lines[1] != "// ten" {
		t.Fatalf("the hub's change notice did not drop the cached text: %q", lines)
	}

	other := filepath.Join(root, "b.tmp")
	write(other, "package a\n// six\n", t0.Add(time.Second)) // same size and time as a.go now
	if err := os.Rename(other, abs); err != nil {
		t.Fatal(err)
	}
	if lines, _ := fresh().textLines(abs); lines[1] != "// six" {
		t.Fatalf("a file replaced by a rename (same size and time) was not seen: %q", lines)
	}

	if err := os.Remove(abs); err != nil {
		t.Fatal(err)
	}
	if _, ok := fresh().textLines(abs); ok {
		t.Fatal("a removed file was served from the cache")
	}

	// A symlink inside the workspace to a file outside it: the cached text of the path (read
	// when it was a regular file) is not served through the link.
	outside := filepath.Join(t.TempDir(), "secret.go")
	write(outside, "package a\n// out\n", t0)
	write(abs, "package a\n// own\n", t0)
	if lines, _ := fresh().textLines(abs); lines[1] != "// own" {
		t.Fatalf("re-created file: %q", lines)
	}
	if err := os.Remove(abs); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, abs); err != nil {
		t.Fatal(err)
	}
	if lines, ok := fresh().textLines(abs); ok {
		t.Fatalf("a symlink out of the workspace was read or served from the cache: %q", lines)
	}
}

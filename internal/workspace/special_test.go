//go:build unix

package workspace

import (
	"errors"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// specialTree makes a workspace holding a FIFO, a Unix socket (a real listener's file) and, when
// the test may create devices (root), a character device, next to a regular file.
func specialTree(t *testing.T) (*Root, []string) {
	t.Helper()
	dir := t.TempDir()
	must(t, os.WriteFile(filepath.Join(dir, "plain.txt"), []byte("hello\n"), 0o644))
	must(t, syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o644))
	// Unix socket paths are limited to ~108 bytes; t.TempDir can be longer, so bind relative.
	wd, err := os.Getwd()
	must(t, err)
	must(t, os.Chdir(dir))
	l, err := net.Listen("unix", "sock")
	must(t, os.Chdir(wd))
	must(t, err)
	t.Cleanup(func() { l.Close() })
	names := []string{"pipe", "sock"}
	// makedev(1, 3) is /dev/null's number: harmless if anything did open it.
	if err := syscall.Mknod(filepath.Join(dir, "dev"), syscall.S_IFCHR|0o644, 1<<8|3); err == nil {
		names = append(names, "dev")
	}
	r, err := Open(dir)
	must(t, err)
	t.Cleanup(func() { r.Close() })
	return r, names
}

// within runs f and fails the test if it has not returned after d: a hang is a failure, not a
// test that never ends.
func within(t *testing.T, d time.Duration, what string, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(d):
		t.Fatalf("%s did not return within %v (blocked on a special file?)", what, d)
		return nil
	}
}

func TestSpecialFilesRefused(t *testing.T) {
	r, names := specialTree(t)
	for _, name := range names {
		ops := map[string]func() error{
			"ReadFile":  func() error { _, err := r.ReadFile(name); return err },
			"ReadLines": func() error { _, err := r.ReadLines(name, 0, 10); return err },
			"ReadBytes": func() error { _, err := r.ReadBytes(name, 0, 10); return err },
			"Edit":      func() error { _, err := r.Edit(name, "a", "b", false); return err },
			"WriteFile": func() error { return r.WriteFile(name, []byte("x")) },
			"List":      func() error { _, err := r.List(name); return err },
			"OpenDir":   func() error { f, _, err := r.OpenDir(name); closeIf(f); return err },
			"FS.Open":   func() error { f, err := r.FS().Open(name); closeIf(f); return err },
			"ReadFileFS": func() error {
				_, err := fs.ReadFile(r.FS(), name)
				return err
			},
		}
		for op, f := range ops {
			err := within(t, 5*time.Second, op+"("+name+")", f)
			if err == nil {
				t.Errorf("%s(%s): no error", op, name)
				continue
			}
			// OpenDir and List may also say "not a directory" where O_DIRECTORY answers first.
			if !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), strconv.Quote(name)) || !strings.Contains(err.Error(), "not a regular file") {
				t.Errorf("%s(%s): %v; want a refusal naming the path and saying it is not a regular file", op, name, err)
			}
		}
	}
	// The special files are still there (nothing replaced them) and regular files still work.
	for _, name := range names {
		if st, err := os.Lstat(filepath.Join(r.Dir(), name)); err != nil || st.Mode().IsRegular() {
			t.Errorf("%s after the calls: %v %v", name, st, err)
		}
	}
	if got, err := r.ReadFile("plain.txt"); err != nil || got != "hello\n" {
		t.Errorf("plain file: %q %v", got, err)
	}
	if _, err := r.Edit("plain.txt", "hello", "bye", false); err != nil {
		t.Error(err)
	}
	// A directory listing shows them (they exist; only opening them is refused).
	es, err := r.List(".")
	must(t, err)
	if len(es) != len(names)+1 {
		t.Errorf("List: %+v", es)
	}
}

// A symlink inside the root that leads to a FIFO is refused like the FIFO itself.
func TestSpecialFileBehindSymlinkRefused(t *testing.T) {
	r, _ := specialTree(t)
	must(t, os.Symlink("pipe", filepath.Join(r.Dir(), "link")))
	err := within(t, 5*time.Second, "ReadFile(link)", func() error { _, err := r.ReadFile("link"); return err })
	if !errors.Is(err, ErrNotRegular) {
		t.Errorf("ReadFile(link) = %v", err)
	}
	err = within(t, 5*time.Second, "WriteFile(link)", func() error { return r.WriteFile("link", []byte("x")) })
	if !errors.Is(err, ErrNotRegular) {
		t.Errorf("WriteFile(link) = %v", err)
	}
}

// OpenRootIn and OpenRootPath refuse a FIFO where os.Root.OpenRoot and os.OpenRoot would hang.
func TestOpenRootNeverBlocks(t *testing.T) {
	r, _ := specialTree(t)
	err := within(t, 5*time.Second, "OpenRootIn", func() error { _, err := OpenRootIn(r.root, "pipe"); return err })
	if err == nil {
		t.Error("OpenRootIn(pipe): no error")
	}
	err = within(t, 5*time.Second, "OpenRootPath", func() error { _, err := OpenRootPath(filepath.Join(r.Dir(), "pipe")); return err })
	if err == nil {
		t.Error("OpenRootPath(pipe): no error")
	}
	must(t, os.Mkdir(filepath.Join(r.Dir(), "d"), 0o755))
	must(t, os.WriteFile(filepath.Join(r.Dir(), "d", "f"), []byte("in d"), 0o644))
	sub, err := OpenRootIn(r.root, "d")
	must(t, err)
	defer sub.Close()
	if b, err := sub.ReadFile("f"); err != nil || string(b) != "in d" {
		t.Errorf("sub root: %q %v", b, err)
	}
	if err := within(t, 5*time.Second, "Open(pipe)", func() error { _, err := Open(filepath.Join(r.Dir(), "pipe")); return err }); err == nil {
		t.Error("Open(pipe) as a workspace: no error")
	}
}

func closeIf(c interface{ Close() error }) {
	if c != nil && !isNilFile(c) {
		c.Close()
	}
}

func isNilFile(c any) bool {
	f, ok := c.(*os.File)
	return ok && f == nil
}

//go:build unix

package search

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/switchboard-hub/switchboard/internal/workspace"
)

// TestSpecialFilesInWalks: FIFOs among the files, and as the ignore files the walk reads, are
// skipped silently by grep and glob over the tree and refused when grep names one; a write's
// temp file is never a result, even with IncludeIgnored. Both open paths (openat2 and os.Root).
func TestSpecialFilesInWalks(t *testing.T) {
	dir := t.TempDir()
	for p, c := range map[string]string{"a.txt": "needle\n", "sub/b.txt": "needle\n"} {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{"fifo.txt", ".gitignore", "sub/.ignore", "sub/fifo2.txt"} {
		if err := syscall.Mkfifo(filepath.Join(dir, p), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "."+"c.txt.switchboard-1-1.tmp"), []byte("needle\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	for _, portable := range []bool{false, true} {
		t.Run(map[bool]string{false: "fast", true: "portable"}[portable], func(t *testing.T) {
			defer func(v bool) { portableOnly = v }(portableOnly)
			portableOnly = portable
			for _, ign := range []bool{false, true} {
				res := run(t, "grep", func(ctx context.Context) (any, error) {
					return Grep(ctx, root, GrepOptions{Pattern: "needle", Literal: true, IncludeIgnored: ign})
				}).(GrepResult)
				var paths []string
				for _, m := range res.Matches {
					paths = append(paths, m.Path)
				}
				if !slices.Equal(paths, []string{"a.txt", "sub/b.txt"}) {
					t.Errorf("grep (include ignored %v) matched %v", ign, paths)
				}
				g := run(t, "glob", func(ctx context.Context) (any, error) {
					return Glob(ctx, root, GlobOptions{Pattern: "**", IncludeIgnored: ign})
				}).(GlobResult)
				if !slices.Equal(g.Paths, []string{"a.txt", "sub/b.txt"}) {
					t.Errorf("glob (include ignored %v) = %v", ign, g.Paths)
				}
			}
			done := make(chan error, 1)
			go func() {
				_, err := Grep(context.Background(), root, GrepOptions{Pattern: "x", File: "fifo.txt"})
				done <- err
			}()
			select {
			case err := <-done:
				if !errors.Is(err, workspace.ErrNotRegular) || !strings.Contains(err.Error(), `"fifo.txt"`) {
					t.Errorf("grep of a named FIFO: %v", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("grep of a named FIFO hangs")
			}
		})
	}
	// The ignore files of the directories above a sub-directory search are read too.
	ws, err := workspace.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	lp := run(t, "LoadParents", func(context.Context) (any, error) {
		_, parents := LoadParents(ws.FS(), "sub")
		return parents, nil
	}).([]IgnoreFile)
	if len(lp) != 0 {
		t.Errorf("LoadParents read a FIFO: %v", lp)
	}
}

func run(t *testing.T, what string, f func(context.Context) (any, error)) any {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	type out struct {
		v   any
		err error
	}
	done := make(chan out, 1)
	go func() { v, err := f(ctx); done <- out{v, err} }()
	select {
	case o := <-done:
		if o.err != nil {
			t.Fatalf("%s: %v", what, o.err)
		}
		return o.v
	case <-time.After(15 * time.Second):
		t.Fatalf("%s hangs (a FIFO opened with a blocking open?)", what)
		return nil
	}
}

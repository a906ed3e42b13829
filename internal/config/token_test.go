package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestClientTokenFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cfg", "switchboard", "token")
	tok, created, err := LoadOrCreateToken(path)
	if err != nil || !created || len(tok) != 64 {
		t.Fatalf("first load: %q %v %v", tok, created, err)
	}
	fi, _ := os.Stat(path)
	di, _ := os.Stat(filepath.Dir(path))
	if fi.Mode().Perm() != 0o600 || di.Mode().Perm() != 0o700 {
		t.Fatalf("modes: file %v dir %v", fi.Mode().Perm(), di.Mode().Perm())
	}
	again, created, err := LoadOrCreateToken(path)
	if err != nil || created || again != tok {
		t.Fatalf("second load: %q %v %v; want the same token", again, created, err)
	}
	// A token others can read is refused, with the fix.
	os.Chmod(path, 0o644)
	if _, _, err := LoadOrCreateToken(path); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Fatalf("world-readable token: err = %v", err)
	}
	rot, err := RotateToken(path)
	if err != nil || rot == tok {
		t.Fatalf("rotate: %q %v", rot, err)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Fatalf("rotated mode %v", fi.Mode().Perm())
	}
	if got, _, _ := LoadOrCreateToken(path); got != rot {
		t.Fatalf("after rotate: %q, want %q", got, rot)
	}
}

package atomicfile_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/switchboard-hub/switchboard/internal/atomicfile"
)

// Write creates the directory, replaces the file whole, leaves no temporary file behind and
// keeps the file to its owner.
func TestWrite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state", "grants.json")
	for _, data := range []string{"first", "second, longer than the first"} {
		if err := atomicfile.Write(path, []byte(data)); err != nil {
			t.Fatal(err)
		}
		if b, err := os.ReadFile(path); err != nil || string(b) != data {
			t.Fatalf("read %q, %v; want %q", b, err, data)
		}
	}
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v, %v; want 0600", st.Mode(), err)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Fatalf("left behind: %v", entries)
	}
	if err := atomicfile.Write(filepath.Join(path, "x"), []byte("y")); err == nil {
		t.Fatal("writing below a file succeeded")
	}
}

// WriteMode keeps the mode it is given (a config file the user made group-readable).
func TestWriteMode(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.toml")
	if err := atomicfile.WriteMode(path, []byte("x = 1\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o640 {
		t.Fatalf("mode %v, %v; want 0640", st.Mode(), err)
	}
}

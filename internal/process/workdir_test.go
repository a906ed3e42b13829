//go:build unix

package process

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A child given a directory handle starts in the directory that was opened, even after the path
// it was opened by has been swapped for a symlink to somewhere else.
func TestDirFileSurvivesSwap(t *testing.T) {
	s := newTestService(t, Options{})
	base := t.TempDir()
	checked := filepath.Join(base, "work")
	elsewhere := filepath.Join(base, "elsewhere")
	for _, d := range []string{checked, elsewhere} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	f, err := os.Open(checked)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// Swap: the checked directory moves away, its name becomes a symlink to elsewhere.
	moved := filepath.Join(base, "moved")
	if err := os.Rename(checked, moved); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, checked); err != nil {
		t.Fatal(err)
	}

	res, err := s.Exec(context.Background(), ExecOptions{Command: "sh", Args: []string{"-c", "pwd -P; touch marker"}, Dir: checked, DirFile: f})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(res.Stdout); got != moved {
		t.Fatalf("exec ran in %q, want the held directory %q", got, moved)
	}
	info := mustStart(t, s, StartOptions{Command: "sh", Args: []string{"-c", "pwd -P; touch marker2"}, Dir: checked, DirFile: f})
	mustWait(t, s, info.ID)
	out, _ := s.Output(info.ID, OutputQuery{})
	if got := strings.TrimSpace(out.Text); got != moved {
		t.Fatalf("process ran in %q, want the held directory %q", got, moved)
	}
	// PTY mode too (setsid and the controlling terminal come before the chdir).
	ptyInfo := mustStart(t, s, StartOptions{Command: "sh", Args: []string{"-c", "pwd -P"}, Dir: checked, DirFile: f, PTY: true})
	mustWait(t, s, ptyInfo.ID)
	if out, _ := s.Output(ptyInfo.ID, OutputQuery{}); strings.TrimSpace(out.Text) != moved {
		t.Fatalf("PTY process ran in %q, want the held directory %q", strings.TrimSpace(out.Text), moved)
	}
	if info.Dir != checked {
		t.Fatalf("recorded dir %q, want the checked name %q", info.Dir, checked)
	}
	if ents, _ := os.ReadDir(elsewhere); len(ents) != 0 {
		t.Fatalf("files created outside the held directory: %v", ents)
	}
	for _, m := range []string{"marker", "marker2"} {
		if _, err := os.Stat(filepath.Join(moved, m)); err != nil {
			t.Fatalf("%s not created in the held directory: %v", m, err)
		}
	}
}

// The hub's secrets never reach a child; env in StartOptions can still set them explicitly.
func TestChildEnvWithoutSecrets(t *testing.T) {
	for _, kv := range []string{"SWITCHBOARD_TOKEN=tok-http", "SWITCHBOARD_IDE_TOKEN=tok-ide", "SWITCHBOARD_FUTURE_SECRET=s",
		"OPENAI_API_KEY=sk-test", "QDRANT_API_KEY=q", "SWITCHBOARD_WORKSPACE=/keep", "HARMLESS=yes"} {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	s := newTestService(t, Options{}) // BaseEnv defaults to the hub's environment
	res, err := s.Exec(context.Background(), ExecOptions{Command: "env", Env: []string{"OPENAI_API_KEY=given-by-caller"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, leaked := range []string{"tok-http", "tok-ide", "SWITCHBOARD_FUTURE_SECRET", "QDRANT_API_KEY", "sk-test"} {
		if strings.Contains(res.Stdout, leaked) {
			t.Errorf("child environment leaks %s:\n%s", leaked, res.Stdout)
		}
	}
	for _, kept := range []string{"HARMLESS=yes", "SWITCHBOARD_WORKSPACE=/keep", "OPENAI_API_KEY=given-by-caller"} {
		if !strings.Contains(res.Stdout, kept+"\n") {
			t.Errorf("child environment lacks %s", kept)
		}
	}
	info := mustStart(t, s, StartOptions{Command: "env"})
	mustWait(t, s, info.ID)
	out, _ := s.Output(info.ID, OutputQuery{})
	if strings.Contains(out.Text, "tok-") || !strings.Contains(out.Text, "HARMLESS=yes") {
		t.Fatalf("process_start child environment:\n%s", out.Text)
	}
}

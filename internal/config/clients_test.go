package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestClientProjects: [clients.NAME] project is read per client; a relative path or an unknown
// key under a client is refused, naming the field.
func TestClientProjects(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.toml")
	os.WriteFile(good, []byte("[clients.cursor]\nproject = \"/home/me/app\"\n[clients.codex]\n"), 0o600)
	c, err := Load(good)
	if err != nil {
		t.Fatal(err)
	}
	if c.Clients["cursor"].Project != "/home/me/app" || c.Clients["codex"].Project != "" {
		t.Errorf("clients = %+v", c.Clients)
	}
	for body, want := range map[string]string{
		"[clients.cursor]\nproject = \"app\"\n": "clients.cursor.project",
		"[clients.cursor]\nprojet = \"/app\"\n": "clients.cursor.projet",
	} {
		bad := filepath.Join(dir, "bad.toml")
		os.WriteFile(bad, []byte(body), 0o600)
		if _, err := Load(bad); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want it to name %s", body, err, want)
		}
	}
}

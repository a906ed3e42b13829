package autostart

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestEnableDisable(t *testing.T) {
	tests := []struct {
		name     string
		exe      string
		wantExec string // the Exec line as written
		existing string // an entry already there ("" for none)
		wantErr  error  // from Enable
	}{
		{name: "plain path", exe: "/usr/bin/switchboard", wantExec: "Exec=/usr/bin/switchboard --hidden"},
		{name: "space in path", exe: "/home/a b/bin/switchboard", wantExec: `Exec="/home/a b/bin/switchboard" --hidden`},
		{name: "reserved characters", exe: `/opt/$x"y\z%/switchboard`, wantExec: `Exec="/opt/\\$x\\"y\\\\z%%/switchboard" --hidden`},
		{name: "replaces our older entry", exe: "/new/switchboard", wantExec: "Exec=/new/switchboard --hidden",
			existing: "[Desktop Entry]\nType=Application\nName=Switchboard\nExec=/old/switchboard --hidden\nX-Switchboard-Autostart=true\n"},
		{name: "leaves the user's own entry", exe: "/usr/bin/switchboard", wantErr: ErrNotOurs,
			existing: "[Desktop Entry]\nType=Application\nName=Mine\nExec=/usr/bin/switchboard\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := t.TempDir()
			p := filepath.Join(cfg, "autostart", FileName)
			if got, _ := Path(cfg); got != p {
				t.Fatalf("Path = %s; want %s", got, p)
			}
			if Enabled(cfg) {
				t.Fatal("Enabled before anything was written")
			}
			if tt.existing != "" {
				os.MkdirAll(filepath.Dir(p), 0o755)
				os.WriteFile(p, []byte(tt.existing), 0o644)
			}
			err := Enable(cfg, tt.exe)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("Enable = %v; want %v", err, tt.wantErr)
				}
				if b, _ := os.ReadFile(p); string(b) != tt.existing {
					t.Errorf("the user's entry changed to %q", b)
				}
				if err := Disable(cfg); !errors.Is(err, ErrNotOurs) {
					t.Errorf("Disable of the user's entry = %v; want ErrNotOurs", err)
				}
				if !Enabled(cfg) {
					t.Error("the user's entry was removed")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(b), "\n"+tt.wantExec+"\n") || !strings.Contains(string(b), "\nX-Switchboard-Autostart=true\n") {
				t.Errorf("entry:\n%s\nwant the line %s and the marker", b, tt.wantExec)
			}
			if !Enabled(cfg) {
				t.Error("Enabled = false after Enable")
			}
			validate(t, p)
			if err := Disable(cfg); err != nil {
				t.Fatal(err)
			}
			if Enabled(cfg) {
				t.Error("Enabled after Disable")
			}
			if err := Disable(cfg); err != nil {
				t.Errorf("Disable with no entry = %v; want nil", err)
			}
		})
	}
}

func TestEnableNeedsAbsolutePath(t *testing.T) {
	if err := Enable(t.TempDir(), "switchboard"); err == nil {
		t.Error("Enable with a relative path succeeded")
	}
}

// Without a config home (no home directory) there is nowhere to write the entry; which config
// home applies ($XDG_CONFIG_HOME or ~/.config) is config.Env.ConfigHome's (TestEnv).
func TestDirNeedsConfigHome(t *testing.T) {
	if d, err := Dir(""); err == nil {
		t.Errorf("Dir(\"\") = %s, nil", d)
	}
	if d, _ := Dir("/home/u/.config"); d != "/home/u/.config/autostart" {
		t.Errorf("Dir = %s", d)
	}
}

// validate runs desktop-file-validate (package desktop-file-utils) on the entry.
func validate(t *testing.T, p string) {
	t.Helper()
	if _, err := exec.LookPath("desktop-file-validate"); err != nil {
		t.Log("desktop-file-validate not installed (bash build/setup-deps.sh); entry not validated")
		return
	}
	if out, err := exec.Command("desktop-file-validate", p).CombinedOutput(); err != nil || len(out) > 0 {
		t.Errorf("desktop-file-validate %s: %v\n%s", p, err, out)
	}
}

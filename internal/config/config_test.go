package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestLoadLayers(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "c.toml")
	os.WriteFile(file, []byte("read_only = true\ndisabled_tools = [\"file_delete\"]\n[tcp]\nenabled = true\naddr = \"127.0.0.1:7000\"\n[ide]\nresponse_wait = \"250ms\"\n"), 0o600)
	t.Setenv("MCP_ADDR", "127.0.0.1:7001")
	t.Setenv("SWITCHBOARD_IDE_URL", "ws://127.0.0.1:1/ws")
	c, err := Load(file)
	if err != nil {
		t.Fatal(err)
	}
	if !c.ReadOnly || len(c.DisabledTools) != 1 || !c.TCP.Enabled {
		t.Errorf("file values not applied: %+v", c)
	}
	if c.TCP.Addr != "127.0.0.1:7001" || c.IDE.URL != "ws://127.0.0.1:1/ws" {
		t.Errorf("env did not override: tcp=%s ide=%s", c.TCP.Addr, c.IDE.URL)
	}
	if c.IDE.ResponseWait.Duration != 250*time.Millisecond || c.IDE.ReconnectInterval.Duration != 2*time.Second {
		t.Errorf("ide durations: wait %v, reconnect %v", c.IDE.ResponseWait, c.IDE.ReconnectInterval)
	}
	if c.HTTP.Addr != DefaultHTTPAddr || c.Process.MaxProcesses != 32 {
		t.Errorf("defaults lost: %+v", c)
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := Load(filepath.Join(dir, "missing.toml")); err == nil {
		t.Error("explicit missing file accepted")
	}
	bad := filepath.Join(dir, "bad.toml")
	os.WriteFile(bad, []byte("[tcp]\nadress = \"x\"\n"), 0o600)
	if _, err := Load(bad); err == nil || !strings.Contains(err.Error(), "tcp.adress") {
		t.Errorf("unknown key error = %v, want it to name tcp.adress", err)
	}
	badDur := filepath.Join(dir, "dur.toml")
	os.WriteFile(badDur, []byte("[ide]\nresponse_wait = \"soon\"\n"), 0o600)
	if _, err := Load(badDur); err == nil || !strings.Contains(err.Error(), "1500ms") {
		t.Errorf("bad duration error = %v, want an example of the format", err)
	}
	t.Setenv("XDG_CONFIG_HOME", dir) // default path absent: fine
	if _, err := Load(""); err != nil {
		t.Errorf("missing default config should be fine: %v", err)
	}
}

func TestWebAllow(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "c.toml")
	os.WriteFile(file, []byte("[web]\nallow = [\"localhost:8080\"]\ntimeout = \"5s\"\n"), 0o600)
	t.Setenv("SWITCHBOARD_FETCH_ALLOW", " 10.0.0.0/8 , intranet.local ,")
	c, err := Load(file)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(c.Web.Allow, "|") != "localhost:8080|10.0.0.0/8|intranet.local" || c.Web.Timeout.Duration != 5*time.Second {
		t.Errorf("web = %+v", c.Web)
	}
	if Default().Web.Timeout.Duration != 30*time.Second {
		t.Errorf("default web timeout = %v", Default().Web.Timeout)
	}
}

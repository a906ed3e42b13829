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

// TestToolsetsAndIDEConfigured: the toolsets key and SWITCHBOARD_TOOLSETS, and whether the IDE
// backend URL was configured (file or environment) rather than left at the built-in default.
func TestToolsetsAndIDEConfigured(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join(dir, "plain.toml")
	os.WriteFile(plain, []byte("toolsets = [\"files\", \"process\"]\n"), 0o600)
	t.Setenv("SWITCHBOARD_IDE_URL", "")
	t.Setenv("SWITCHBOARD_TOOLSETS", "")
	c, err := Load(plain)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(c.Toolsets, ",") != "files,process" {
		t.Errorf("toolsets = %v", c.Toolsets)
	}
	if c.IDEConfigured() || c.IDE.URL == "" {
		t.Errorf("built-in IDE URL %q counted as configured", c.IDE.URL)
	}
	withIDE := filepath.Join(dir, "ide.toml")
	os.WriteFile(withIDE, []byte("[ide]\nurl = \"ws://10.0.0.1:9876/ws\"\n"), 0o600)
	if c, err = Load(withIDE); err != nil || !c.IDEConfigured() {
		t.Errorf("ide.url in the file: configured = %v, %v", c.IDEConfigured(), err)
	}
	t.Setenv("SWITCHBOARD_IDE_URL", "ws://127.0.0.1:2/ws")
	t.Setenv("SWITCHBOARD_TOOLSETS", "ide,files")
	if c, err = Load(plain); err != nil || !c.IDEConfigured() || strings.Join(c.Toolsets, ",") != "ide,files" {
		t.Errorf("environment: configured = %v, toolsets %v, %v", c.IDEConfigured(), c.Toolsets, err)
	}
}

func TestRAGConfig(t *testing.T) {
	dir := t.TempDir()
	if _, err := Load(filepath.Join(dir, "absent.toml")); err == nil {
		t.Fatal("an explicit missing file must be an error")
	}
	file := filepath.Join(dir, "c.toml")
	os.WriteFile(file, []byte("data_dir = \"/d\"\n[rag]\nembedder = \"ollama\"\nmodel = \"all-minilm\"\ncollection = \"team-docs\"\n"), 0o600)
	c, err := Load(file)
	if err != nil {
		t.Fatal(err)
	}
	if c.RAG.Backend != "embedded" || c.RAG.Embedder != "ollama" || c.RAG.Model != "all-minilm" || c.RAG.Collection != "team-docs" || c.RAGDir() != "/d/rag" {
		t.Errorf("rag config: %+v dir %s", c.RAG, c.RAGDir())
	}
	t.Setenv("SWITCHBOARD_QDRANT_URL", "qdrant.internal:6334")
	c, _ = Load(file)
	if c.RAG.Backend != "qdrant" || c.RAG.URL != "qdrant.internal:6334" {
		t.Errorf("SWITCHBOARD_QDRANT_URL did not select qdrant: %+v", c.RAG)
	}
	d := Default()
	if d.RAG.Backend != "embedded" || d.RAG.Embedder != "offline" || d.RAG.Collection != "hostuk-docs" {
		t.Errorf("defaults: %+v", d.RAG)
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

func TestDesktopAutostart(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		file string
		want *bool
	}{{"", nil}, {"[desktop]\nautostart = true\n", ptr(true)}, {"[desktop]\nautostart = false\n", ptr(false)}} {
		file := filepath.Join(dir, "c.toml")
		os.WriteFile(file, []byte(tc.file), 0o600)
		c, err := Load(file)
		if err != nil {
			t.Fatal(err)
		}
		if (c.Desktop.Autostart == nil) != (tc.want == nil) || (tc.want != nil && *c.Desktop.Autostart != *tc.want) {
			t.Errorf("%q: autostart = %v, want %v", tc.file, c.Desktop.Autostart, tc.want)
		}
	}
}

func ptr[T any](v T) *T { return &v }

func TestDesktopNotifications(t *testing.T) {
	dir := t.TempDir()
	for file, want := range map[string]bool{
		"": true, "[desktop]\nautostart = true\n": true, "[desktop]\nnotifications = false\n": false, "[desktop]\nnotifications = true\n": true,
	} {
		path := filepath.Join(dir, "c.toml")
		os.WriteFile(path, []byte(file), 0o600)
		c, err := Load(path)
		if err != nil {
			t.Fatal(err)
		}
		if c.Desktop.Notifications != want {
			t.Errorf("%q: notifications = %v, want %v", file, c.Desktop.Notifications, want)
		}
	}
	path := filepath.Join(dir, "c.toml")
	os.WriteFile(path, []byte("[desktop]\nnotifications = \"off\"\n"), 0o600)
	if _, err := Load(path); err == nil || !strings.Contains(err.Error(), "notifications") {
		t.Errorf("notifications = \"off\": %v, want an error naming the key", err)
	}
}

package config

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// envTable is docs/development.md's table of environment variables, as EnvVars makes it.
func envTable() string {
	var b strings.Builder
	b.WriteString("| variable | what it does |\n|---|---|\n")
	for _, v := range EnvVars {
		b.WriteString("| `" + v.Name + "` | " + v.Does + " |\n")
	}
	return b.String()
}

// Every variable Env reads is listed in EnvVars, in its order, and docs/development.md shows
// the list as it is.
func TestEnvVarsListed(t *testing.T) {
	var tags []string
	ty := reflect.TypeFor[Env]()
	for i := range ty.NumField() {
		if tag := ty.Field(i).Tag.Get("env"); tag != "" && tag != "-" {
			tags = append(tags, tag)
		}
	}
	var names []string
	for _, v := range EnvVars {
		names = append(names, v.Name)
	}
	if !reflect.DeepEqual(tags, names) {
		t.Errorf("Env reads %v\nEnvVars lists %v", tags, names)
	}
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "development.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), envTable()) {
		t.Errorf("docs/development.md lacks the table of environment variables as EnvVars has it:\n%s", envTable())
	}
}

// EnvFrom reads each variable through the lookup it is given; the paths derive from it.
func TestEnv(t *testing.T) {
	vars := map[string]string{"MCP_ADDR": "127.0.0.1:7", "OLLAMA_HOST": "gpu:11434", "XDG_CONFIG_HOME": "/cfg",
		"XDG_DATA_HOME": "/data", "XDG_RUNTIME_DIR": "/run/user/7", "WAYLAND_DISPLAY": "wayland-0", "GPU_KEY": "k"}
	e := EnvFrom(func(k string) (string, bool) { v, ok := vars[k]; return v, ok })
	if e.MCPAddr != "127.0.0.1:7" || e.OllamaHost != "gpu:11434" || e.Value("XDG_CONFIG_HOME") != "/cfg" || e.Getenv("GPU_KEY") != "k" || !e.HasDisplay() {
		t.Errorf("env = %+v", e)
	}
	if e.ConfigHome() != "/cfg" || e.DefaultPath() != "/cfg/switchboard/config.toml" ||
		e.DefaultDataDir() != "/data/switchboard" || e.DefaultSocketPath() != "/run/user/7/switchboard/mcp.sock" {
		t.Errorf("paths: %s %s %s %s", e.ConfigHome(), e.DefaultPath(), e.DefaultDataDir(), e.DefaultSocketPath())
	}
	home := t.TempDir()
	t.Setenv("HOME", home)
	e = EnvFrom(func(k string) (string, bool) { return map[string]string{"XDG_CONFIG_HOME": "relative"}[k], true })
	if e.ConfigHome() != filepath.Join(home, ".config") || e.DefaultSocketPath() != filepath.Join(home, ".local", "share", "switchboard", "mcp.sock") {
		t.Errorf("defaults: %s %s", e.ConfigHome(), e.DefaultSocketPath())
	}
	if (Env{}).Getenv("X") != "" {
		t.Error("an Env without Lookup has variables")
	}
	// Load applies the settings of the environment it is given, not the process's.
	cfgDir := t.TempDir()
	c, err := LoadWith("", EnvFrom(func(k string) (string, bool) {
		v, ok := map[string]string{"XDG_CONFIG_HOME": cfgDir, "SWITCHBOARD_WORKSPACE": "/ws", "SWITCHBOARD_READ_ONLY": "true"}[k]
		return v, ok
	}))
	if err != nil || c.Workspace != "/ws" || !c.ReadOnly || c.Path != filepath.Join(cfgDir, "switchboard", "config.toml") || c.Env.Workspace != "/ws" {
		t.Errorf("LoadWith: %v %+v", err, c)
	}
}

// Package config loads Switchboard's settings: built-in defaults, then the TOML file, then
// environment variables; command-line flags are applied last by the caller.
package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
)

// Config is the whole configuration. TOML keys are snake_case.
type Config struct {
	Workspace     string   `toml:"workspace"`
	DataDir       string   `toml:"data_dir"`
	ReadOnly      bool     `toml:"read_only"`
	DisabledTools []string `toml:"disabled_tools"`

	Unix struct {
		Enabled bool   `toml:"enabled"`
		Path    string `toml:"path"`
	} `toml:"unix"`
	TCP struct {
		Enabled bool   `toml:"enabled"`
		Addr    string `toml:"addr"`
	} `toml:"tcp"`
	HTTP struct {
		Enabled bool   `toml:"enabled"`
		Addr    string `toml:"addr"`
		Token   string `toml:"token"`
	} `toml:"http"`
	Hub struct {
		Enabled bool   `toml:"enabled"`
		Addr    string `toml:"addr"`
		Token   string `toml:"token"`
	} `toml:"hub"`
	IDE struct {
		URL   string `toml:"url"`
		Token string `toml:"token"`
		// Backoff of the bridge's reconnect loop and how long a tool waits for the backend's
		// answer before answering from cached state (Go durations, e.g. "2s", "1500ms").
		ReconnectInterval    Duration `toml:"reconnect_interval"`
		MaxReconnectInterval Duration `toml:"max_reconnect_interval"`
		ResponseWait         Duration `toml:"response_wait"`
	} `toml:"ide"`
	Process struct {
		MaxProcesses     int `toml:"max_processes"`
		BufferBytes      int `toml:"buffer_bytes"`
		StopGraceSeconds int `toml:"stop_grace_seconds"`
	} `toml:"process"`
	Audit struct {
		MaxSizeMB  int `toml:"max_size_mb"`
		MaxBackups int `toml:"max_backups"`
	} `toml:"audit"`
	Metrics struct {
		Dir string `toml:"dir"`
	} `toml:"metrics"`
	Browser struct {
		Path     string `toml:"path"`     // executable for webview_launch; empty: chromium, chromium-browser, google-chrome on PATH
		Headless bool   `toml:"headless"` // default of webview_launch's headless (true)
	} `toml:"browser"`
	Dashboard struct {
		Addr  string `toml:"addr"`  // headless dashboard (no display), loopback
		Token string `toml:"token"` // empty: a new random token each start
	} `toml:"dashboard"`
}

// Duration is a time.Duration written as a Go duration string in TOML ("2s", "1m30s").
type Duration struct{ time.Duration }

// UnmarshalText parses "2s"-style durations and refuses negative ones.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return fmt.Errorf("%q is not a duration; write it like \"2s\" or \"1500ms\"", b)
	}
	if v < 0 {
		return fmt.Errorf("%q is negative", b)
	}
	d.Duration = v
	return nil
}

// MarshalText writes the duration back in the same form.
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.Duration.String()), nil }

// Defaults for transports (DESIGN.md).
const (
	DefaultTCPAddr  = "127.0.0.1:9100"
	DefaultHTTPAddr = "127.0.0.1:9101"
	DefaultHubAddr  = "127.0.0.1:0"
)

// Default returns the built-in configuration.
func Default() Config {
	var c Config
	c.DataDir = DefaultDataDir()
	c.Unix.Enabled = true
	c.Unix.Path = DefaultSocketPath()
	c.TCP.Addr = DefaultTCPAddr
	c.HTTP.Addr = DefaultHTTPAddr
	c.Hub.Enabled = true
	c.Hub.Addr = DefaultHubAddr
	c.IDE.URL = "ws://localhost:9876/ws"
	c.IDE.ReconnectInterval.Duration = 2 * time.Second
	c.IDE.MaxReconnectInterval.Duration = 30 * time.Second
	c.IDE.ResponseWait.Duration = 1500 * time.Millisecond
	c.Dashboard.Addr = "127.0.0.1:0"
	c.Process.MaxProcesses = 32
	c.Process.BufferBytes = 4 << 20
	c.Process.StopGraceSeconds = 5
	c.Browser.Headless = true
	return c
}

// DefaultPath is the config file in the user config dir (~/.config/switchboard/config.toml).
func DefaultPath() string {
	dir, err := os.UserConfigDir()
	if err != nil {
		dir = filepath.Join(os.TempDir(), "switchboard-config")
	}
	return filepath.Join(dir, "switchboard", "config.toml")
}

// DefaultDataDir holds logs, metrics and the fallback socket ($XDG_DATA_HOME/switchboard).
func DefaultDataDir() string {
	if d := os.Getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "switchboard")
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".local", "share", "switchboard")
	}
	return filepath.Join(os.TempDir(), "switchboard-data")
}

// DefaultSocketPath is $XDG_RUNTIME_DIR/switchboard/mcp.sock, else under the data dir.
func DefaultSocketPath() string {
	if d := os.Getenv("XDG_RUNTIME_DIR"); d != "" {
		return filepath.Join(d, "switchboard", "mcp.sock")
	}
	return filepath.Join(DefaultDataDir(), "mcp.sock")
}

// Load reads defaults, then the file at path (explicit = must exist; empty = the default path,
// optional), then the environment.
func Load(path string) (Config, error) {
	c := Default()
	explicit := path != ""
	if !explicit {
		path = DefaultPath()
	}
	md, err := toml.DecodeFile(path, &c)
	switch {
	case err == nil:
		if undec := md.Undecoded(); len(undec) > 0 {
			keys := make([]string, len(undec))
			for i, k := range undec {
				keys[i] = k.String()
			}
			return c, fmt.Errorf("config %s: unknown keys %s; see docs/development.md for the valid keys", path, strings.Join(keys, ", "))
		}
	case errors.Is(err, fs.ErrNotExist) && !explicit:
	default:
		return c, fmt.Errorf("config %s: %w", path, err)
	}
	if err := c.applyEnv(); err != nil {
		return c, err
	}
	return c, nil
}

// applyEnv overrides file settings with environment variables.
func (c *Config) applyEnv() error {
	if v := os.Getenv("MCP_ADDR"); v != "" {
		c.TCP.Addr = v
	}
	if v := os.Getenv("SWITCHBOARD_TOKEN"); v != "" {
		c.HTTP.Token = v
	}
	if v := os.Getenv("SWITCHBOARD_WORKSPACE"); v != "" {
		c.Workspace = v
	}
	if v := os.Getenv("SWITCHBOARD_DATA_DIR"); v != "" {
		c.DataDir = v
	}
	if v := os.Getenv("SWITCHBOARD_SOCKET"); v != "" {
		c.Unix.Path = v
	}
	if v := os.Getenv("SWITCHBOARD_IDE_URL"); v != "" {
		c.IDE.URL = v
	}
	if v := os.Getenv("SWITCHBOARD_IDE_TOKEN"); v != "" {
		c.IDE.Token = v
	}
	if v := os.Getenv("SWITCHBOARD_BROWSER"); v != "" {
		c.Browser.Path = v
	}
	if v := os.Getenv("SWITCHBOARD_DASHBOARD_ADDR"); v != "" {
		c.Dashboard.Addr = v
	}
	if v := os.Getenv("SWITCHBOARD_READ_ONLY"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("SWITCHBOARD_READ_ONLY=%q: use true or false", v)
		}
		c.ReadOnly = b
	}
	return nil
}

// LogDir is where the audit log lives.
func (c Config) LogDir() string { return filepath.Join(c.DataDir, "logs") }

// MetricsDir is where daily metrics files live.
func (c Config) MetricsDir() string {
	if c.Metrics.Dir != "" {
		return c.Metrics.Dir
	}
	return filepath.Join(c.DataDir, "metrics")
}

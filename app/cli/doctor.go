package cli

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/switchboard-hub/switchboard/app"
	"github.com/switchboard-hub/switchboard/app/desktop"
	"github.com/switchboard-hub/switchboard/internal/agentic"
	"github.com/switchboard-hub/switchboard/internal/config"
	"github.com/switchboard-hub/switchboard/internal/webview"
)

// check is one doctor finding: what was checked, whether it is fine, and how to fix it if not.
type check struct {
	name, detail, fix string
	ok, optional      bool
}

func newDoctorCommand(g *globalFlags, version string) *cobra.Command {
	return &cobra.Command{
		Use:   "doctor",
		Short: "Check every backend and say how to fix what is missing",
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := g.load()
			checks := []check{{name: "config", ok: err == nil, detail: configDetail(g.configFile, err), fix: "fix the file named above or pass --config"}}
			if err != nil {
				cfg = config.Default()
			}
			checks = append(checks, doctorChecks(cmd.Context(), cfg)...)
			if err == nil {
				checks = append(checks, toolsetChecks(cmd.Context(), cfg, version)...)
				checks = append(checks, g.serverChecks(cmd, cfg)...)
			}
			failed := 0
			for _, c := range checks {
				mark := "ok  "
				if !c.ok && c.optional {
					mark = "warn"
				} else if !c.ok {
					mark = "FAIL"
					failed++
				}
				fmt.Fprintf(cmd.OutOrStdout(), "[%s] %-14s %s\n", mark, c.name, c.detail)
				if !c.ok && c.fix != "" {
					fmt.Fprintf(cmd.OutOrStdout(), "       fix: %s\n", c.fix)
				}
			}
			fmt.Fprintf(cmd.OutOrStdout(), "switchboard %s: %d checks, %d failed\n", version, len(checks), failed)
			if failed > 0 {
				return exitError{code: 1}
			}
			return nil
		},
	}
}

func configDetail(path string, err error) string {
	if path == "" {
		path = config.DefaultPath()
	}
	if err != nil {
		return err.Error()
	}
	if _, serr := os.Stat(path); serr != nil {
		return path + " (absent: built-in defaults)"
	}
	return path
}

func doctorChecks(ctx context.Context, cfg config.Config) []check {
	var out []check
	ws := cfg.Workspace
	if ws == "" {
		ws, _ = os.Getwd()
	}
	if st, err := os.Stat(ws); err != nil || !st.IsDir() {
		out = append(out, check{name: "workspace", detail: fmt.Sprintf("%s is not a directory", ws), fix: "pass --workspace DIR with an existing directory"})
	} else {
		out = append(out, check{name: "workspace", ok: true, detail: ws})
	}
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		out = append(out, check{name: "data dir", detail: err.Error(), fix: "set data_dir in the config or SWITCHBOARD_DATA_DIR to a writable directory"})
	} else if f, err := os.CreateTemp(cfg.DataDir, ".doctor-*"); err != nil {
		out = append(out, check{name: "data dir", detail: err.Error(), fix: "make " + cfg.DataDir + " writable"})
	} else {
		f.Close()
		os.Remove(f.Name())
		out = append(out, check{name: "data dir", ok: true, detail: cfg.DataDir + " (logs in " + filepath.Join(cfg.LogDir(), "audit.log") + ")"})
	}
	out = append(out, policyCheck(cfg))
	out = append(out, codeChecks(cfg)...)
	out = append(out, socketCheck(cfg.Unix.Path))
	out = append(out, tokenCheck())
	// A configured IDE token is a secret whichever toolsets are on: warn wherever it would travel
	// in clear text.
	if w := agentic.PlaintextTokenWarning(cfg.IDE.URL, cfg.IDE.Token); w != "" {
		out = append(out, check{name: "ide token", optional: true, detail: w, fix: "set [ide] url (or SWITCHBOARD_IDE_URL) to a wss:// URL"})
	}
	if hasDisplay() {
		out = append(out, check{name: "display", ok: true, detail: "graphical session found: the desktop app can open its window"})
	} else {
		out = append(out, check{name: "display", ok: false, optional: true, detail: "no DISPLAY/WAYLAND_DISPLAY: `switchboard` runs headless and prints a dashboard URL", fix: "run inside a desktop session for the tray and window"})
	}
	if desktop.Built {
		out = append(out, check{name: "desktop build", ok: true, detail: "Wails window and tray compiled in"})
	} else {
		out = append(out, check{name: "desktop build", ok: false, optional: true, detail: "this binary has no desktop UI (built without -tags desktop)", fix: "make build (needs libgtk-3-dev and libwebkit2gtk-4.1-dev: build/setup-deps.sh)"})
	}
	return out
}

// toolsetChecks reports the tool groups this build and config serve, from the tools actually
// registered (never a fixed list), then checks the backends of served groups only.
func toolsetChecks(ctx context.Context, cfg config.Config, version string) []check {
	st, err := app.BuildStack(cfg, version, app.StackOptions{WithHub: true})
	if err != nil {
		return []check{{name: "toolsets", detail: err.Error(), fix: "fix toolsets in the config or --toolsets"}}
	}
	sets := st.Service.Toolsets()
	_ = st.Close(ctx)
	var on, off []string
	served := map[string]bool{}
	for _, ts := range sets {
		switch {
		case len(ts.Tools) == 0:
		case ts.Enabled:
			on = append(on, fmt.Sprintf("%s (%d)", ts.Name, len(ts.Tools)))
			served[ts.Name] = true
		default:
			off = append(off, ts.Name)
		}
	}
	detail := "serving " + strings.Join(on, ", ")
	if len(on) == 0 {
		detail = "no toolset served"
	}
	c := check{name: "toolsets", ok: len(on) > 0, detail: detail, fix: "pass --toolsets or set toolsets in the config"}
	if len(off) > 0 {
		c.detail += "; registered but off: " + strings.Join(off, ", ") + " (--toolsets, the config or the dashboard turn them on)"
	}
	out := []check{c}
	if served["ml"] {
		out = append(out, mlChecks(ctx, cfg)...)
	}
	if served["rag"] {
		out = append(out, ragChecks(ctx, cfg)...)
	}
	if served["git"] {
		out = append(out, gitCheck())
	}
	if served["ide"] {
		out = append(out, ideCheck(ctx, cfg.IDE.URL))
	}
	browserUse := "used by the dashboard's end-to-end tests"
	if served["browser"] {
		browserUse = "webview_launch starts it; webview_connect attaches to a Chrome started with --remote-debugging-port=9222"
	}
	p, err := webview.FindBrowser(cfg.Browser.Path)
	if err != nil {
		return append(out, check{name: "browser", optional: true, detail: err.Error(), fix: "apt-get install chromium, or set [browser] path (" + browserUse + ")"})
	}
	return append(out, check{name: "browser", ok: true, detail: p + " (" + browserUse + ")"})
}

func socketCheck(path string) check {
	fi, err := os.Lstat(path)
	switch {
	case err != nil:
		return check{name: "unix socket", ok: true, detail: path + " (free: no hub running)"}
	case fi.Mode()&os.ModeSocket == 0:
		return check{name: "unix socket", detail: path + " exists but is not a socket", fix: "remove it or set [unix] path in the config"}
	}
	c, err := net.DialTimeout("unix", path, time.Second)
	if err != nil {
		return check{name: "unix socket", ok: false, optional: true, detail: path + " is stale (no hub answers)", fix: "nothing: the next hub start replaces it"}
	}
	c.Close()
	return check{name: "unix socket", ok: true, detail: path + " (a hub is running: `switchboard connect` reaches it)"}
}

func ideCheck(ctx context.Context, raw string) check {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || (u.Scheme != "ws" && u.Scheme != "wss") {
		return check{name: "ide backend", detail: fmt.Sprintf("%q is not a ws:// or wss:// URL", raw), fix: "set SWITCHBOARD_IDE_URL=ws://host:port/ws (wss:// for a remote backend)"}
	}
	hostPort := u.Host
	if u.Port() == "" {
		hostPort = net.JoinHostPort(u.Hostname(), map[string]string{"ws": "80", "wss": "443"}[u.Scheme])
	}
	var d net.Dialer
	dctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	c, err := d.DialContext(dctx, "tcp", hostPort)
	if err != nil {
		return check{name: "ide backend", optional: true, detail: raw + " is not reachable (the IDE tools answer from cached state; the bridge keeps retrying)",
			fix: "start the agentic backend at that address, or clear [ide] url (SWITCHBOARD_IDE_URL) if you do not use one"}
	}
	c.Close()
	return check{name: "ide backend", ok: true, detail: raw + " reachable"}
}

// gitCheck: the git_* tools run the system git.
func gitCheck() check {
	p, err := exec.LookPath("git")
	if err != nil {
		return check{name: "git", optional: true, detail: "git is not on PATH: the git_* tools answer with an error", fix: "apt-get install git"}
	}
	out, err := exec.Command(p, "--version").Output()
	if err != nil {
		return check{name: "git", optional: true, detail: p + " does not run: " + err.Error(), fix: "reinstall git"}
	}
	return check{name: "git", ok: true, detail: strings.TrimSpace(string(out)) + " (" + p + ", for the git_* tools)"}
}

package app

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/switchboard-hub/switchboard/internal/config"
	"github.com/switchboard-hub/switchboard/mcp"
)

// hasDisplay reports whether a graphical session is reachable.
func hasDisplay() bool { return config.ReadEnv().HasDisplay() }

// launchOptions are the root command's flags for the desktop app.
type launchOptions struct {
	hidden bool // --hidden: start in the tray, window hidden (when a tray host shows the icon)
	// workspaceFrom is where the config's workspace came from (WorkspaceSource): flag,
	// environment, config file, or "" when none is given.
	workspaceFrom string
	// project is the project folder runApp resolved (app/project.go).
	project ProjectStart
}

// runApp starts the desktop app when this is a desktop build with a display, else headless.
func runApp(ctx context.Context, cfg config.Config, version string, lo launchOptions) error {
	cwd, _ := os.Getwd()
	lo.project = ResolveProject(cfg, lo.workspaceFrom, cwd, UserHome())
	cfg.Workspace = lo.project.Dir
	if lo.project.Warning != "" {
		fmt.Fprintf(os.Stderr, "switchboard: warning: %s\n", lo.project.Warning)
	}
	if desktopBuilt && hasDisplay() {
		return runDesktop(ctx, cfg, version, lo)
	}
	if desktopBuilt {
		fmt.Fprintln(os.Stderr, "switchboard: no display (DISPLAY and WAYLAND_DISPLAY unset); running headless")
	}
	return runHeadless(ctx, cfg, version, lo)
}

// runHeadless runs the same hub and transports as the desktop app and serves the dashboard over
// loopback HTTP; the URL, with its token, goes to stderr.
func runHeadless(parent context.Context, cfg config.Config, version string, lo launchOptions) error {
	ctx, stop := SignalContext(parent)
	defer stop()
	if err := ResolveClientToken(&cfg); err != nil {
		return err
	}
	st, err := BuildStack(cfg, version, StackOptions{LogSink: os.Stderr, WithHub: true, StartIDE: true, EagerServers: true, ProjectSource: lo.project.Source})
	if err != nil {
		return err
	}
	defer st.CloseBounded()
	// The terminal gets what a person needs; every tool call goes to the audit log.
	fmt.Fprintf(os.Stderr, "switchboard: tool calls are audited to %s (the dashboard's Activity view shows them live)\n", filepath.Join(st.Config.LogDir(), "audit.log"))
	if err := st.StartDefaultTransports(); err != nil {
		return err
	}
	token, ln, err := dashboardEndpoint(cfg)
	if err != nil {
		return err
	}
	srv := mcp.NewHTTPServer(newDashboardServer(NewController(st, version), token).Handler())
	go func() { // owned by this function: srv.Shutdown below ends it
		if err := srv.Serve(ln); err != nil && err != http.ErrServerClosed {
			st.Logger.Error("dashboard server", "error", err)
		}
	}()
	for _, t := range st.Transports.Status() {
		if t.Running {
			fmt.Fprintf(os.Stderr, "switchboard: %s on %s\n", t.Name, t.URL)
		}
	}
	st.AnnounceProject(os.Stderr, "the dashboard")
	fmt.Fprintf(os.Stderr, "switchboard: dashboard at http://%s/?token=%s\n", ln.Addr(), token)
	ReleaseStartupMemory()
	<-ctx.Done()
	fmt.Fprintln(os.Stderr, "switchboard: shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return srv.Shutdown(sctx)
}

// dashboardEndpoint is the headless dashboard's token and listener: the configured ones, else
// the kept token and the default port, so the URL stays the same from one start to the next.
// Only the default port gives way (to a free one, with a warning) when something else holds it;
// a configured address that cannot be bound is an error.
func dashboardEndpoint(cfg config.Config) (string, net.Listener, error) {
	token := cfg.Dashboard.Token
	if token == "" {
		t, _, err := config.LoadOrCreateToken(config.DashboardTokenPath())
		if err != nil {
			return "", nil, fmt.Errorf("dashboard token: %w", err)
		}
		token = t
	}
	ln, err := net.Listen("tcp", cfg.Dashboard.Addr)
	if err != nil && cfg.Dashboard.Addr == config.DefaultDashboardAddr {
		fmt.Fprintf(os.Stderr, "switchboard: warning: the dashboard's usual address %s is taken (%v); using a free port this time. Set [dashboard] addr to choose one.\n", cfg.Dashboard.Addr, err)
		ln, err = net.Listen("tcp", "127.0.0.1:0")
	}
	if err != nil {
		return "", nil, fmt.Errorf("dashboard listen %s: %w (set [dashboard] addr or SWITCHBOARD_DASHBOARD_ADDR)", cfg.Dashboard.Addr, err)
	}
	return token, ln, nil
}

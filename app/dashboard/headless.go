package dashboard

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/switchboard-hub/switchboard/app"
	"github.com/switchboard-hub/switchboard/internal/config"
	mcptransport "github.com/switchboard-hub/switchboard/mcp/transport"
)

// Run is headless mode: it runs the same hub and transports as the desktop app and serves the
// dashboard over loopback HTTP until ctx ends or a signal arrives; the URL, with its token, goes
// to stderr. projectSource is where cfg.Workspace came from (app.ResolveProject).
func Run(parent context.Context, cfg config.Config, version string, projectSource string) error {
	ctx, stop := app.SignalContext(parent)
	defer stop()
	if err := app.ResolveClientToken(&cfg); err != nil {
		return err
	}
	st, err := app.BuildStack(cfg, version, app.StackOptions{LogSink: os.Stderr, WithHub: true, StartIDE: true, EagerServers: true, ProjectSource: projectSource})
	if err != nil {
		return err
	}
	defer st.CloseBounded()
	// The terminal gets what a person needs; every tool call goes to the audit log.
	fmt.Fprintf(os.Stderr, "switchboard: tool calls are audited to %s (the dashboard's Activity view shows them live)\n", filepath.Join(st.Config.LogDir(), "audit.log"))
	if err := st.StartDefaultTransports(); err != nil {
		return err
	}
	token, ln, err := Listen(cfg)
	if err != nil {
		return err
	}
	srv := mcptransport.NewHTTPServer(NewServer(app.NewController(st, version), token).Handler())
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
	url := fmt.Sprintf("http://%s/?token=%s", ln.Addr(), token)
	st.SetDashboardURL(url) // a launch of the desktop app meanwhile is sent here (app.HandOff)
	fmt.Fprintf(os.Stderr, "switchboard: dashboard at %s\n", url)
	app.ReleaseStartupMemory()
	<-ctx.Done()
	fmt.Fprintln(os.Stderr, "switchboard: shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return srv.Shutdown(sctx)
}

// Listen returns the headless dashboard's token and listener: the configured ones, else
// the kept token and the default port, so the URL stays the same from one start to the next.
// Only the default port gives way (to a free one, with a warning) when something else holds it;
// a configured address that cannot be bound is an error.
func Listen(cfg config.Config) (string, net.Listener, error) {
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

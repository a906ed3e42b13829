package app

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/switchboard-hub/switchboard/internal/config"
	"github.com/switchboard-hub/switchboard/mcp"
)

// What every mode does to launch a hub: stop on a signal, the client token, the default
// transports, the project folder on the terminal.

// SignalContext is parent (Background when nil), also ended by SIGINT or SIGTERM: the context of
// a mode that runs until the user stops it.
func SignalContext(parent context.Context) (context.Context, context.CancelFunc) {
	if parent == nil {
		parent = context.Background()
	}
	return signal.NotifyContext(parent, syscall.SIGINT, syscall.SIGTERM)
}

// ResolveClientToken fills the HTTP bearer token and the TCP token that are not configured
// (config file, SWITCHBOARD_TOKEN, SWITCHBOARD_TCP_TOKEN) with the client token kept in the config
// dir, creating it on first use, so configured clients keep working across restarts.
func ResolveClientToken(cfg *config.Config) error {
	if cfg.HTTP.Token != "" && cfg.TCP.Token != "" {
		return nil
	}
	path := config.TokenPath()
	t, created, err := config.LoadOrCreateToken(path)
	if err != nil {
		return err
	}
	if created {
		fmt.Fprintf(os.Stderr, "switchboard: created the client token in %s (`switchboard token` prints it)\n", path)
	}
	if cfg.HTTP.Token == "" {
		cfg.HTTP.Token = t
	}
	if cfg.TCP.Token == "" {
		cfg.TCP.Token = t
	}
	return nil
}

// StartDefaultTransports opens what the desktop and headless modes open by default: the hub and
// the Unix socket, plus TCP and HTTP when the config switches them on.
func (st *Stack) StartDefaultTransports() error {
	if err := st.Transports.Start(mcp.TransportWS); err != nil {
		return err
	}
	if st.Config.Unix.Enabled {
		if err := st.Transports.Start(mcp.TransportUnix); err != nil {
			return err
		}
	}
	if st.Config.TCP.Enabled {
		if err := st.Transports.Start(mcp.TransportTCP); err != nil {
			return err
		}
	}
	if st.Config.HTTP.Enabled {
		if err := st.Transports.Start(mcp.TransportHTTP); err != nil {
			return err
		}
	}
	for _, t := range st.Transports.Status() {
		if t.Running {
			st.note.Info("listening", "transport", t.Name, "url", t.URL)
		}
	}
	return nil
}

// AnnounceProject tells the terminal (w) which project folder the hub serves, or that none is
// chosen yet and where to choose one (where: "the dashboard", "the window or the tray").
func (st *Stack) AnnounceProject(w io.Writer, where string) {
	p := st.Project()
	if p.Dir == "" {
		fmt.Fprintf(w, "switchboard: no project folder chosen yet: choose one in %s (tools that work in it refuse until then), or start with --workspace DIR\n", where)
		return
	}
	fmt.Fprintf(w, "switchboard: project folder %s (%s)\n", p.Dir, p.Source)
}

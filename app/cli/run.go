package cli

import (
	"context"
	"fmt"
	"os"

	"github.com/switchboard-hub/switchboard/app"
	"github.com/switchboard-hub/switchboard/app/dashboard"
	"github.com/switchboard-hub/switchboard/app/desktop"
	"github.com/switchboard-hub/switchboard/internal/config"
)

// hasDisplay reports whether a graphical session is reachable.
func hasDisplay() bool { return config.ReadEnv().HasDisplay() }

// launchOptions are the root command's flags for the desktop app.
type launchOptions struct {
	hidden bool // --hidden: start in the tray, window hidden (when a tray host shows the icon)
	// workspaceFrom is where the config's workspace came from (WorkspaceSource): flag,
	// environment, config file, or "" when none is given.
	workspaceFrom string
}

// runApp starts the desktop app when this is a desktop build with a display, else headless mode
// (the dashboard over loopback HTTP).
func runApp(ctx context.Context, cfg config.Config, version string, lo launchOptions) error {
	cwd, _ := os.Getwd()
	project := app.ResolveProject(cfg, lo.workspaceFrom, cwd, app.UserHome())
	cfg.Workspace = project.Dir
	if project.Warning != "" {
		fmt.Fprintf(os.Stderr, "switchboard: warning: %s\n", project.Warning)
	}
	if desktop.Built && hasDisplay() {
		return desktop.Run(ctx, cfg, version, desktop.Options{Hidden: lo.hidden, ProjectSource: project.Source})
	}
	if desktop.Built {
		fmt.Fprintln(os.Stderr, "switchboard: no display (DISPLAY and WAYLAND_DISPLAY unset); running headless")
	}
	return dashboard.Run(ctx, cfg, version, project.Source)
}

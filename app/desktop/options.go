package desktop

// Options are how the command line starts the desktop app (Run).
type Options struct {
	Hidden bool // --hidden: start in the tray, window hidden (when a tray host shows the icon)
	// ProjectSource is where the project folder (cfg.Workspace) came from: one of the
	// ProjectFrom* values (ResolveProject).
	ProjectSource string
}

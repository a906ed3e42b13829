// Package frontend embeds the built dashboard (frontend/dist, produced by `npm run build`).
//
// A clean clone holds only dist/.gitkeep, so Go builds and tests work without Node; the desktop
// and headless dashboards then show a page that says how to build the real one.
package frontend

import (
	"embed"
	"io/fs"
)

//go:embed all:dist
var dist embed.FS

// Dist returns the built dashboard files rooted at dist/.
func Dist() fs.FS {
	sub, err := fs.Sub(dist, "dist")
	if err != nil {
		panic(err) // the embed pattern guarantees dist exists
	}
	return sub
}

// Built reports whether dist holds a real build (an index.html).
func Built() bool {
	_, err := fs.Stat(Dist(), "index.html")
	return err == nil
}

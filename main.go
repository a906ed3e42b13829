// Command switchboard is the desktop MCP hub. All logic lives in app/, mcp/ and internal/; the
// command line (app/cli) starts the front end asked for.
package main

import (
	"os"
	"runtime/debug"

	"github.com/switchboard-hub/switchboard/app/cli"
)

// version is set at build time: -ldflags "-X main.version=v1.2.3".
var version = "dev"

func main() {
	// A tool call makes 50-100 KiB of short-lived garbage against a heap of a few MiB, so the
	// default GOGC=100 collects after a handful of calls. 400 trades a few MiB of memory for a
	// collector that stays out of the request path (docs/benchmarks.md). GOGC still wins. The
	// start-up garbage, which an idle hub would otherwise keep, is given back once the stack is up
	// (app.ReleaseStartupMemory in app/memory.go).
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	os.Exit(cli.Execute(version))
}

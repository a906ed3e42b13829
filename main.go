// Command switchboard is the desktop MCP hub. All logic lives in app/, mcp/ and internal/.
package main

import (
	"os"

	"github.com/switchboard-hub/switchboard/app"
)

// version is set at build time: -ldflags "-X main.version=v1.2.3".
var version = "dev"

func main() { os.Exit(app.Execute(version)) }

package app

import (
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/mcp"
	"github.com/switchboard-hub/switchboard/mcp/ide"
)

// Catalogue lists every tool a hub can serve, from the declarations alone (mcp.Catalogue with
// the IDE bridge's group): what `switchboard tools --markdown` documents (docs/tools.md),
// without building a hub, opening a store or reaching a backend.
func Catalogue() []*sdk.Tool {
	var out []*sdk.Tool
	for _, g := range mcp.Catalogue(ide.Tools()) {
		out = append(out, g.Defs()...)
	}
	return out
}

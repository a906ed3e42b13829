package cli

import (
	"github.com/switchboard-hub/switchboard/internal/code"
	"github.com/switchboard-hub/switchboard/internal/config"
)

// codeChecks: one line per language server code intelligence can use, found on PATH or as
// [code.servers] configures it, with how to install a missing one. A missing server is a
// warning: only that language goes without code intelligence.
func codeChecks(cfg config.Config) []check {
	var out []check
	for _, c := range code.CheckServers(cfg.Code.Servers) {
		ck := check{name: "lsp " + c.Language, ok: c.OK, optional: true, detail: c.Detail}
		switch {
		case c.OK:
			ck.detail = c.Detail + " (code intelligence for " + c.Language + ")"
		case c.Command != "":
			ck.detail = c.Detail + ": code intelligence for " + c.Language + " files is off"
			ck.fix = c.Fix
		default:
			ck.detail = c.Language + " language server not found: code intelligence for " + c.Language + " files is off"
			ck.fix = c.Fix
		}
		out = append(out, ck)
	}
	return out
}

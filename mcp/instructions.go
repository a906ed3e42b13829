package mcp

import (
	"context"
	"fmt"
	"slices"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Instructions is the text clients get in initialize (and server/discover): it names only the
// toolsets served at that moment, so a model is never told about tools it cannot call.
func (s *Service) Instructions() string { return s.instructionsFor(s.modes.Load().mode) }

// instructionsFor is Instructions for a session in tools mode mode.
func (s *Service) instructionsFor(mode string) string {
	var groups []string
	for _, ts := range s.Toolsets() {
		switch {
		case !ts.Enabled || len(ts.Tools) == 0:
		case mode != ToolsModeFull:
			// Few tools are listed: say what there is to find (tools_search), not how each
			// tool is spelled, and keep the text the same whatever the number of servers.
			groups = append(groups, ts.Name)
		default:
			groups = append(groups, fmt.Sprintf("%s (%s)", ts.Title, strings.Join(servedPatterns(ts), ", ")))
		}
	}
	var b strings.Builder
	b.WriteString("Switchboard is a hub shared by every connected client: they see the same workspace")
	if slices.Contains(s.ActiveToolsets(), "process") {
		b.WriteString(" and the same process table (a process one client starts, all can read and stop)")
	}
	b.WriteString(". Paths are relative to the workspace root and cannot leave it.")
	if len(groups) == 0 {
		b.WriteString(" No tools are enabled; the user can switch toolsets on in the dashboard or with --toolsets.")
		return b.String()
	}
	if mode != ToolsModeFull {
		b.WriteString(" Toolsets and servers: ")
		b.WriteString(strings.Join(groups, ", "))
		b.WriteString(".")
		b.WriteString(s.modesInstructions(mode))
		return b.String()
	}
	b.WriteString(" Tools: ")
	b.WriteString(strings.Join(groups, "; "))
	b.WriteString(".")
	b.WriteString(s.up.Instructions())
	if after := s.tasks.threshold(false); after > 0 {
		fmt.Fprintf(&b, " A call still running after %s is answered with a task_id while it goes on: collect its result with tasks_get.", after)
	}
	return b.String()
}

// instructionsMiddleware replaces the fixed instructions go-sdk sends with the current ones.
func (s *Service) instructionsMiddleware(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		res, err := next(ctx, method, req)
		switch r := res.(type) {
		case *sdk.InitializeResult:
			r.Instructions = s.instructionsFor(s.sessionMode(ctx))
		case *sdk.DiscoverResult:
			r.Instructions = s.instructionsFor(s.sessionMode(ctx))
		}
		return res, err
	}
}

// servedPatterns names a toolset's served tools compactly: "file_*" for names that share a prefix
// with another served tool of the set, then the whole names of the rest (exec), each in
// registration order.
func servedPatterns(ts ToolsetStatus) []string {
	prefix := func(name string) string {
		if i := strings.IndexByte(name, '_'); i > 0 {
			return name[:i+1]
		}
		return name
	}
	count := map[string]int{}
	for _, name := range ts.Tools {
		count[prefix(name)]++
	}
	var groups, single []string
	seen := map[string]bool{}
	for _, name := range ts.Tools {
		p := prefix(name)
		switch {
		case count[p] == 1:
			single = append(single, name)
		case !seen[p]:
			seen[p] = true
			groups = append(groups, p+"*")
		}
	}
	return append(groups, single...)
}

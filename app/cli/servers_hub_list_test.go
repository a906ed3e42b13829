package cli

import (
	"strings"
	"testing"

	"github.com/switchboard-hub/switchboard/app"
	"github.com/switchboard-hub/switchboard/internal/upstream"
)

// TestServersListNamesAHubAndItsMachine: `servers list` shows a server that is another
// Switchboard hub as such, with the machine it runs on (the status's hub field, which
// TestHubAsAnotherHubsServer sees filled by a real hub); other servers read as before.
func TestServersListNamesAHubAndItsMachine(t *testing.T) {
	var b strings.Builder
	printServerList(&b, app.ServerList{Servers: []upstream.Status{
		{Name: "workstation", State: upstream.StateRunning, CommandApproved: true, Approved: true, Command: "https://workstation:9101/mcp", Hub: &upstream.HubInfo{Machine: "workstation"}, Tools: []upstream.ToolStatus{}},
		{Name: "other", State: upstream.StateRunning, CommandApproved: true, Approved: true, Command: "https://example.com/mcp", Tools: []upstream.ToolStatus{}},
	}})
	lines := strings.Split(b.String(), "\n")
	if !strings.Contains(lines[1], "https://workstation:9101/mcp (Switchboard hub on workstation)") {
		t.Errorf("the hub's line: %q", lines[1])
	}
	if strings.Contains(lines[2], "Switchboard hub") {
		t.Errorf("another server reads as a hub: %q", lines[2])
	}
}

package mcp

import (
	"strings"
	"testing"

	"github.com/switchboard-hub/switchboard/internal/audit"
	"github.com/switchboard-hub/switchboard/internal/policy"
	"github.com/switchboard-hub/switchboard/mcp/proxy"
	"github.com/switchboard-hub/switchboard/mcp/tools"
)

// TestPolicyRewrittenToolsAreTheHubsRewrites ties internal/policy's list of names a rule never
// sees (policy.RewrittenTools, behind the warning `policy check` and the hub give) to what the
// hub does: every listed name is the tool-search call the hub rewrites, and a deny rule on it
// really never matches — the servers_call goes through, decided as the server tool it names —
// while a rule naming that tool as <server>__<tool>, as the warning says, denies it.
func TestPolicyRewrittenToolsAreTheHubsRewrites(t *testing.T) {
	for _, n := range policy.RewrittenTools() {
		if n != proxy.ToolServersCall && n != tools.ToolToolsCall {
			t.Errorf("policy.RewrittenTools() lists %q, which the hub does not rewrite (only %s and %s)", n, proxy.ToolServersCall, tools.ToolToolsCall)
		}
	}
	if _, ok := policy.Rewritten(tools.ToolToolsCall); !ok {
		t.Fatalf("policy.Rewritten(%q) = false: rules on it would not be warned about", tools.ToolToolsCall)
	}
	if _, ok := policy.Rewritten(proxy.ToolServersCall); !ok {
		t.Fatalf("policy.Rewritten(%q) = false: rules on it would not be warned about", proxy.ToolServersCall)
	}
	if _, ok := policy.Rewritten(proxy.ToolServersSearch); ok {
		t.Fatalf("%s is decided by its own name; it must not be listed", proxy.ToolServersSearch)
	}

	p, err := policy.Compile(policy.Config{Rules: []policy.RuleSpec{
		{Tool: proxy.ToolServersCall, Action: "deny"},
		{Tool: "fixture__write-note", Action: "deny"},
		{Tool: tools.ToolToolsCall, Action: "deny"},
	}}, policy.RootsConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Warnings) != 2 || !strings.Contains(p.Warnings[0], "policy.rules[1].tool") || !strings.Contains(p.Warnings[1], "policy.rules[3].tool") {
		t.Fatalf("warnings: %q", p.Warnings)
	}
	s := fixtureHub(t, WithAudit(audit.Discard()), WithUpstreamToolSearch(true), WithPolicy(policy.NewStore("", p), policy.NewBroker()))
	cs := connect(t, s)
	if msg := call(t, cs, proxy.ToolServersCall, map[string]any{"name": "fixture__greet", "arguments": map[string]any{"name": "x"}}, nil); msg != "" {
		t.Fatalf("the rule on %s matched after all: %q", proxy.ToolServersCall, msg)
	}
	if msg := call(t, cs, proxy.ToolServersCall, map[string]any{"name": "fixture__write-note", "arguments": map[string]any{"text": "x"}}, nil); !strings.Contains(msg, `denied by rule 2 (tool="fixture__write-note"`) {
		t.Fatalf("servers_call of fixture__write-note: %q", msg)
	}
	if msg := call(t, cs, tools.ToolToolsCall, map[string]any{"name": "fixture__greet", "arguments": map[string]any{"name": "x"}}, nil); msg != "" {
		t.Fatalf("the rule on %s matched after all: %q", tools.ToolToolsCall, msg)
	}
	if msg := call(t, cs, tools.ToolToolsCall, map[string]any{"name": "fixture__write-note", "arguments": map[string]any{"text": "x"}}, nil); !strings.Contains(msg, `denied by rule 2 (tool="fixture__write-note"`) {
		t.Fatalf("tools_call of fixture__write-note: %q", msg)
	}
}

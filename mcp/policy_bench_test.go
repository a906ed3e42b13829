//go:build unix

package mcp_test

import (
	"fmt"
	"testing"

	"github.com/switchboard-hub/switchboard/internal/policy"
	"github.com/switchboard-hub/switchboard/mcp"
)

// BenchmarkToolCallPolicy measures what the policy middleware costs on the hot path: the same
// file_exists call over the Unix socket with no rules, and with 20 rules none of which match
// (every call walks them all, arguments included, before the default allows it).
func BenchmarkToolCallPolicy(b *testing.B) {
	var specs []policy.RuleSpec
	for i := range 20 {
		specs = append(specs, policy.RuleSpec{Tool: fmt.Sprintf("tool_%d_*", i), Action: "deny"},
			policy.RuleSpec{Tool: "file_*", Args: map[string]string{"path": fmt.Sprintf("secret-%d/*", i)}, Action: "ask"})
	}
	specs = specs[:20]
	for _, tc := range []struct {
		name  string
		rules []policy.RuleSpec
	}{{"no-rules", nil}, {"20-rules", specs}} {
		b.Run(tc.name, func(b *testing.B) {
			p, err := policy.Compile(policy.Config{Rules: tc.rules}, policy.RootsConfig{})
			if err != nil {
				b.Fatal(err)
			}
			c := startBenchServer(b, []mcp.Option{mcp.WithPolicy(policy.NewStore("", p), policy.NewBroker())}, benchWorkspace(b))
			b.ReportAllocs()
			for b.Loop() {
				if err := c.call("tools/call", `{"name":"file_exists","arguments":{"path":"small.txt"}}`); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

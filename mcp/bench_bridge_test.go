package mcp

import (
	"context"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkBridgeElicitation measures the bridge's cost for one question during a call: a tool
// call whose upstream asks an elicitation that the client answers, for each pair of upstream
// era and client era, on the hub's Unix socket (go-sdk v1.8 clients; upstreams of
// bridge_upstreams_test.go over loopback HTTP). The reference is 2025_upstream/2025_client: the
// same question asked directly by a 2025-era upstream of a 2025-era client through the hub
// (a server request relayed during the call). docs/benchmarks.md has the figures:
//
//	go test ./mcp -run '^$' -bench BenchmarkBridgeElicitation -benchtime 300x -count 6
func BenchmarkBridgeElicitation(b *testing.B) {
	h := newBridgeHub(b)
	for _, up := range []struct{ name, server string }{{"2025_upstream", "legacy"}, {"2026_upstream", "modern"}} {
		for _, cl := range []struct{ name, protocol string }{{"2025_client", "2025-11-25"}, {"2026_client", ""}} {
			b.Run(up.name+"/"+cl.name, func(b *testing.B) {
				c := dialBridge(b, h.sock, "bench-"+cl.name, cl.protocol, clientCaps{elicit: true, noRoots: true})
				params := &sdk.CallToolParams{Name: up.server + "__ask", Arguments: map[string]any{"question": "go on?"}}
				want := "answered: accept yes from bench-" + cl.name
				ctx := context.Background()
				for b.Loop() {
					res, err := c.cs.CallTool(ctx, params)
					if err != nil || toolText(res) != want {
						b.Fatalf("%v %q", err, toolText(res))
					}
				}
			})
		}
	}
}

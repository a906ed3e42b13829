package mcp

import (
	"context"
	"slices"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkBridgeElicitation measures the bridge's cost for one question during a call: a tool
// call whose upstream asks an elicitation that the client answers, on the hub's Unix socket
// (go-sdk v1.8 clients; the upstreams of bridge_upstreams_test.go over loopback HTTP). The
// reference is the same question asked directly by a 2025-era upstream of a 2025-era client
// through the hub (a server request relayed during the call). Each iteration makes one
// reference call and one call of the measured pair, alternately, so a shared machine's load
// weighs on both alike; the metrics are the medians of each and their ratio.
// docs/benchmarks.md has the figures:
//
//	go test ./mcp -run '^$' -bench BenchmarkBridgeElicitation -benchtime 300x -count 3
func BenchmarkBridgeElicitation(b *testing.B) {
	h := newBridgeHub(b)
	ref := dialBridge(b, h.sock, "bench-reference", "2025-11-25", clientCaps{elicit: true, noRoots: true})
	refParams := &sdk.CallToolParams{Name: "legacy__ask", Arguments: map[string]any{"question": "go on?"}}
	for _, pair := range []struct {
		name, server, protocol string
	}{
		{"2025_upstream/2025_client", "legacy", "2025-11-25"},
		{"2025_upstream/2026_client", "legacy", ""},
		{"2026_upstream/2025_client", "modern", "2025-11-25"},
		{"2026_upstream/2026_client", "modern", ""},
	} {
		b.Run(pair.name, func(b *testing.B) {
			c := dialBridge(b, h.sock, "bench-client", pair.protocol, clientCaps{elicit: true, noRoots: true})
			params := &sdk.CallToolParams{Name: pair.server + "__ask", Arguments: map[string]any{"question": "go on?"}}
			ctx := context.Background()
			call := func(cs *sdk.ClientSession, p *sdk.CallToolParams, want string) time.Duration {
				start := time.Now()
				res, err := cs.CallTool(ctx, p)
				if err != nil || toolText(res) != want {
					b.Fatalf("%s: %v %q", p.Name, err, toolText(res))
				}
				return time.Since(start)
			}
			var refs, got []time.Duration
			for b.Loop() {
				refs = append(refs, call(ref.cs, refParams, "answered: accept yes from bench-reference"))
				got = append(got, call(c.cs, params, "answered: accept yes from bench-client"))
			}
			mr, mg := median(refs), median(got)
			b.ReportMetric(float64(mr.Microseconds()), "ref-µs")
			b.ReportMetric(float64(mg.Microseconds()), "µs")
			b.ReportMetric(float64(mg)/float64(mr), "ratio")
		})
	}
}

func median(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

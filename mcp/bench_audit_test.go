//go:build unix

package mcp_test

import (
	"testing"
)

// BenchmarkMutatingToolCall measures a small file_write (a tool audited at Security level) with the
// product configuration: since the hardening work it writes and flushes a "started" audit line
// before the call runs, then batches the outcome line. Compare with BenchmarkToolCall/product.
func BenchmarkMutatingToolCall(b *testing.B) {
	for _, cfg := range benchConfigs {
		b.Run(cfg.name+"/file_write_16B", func(b *testing.B) {
			c := startBenchServer(b, cfg.opts(b, b.TempDir()), benchWorkspace(b))
			params := `{"name":"file_write","arguments":{"path":"out.txt","content":"sixteen bytes..."}}`
			b.ReportAllocs()
			for b.Loop() {
				if err := c.call("tools/call", params); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

package code

import (
	"testing"
	"time"
)

// BenchmarkWarmGopls measures warm calls on this repository through the pool: the server is
// started and has loaded the module before the timer runs, as it is for a client once the
// workspace's first call has been answered. Start-up is reported as its own metric.
//
//	go test -run '^$' -bench WarmGopls -benchtime 50x ./internal/code
func BenchmarkWarmGopls(b *testing.B) {
	requireServer(b, Go)
	root := repoRoot(b)
	p := newTestPool(b, -1)
	ctx := ctxT(b)
	// patch.Apply as rename.go calls it: a definition in another package, and its references.
	tg := at(b, root, "internal/code/rename.go", "patch.Apply(", "Apply")
	start := time.Now()
	if _, err := p.Definition(ctx, root, tg); err != nil {
		b.Fatal(err)
	}
	cold := time.Since(start).Seconds()
	b.Run("definition", func(b *testing.B) {
		for b.Loop() {
			res, err := p.Definition(ctx, root, tg)
			if err != nil || len(res.Locations) != 1 {
				b.Fatal(res, err)
			}
		}
		b.ReportMetric(cold, "cold-start-s") // after the loop: b.Loop resets metrics
	})
	b.Run("references", func(b *testing.B) {
		for b.Loop() {
			res, err := p.References(ctx, root, tg, false)
			if err != nil || res.Count == 0 {
				b.Fatal(res, err)
			}
		}
		if st := p.Status(); len(st) == 1 {
			b.ReportMetric(float64(st[0].MemoryBytes)/(1<<20), "gopls-MiB")
		}
	})
}

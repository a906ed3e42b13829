package code

import (
	"context"
	"testing"
	"time"

	"github.com/switchboard-hub/switchboard/internal/procgroup"
)

// settle waits (at most 3 minutes) until group pgid is idle.
func settle(b *testing.B, pgid int) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := procgroup.WaitIdle(ctx, pgid); err != nil {
		b.Logf("gopls never settled (%v); figures include its background work", err)
	}
}

// BenchmarkWarmGopls measures warm calls on this repository through the pool: the server is
// started and has loaded the module before the timer runs, as it is for a client once the
// workspace's first call has been answered and the server has settled. Start-up (to the first
// answer) is reported as its own metric.
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
	// gopls goes on checking the whole module in the background after its first answer,
	// without reporting progress; the timed calls start once its process group has used no CPU
	// for a second.
	settle(b, p.Status()[0].PID)
	// The same request straight to gopls on the pool's connection: what the pool adds (path
	// checks, reading the file and comparing it with the server's copy, previews) is the
	// difference.
	b.Run("definition-direct", func(b *testing.B) {
		c, err := p.newCall(root)
		if err != nil {
			b.Fatal(err)
		}
		defer c.close()
		r, err := c.resolve(ctx, tg)
		if err != nil {
			b.Fatal(err)
		}
		defer r.s.release()
		for b.Loop() {
			ls, err := r.s.client.Definition(ctx, r.uri, r.pos)
			if err != nil || len(ls) != 1 {
				b.Fatal(ls, err)
			}
		}
	})
	b.Run("definition", func(b *testing.B) {
		for b.Loop() {
			res, err := p.Definition(ctx, root, tg)
			if err != nil || len(res.Locations) != 1 {
				b.Fatal(res, err)
			}
		}
		b.ReportMetric(cold, "cold-start-s") // after the loop: b.Loop resets metrics
	})
	// references-direct: the references request straight to gopls, as definition-direct.
	b.Run("references-direct", func(b *testing.B) {
		c, err := p.newCall(root)
		if err != nil {
			b.Fatal(err)
		}
		defer c.close()
		r, err := c.resolve(ctx, tg)
		if err != nil {
			b.Fatal(err)
		}
		defer r.s.release()
		for b.Loop() {
			ls, err := r.s.client.References(ctx, r.uri, r.pos, false)
			if err != nil || len(ls) == 0 {
				b.Fatal(ls, err)
			}
		}
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

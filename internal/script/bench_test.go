package script

import (
	"context"
	"encoding/json"
	"syscall"
	"testing"
	"time"
)

// cpuTime is the process's user+system CPU time. The benchmarks report it per operation beside
// the wall time because the 2 shared cores are often busy with other work: CPU time is what the
// sandbox itself costs, wall time what a caller waits.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// noopCaller answers every call at once, so a benchmark measures the sandbox alone.
type noopCaller struct{}

func (noopCaller) Call(context.Context, string, json.RawMessage) (CallResult, error) {
	return CallResult{Structured: json.RawMessage(`{"ok":true}`)}, nil
}

func benchRun(b *testing.B, code string, tools []string) {
	b.ReportAllocs()
	start := cpuTime()
	for b.Loop() {
		if _, err := Run(context.Background(), code, tools, noopCaller{}, Limits{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
}

// BenchmarkColdStart is a fresh runtime (globals, guards, console, tools) and an empty script:
// the fixed cost of every script_run.
func BenchmarkColdStart(b *testing.B) { benchRun(b, ``, nil) }

// BenchmarkColdStart50Tools is the same with 50 tools offered, about a session's catalogue.
func BenchmarkColdStart50Tools(b *testing.B) {
	names := make([]string, 50)
	for i := range names {
		names[i] = "tool_" + string(rune('a'+i%26)) + string(rune('a'+i/26))
	}
	benchRun(b, ``, names)
}

// BenchmarkInnerCalls1000 is 1,000 sequential awaited calls; (this − ColdStart)/1000 is the
// sandbox's cost per inner call (issue 36's goal: ≤ 50 µs for the whole hub path).
func BenchmarkInnerCalls1000(b *testing.B) {
	benchRun(b, `for (let i = 0; i < 1000; i++) await tools.noop({i}); return 1`, []string{"noop"})
}

// BenchmarkInnerCalls1000Parallel is the same 1,000 calls through Promise.all (8 in flight).
func BenchmarkInnerCalls1000Parallel(b *testing.B) {
	benchRun(b, `const ps = []; for (let i = 0; i < 1000; i++) ps.push(tools.noop({i}));
return (await Promise.all(ps)).length`, []string{"noop"})
}

// BenchmarkDirectCalls1000 is the peer: the same 1,000 calls made by Go straight to the Caller,
// each on its own goroutine as Run does, without a script.
func BenchmarkDirectCalls1000(b *testing.B) {
	b.ReportAllocs()
	c := noopCaller{}
	ctx := context.Background()
	done := make(chan CallResult, 1)
	start := cpuTime()
	for b.Loop() {
		for i := 0; i < 1000; i++ {
			go func() {
				res, _ := c.Call(ctx, "noop", json.RawMessage(`{"i":1}`))
				done <- res
			}()
			var v any
			if err := json.Unmarshal((<-done).Structured, &v); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
}

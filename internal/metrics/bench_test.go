package metrics

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkRecord appends events with a small data map, as the MCP tool does.
//
//	go test -run '^$' -bench Record ./internal/metrics/
func BenchmarkRecord(b *testing.B) {
	s, err := Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	ev := Event{Type: "tool_call", AgentID: "agent-7", Repo: "core", Duration: 42 * time.Millisecond,
		Data: map[string]any{"tool": "file_read", "ok": true}}
	b.ReportAllocs()
	start := time.Now()
	for b.Loop() {
		if _, err := s.Record(ev); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "events/s")
}

// BenchmarkRecordParallel is Record from many goroutines on one Store.
func BenchmarkRecordParallel(b *testing.B) {
	s, err := Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	ev := Event{Type: "tool_call", AgentID: "agent-7", Repo: "core", Data: map[string]any{"tool": "file_read"}}
	b.ReportAllocs()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := s.Record(ev); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "events/s")
}

// BenchmarkQuery1M aggregates one million events spread over 30 day files
// (written once, directly, in Record's format). "streaming" is Query;
// "read+summarize" is the straightforward Read then Summarize, the baseline.
//
//	go test -run '^$' -bench Query1M -benchtime 5x ./internal/metrics/
func BenchmarkQuery1M(b *testing.B) {
	const total, days = 1_000_000, 30
	dir := b.TempDir()
	start := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	step := days * 24 * time.Hour / total
	types := []string{"tool_call", "build_completed", "test_failed", "session_started", "security_alert"}
	var (
		f   *os.File
		w   *bufio.Writer
		day string
	)
	flush := func() {
		if f == nil {
			return
		}
		if err := w.Flush(); err != nil {
			b.Fatal(err)
		}
		if err := f.Close(); err != nil {
			b.Fatal(err)
		}
	}
	for i := range total {
		ts := start.Add(time.Duration(i) * step)
		if d := ts.Format(dayLayout); d != day {
			flush()
			var err error
			if f, err = os.Create(filepath.Join(dir, d+fileExt)); err != nil {
				b.Fatal(err)
			}
			w, day = bufio.NewWriterSize(f, 1<<20), d
		}
		ev := Event{Type: types[i%len(types)], Timestamp: ts, AgentID: fmt.Sprintf("agent-%d", i%50), Repo: fmt.Sprintf("repo-%d", i%20)}
		if i%2 == 0 {
			ev.Duration = time.Duration(i%1000) * time.Millisecond
			ev.Data = map[string]any{"tool": "file_read", "bytes": i % 4096}
		}
		line, err := json.Marshal(ev)
		if err != nil {
			b.Fatal(err)
		}
		w.Write(line)
		w.WriteByte('\n')
	}
	flush()
	s, err := Open(dir)
	if err != nil {
		b.Fatal(err)
	}

	report := func(b *testing.B, began time.Time) {
		b.ReportMetric(float64(time.Since(began).Milliseconds())/float64(b.N), "ms/query")
		b.ReportMetric(float64(total*b.N)/time.Since(began).Seconds(), "events/s")
	}
	b.Run("streaming", func(b *testing.B) {
		b.ReportAllocs()
		began := time.Now()
		for b.Loop() {
			sum, err := s.Query(time.Time{})
			if err != nil || sum.Total != total || len(sum.Recent) != RecentLimit {
				b.Fatalf("query: %v total %d", err, sum.Total)
			}
		}
		report(b, began)
	})
	b.Run("read+summarize", func(b *testing.B) {
		b.ReportAllocs()
		began := time.Now()
		for b.Loop() {
			events, err := s.Read(time.Time{})
			if err != nil {
				b.Fatal(err)
			}
			if sum := Summarize(events); sum.Total != total {
				b.Fatalf("total %d", sum.Total)
			}
		}
		report(b, began)
	})
}

package wshub

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// BenchmarkFanout100 publishes b.N events to one channel with 100 real
// WebSocket subscribers on loopback and measures delivery throughput and
// publish-to-receive latency. The producer keeps at most `window` messages
// in flight, so window=1 measures unloaded latency (each event reaches all
// 100 clients before the next is sent) and window=64 measures throughput
// with latency under load; neither overflows the client queues. The
// batch=off runs are the baseline: plain gorilla/websocket, one write
// system call per frame.
//
//	go test -run '^$' -bench Fanout100 -benchtime 3000x ./internal/wshub/
func BenchmarkFanout100(b *testing.B) {
	for _, window := range []int{1, 64} {
		for _, batch := range []bool{true, false} {
			name := fmt.Sprintf("window=%d/batch=%s", window, map[bool]string{true: "on", false: "off"}[batch])
			b.Run(name, func(b *testing.B) { benchFanout(b, 100, window, batch) })
		}
	}
}

func benchFanout(b *testing.B, clients, window int, batch bool) {
	h := New(Options{Token: testToken, QueueSize: 4 * window})
	h.unbatched = !batch
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = h.Shutdown(ctx)
	})
	if _, _, err := h.Start("127.0.0.1:0"); err != nil {
		b.Fatal(err)
	}

	type sample struct {
		Seq  int   `json:"seq"`
		Sent int64 `json:"sent"`
	}
	// counts[i] is client i's deliveries; a client reaching the producer's
	// target wakes it (no spinning, which would steal CPU from the 200
	// goroutines being measured). failed stops the producer if a client dies.
	counts := make([]atomic.Int64, clients)
	var target atomic.Int64
	wake := make(chan struct{}, 1)
	failed := make(chan struct{})
	var failOnce sync.Once
	fail := func(format string, args ...any) {
		b.Errorf(format, args...)
		failOnce.Do(func() { close(failed) })
	}
	latencies := make([][]time.Duration, clients)
	var readers sync.WaitGroup
	// Runs after the connections below are closed (cleanups run last-in
	// first-out), so no reader outlives the benchmark.
	b.Cleanup(readers.Wait)
	for i := range clients {
		conn, _, err := dialRaw(h.URL(), testToken, nil)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { conn.Close() })
		if err := conn.WriteMessage(websocket.TextMessage, []byte(`{"type":"subscribe","channel":"bench"}`)); err != nil {
			b.Fatal(err)
		}
		if _, frame, err := conn.ReadMessage(); err != nil || !bytes.Contains(frame, []byte(`"subscribed"`)) {
			b.Fatalf("subscribe: %v %s", err, frame)
		}
		latencies[i] = make([]time.Duration, 0, b.N)
		readers.Add(1)
		go func() {
			defer readers.Done()
			for n := 0; n < b.N; n++ {
				_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second))
				_, frame, err := conn.ReadMessage()
				if err != nil {
					fail("client %d after %d messages: %v", i, n, err)
					return
				}
				// Pull "sent" out by hand: a full JSON decode per delivery
				// would make the 100 clients, not the hub, the bottleneck.
				sent, ok := sentField(frame)
				if !ok {
					fail("client %d: no sent field in %s", i, frame)
					return
				}
				latencies[i] = append(latencies[i], time.Duration(time.Now().UnixNano()-sent))
				if counts[i].Add(1) == target.Load() {
					select {
					case wake <- struct{}{}:
					default:
					}
				}
			}
		}()
	}

	// waitAll blocks until every client has at least want deliveries.
	waitAll := func(want int64) bool {
		target.Store(want)
		for c := range counts {
			for counts[c].Load() < want {
				select {
				case <-wake:
				case <-failed:
					return false
				}
			}
		}
		return true
	}
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for i := range b.N {
		if !waitAll(int64(i + 1 - window)) {
			b.FailNow()
		}
		h.Publish("bench", TypeEvent, sample{Seq: i, Sent: time.Now().UnixNano()})
	}
	readers.Wait()
	elapsed := time.Since(start)
	b.StopTimer()

	var all []time.Duration
	for _, l := range latencies {
		all = append(all, l...)
	}
	if len(all) != b.N*clients {
		b.Fatalf("delivered %d of %d", len(all), b.N*clients)
	}
	slices.Sort(all)
	pct := func(p float64) float64 { return float64(all[int(p*float64(len(all)-1))].Microseconds()) }
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "msgs/s")
	b.ReportMetric(float64(b.N*clients)/elapsed.Seconds(), "deliveries/s")
	b.ReportMetric(pct(0.50), "p50-µs")
	b.ReportMetric(pct(0.99), "p99-µs")
	if st := h.Stats(); st.SlowDisconnects != 0 {
		b.Fatalf("slow disconnects during benchmark: %+v", st)
	}
}

func sentField(frame []byte) (int64, bool) {
	const key = `"sent":`
	i := bytes.Index(frame, []byte(key))
	if i < 0 {
		return 0, false
	}
	var v int64
	digits := 0
	for _, c := range frame[i+len(key):] {
		if c < '0' || c > '9' {
			break
		}
		v = v*10 + int64(c-'0')
		digits++
	}
	return v, digits > 0
}

// BenchmarkEncodeOnce is the per-publish cost the producer pays regardless
// of the subscriber count (the frame is encoded once and shared).
func BenchmarkEncodeOnce(b *testing.B) {
	h := New(Options{Token: testToken})
	data := map[string]any{"kind": "output", "stream": "stdout", "data": "line of process output\n", "offset": 12345}
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := h.encode(Message{Type: TypeEvent, Channel: "process:proc-1", Data: data}); !ok {
			b.Fatal("encode failed")
		}
	}
}

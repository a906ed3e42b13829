package mcp

import (
	"bufio"
	"context"
	"net/url"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/switchboard-hub/switchboard/internal/process"
	"github.com/switchboard-hub/switchboard/internal/wshub"
)

// vmHWM returns the process's peak resident set size in bytes (Linux).
func vmHWM(tb testing.TB) int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		tb.Skip("no /proc/self/status")
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	tb.Skip("VmHWM not found")
	return 0
}

// BenchmarkProcessOutput1GBPeakRSS runs a process that writes 1 GB through the whole hub: the
// process service captures it, the feed coalesces it onto the hub, and a live WebSocket client
// subscribed to the process channel receives it. It reports the hub's peak RSS growth, which must
// stay bounded (the output buffer keeps the tail only) however much the process writes.
func BenchmarkProcessOutput1GBPeakRSS(b *testing.B) {
	const total = 1 << 30
	for i := 0; i < b.N; i++ {
		h := wshub.New(wshub.Options{})
		procs := process.New(process.Options{})
		s, err := New(WithWorkspaceRoot(b.TempDir()), WithWSHub(h), WithProcessService(procs))
		if err != nil {
			b.Fatal(err)
		}
		addr, _, err := h.Start("127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		u := url.URL{Scheme: "ws", Host: addr, Path: "/ws", RawQuery: "token=" + url.QueryEscape(h.Token())}
		conn, _, err := websocket.DefaultDialer.Dial(u.String(), nil)
		if err != nil {
			b.Fatal(err)
		}
		var received int64
		done := make(chan struct{})
		go func() { // owned by this iteration: ends when conn is closed below
			defer close(done)
			for {
				_, msg, err := conn.ReadMessage()
				if err != nil {
					return
				}
				received += int64(len(msg))
			}
		}()
		// Reset the peak to the current RSS (Linux clear_refs "5") so only this run counts.
		_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
		base := vmHWM(b)
		start := time.Now()
		info, err := procs.Start(context.Background(), process.StartOptions{Command: "head", Args: []string{"-c", strconv.Itoa(total), "/dev/zero"}})
		if err != nil {
			b.Fatal(err)
		}
		conn.WriteJSON(map[string]string{"type": "subscribe", "channel": "process:" + info.ID})
		if _, err := procs.Wait(context.Background(), info.ID); err != nil {
			b.Fatal(err)
		}
		elapsed := time.Since(start)
		peak := vmHWM(b)
		conn.Close()
		<-done
		s.Shutdown(context.Background())
		b.ReportMetric(float64(peak-base)/(1<<20), "peakRSS-growth-MiB")
		b.ReportMetric(float64(peak)/(1<<20), "peakRSS-MiB")
		b.ReportMetric(float64(total)/(1<<20)/elapsed.Seconds(), "MiB/s")
	}
}

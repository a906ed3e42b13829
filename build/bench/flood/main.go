// Command flood measures what a client that pipelines large reads and never reads the replies does
// to a running hub (issue 9, item 2): the hub's peak RSS, and the latency of a second, well-behaved
// client meanwhile, against the same binary with no flood.
//
//	go run ./build/bench/flood --bin ./switchboard [--bin-before /tmp/before/switchboard]
//
// It starts `BIN serve --no-hub --tcp 127.0.0.1:PORT` on a workspace holding a 4 MiB file, then
// (1) measures a second client's file_exists latency alone, (2) opens the flooding connection
// (initialize plus --calls whole-file reads of the 4 MiB file, nothing read back) and measures the
// second client again while sampling the hub's RSS, and (3) closes the flooder and reads the RSS
// once the hub has settled. A hub whose RSS passes --rss-cap is killed (reported as "> cap").
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

type result struct {
	name                        string
	baseRSS, peakRSS, afterRSS  int64
	killed                      bool
	aloneP50, aloneP99          time.Duration
	floodP50, floodP99, floodMx time.Duration
	floodCalls                  int
}

func main() {
	bin := flag.String("bin", "", "switchboard binary to measure (required)")
	before := flag.String("bin-before", "", "optional second binary (e.g. built from main) measured in the same run")
	calls := flag.Int("calls", 100, "file_read calls the flooder pipelines")
	probes := flag.Int("probes", 200, "second-client calls per phase")
	rssCap := flag.Int64("rss-cap", 4<<30, "kill a hub whose RSS passes this many bytes")
	flag.Parse()
	if *bin == "" {
		fmt.Fprintln(os.Stderr, "flood: --bin is required")
		os.Exit(2)
	}
	bins := [][2]string{{"after", *bin}}
	if *before != "" {
		bins = append([][2]string{{"before", *before}}, bins...)
	}
	var results []result
	for _, b := range bins {
		r, err := run(b[0], b[1], *calls, *probes, *rssCap)
		if err != nil {
			fmt.Fprintf(os.Stderr, "flood: %s: %v\n", b[0], err)
			os.Exit(1)
		}
		results = append(results, r)
	}
	fmt.Printf("| binary | hub RSS before | peak RSS under flood | growth | RSS after the flooder left | 2nd client p50 / p99 alone | 2nd client p50 / p99 / max under flood |\n|---|---|---|---|---|---|---|\n")
	for _, r := range results {
		peak := mib(r.peakRSS)
		if r.killed {
			peak = "> " + peak + " (killed at the cap)"
		}
		fmt.Printf("| %s | %s | %s | %s | %s | %v / %v | %v / %v / %v (%d calls) |\n", r.name, mib(r.baseRSS), peak, mib(r.peakRSS-r.baseRSS), mib(r.afterRSS),
			r.aloneP50.Round(10*time.Microsecond), r.aloneP99.Round(10*time.Microsecond),
			r.floodP50.Round(10*time.Microsecond), r.floodP99.Round(10*time.Microsecond), r.floodMx.Round(time.Millisecond), r.floodCalls)
	}
}

func mib(b int64) string { return fmt.Sprintf("%d MiB", b>>20) }

func run(name, bin string, calls, probes int, rssCap int64) (result, error) {
	r := result{name: name}
	dir, err := os.MkdirTemp("", "sb-flood-")
	if err != nil {
		return r, err
	}
	defer os.RemoveAll(dir)
	ws := filepath.Join(dir, "ws")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		return r, err
	}
	line := strings.Repeat("0123456789abcdef", 63) + "\n" // 1 KiB lines
	if err := os.WriteFile(filepath.Join(ws, "big.txt"), []byte(strings.Repeat(line, 4096-1)), 0o644); err != nil {
		return r, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return r, err
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(bin, "serve", "--no-hub", "--tcp", addr, "--workspace", ws)
	cmd.Env = append(os.Environ(), "HOME="+dir, "XDG_CONFIG_HOME="+filepath.Join(dir, "cfg"), "XDG_DATA_HOME="+filepath.Join(dir, "data"),
		"XDG_RUNTIME_DIR="+dir, "SWITCHBOARD_IDE_URL=ws://127.0.0.1:1/ws", "MCP_ADDR=", "SWITCHBOARD_TOKEN=")
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		return r, err
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	var probe *sdk.ClientSession
	for deadline := time.Now().Add(20 * time.Second); ; {
		if probe, err = dial(addr); err == nil {
			break
		}
		if time.Now().After(deadline) {
			return r, fmt.Errorf("hub did not come up: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	defer probe.Close()
	ctx := context.Background()
	latencies := func(n int, stop <-chan struct{}) ([]time.Duration, error) {
		var out []time.Duration
		for i := 0; i < n; i++ {
			select {
			case <-stop:
				return out, nil
			default:
			}
			t := time.Now()
			cctx, cancel := context.WithTimeout(ctx, 60*time.Second)
			res, err := probe.CallTool(cctx, &sdk.CallToolParams{Name: "file_exists", Arguments: map[string]any{"path": "big.txt"}})
			cancel()
			if err != nil {
				return out, err
			}
			if res.IsError {
				return out, errors.New("file_exists failed")
			}
			out = append(out, time.Since(t))
			time.Sleep(5 * time.Millisecond)
		}
		return out, nil
	}
	// Warm up, then the second client alone.
	if _, err := latencies(50, nil); err != nil {
		return r, err
	}
	alone, err := latencies(probes, nil)
	if err != nil {
		return r, err
	}
	r.aloneP50, r.aloneP99, _ = pct(alone)
	r.baseRSS = rss(cmd.Process.Pid, "VmRSS")

	// The flood.
	flood, err := net.Dial("tcp", addr)
	if err != nil {
		return r, err
	}
	_ = flood.(*net.TCPConn).SetReadBuffer(64 << 10) // best effort: only a hint to the kernel

	go func() { // ends when flood is closed
		fmt.Fprintf(flood, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"flood","version":"1"}}}`+"\n"+`{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
		for i := 1; i <= calls; i++ {
			if _, err := fmt.Fprintf(flood, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"file_read","arguments":{"path":"big.txt"}}}`+"\n", i); err != nil {
				return
			}
		}
	}()
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			v := rss(cmd.Process.Pid, "VmRSS")
			r.peakRSS = max(r.peakRSS, v)
			if v > rssCap {
				r.killed = true
				_ = cmd.Process.Kill()
				close(stop)
				return
			}
			select {
			case <-time.After(10 * time.Millisecond):
			case <-stop:
				return
			}
		}
	}()
	stopLat := make(chan struct{})
	go func() { <-sampled; close(stopLat) }()
	under, lerr := latencies(probes, stopLat)
	if !r.killed {
		time.Sleep(2 * time.Second) // let every admitted read finish while the flooder still holds on
		close(stop)
	}
	<-sampled
	r.peakRSS = max(r.peakRSS, rss(cmd.Process.Pid, "VmHWM"))
	r.floodCalls = len(under)
	if len(under) > 0 {
		r.floodP50, r.floodP99, r.floodMx = pct(under)
	}
	flood.Close()
	if r.killed {
		return r, nil
	}
	if lerr != nil {
		return r, lerr
	}
	time.Sleep(8 * time.Second) // the Go scavenger returns freed memory within a few seconds
	r.afterRSS = rss(cmd.Process.Pid, "VmRSS")
	return r, nil
}

func dial(addr string) (*sdk.ClientSession, error) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "probe", Version: "1"}, nil).Connect(ctx, &sdk.IOTransport{Reader: c, Writer: c}, nil)
	if err != nil {
		c.Close()
	}
	return cs, err
}

func pct(d []time.Duration) (p50, p99, mx time.Duration) {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2], s[min(len(s)-1, len(s)*99/100)], s[len(s)-1]
}

// rss reads a field (VmRSS, VmHWM) of /proc/PID/status in bytes.
func rss(pid int, field string) int64 {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

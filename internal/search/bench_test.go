//go:build unix

package search

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// selfCPU is the user+system CPU time of this process so far.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkGrepGoroot compares Grep with ripgrep on $(go env GOROOT)/src, in the same run:
// wall time per full search (all matches, line and column), for a literal and for regexes with
// and without a required literal. ripgrep runs as a process with its output discarded, as an
// agent's tool would run it. Figures: docs/benchmarks.md.
//
//	go test -run '^$' -bench GrepGoroot -benchtime 10x ./internal/search
func BenchmarkGrepGoroot(b *testing.B) {
	rg := rgPath(b)
	goroot, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		b.Skipf("go env GOROOT: %v", err)
	}
	dir := filepath.Join(strings.TrimSpace(string(goroot)), "src")
	if _, err := os.Stat(dir); err != nil {
		b.Skipf("no GOROOT source: %v", err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		b.Fatal(err)
	}
	defer root.Close()
	cases := []struct {
		name   string
		opts   GrepOptions
		rgArgs []string
	}{
		{"literal", GrepOptions{Pattern: "ErrUnexpectedEOF", Literal: true}, []string{"-F", "ErrUnexpectedEOF"}},
		{"regex-with-literal", GrepOptions{Pattern: `func \w+\(ctx context\.Context`}, []string{`func \w+\(ctx context\.Context`}},
		{"regex-no-literal", GrepOptions{Pattern: `[A-Z][a-z]+Error\b`}, []string{`[A-Z][a-z]+Error\b`}},
		{"regex-without-literal", GrepOptions{Pattern: `[a-z][0-9][A-Z][a-z]{3}`}, []string{`[a-z][0-9][A-Z][a-z]{3}`}},
		{"literal-ignore-case", GrepOptions{Pattern: "errunexpectedeof", Literal: true, IgnoreCase: true}, []string{"-F", "-i", "errunexpectedeof"}},
	}
	home := b.TempDir()
	// Warm the page cache for both, so neither pays for the first read of the tree.
	for range 2 {
		if _, err := Grep(context.Background(), root, GrepOptions{Pattern: "warm", Literal: true}); err != nil {
			b.Fatal(err)
		}
		cmd := exec.Command(rg, "-F", "-c", "warm")
		cmd.Dir, cmd.Env = dir, rgEnv(home)
		_ = cmd.Run()
	}
	for _, tc := range cases {
		opts := tc.opts
		opts.MaxResults = MaxMaxResults
		var ours int
		b.Run(tc.name+"/switchboard", func(b *testing.B) {
			cpu0 := selfCPU()
			for b.Loop() {
				res, err := Grep(context.Background(), root, opts)
				if err != nil {
					b.Fatal(err)
				}
				ours = len(res.Matches)
			}
			b.ReportMetric(float64(ours), "matches")
			b.ReportMetric(float64((selfCPU()-cpu0).Milliseconds())/float64(b.N), "cpu-ms/op")
		})
		b.Run(tc.name+"/rg", func(b *testing.B) {
			var lines int
			var cpu time.Duration
			for b.Loop() {
				cmd := exec.Command(rg, append([]string{"--no-heading", "--with-filename", "--line-number", "--column", "--color", "never", "--no-messages"}, tc.rgArgs...)...)
				cmd.Dir = dir
				cmd.Env = rgEnv(home)
				out, err := cmd.Output()
				if err != nil {
					b.Fatal(err)
				}
				lines = bytes.Count(out, []byte{'\n'})
				cpu += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
			}
			b.ReportMetric(float64(lines), "matches")
			b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "cpu-ms/op")
			if ours != 0 && ours != lines {
				b.Logf("%s: switchboard found %d matching lines, rg %d", tc.name, ours, lines)
			}
		})
	}
}

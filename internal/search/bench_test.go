package search

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

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
		{"literal-ignore-case", GrepOptions{Pattern: "errunexpectedeof", Literal: true, IgnoreCase: true}, []string{"-F", "-i", "errunexpectedeof"}},
	}
	home := b.TempDir()
	for _, tc := range cases {
		opts := tc.opts
		opts.MaxResults = 1 << 30
		var ours int
		b.Run(tc.name+"/switchboard", func(b *testing.B) {
			for b.Loop() {
				res, err := Grep(context.Background(), root, opts)
				if err != nil {
					b.Fatal(err)
				}
				ours = len(res.Matches)
			}
			b.ReportMetric(float64(ours), "matches")
		})
		b.Run(tc.name+"/rg", func(b *testing.B) {
			var lines int
			for b.Loop() {
				cmd := exec.Command(rg, append([]string{"--no-heading", "--with-filename", "--line-number", "--column", "--color", "never", "--no-messages"}, tc.rgArgs...)...)
				cmd.Dir = dir
				cmd.Env = rgEnv(home)
				out, err := cmd.Output()
				if err != nil {
					b.Fatal(err)
				}
				lines = bytes.Count(out, []byte{'\n'})
			}
			b.ReportMetric(float64(lines), "matches")
			if ours != 0 && ours != lines {
				b.Logf("%s: switchboard found %d matching lines, rg %d", tc.name, ours, lines)
			}
		})
	}
}

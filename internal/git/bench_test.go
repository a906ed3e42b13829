package git

import (
	"context"
	"os"
	"testing"
)

// The cost of confinement: Open (locate and verify the repository, read the config through
// the allow-list with two `git config` runs, build the scratch directory) against the git
// command it guards. StatusPlain is the command the tools ran before confinement.
//
//	go test ./internal/git -run XXX -bench . -benchtime 200x -count 5

func benchRepo(b *testing.B) (*Runner, string) {
	b.Helper()
	b.Setenv("HOME", b.TempDir())
	dir := b.TempDir()
	r, err := New(dir)
	if err != nil {
		if os.Getenv("CI") == "true" {
			b.Fatal("git not installed (build/setup-deps.sh installs it)")
		}
		b.Skip("git not installed")
	}
	ctx := context.Background()
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"config", "user.name", "B"}, {"config", "user.email", "b@example.com"},
		{"commit", "-q", "--allow-empty", "-m", "one"}} {
		if _, _, err := r.run(ctx, dir, nil, 1<<20, args...); err != nil {
			b.Fatal(err)
		}
	}
	return r, dir
}

func BenchmarkOpen(b *testing.B) {
	r, dir := benchRepo(b)
	ctx := context.Background()
	for b.Loop() {
		p, err := r.Open(ctx, dir)
		if err != nil {
			b.Fatal(err)
		}
		p.Close()
	}
}

func BenchmarkStatus(b *testing.B) {
	r, dir := benchRepo(b)
	ctx := context.Background()
	for b.Loop() {
		if _, err := r.Status(ctx, dir); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkStatusPlain(b *testing.B) {
	r, dir := benchRepo(b)
	ctx := context.Background()
	for b.Loop() {
		if _, _, err := r.run(ctx, dir, nil, 8<<20, "status", "--porcelain=v2", "--branch", "-z", "--untracked-files=all"); err != nil {
			b.Fatal(err)
		}
	}
}

//go:build linux

package upstream

import (
	"context"
	"encoding/json"
	"os/exec"
	"testing"
	"time"

	"github.com/switchboard-hub/switchboard/internal/sandbox"
)

// The sandbox's cost, sandboxed against unsandboxed in one run (docs/benchmarks.md, upstream
// isolation):
//
//	CGO_ENABLED=0 go test -run '^$' -bench 'Sandbox' -benchtime 20x -count 5 ./internal/upstream

// BenchmarkSandboxLaunch is the launcher's own cost: /bin/true started directly and through
// the sandbox launcher (the test binary re-executed, confined, then exec'ing true).
func BenchmarkSandboxLaunch(b *testing.B) {
	if sandbox.ABI() == 0 {
		b.Skip("no Landlock")
	}
	p := sandbox.Policy{Read: sandbox.SystemRead(), Write: sandbox.SystemWrite()}
	b.Run("direct", func(b *testing.B) {
		for b.Loop() {
			if err := exec.Command("/bin/true").Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("sandboxed", func(b *testing.B) {
		for b.Loop() {
			cmd, _, err := sandbox.Command(p, nil, "/bin/true")
			if err != nil {
				b.Fatal(err)
			}
			if err := cmd.Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkSandboxServer: server-everything from start (Sync) to running (initialized and its
// lists read), and a trivial call (echo), with and without the sandbox.
func BenchmarkSandboxServer(b *testing.B) {
	if sandbox.ABI() == 0 {
		b.Skip("no Landlock")
	}
	for _, mode := range []string{"unsandboxed", "sandboxed"} {
		spec := everythingSpec(b, "everything")
		if mode == "unsandboxed" {
			spec.Sandbox = &Sandbox{Off: true}
		}
		b.Run("start/"+mode, func(b *testing.B) {
			m := newTestManager(b, Options{})
			if err := approveSync(m, []Spec{spec}); err != nil {
				b.Fatal(err)
			}
			waitState(b, m, "everything", StateRunning)
			for b.Loop() {
				if err := m.Restart("everything"); err != nil { // stops it, then starts it again
					b.Fatal(err)
				}
				waitState(b, m, "everything", StateRunning)
			}
		})
		b.Run("call/"+mode, func(b *testing.B) {
			m := newTestManager(b, Options{})
			if err := approveSync(m, []Spec{spec}); err != nil {
				b.Fatal(err)
			}
			waitState(b, m, "everything", StateRunning)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if _, err := m.Approve(ctx, "everything"); err != nil {
				b.Fatal(err)
			}
			args := json.RawMessage(`{"message":"hi"}`)
			for b.Loop() {
				if _, err := m.CallTool(ctx, "everything", "echo", args, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

package ide

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/switchboard-hub/switchboard/internal/testutil"
	"github.com/switchboard-hub/switchboard/mcp/ide/agenticsim"
)

// TestNoGoroutinesLeft runs a bridge through connect, chat, a build, a
// backend restart and shutdown, then checks every goroutine it started ended.
func TestNoGoroutinesLeft(t *testing.T) {
	baseline := runtime.NumGoroutine()
	func() {
		sim := agenticsim.New(agenticsim.Options{Logger: quietLogger(), ReplyDelay: time.Millisecond, LineInterval: time.Millisecond})
		addr, err := sim.Start("127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer sim.Close()
		sub := New(newRecordingPublisher(), WithBackendURL(sim.URL()), WithLogger(quietLogger()),
			WithReconnectInterval(5*time.Millisecond), WithMaxReconnectInterval(20*time.Millisecond))
		sub.Start(context.Background())
		testutil.Eventually(t, "connected", func() bool { return sub.BridgeStatus().Connected })
		sess, err := sub.CreateSession(context.Background(), "leak check")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := sub.SendChat(context.Background(), sess.ID, "hi"); err != nil {
			t.Fatal(err)
		}
		sim.StartBuild("r", "main", 5, true)
		sim.Stop()
		if _, err := sim.Start(addr); err != nil {
			t.Fatal(err)
		}
		testutil.Eventually(t, "reconnected", func() bool { return sub.BridgeStatus().Connected })
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := sub.Shutdown(ctx); err != nil {
			t.Fatal(err)
		}
	}()
	testutil.Eventually(t, "goroutines back to the baseline", func() bool { return runtime.NumGoroutine() <= baseline })
}

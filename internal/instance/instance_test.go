package instance

import (
	"bufio"
	"errors"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-hub/switchboard/internal/testutil"
)

// privateBus starts a dbus-daemon with a session configuration of its own and points
// DBUS_SESSION_BUS_ADDRESS at it for the test.
func privateBus(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("dbus-daemon"); err != nil {
		t.Skip("dbus-daemon not installed (bash build/setup-deps.sh)")
	}
	cmd := exec.Command("dbus-daemon", "--session", "--nofork", "--print-address=1",
		"--address=unix:path="+filepath.Join(t.TempDir(), "bus"))
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	addr, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("dbus-daemon address: %v", err)
	}
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", strings.TrimSpace(addr))
}

func TestSecondLaunchActivatesFirst(t *testing.T) {
	privateBus(t)
	activated := make(chan Request, 4)
	first, err := Acquire(Request{}, func(r Request) { activated <- r })
	if err != nil || first == nil {
		t.Fatalf("first Acquire = %v, %v; want a lock", first, err)
	}

	second, err := Acquire(Request{Args: []string{"--hidden"}, Dir: "/tmp/x"}, func(Request) { t.Error("the second instance was activated") })
	if err != nil || second != nil {
		t.Fatalf("second Acquire = %v, %v; want nil, nil (hand over and exit)", second, err)
	}
	select {
	case r := <-activated:
		if !slices.Equal(r.Args, []string{"--hidden"}) || r.Dir != "/tmp/x" {
			t.Errorf("first instance got %+v; want the second launch's args and dir", r)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the first instance was not activated")
	}

	// Once the first instance is gone, the next launch becomes the instance.
	first.Release()
	// The bus frees the name on its own time, with no event for us: try again and again.
	var third *Lock
	testutil.Eventually(t, "the name to be free after Release", func() bool {
		if third, err = Acquire(Request{}, nil); err != nil {
			t.Fatal(err)
		}
		return third != nil
	})
	third.Release()
}

func TestNoSessionBus(t *testing.T) {
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "unix:path="+filepath.Join(t.TempDir(), "no-such-bus"))
	l, err := Acquire(Request{}, nil)
	if l != nil || !errors.Is(err, ErrNoBus) {
		t.Errorf("Acquire without a bus = %v, %v; want ErrNoBus", l, err)
	}
}

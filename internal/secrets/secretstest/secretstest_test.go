package secretstest

import (
	"os"
	"testing"
	"time"
)

// TestStopLeavesNothing: once a test that started a Secret Service ends, none of its processes
// is left (counted from /proc by process group) and its directory is gone.
func TestStopLeavesNothing(t *testing.T) {
	var s *Service
	t.Run("keyring", func(t *testing.T) {
		start := time.Now()
		s = Start(t)
		t.Logf("bus and keyring ready in %s", time.Since(start).Round(time.Millisecond))
		if got := Leftovers(s.PIDs); len(got) != 2 {
			t.Errorf("running: %q; want the bus and the keyring daemon", got)
		}
	})
	if s == nil {
		t.Skip("no Secret Service was started")
	}
	if got := Leftovers(s.PIDs); len(got) > 0 {
		t.Errorf("left running after the test: %q", got)
	}
	if _, err := os.Stat(s.Dir); !os.IsNotExist(err) {
		t.Errorf("%s still there (%v)", s.Dir, err)
	}
}

package cli

import (
	"context"
	"strings"
	"testing"

	"github.com/switchboard-hub/switchboard/internal/config"
)

// doctor warns when the IDE bridge token would travel over ws:// to another machine, and not for
// loopback or wss://.
func TestDoctorWarnsAboutPlaintextIDEToken(t *testing.T) {
	find := func(url, token string) (check, bool) {
		cfg := config.Default()
		cfg.Workspace = t.TempDir()
		cfg.DataDir = t.TempDir()
		cfg.IDE.URL, cfg.IDE.Token = url, token
		for _, c := range doctorChecks(context.Background(), cfg) {
			if c.name == "ide token" {
				return c, true
			}
		}
		return check{}, false
	}
	c, ok := find("ws://192.0.2.1:9876/ws", "secret")
	if !ok || c.ok || !c.optional || !strings.Contains(c.detail, "clear text") || !strings.Contains(c.fix, "wss://") {
		t.Fatalf("doctor with a remote ws:// token: %+v, %v", c, ok)
	}
	for _, url := range []string{"ws://127.0.0.1:1/ws", "wss://192.0.2.1:1/ws"} {
		if c, ok := find(url, "secret"); ok {
			t.Errorf("doctor warned for %s: %+v", url, c)
		}
	}
}

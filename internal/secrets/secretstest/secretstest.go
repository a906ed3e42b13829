// Package secretstest gives tests a real Secret Service: Debian's gnome-keyring-daemon on a
// private session bus of its own, with a fresh, unlocked login keyring. Nothing in the product
// imports it.
//
// Headless gnome-keyring works without PAM or a prompter: `gnome-keyring-daemon --unlock`
// reads a password on standard input and creates (or unlocks) the login keyring with it, and
// the login keyring is the "default" collection. The bus has a configuration of its own with
// no service directories, so it can activate nothing: the daemon started here is the only
// Secret Service on it, and no prompter or second daemon can be spawned behind the test's back.
package secretstest

import (
	"os"
	"os/exec"
	"testing"

	"github.com/switchboard-hub/switchboard/internal/testutil"
)

// Service is a running Secret Service.
type Service struct {
	// Address is the private bus's address; Start sets DBUS_SESSION_BUS_ADDRESS to it for the test.
	Address string
	// Dir holds the bus socket and the keyring daemon's home, data and runtime directories.
	Dir string
	// PIDs are the processes started: the bus daemon, then the keyring daemon (each leads a
	// process group of its own).
	PIDs  []int
	logs  *testutil.SyncBuffer
	exits []chan struct{} // closed when the process of the same index in PIDs has been waited for
}

// Logs is what the daemons wrote, for a failure message.
func (s *Service) Logs() string { return s.logs.String() }

// Need finds a program, from the Debian package pkg, or ends the test: skipped, except under
// CI=true where a missing test dependency fails (build/setup-deps.sh installs it).
func Need(t testing.TB, prog, pkg string) string {
	t.Helper()
	p, err := exec.LookPath(prog)
	if err == nil {
		return p
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s not found (%v); install the %s package: build/setup-deps.sh", prog, err, pkg)
	}
	t.Skipf("%s not found (%v); install the %s package (build/setup-deps.sh) to run this test", prog, err, pkg)
	return ""
}

// Password unlocks the test's login keyring.
const Password = "switchboard-test"

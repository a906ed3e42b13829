//go:build !linux

package secretstest

import "testing"

// On other systems there is no gnome-keyring to start, and Leftovers has no /proc to read.

const unsupported = "a Secret Service for tests needs Linux (Debian's gnome-keyring and dbus)"

// Bus skips the test: see the Linux version.
func Bus(t testing.TB) *Service {
	t.Helper()
	t.Skip(unsupported)
	return nil
}

// Start skips the test: see the Linux version.
func Start(t testing.TB) *Service {
	t.Helper()
	t.Skip(unsupported)
	return nil
}

// Leftovers finds nothing: see the Linux version.
func Leftovers(pids []int) []string { return nil }

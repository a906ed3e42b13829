//go:build linux

package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"

	"github.com/switchboard-hub/switchboard/app"
	"github.com/switchboard-hub/switchboard/internal/config"
	"github.com/switchboard-hub/switchboard/internal/secrets"
	"github.com/switchboard-hub/switchboard/internal/secrets/secretstest"
	"github.com/switchboard-hub/switchboard/internal/testutil"
)

// runSecret runs `switchboard secret ARGS` with stdin as its standard input.
func runSecret(t *testing.T, stdin any, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	root := NewRootCommand("test")
	var out, errOut bytes.Buffer
	switch in := stdin.(type) {
	case string:
		root.SetIn(strings.NewReader(in))
	case *os.File:
		root.SetIn(in)
	}
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetArgs(append([]string{"secret"}, args...))
	err = root.Execute()
	return out.String(), errOut.String(), err
}

func lookup(t *testing.T, name string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	k, err := secrets.Open(ctx, app.SessionBus(config.ReadEnv()))
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	return k.Lookup(ctx, name)
}

// TestSecretVerbs drives `switchboard secret` against a real gnome-keyring-daemon, in order:
// each step sees what the ones before it stored.
func TestSecretVerbs(t *testing.T) {
	secretstest.Start(t)
	steps := []struct {
		name    string
		stdin   string
		args    []string
		stdout  string // exact
		stderr  string // contained
		err     string // contained; "" = success
		stored  map[string]string
		missing []string
	}{
		{name: "nothing stored yet", args: []string{"list"}, stderr: "No secrets stored; `switchboard secret set NAME` adds one."},
		{name: "set from a pipe, final newline dropped", stdin: "ghp_0123456789\n", args: []string{"set", "github-token"},
			stdout: "Stored github-token in the keyring. Use it in the config as ${secret:github-token}.\n",
			stored: map[string]string{"github-token": "ghp_0123456789"}},
		{name: "set keeps inner newlines, drops one CRLF", stdin: "line 1\nline 2\r\n", args: []string{"set", "pem"},
			stdout: "Stored pem in the keyring. Use it in the config as ${secret:pem}.\n",
			stored: map[string]string{"pem": "line 1\nline 2"}},
		{name: "set replaces", stdin: "ghp_rotated", args: []string{"set", "github-token"},
			stdout: "Stored github-token in the keyring. Use it in the config as ${secret:github-token}.\n",
			stored: map[string]string{"github-token": "ghp_rotated"}},
		{name: "value as an argument is refused", stdin: "x", args: []string{"set", "api-key", "s3cret"},
			err: "never as an argument", missing: []string{"api-key"}},
		{name: "no name", args: []string{"set"}, err: "give the secret's NAME"},
		{name: "bad name", stdin: "x", args: []string{"set", "my key"}, err: "e.g. github-token"},
		{name: "empty standard input", stdin: "\n", args: []string{"set", "api-key"},
			err: "standard input is empty", missing: []string{"api-key"}},
		{name: "value with a NUL byte", stdin: "a\x00b", args: []string{"set", "api-key"}, err: "NUL byte", missing: []string{"api-key"}},
		{name: "value too long", stdin: strings.Repeat("x", secrets.MaxValue+1), args: []string{"set", "api-key"}, err: "longer than 65536 bytes"},
		{name: "list prints names only", args: []string{"list"}, stdout: "github-token\npem\n"},
		{name: "secret alone lists", args: nil, stdout: "github-token\npem\n"},
		{name: "delete", args: []string{"delete", "pem"}, stdout: "Deleted pem.\n", missing: []string{"pem"}},
		{name: "delete what is not there", args: []string{"delete", "pem"}, err: "`switchboard secret list` shows the names there"},
		{name: "list after delete", args: []string{"list"}, stdout: "github-token\n"},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			stdout, stderr, err := runSecret(t, s.stdin, s.args...)
			switch {
			case s.err == "" && err != nil:
				t.Fatalf("error: %v", err)
			case s.err != "" && (err == nil || !strings.Contains(err.Error(), s.err)):
				t.Fatalf("error = %v; want one containing %q", err, s.err)
			}
			if s.err == "" && stdout != s.stdout {
				t.Errorf("stdout = %q, want %q", stdout, s.stdout)
			}
			if !strings.Contains(stderr, s.stderr) {
				t.Errorf("stderr = %q, want it to contain %q", stderr, s.stderr)
			}
			for name, want := range s.stored {
				if got, err := lookup(t, name); got != want || err != nil {
					t.Errorf("keyring %s = %q, %v; want %q", name, got, err, want)
				}
			}
			for _, name := range s.missing {
				if _, err := lookup(t, name); err == nil {
					t.Errorf("keyring has %s; want it absent", name)
				}
			}
			for _, secret := range []string{"ghp_", "s3cret", "line 1"} {
				if strings.Contains(stdout+stderr, secret) {
					t.Errorf("output shows a secret value (%q):\n%s%s", secret, stdout, stderr)
				}
			}
		})
	}
}

// TestSecretSetFromTerminal types the value on a real pseudo-terminal: it is asked for on
// stderr, stored, and never echoed.
func TestSecretSetFromTerminal(t *testing.T) {
	secretstest.Start(t)
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer ptmx.Close()
	defer tty.Close()
	echoed := make(chan string, 1)
	go func() { // everything the terminal shows, until the test closes it
		var b bytes.Buffer
		buf := make([]byte, 256)
		for {
			n, err := ptmx.Read(buf)
			b.Write(buf[:n])
			if err != nil {
				echoed <- b.String()
				return
			}
		}
	}()
	type result struct {
		stdout, stderr string
		err            error
	}
	done := make(chan result, 1)
	go func() {
		o, e, err := runSecret(t, tty, "set", "typed")
		done <- result{o, e, err}
	}()
	// Type only once the command has switched the terminal's echo off, as a person would after
	// the prompt: typed earlier, the line discipline echoes it before anyone can stop it.
	// (A terminal's settings change with no event to wait on: check them again and again.)
	testutil.Eventually(t, "the command to turn the terminal's echo off", func() bool {
		tio, err := unix.IoctlGetTermios(int(tty.Fd()), unix.TCGETS)
		if err != nil {
			t.Fatal(err)
		}
		return tio.Lflag&unix.ECHO == 0
	})
	if _, err := ptmx.Write([]byte("typed-s3cret\n")); err != nil {
		t.Fatal(err)
	}
	r := <-done
	stdout, stderr, err := r.stdout, r.stderr, r.err
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	if !strings.Contains(stderr, "Value for typed (not shown): ") || !strings.Contains(stdout, "Stored typed") {
		t.Errorf("stdout %q, stderr %q", stdout, stderr)
	}
	if got, err := lookup(t, "typed"); got != "typed-s3cret" || err != nil {
		t.Errorf("stored %q, %v", got, err)
	}
	tty.Close()
	ptmx.Close()
	if shown := <-echoed; strings.Contains(shown, "s3cret") {
		t.Errorf("the terminal echoed the value: %q", shown)
	}
}

func TestSecretWithoutKeyring(t *testing.T) {
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "unix:path="+filepath.Join(t.TempDir(), "no-bus"))
	_, _, err := runSecret(t, "v", "set", "api-key")
	if err == nil || !strings.Contains(err.Error(), "install and unlock a keyring (gnome-keyring, KeePassXC) or use ${VAR} from the environment") {
		t.Errorf("set without a Secret Service: %v", err)
	}
}

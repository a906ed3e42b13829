//go:build linux

package sandbox_test

import (
	"bytes"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/switchboard-hub/switchboard/internal/sandbox"
	"github.com/switchboard-hub/switchboard/internal/testutil"
)

// run runs a shell script under p and returns its output and error.
func run(t *testing.T, p sandbox.Policy, script string) (string, error) {
	t.Helper()
	cmd, st, err := sandbox.Command(p, []string{"PATH=/usr/bin:/bin", "LANG=C"}, "/bin/sh", "-c", script)
	if err != nil {
		t.Fatal(err)
	}
	if !st.Confined {
		t.Fatalf("not confined: %s", st.Detail)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	return out.String(), err
}

func base() sandbox.Policy {
	return sandbox.Policy{Read: sandbox.SystemRead(), Write: sandbox.SystemWrite()}
}

// TestFilesOutsideThePolicy: a confined program reads what it is allowed to, writes only where
// it may, and gets EACCES everywhere else (a home's secrets, another project).
func TestFilesOutsideThePolicy(t *testing.T) {
	testutil.RequireLandlock(t, sandbox.ABI())
	home := t.TempDir()
	secret := filepath.Join(home, ".ssh", "id_ed25519")
	ro := filepath.Join(home, "pkg")
	rw := filepath.Join(home, "project")
	for _, d := range []string{filepath.Dir(secret), ro, rw} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for path, body := range map[string]string{secret: "PRIVATE KEY", filepath.Join(ro, "index.js"): "code", filepath.Join(rw, "a.txt"): "work"} {
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	p := base()
	p.Read = append(p.Read, ro)
	p.Write = append(p.Write, rw)

	cases := []struct {
		name, script string
		ok           bool
		want         string
	}{
		{"read an allowed package", "cat " + filepath.Join(ro, "index.js"), true, "code"},
		{"read the project", "cat " + filepath.Join(rw, "a.txt"), true, "work"},
		{"write the project", "echo new > " + filepath.Join(rw, "b.txt") + " && cat " + filepath.Join(rw, "b.txt"), true, "new"},
		{"system still readable", "cat /etc/hostname >/dev/null && echo ok", true, "ok"},
		{"read a secret", "cat " + secret, false, "Permission denied"},
		{"list the home", "ls " + home, false, "Permission denied"},
		{"write into a read-only package", "echo x > " + filepath.Join(ro, "evil.js"), false, "Permission denied"},
		{"replace a package file", "rm -f " + filepath.Join(ro, "index.js"), false, "Permission denied"},
		{"escape by symlink", "ln -s " + secret + " " + filepath.Join(rw, "l") + " && cat " + filepath.Join(rw, "l"), false, "Permission denied"},
		{"write to /etc", "echo x > /etc/sb-test", false, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, err := run(t, p, c.script)
			if c.ok != (err == nil) || !strings.Contains(out, c.want) {
				t.Fatalf("%s: err %v, output %q; want ok=%v with %q", c.script, err, out, c.ok, c.want)
			}
		})
	}
	if b, _ := os.ReadFile(secret); string(b) != "PRIVATE KEY" {
		t.Fatal("the secret changed")
	}
}

// TestNoNetwork: network = false denies TCP connects, even to loopback.
func TestNoNetwork(t *testing.T) {
	testutil.RequireLandlock(t, sandbox.ABI())
	if sandbox.ABI() < 4 {
		t.Skip("Landlock ABI < 4 confines no network")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	script := "exec 3<>/dev/tcp/127.0.0.1/" + port + " && echo connected"
	p := base()
	if out, err := run(t, p, "bash -c '"+script+"'"); err != nil || !strings.Contains(out, "connected") {
		t.Fatalf("with network: %v %q", err, out)
	}
	p.NoNetwork = true
	if out, err := run(t, p, "bash -c '"+script+"'"); err == nil || strings.Contains(out, "connected") {
		t.Fatalf("network = false still connects: %q", out)
	}
}

// TestOutsideProcessesOutOfReach: the hub's environment (its tokens) cannot be read through
// /proc, and (ABI 6) the hub cannot be signalled.
func TestOutsideProcessesOutOfReach(t *testing.T) {
	testutil.RequireLandlock(t, sandbox.ABI())
	pid := strconv.Itoa(os.Getpid())
	if out, err := run(t, base(), "cat /proc/"+pid+"/environ"); err == nil {
		t.Fatalf("read the hub's environment: %q", out)
	}
	if sandbox.ABI() >= 6 {
		if out, err := run(t, base(), "kill -0 "+pid); err == nil {
			t.Fatalf("signalled the hub: %q", out)
		}
	}
	// Its own processes are its to signal.
	if out, err := run(t, base(), "sleep 5 & kill $! && echo killed"); err != nil || !strings.Contains(out, "killed") {
		t.Fatalf("cannot signal its own child: %v %q", err, out)
	}
}

// TestLauncherKeepsPid: the server is the process the hub started (same pid), so process
// groups and the parent-death signal still hold.
func TestLauncherKeepsPid(t *testing.T) {
	testutil.RequireLandlock(t, sandbox.ABI())
	cmd, _, err := sandbox.Command(base(), []string{"PATH=/usr/bin:/bin"}, "/bin/sh", "-c", "echo $$")
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	cmd.Stdout = &out
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(out.String()) != strconv.Itoa(cmd.Process.Pid) {
		t.Fatalf("server pid %q, started pid %d", out.String(), cmd.Process.Pid)
	}
}

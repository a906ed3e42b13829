//go:build linux

package secretstest

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"

	"github.com/switchboard-hub/switchboard/internal/procgroup"
	"github.com/switchboard-hub/switchboard/internal/testutil"
)

// run starts cmd in a process group of its own and waits for it in the background.
func (s *Service) run(t testing.TB, cmd *exec.Cmd) {
	t.Helper()
	cmd.SysProcAttr = procgroup.GroupAttr()
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", cmd.Path, err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	s.PIDs = append(s.PIDs, cmd.Process.Pid)
	s.exits = append(s.exits, exited)
}

// Bus starts a private session bus with no services on it and points DBUS_SESSION_BUS_ADDRESS
// at it for the test. Start adds the keyring daemon to one.
func Bus(t testing.TB) *Service {
	t.Helper()
	daemon := Need(t, "dbus-daemon", "dbus")
	// A short directory of its own, not t.TempDir(): a Unix socket path must fit in 108 bytes.
	dir, err := os.MkdirTemp("", "sb-keyring-")
	if err != nil {
		t.Fatal(err)
	}
	s := &Service{Dir: dir, logs: &testutil.SyncBuffer{}}
	t.Cleanup(func() { s.stop(t) })
	conf := filepath.Join(dir, "bus.conf")
	if err := os.WriteFile(conf, []byte(`<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path=`+filepath.Join(dir, "bus")+`</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
`), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(daemon, "--config-file="+conf, "--nofork", "--print-address=1")
	cmd.Stderr = s.logs
	// Not StdoutPipe: Wait, running in the background, would close it under the read.
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = w
	s.run(t, cmd)
	w.Close()
	addr, err := bufio.NewReader(r).ReadString('\n')
	r.Close()
	if err != nil {
		t.Fatalf("dbus-daemon printed no address: %v\n%s", err, s.logs)
	}
	s.Address = strings.TrimSpace(addr)
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", s.Address)
	return s
}

// Start runs gnome-keyring-daemon (secrets component only) on a private bus, with a fresh home
// and an unlocked login keyring as the default collection, and points DBUS_SESSION_BUS_ADDRESS
// at that bus for the test. Both daemons are killed when the test ends.
func Start(t testing.TB) *Service {
	t.Helper()
	keyringd := Need(t, "gnome-keyring-daemon", "gnome-keyring")
	s := Bus(t)
	for _, d := range []string{"home", "data", "config", "cache", "run", "control"} {
		if err := os.Mkdir(filepath.Join(s.Dir, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(keyringd, "--foreground", "--unlock", "--components=secrets",
		"--control-directory="+filepath.Join(s.Dir, "control"))
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + filepath.Join(s.Dir, "home"),
		"XDG_DATA_HOME=" + filepath.Join(s.Dir, "data"), // keyrings/login.keyring
		"XDG_CONFIG_HOME=" + filepath.Join(s.Dir, "config"),
		"XDG_CACHE_HOME=" + filepath.Join(s.Dir, "cache"),
		"XDG_RUNTIME_DIR=" + filepath.Join(s.Dir, "run"),
		"DBUS_SESSION_BUS_ADDRESS=" + s.Address,
	}
	cmd.Stdin = strings.NewReader(Password) // read to EOF: the login keyring's password
	cmd.Stdout, cmd.Stderr = s.logs, s.logs
	s.run(t, cmd)
	if err := s.waitReady(15 * time.Second); err != nil {
		t.Fatalf("gnome-keyring-daemon: %v\n%s", err, s.logs)
	}
	return s
}

// waitReady waits until the service answers and its default collection exists, unlocked.
func (s *Service) waitReady(limit time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	conn, err := dbus.Connect(s.Address)
	if err != nil {
		return err
	}
	defer conn.Close()
	svc := conn.Object("org.freedesktop.secrets", "/org/freedesktop/secrets")
	var last error
	for {
		var coll dbus.ObjectPath
		last = svc.CallWithContext(ctx, "org.freedesktop.Secret.Service.ReadAlias", 0, "default").Store(&coll)
		if last == nil && coll != "/" {
			v, err := conn.Object("org.freedesktop.secrets", coll).GetProperty("org.freedesktop.Secret.Collection.Locked")
			if err == nil && v.Value() == false {
				return nil
			}
			last = fmt.Errorf("default collection %s: locked %v (%v)", coll, v.Value(), err)
		} else if last == nil {
			last = fmt.Errorf("no default collection yet")
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("not ready after %s: %v", limit, last)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// stop kills the daemons' process groups, keyring first, waits for them, and removes Dir.
func (s *Service) stop(t testing.TB) {
	for i := len(s.PIDs) - 1; i >= 0; i-- {
		pid := s.PIDs[i]
		_ = procgroup.Signal(pid, syscall.SIGTERM)
		select {
		case <-s.exits[i]:
		case <-time.After(5 * time.Second):
			_ = procgroup.Signal(pid, syscall.SIGKILL)
			<-s.exits[i]
		}
	}
	if err := os.RemoveAll(s.Dir); err != nil {
		t.Errorf("remove %s: %v", s.Dir, err)
	}
}

// Leftovers lists the processes still running in the process groups of pids (as
// "PID COMMAND"): empty once a Service has stopped cleanly.
func Leftovers(pids []int) []string {
	var out []string
	for _, pgid := range pids {
		for _, pid := range procgroup.Members(pgid) {
			comm, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "comm"))
			out = append(out, fmt.Sprintf("%d %s", pid, strings.TrimSpace(string(comm))))
		}
	}
	return out
}

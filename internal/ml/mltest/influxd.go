package mltest

import (
	"fmt"
	"github.com/switchboard-hub/switchboard/internal/testutil"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// StartInfluxd starts Debian's real InfluxDB 1.x server (/usr/bin/influxd, package influxdb) on
// free loopback ports with a private config file and meta/data/wal directories under t.TempDir,
// and returns its HTTP URL. It stops the server when the test ends. Without influxd the test is
// skipped, except under CI=true, where it fails (build/setup-deps.sh installs it).
func StartInfluxd(t testing.TB) string {
	t.Helper()
	bin, err := exec.LookPath("influxd")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("influxd not found (%v); install the influxdb package: build/setup-deps.sh", err)
		}
		t.Skipf("influxd not found (%v); install the influxdb package (build/setup-deps.sh) to run this test", err)
	}
	dir := t.TempDir()
	httpAddr, rpcAddr := freeAddr(t), freeAddr(t)
	conf := fmt.Sprintf(`reporting-enabled = false
bind-address = %q
[meta]
  dir = %q
  logging-enabled = false
[data]
  dir = %q
  wal-dir = %q
  query-log-enabled = false
  wal-fsync-delay = "0s"
[monitor]
  store-enabled = false
[http]
  enabled = true
  bind-address = %q
  log-enabled = false
  pprof-enabled = false
[continuous_queries]
  enabled = false
[subscriber]
  enabled = false
[[udp]]
  enabled = false
`, rpcAddr, filepath.Join(dir, "meta"), filepath.Join(dir, "data"), filepath.Join(dir, "wal"), httpAddr)
	confPath := filepath.Join(dir, "influxdb.conf")
	if err := os.WriteFile(confPath, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	logs := &testutil.SyncBuffer{}
	cmd := exec.Command(bin, "-config", confPath)
	cmd.Stdout, cmd.Stderr = logs, logs
	cmd.Env = append(os.Environ(), "INFLUXDB_REPORTING_DISABLED=true")
	if err := cmd.Start(); err != nil {
		t.Fatalf("start influxd: %v", err)
	}
	var waitErr error // set before exited is closed
	exited := make(chan struct{})
	go func() { waitErr = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	})
	url := "http://" + httpAddr
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(url + "/ping")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusNoContent {
				return url
			}
		}
		select {
		case <-exited:
			t.Fatalf("influxd exited early (%v):\n%s", waitErr, logs.String())
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("influxd did not answer %s/ping within 30s:\n%s", url, logs.String())
		}
	}
}

func freeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

//go:build unix

package upstream

import (
	"bufio"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/switchboard-hub/switchboard/internal/procgroup"
	"github.com/switchboard-hub/switchboard/internal/testutil"
)

// startEverythingHTTP runs the real server-everything in one of its HTTP modes
// ("streamableHttp" or "sse") on a free port and returns its base URL.
func startEverythingHTTP(t *testing.T, mode string) string {
	t.Helper()
	dir := testutil.NodeModule(t, "@modelcontextprotocol/server-everything")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command("node", filepath.Join(dir, "dist", "index.js"), mode)
	cmd.Env = append(cmd.Environ(), "PORT="+strconv.Itoa(port))
	cmd.SysProcAttr = procgroup.GroupAttr()
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = procgroup.Signal(cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
	})
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stderr)
		once := sync.Once{}
		for sc.Scan() {
			if strings.Contains(strings.ToLower(sc.Text()), "listening") || strings.Contains(sc.Text(), strconv.Itoa(port)) {
				once.Do(func() { close(ready) })
			}
		}
	}()
	select {
	case <-ready:
	case <-time.After(30 * time.Second):
		t.Fatalf("server-everything %s did not start", mode)
	}
	return "http://127.0.0.1:" + strconv.Itoa(port)
}

// headerRecorder is a reverse proxy in front of a server that records one request header.
func headerRecorder(t *testing.T, target, header string) (string, func() []string) {
	t.Helper()
	u, _ := url.Parse(target)
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.FlushInterval = -1 // stream SSE
	var mu sync.Mutex
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get(header))
		mu.Unlock()
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, func() []string { mu.Lock(); defer mu.Unlock(); return append([]string{}, seen...) }
}

func TestRemoteServers(t *testing.T) {
	for _, tc := range []struct {
		mode, path, transport string
	}{
		{"streamableHttp", "/mcp", ""},
		{"sse", "/sse", TransportSSE},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			base := startEverythingHTTP(t, tc.mode)
			front, seen := headerRecorder(t, base, "Authorization")
			env := map[string]string{"SB_TEST_REMOTE_TOKEN": "s3cret-token"}
			m := newTestManager(t, Options{Getenv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }})
			spec := Spec{Name: "remote", URL: front + tc.path, Transport: tc.transport,
				Headers: map[string]string{"Authorization": "Bearer ${SB_TEST_REMOTE_TOKEN}"}}
			if err := approveSync(m, []Spec{spec}); err != nil {
				t.Fatal(err)
			}
			st := waitState(t, m, "remote", StateRunning)
			if st.PID != 0 || st.Transport != spec.Kind() || strings.Contains(st.Command, "s3cret") {
				t.Fatalf("status %+v", st)
			}
			if _, err := m.Approve(t.Context(), "remote"); err != nil {
				t.Fatal(err)
			}
			res, err := m.CallTool(t.Context(), "remote", "echo", json.RawMessage(`{"message":"over http"}`), nil)
			if err != nil || text(res) != "Echo: over http" {
				t.Fatalf("echo: %v %v", res, err)
			}
			for _, h := range seen() {
				if h != "Bearer s3cret-token" {
					t.Fatalf("a request went without the configured header: %q", h)
				}
			}
			if len(seen()) == 0 {
				t.Fatal("no request reached the server")
			}
			logs, _ := m.Logs("remote", 0)
			for _, l := range logs {
				if strings.Contains(l.Text, "s3cret") {
					t.Fatalf("the secret reached the log: %q", l.Text)
				}
			}
		})
	}
}

//go:build linux

package code

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-hub/switchboard/internal/testutil"
)

// helperHubEnv makes this test binary, started again by TestServersDieWithTheHub, play a hub
// that starts gopls and then waits to be killed. (The sandbox launcher the pool starts is the
// same binary with internal/sandbox's own variable: it confines itself and executes gopls in
// internal/sandbox's init, before any test runs.)
const helperHubEnv = "SWITCHBOARD_CODE_TEST_HUB"

func TestHelperHub(t *testing.T) {
	root := os.Getenv(helperHubEnv)
	if root == "" {
		t.Skip("only run by TestServersDieWithTheHub")
	}
	// The state directory lies in the parent test's temporary directory, removed by it: this
	// process is killed before its own cleanup could run.
	p := NewPool(Options{Idle: -1, SearchDirs: testSearchDirs(t), StateDir: filepath.Join(filepath.Dir(root), "state")})
	if _, err := p.Definition(context.Background(), root, Target{Symbol: "calc.Total"}); err != nil {
		fmt.Println("ERROR", err)
		os.Exit(1)
	}
	fmt.Println("PID", p.Status()[0].PID)
	time.Sleep(time.Minute) // killed before this ends
	os.Exit(1)
}

// TestServersDieWithTheHub: a hub killed with SIGKILL (no Close, no cleanup of its own) leaves
// no language server behind: the parent-death signal ends it.
func TestServersDieWithTheHub(t *testing.T) {
	requireServer(t, Go)
	root := fixture(t, "gofx")
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperHub$", "-test.count=1")
	cmd.Env = append(os.Environ(), helperHubEnv+"="+root)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	sc := bufio.NewScanner(out)
	pid := 0
	for sc.Scan() {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, "PID "); ok {
			pid, _ = strconv.Atoi(rest)
			break
		}
		if strings.HasPrefix(line, "ERROR") {
			t.Fatal(line)
		}
	}
	if pid <= 0 {
		t.Fatal("the helper hub never started gopls")
	}
	if comm, _ := os.ReadFile("/proc/" + itoa(pid) + "/comm"); strings.TrimSpace(string(comm)) != "gopls" {
		t.Fatalf("pid %d is %q, not gopls", pid, comm)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if !testutil.Gone(t, pid, 10*time.Second) {
		t.Fatalf("gopls (pid %d) outlived its hub", pid)
	}
}

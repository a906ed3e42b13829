package cli

import (
	"bufio"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-hub/switchboard/app/apptest"
)

// TestConnectToolsModeReachesTheHub: `switchboard connect --tools-mode search` gets its client
// the search mode's list from a hub serving full mode, while a relay without the flag gets the
// hub's; a mode that does not exist is refused before anything connects.
func TestConnectToolsModeReachesTheHub(t *testing.T) {
	bin := apptest.Binary(t)
	env := apptest.Env(t)
	ws := t.TempDir()
	sock := filepath.Join(apptest.ShortDir(t), "hub.sock")
	startUnixHub(t, bin, env, "serve", "--unix", sock, "--no-hub", "--workspace", ws)

	list := func(args ...string) string {
		t.Helper()
		c := exec.Command(bin, append([]string{"connect", "--socket", sock}, args...)...)
		c.Env, c.Dir = env, ws
		stdin, _ := c.StdinPipe()
		stdout, _ := c.StdoutPipe()
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { _ = c.Process.Kill(); _ = c.Wait() }()
		io.WriteString(stdin, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"mode-test","version":"1"}}}`+"\n"+
			`{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"+
			`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`+"\n")
		r := bufio.NewScanner(stdout)
		r.Buffer(make([]byte, 4<<20), 4<<20)
		for r.Scan() {
			if strings.Contains(r.Text(), `"id":1`) {
				return r.Text()
			}
		}
		t.Fatalf("no tools/list answer through connect %v (%v)", args, r.Err())
		return ""
	}
	search := list("--tools-mode", "search")
	if !strings.Contains(search, `"name":"tools_search"`) || !strings.Contains(search, `"name":"file_read"`) || strings.Contains(search, `"name":"dir_list"`) {
		t.Fatalf("search mode through connect lists: %.600s", search)
	}
	if full := list(); strings.Contains(full, `"name":"tools_search"`) || !strings.Contains(full, `"name":"dir_list"`) {
		t.Fatalf("the hub's mode through connect lists: %.600s", full)
	}
	bad := exec.Command(bin, "connect", "--socket", sock, "--tools-mode", "turbo")
	bad.Env = env
	if out, err := bad.CombinedOutput(); err == nil || !strings.Contains(string(out), "full, search or script") {
		t.Fatalf("connect --tools-mode turbo: %v %s", err, out)
	}
}

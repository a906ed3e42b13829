//go:build unix

package mcp

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-hub/switchboard/internal/process"
	"github.com/switchboard-hub/switchboard/internal/testutil"
)

// sseCall is one POST whose response stream a test reads event by event.
type sseCall struct {
	status int
	ctype  string
	msgs   chan map[string]any // every JSON-RPC message of the stream; closed at its end
}

// postStream sends body on session sid and reads its response in the background.
func postStream(t *testing.T, addr, sid, body string) *sseCall {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer s3cret")
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	c := &sseCall{status: resp.StatusCode, ctype: resp.Header.Get("Content-Type"), msgs: make(chan map[string]any, 64)}
	go func() {
		defer close(c.msgs)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			data, ok := strings.CutPrefix(sc.Text(), "data: ")
			if !ok {
				continue
			}
			var m map[string]any
			if err := json.Unmarshal([]byte(data), &m); err != nil {
				t.Errorf("undecodable SSE data %q: %v", data, err)
				continue
			}
			c.msgs <- m
		}
	}()
	return c
}

// until reads the stream until want matches (returning it) or the stream ends (returning nil).
func (c *sseCall) until(t *testing.T, want func(map[string]any) bool, timeout time.Duration) (map[string]any, []map[string]any) {
	t.Helper()
	var seen []map[string]any
	deadline := time.After(timeout)
	for {
		select {
		case m, ok := <-c.msgs:
			if !ok {
				return nil, seen
			}
			if want != nil && want(m) {
				return m, seen
			}
			seen = append(seen, m)
		case <-deadline:
			t.Fatalf("stream still open after %s; read %v", timeout, seen)
		}
	}
}

func execCall(id, progressToken, script string) string {
	meta := ""
	if progressToken != "" {
		meta = `"_meta":{"progressToken":"` + progressToken + `"},`
	}
	args, _ := json.Marshal([]string{"-c", script})
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{` + meta +
		`"name":"exec","arguments":{"command":"sh","args":` + string(args) + `,"timeout":600}}}`
}

func readPids(t *testing.T, path string) []int {
	t.Helper()
	var pids []int
	testutil.Eventually(t, "the command to write its pids", func() bool {
		raw, err := os.ReadFile(path)
		if err != nil || !strings.HasSuffix(string(raw), "\n") {
			return false
		}
		pids = pids[:0]
		for _, f := range strings.Fields(string(raw)) {
			n, _ := strconv.Atoi(f)
			pids = append(pids, n)
		}
		return true
	})
	if len(pids) != 2 {
		t.Fatalf("%s holds %v, want the shell's and its child's pid", path, pids)
	}
	return pids
}

func isReply(m map[string]any) bool { _, isMsg := m["method"]; return !isMsg }

// TestHTTPCancelledCallGetsNoReply: over Streamable HTTP, notifications/cancelled kills the
// cancelled exec's process group and its POST stream ends without a reply for that id, for a
// plain id and for an id go-sdk cannot carry (1.5, aliased on the way in). A concurrent call on
// the same session and a call with the same id on another session still get their replies.
func TestHTTPCancelledCallGetsNoReply(t *testing.T) {
	ws := t.TempDir()
	s := newTestService(t, WithWorkspaceRoot(ws), WithProcessService(process.New(process.Options{})))
	addr := listen(t, s, TransportHTTP, TransportConfig{HTTPAddr: "127.0.0.1:0", HTTPToken: "s3cret"})
	sid1 := initHTTPSession(t, addr, "s3cret")
	sid2 := initHTTPSession(t, addr, "s3cret")

	slow7 := postStream(t, addr, sid1, execCall("7", "tok-7", "sleep 300 & echo $$ $! > pids7; wait"))
	slow15 := postStream(t, addr, sid1, execCall("1.5", "tok-15", "sleep 300 & echo $$ $! > pids15; wait"))
	same := postStream(t, addr, sid1, execCall("8", "", "sleep 2; echo done-8"))
	other := postStream(t, addr, sid2, execCall("7", "", "sleep 2; echo done-other-7"))
	for _, c := range []*sseCall{slow7, slow15, same, other} {
		if c.status != 200 || !strings.HasPrefix(c.ctype, "text/event-stream") {
			t.Fatalf("POST: %d %q, want an SSE stream", c.status, c.ctype)
		}
	}
	pids := append(readPids(t, filepath.Join(ws, "pids7")), readPids(t, filepath.Join(ws, "pids15"))...)
	// Both slow calls are running and report progress on their own streams.
	for _, c := range []*sseCall{slow7, slow15} {
		if m, seen := c.until(t, isProgress, 5*time.Second); m == nil {
			t.Fatalf("no progress before the stream ended: %v", seen)
		}
	}

	cancel := httpDo(t, "POST", "http://"+addr+"/mcp",
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"user"}}`,
		map[string]string{"Authorization": "Bearer s3cret", "Mcp-Session-Id": sid1, "Mcp-Protocol-Version": "2025-06-18"})
	if cancel.StatusCode != http.StatusAccepted {
		t.Fatalf("cancel 7: %d", cancel.StatusCode)
	}
	cancel = httpDo(t, "POST", "http://"+addr+"/mcp",
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1.5,"reason":"user"}}`,
		map[string]string{"Authorization": "Bearer s3cret", "Mcp-Session-Id": sid1, "Mcp-Protocol-Version": "2025-06-18"})
	if cancel.StatusCode != http.StatusAccepted {
		t.Fatalf("cancel 1.5: %d", cancel.StatusCode)
	}
	// A zombie counts as ended (testutil.Gone): once an earlier test's upstream manager made
	// this process a child subreaper, the killed shell's orphaned sleep is reparented to it and
	// stays a zombie until reaped, which Kill(pid, 0) would still see.
	for _, pid := range pids {
		if !testutil.Gone(t, pid, 15*time.Second) {
			t.Fatalf("cancelled command process %d still runs 15 s after the cancel", pid)
		}
	}

	for name, c := range map[string]*sseCall{"7": slow7, "1.5": slow15} {
		if m, _ := c.until(t, isReply, 10*time.Second); m != nil {
			t.Errorf("the server replied to cancelled request %s: %v", name, m)
		}
	}
	for name, c := range map[string]*sseCall{"8 (same session)": same, "7 (other session)": other} {
		m, seen := c.until(t, isReply, 15*time.Second)
		if m == nil {
			t.Fatalf("no reply to %s; stream held %v", name, seen)
		}
		res, _ := m["result"].(map[string]any)
		if res == nil || res["isError"] == true || !strings.Contains(fmt.Sprint(res), "done-") {
			t.Errorf("reply to %s: %v", name, m)
		}
	}

	// The session goes on, and a cancel naming an id that is no longer running changes nothing.
	if r := httpDo(t, "POST", "http://"+addr+"/mcp",
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":8}}`,
		map[string]string{"Authorization": "Bearer s3cret", "Mcp-Session-Id": sid1, "Mcp-Protocol-Version": "2025-06-18"}); r.StatusCode != http.StatusAccepted {
		t.Fatalf("late cancel: %d", r.StatusCode)
	}
	again := postStream(t, addr, sid1, execCall("7", "", "echo again"))
	if m, seen := again.until(t, isReply, 10*time.Second); m == nil || m["result"] == nil {
		t.Fatalf("id 7 reused after the cancel: %v (stream %v)", m, seen)
	}
}

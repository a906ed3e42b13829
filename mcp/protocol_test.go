package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/internal/process"
	"github.com/switchboard-hub/switchboard/internal/testutil"
	"github.com/switchboard-hub/switchboard/internal/wshub"
	"github.com/switchboard-hub/switchboard/mcp/tool"
	"github.com/switchboard-hub/switchboard/mcp/tools"
)

// rawConn is a client speaking raw newline-delimited JSON-RPC to ServeStream, so a test sees
// exactly which messages the server writes (and which it does not).
type rawConn struct {
	t     *testing.T
	in    *io.PipeWriter
	lines chan map[string]any
}

func newRawConn(t *testing.T, s *Service) *rawConn {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	go func() { _ = s.ServeStream(context.Background(), "test", "pipe", inR, outW, outW.Close) }()
	rc := &rawConn{t: t, in: inW, lines: make(chan map[string]any, 256)}
	go func() {
		defer close(rc.lines)
		sc := bufio.NewScanner(outR)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				rc.lines <- m
			}
		}
	}()
	t.Cleanup(func() { inW.Close() })
	rc.send(strings.TrimSpace(initLine))
	rc.next(func(m map[string]any) bool { return fmt.Sprint(m["id"]) == "0" }, 5*time.Second)
	return rc
}

// awaitCallsEnded waits until n calls of tool have ended: the hub records a call in its activity
// feed when the handler returns, on the goroutine that then writes the reply, if any. A ping
// sent after that is answered after such a reply would have been written, so "no reply before
// the ping's" means no reply was sent.
func awaitCallsEnded(t *testing.T, s *Service, tool string, n int) {
	t.Helper()
	testutil.Eventually(t, fmt.Sprintf("%d %s call(s) to end", n, tool), func() bool {
		ended := 0
		for _, e := range s.Activity() {
			if e.Tool == tool {
				ended++
			}
		}
		return ended >= n
	})
}

func (rc *rawConn) send(lines ...string) {
	for _, l := range lines {
		if _, err := io.WriteString(rc.in, l+"\n"); err != nil {
			rc.t.Fatal(err)
		}
	}
}

// next returns the first message matching want, and every message read before it.
func (rc *rawConn) next(want func(map[string]any) bool, timeout time.Duration) (map[string]any, []map[string]any) {
	rc.t.Helper()
	var before []map[string]any
	deadline := time.After(timeout)
	for {
		select {
		case m, ok := <-rc.lines:
			if !ok {
				rc.t.Fatalf("server closed the stream; read %v", before)
			}
			if want(m) {
				return m, before
			}
			before = append(before, m)
		case <-deadline:
			rc.t.Fatalf("no matching message within %s; read %v", timeout, before)
		}
	}
}

func isProgress(m map[string]any) bool { return m["method"] == "notifications/progress" }

// TestExecProgressAndCancellation: exec with a progress token sends notifications/progress at
// least every 2 s; notifications/cancelled kills the command's process group and no reply is
// sent for the cancelled request, while the session keeps answering.
func TestExecProgressAndCancellation(t *testing.T) {
	ws := t.TempDir()
	s := newTestService(t, WithWorkspaceRoot(ws), WithProcessService(process.New(process.Options{})))
	rc := newRawConn(t, s)
	// The shell writes its own pid and a child's, then waits: both must die on cancel.
	rc.send(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"exec","_meta":{"progressToken":"tok-7"},` +
		`"arguments":{"command":"sh","args":["-c","sleep 300 & echo $$ $! > pids; wait"],"timeout":600}}}`)
	start := time.Now()
	var stamps []time.Duration
	for len(stamps) < 3 {
		m, before := rc.next(isProgress, 2500*time.Millisecond)
		for _, b := range before {
			t.Fatalf("unexpected message before progress: %v", b)
		}
		p := m["params"].(map[string]any)
		if p["progressToken"] != "tok-7" {
			t.Fatalf("progress token %v, want tok-7", p["progressToken"])
		}
		if !strings.Contains(fmt.Sprint(p["message"]), "sh") {
			t.Errorf("progress message %q does not say what runs", p["message"])
		}
		stamps = append(stamps, time.Since(start))
	}
	for i := 1; i < len(stamps); i++ {
		if gap := stamps[i] - stamps[i-1]; gap > 2*time.Second {
			t.Errorf("progress gap %s > 2s", gap)
		}
	}
	raw, err := os.ReadFile(filepath.Join(ws, "pids"))
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, f := range strings.Fields(string(raw)) {
		n, _ := strconv.Atoi(f)
		pids = append(pids, n)
	}
	if len(pids) != 2 {
		t.Fatalf("pids file %q", raw)
	}
	rc.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"user"}}`)
	for _, pid := range pids {
		if !testutil.Gone(t, pid, testutil.Patience) {
			t.Fatalf("the cancelled command or its child (%d) still runs", pid)
		}
	}
	awaitCallsEnded(t, s, "exec", 1)
	rc.send(`{"jsonrpc":"2.0","id":8,"method":"ping"}`)
	_, before := rc.next(func(m map[string]any) bool { return fmt.Sprint(m["id"]) == "8" }, 5*time.Second)
	for _, m := range before {
		if fmt.Sprint(m["id"]) == "7" {
			t.Fatalf("server replied to the cancelled request: %v", m)
		}
	}
}

// TestProcessWaitProgressAndCancellation: process_wait ticks progress and returns on cancel
// without a reply; the waited-on process keeps running (cancel ends the wait, not the process).
func TestProcessWaitProgressAndCancellation(t *testing.T) {
	s := newTestService(t, WithProcessService(process.New(process.Options{})))
	cs := connect(t, s)
	var started tools.ProcessStartOutput
	mustCall(t, cs, "process_start", map[string]any{"command": "sleep", "args": []string{"60"}}, &started)
	rc := newRawConn(t, s)
	rc.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":"w1","method":"tools/call","params":{"name":"process_wait","_meta":{"progressToken":5},"arguments":{"id":%q,"timeout":120}}}`, started.ID))
	rc.next(isProgress, 2500*time.Millisecond)
	rc.next(isProgress, 2500*time.Millisecond)
	rc.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"w1"}}`)
	awaitCallsEnded(t, s, "process_wait", 1)
	rc.send(`{"jsonrpc":"2.0","id":9,"method":"ping"}`)
	_, before := rc.next(func(m map[string]any) bool { return fmt.Sprint(m["id"]) == "9" }, 5*time.Second)
	for _, m := range before {
		if m["id"] == "w1" {
			t.Fatalf("server replied to the cancelled wait: %v", m)
		}
	}
	var list tools.ProcessListOutput
	mustCall(t, cs, "process_list", map[string]any{"running_only": true}, &list)
	if list.Total != 1 {
		t.Errorf("process_list running = %d, want the sleep still running", list.Total)
	}
	// Without a progress token, no progress is sent.
	rc.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"process_wait","arguments":{"id":%q,"timeout":3}}}`, started.ID))
	_, before = rc.next(func(m map[string]any) bool { return fmt.Sprint(m["id"]) == "10" }, 10*time.Second)
	if slices.ContainsFunc(before, isProgress) {
		t.Errorf("progress sent without a progress token: %v", before)
	}
}

// TestToolsetsSwitchAndListChanged: switching a toolset off removes its tools for connected
// clients, who get notifications/tools/list_changed; switching it on brings them back, callable.
func TestToolsetsSwitchAndListChanged(t *testing.T) {
	s := newTestService(t, WithProcessService(process.New(process.Options{})), WithToolsets("files", "metrics"))
	changed := make(chan struct{}, 8)
	ctx := context.Background()
	ct, st := sdk.NewInMemoryTransports()
	ss, err := s.Server().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "c", Version: "1"}, &sdk.ClientOptions{
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) { changed <- struct{}{} },
	}).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); ss.Close() })
	names := func() []string {
		res, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, tl := range res.Tools {
			out = append(out, tl.Name)
		}
		return out
	}
	if got := names(); slices.Contains(got, "exec") || !slices.Contains(got, "file_read") {
		t.Fatalf("with toolsets files,metrics: tools %v", got)
	}
	if _, err := s.SetToolset("process", true); err != nil {
		t.Fatal(err)
	}
	select {
	case <-changed:
	case <-time.After(5 * time.Second):
		t.Fatal("no notifications/tools/list_changed after switching process on")
	}
	if got := names(); !slices.Contains(got, "exec") || !slices.Contains(got, "process_start") {
		t.Fatalf("process toolset on: tools %v", got)
	}
	var out tools.ExecOutput
	mustCall(t, cs, "exec", map[string]any{"command": "echo", "args": []string{"back"}}, &out)
	if strings.TrimSpace(out.Stdout) != "back" {
		t.Errorf("exec after re-adding: %+v", out)
	}
	if _, err := s.SetToolsets([]string{"process"}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-changed:
	case <-time.After(5 * time.Second):
		t.Fatal("no notifications/tools/list_changed after switching files off")
	}
	if got := names(); slices.Contains(got, "file_read") {
		t.Fatalf("files off: tools %v", got)
	}
	if _, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "file_read", Arguments: map[string]any{"path": "x"}}); err == nil || !strings.Contains(err.Error(), "unknown tool") {
		t.Errorf("file_read with files off: err %v, want unknown tool", err)
	}
	if !strings.Contains(s.Instructions(), "process_*, exec") || strings.Contains(s.Instructions(), "file_") {
		t.Errorf("instructions do not follow the toolsets: %s", s.Instructions())
	}
	if _, err := s.SetToolsets([]string{"files", "bogus"}); err == nil || !strings.Contains(err.Error(), `"bogus"`) || !strings.Contains(err.Error(), "memory") {
		t.Errorf("unknown toolset: err %v, want one naming it and the valid ones", err)
	}
	if _, err := New(WithWorkspaceRoot(t.TempDir()), WithToolsets("nope")); err == nil || !strings.Contains(err.Error(), "valid: all, files, process") {
		t.Errorf("WithToolsets(nope): %v", err)
	}
}

// TestToolsetsAreDeclared: every tool carries the toolset its group declared (tool.NewGroup), in
// its _meta for clients as well; the sets hold what the groups registered; and a tool's name says
// nothing — a group registering "zz_probe" in the git set goes off with git.
func TestToolsetsAreDeclared(t *testing.T) {
	g := &fakeGitGroup{}
	s := newTestService(t, WithSearch(), WithPatch(), WithGit(), WithNotes(t.TempDir()), WithWSHub(wshub.New(wshub.Options{})),
		WithProcessService(process.New(process.Options{})), WithSubsystem(g))
	want := map[string]string{
		"file_read": "files", "file_grep": "files", "file_patch": "files", "dir_list": "files", "lang_detect": "files",
		"exec": "process", "process_wait": "process", "ws_info": "ws", "metrics_query": "metrics",
		"git_status": "git", "memory_write": "memory", "todo_write": "memory", "zz_probe": "git",
	}
	seen := 0
	for _, tl := range s.Tools() {
		if w, ok := want[tl.Name]; ok {
			seen++
			if got := ToolsetOf(tl); got != w {
				t.Errorf("ToolsetOf(%s) = %q, want %q", tl.Name, got, w)
			}
		}
	}
	if seen != len(want) {
		t.Fatalf("found %d of the %d tools", seen, len(want))
	}
	cs := connect(t, s)
	listed, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range listed.Tools {
		if tl.Name == "git_status" && tl.Meta["switchboard/toolset"] != "git" {
			t.Errorf("clients do not see git_status's toolset: %v", tl.Meta)
		}
	}
	if _, err := s.SetToolset("git", false); err != nil {
		t.Fatal(err)
	}
	for _, tl := range s.ActiveTools() {
		if tl.Name == "zz_probe" || tl.Name == "git_status" {
			t.Errorf("%s is still served with the git toolset off", tl.Name)
		}
	}
}

// fakeGitGroup registers a tool whose name matches no set, in the git toolset.
type fakeGitGroup struct{}

func (*fakeGitGroup) Name() string { return "fake-git" }

func (*fakeGitGroup) Tools() tool.Group {
	return tool.NewGroup("git", tool.New(sdk.Tool{Name: "zz_probe", Annotations: tool.ReadOnly("Probe")},
		func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, fakeOutput, error) {
			return nil, fakeOutput{}, nil
		}))
}

// TestClientLoggingOfProcessEnd: the client that started a process gets notifications/message
// when it ends (warning when it died), at the level it set with logging/setLevel; nothing before
// it sets a level, and other clients get nothing.
func TestClientLoggingOfProcessEnd(t *testing.T) {
	s := newTestService(t, WithProcessService(process.New(process.Options{})))
	ctx := context.Background()
	type got struct {
		level sdk.LoggingLevel
		text  string
	}
	connectLogging := func() (*sdk.ClientSession, chan got) {
		msgs := make(chan got, 16)
		ct, st := sdk.NewInMemoryTransports()
		ss, err := s.Server().Connect(ctx, st, nil)
		if err != nil {
			t.Fatal(err)
		}
		cs, err := sdk.NewClient(&sdk.Implementation{Name: "log", Version: "1"}, &sdk.ClientOptions{
			LoggingMessageHandler: func(_ context.Context, r *sdk.LoggingMessageRequest) {
				msgs <- got{r.Params.Level, fmt.Sprint(r.Params.Data)}
			},
		}).Connect(ctx, ct, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close(); ss.Close() })
		return cs, msgs
	}
	owner, msgs := connectLogging()
	other, otherMsgs := connectLogging()
	if err := other.SetLoggingLevel(ctx, &sdk.SetLoggingLevelParams{Level: "debug"}); err != nil {
		t.Fatal(err)
	}
	// No level set yet: nothing is sent.
	var st tools.ProcessStartOutput
	mustCall(t, owner, "process_start", map[string]any{"command": "sh", "args": []string{"-c", "exit 0"}}, &st)
	waitProcess(t, owner, st.ID)
	select {
	case m := <-msgs:
		t.Fatalf("message before logging/setLevel: %+v", m)
	case <-time.After(300 * time.Millisecond):
	}
	if err := owner.SetLoggingLevel(ctx, &sdk.SetLoggingLevelParams{Level: "warning"}); err != nil {
		t.Fatal(err)
	}
	mustCall(t, owner, "process_start", map[string]any{"command": "sh", "args": []string{"-c", "exit 0"}}, &st)
	waitProcess(t, owner, st.ID) // info: below the warning level, dropped
	mustCall(t, owner, "process_start", map[string]any{"command": "sh", "args": []string{"-c", "sleep 0.2; exit 3"}}, &st)
	select {
	case m := <-msgs:
		if m.level != "warning" || !strings.Contains(m.text, st.ID) || !strings.Contains(m.text, "exit code 3") {
			t.Fatalf("message %+v; want a warning naming %s and exit code 3", m, st.ID)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no notifications/message after the started process died")
	}
	select {
	case m := <-otherMsgs:
		t.Fatalf("a client that did not start the process got %+v", m)
	case <-time.After(300 * time.Millisecond):
	}
}

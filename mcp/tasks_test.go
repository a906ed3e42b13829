package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/internal/policy"
	"github.com/switchboard-hub/switchboard/internal/process"
	"github.com/switchboard-hub/switchboard/internal/testutil"
	"github.com/switchboard-hub/switchboard/internal/upstream"
	"github.com/switchboard-hub/switchboard/mcp/tools"
)

// taskAfter is the tests' task_after: short, so a call of a second or two becomes a task.
const taskAfter = 300 * time.Millisecond

// taskHub is a hub with processes and tasks (finished ones kept in stateDir) serving a Unix
// socket; it returns the socket's path.
func taskHub(t *testing.T, ws, stateDir string, opts ...Option) (*Service, string) {
	t.Helper()
	s := newTestService(t, append([]Option{WithWorkspaceRoot(ws), WithProcessService(process.New(process.Options{})), WithTasks(stateDir, taskAfter)}, opts...)...)
	dir, err := os.MkdirTemp("", "sb-task-") // short path: sun_path is 108 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	path := filepath.Join(dir, "mcp.sock")
	tr := s.NewTransports(TransportConfig{UnixPath: path})
	if err := tr.Start(TransportUnix); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = tr.Stop(ctx, TransportUnix)
	})
	return s, path
}

// dialAs connects a go-sdk client named name to the Unix socket at path.
func dialAs(t *testing.T, path, name string) *sdk.ClientSession {
	t.Helper()
	conn, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: name, Version: "1"}, nil).Connect(context.Background(), &sdk.IOTransport{Reader: conn, Writer: conn}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// handOff calls a tool that outlives task_after and returns the task id it answers with,
// checking that the answer came before the call could have ended and says how to collect it.
func handOff(t *testing.T, cs *sdk.ClientSession, tool string, args any, runs time.Duration) string {
	t.Helper()
	start := time.Now()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	if took := time.Since(start); took >= runs {
		t.Fatalf("%s answered after %s: the task handle must come before the call ends (%s)", tool, took, runs)
	}
	id, _ := res.Meta[TaskIDMetaKey].(string)
	related, _ := res.Meta[RelatedTaskMetaKey].(map[string]any)
	text := toolText(res)
	if id == "" || related["taskId"] != id || !strings.Contains(text, "still running") || !strings.Contains(text, `tasks_get {"task_id": "`+id+`"}`) {
		t.Fatalf("%s: no task handle: meta=%v text=%q", tool, res.Meta, text)
	}
	// The hub's tools declare output schemas, which a handle cannot match: it is error-shaped,
	// the one shape clients that check schemas (the TypeScript SDK) pass on to the model.
	if !res.IsError || res.StructuredContent != nil {
		t.Fatalf("%s: a handle for a tool with an output schema: isError=%v structured=%v", tool, res.IsError, res.StructuredContent)
	}
	return id
}

// collect polls tasks_get until the task is done and returns the last answer.
func collect(t *testing.T, cs *sdk.ClientSession, id string) (tools.TaskGetOutput, *sdk.CallToolResult) {
	t.Helper()
	var out tools.TaskGetOutput
	var res *sdk.CallToolResult
	testutil.Eventually(t, "task "+id+" to end", func() bool {
		var err error
		res, err = cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "tasks_get", Arguments: map[string]any{"task_id": id}})
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := json.Marshal(res.StructuredContent)
		out = tools.TaskGetOutput{}
		_ = json.Unmarshal(raw, &out)
		return out.Done
	})
	return out, res
}

// TestLongCallBecomesATask: an exec that runs past task_after answers with a task handle before
// it ends; tasks_get says working, then gives the call's own result — also to the same client
// after it reconnected — while another client is refused.
func TestLongCallBecomesATask(t *testing.T) {
	s, sock := taskHub(t, t.TempDir(), t.TempDir())
	cs := dialAs(t, sock, "agent-a")
	id := handOff(t, cs, "exec", map[string]any{"command": "sh", "args": []string{"-c", "sleep 2; echo finished-late"}}, 2*time.Second)

	var out tools.TaskGetOutput
	mustCall(t, cs, "tasks_get", map[string]any{"task_id": id}, &out)
	if out.Status != "working" || out.Done || out.Tool != "exec" {
		t.Fatalf("a running task: %+v", out)
	}
	if n := s.TasksRunning(); n != 1 {
		t.Fatalf("TasksRunning = %d, want 1", n)
	}
	if ts := s.Tasks(); len(ts) != 1 || ts[0].Owner.Client != "agent-a" || ts[0].Owner.Transport != "unix" || time.Since(ts[0].Created) < taskAfter {
		t.Fatalf("Tasks() = %+v (a task's age counts from the call's start)", ts)
	}

	other := dialAs(t, sock, "agent-b")
	if e := call(t, other, "tasks_get", map[string]any{"task_id": id}, nil); !strings.Contains(e, "belongs to another client") {
		t.Fatalf("another client read the task: %q", e)
	}
	if e := call(t, other, "tasks_cancel", map[string]any{"task_id": id}, nil); !strings.Contains(e, "belongs to another client") {
		t.Fatalf("another client cancelled the task: %q", e)
	}
	if e := call(t, cs, "tasks_get", map[string]any{"task_id": "task-0000"}, nil); !strings.Contains(e, "no such task") {
		t.Fatalf("unknown id: %q", e)
	}

	cs.Close() // the client goes away; the call goes on
	again := dialAs(t, sock, "agent-a")
	out, res := collect(t, again, id)
	if out.Status != "completed" || out.IsError || !strings.Contains(toolText(res), "finished-late") {
		t.Fatalf("collected after a reconnect: %+v %q", out, toolText(res))
	}
	sc, _ := out.StructuredContent.(map[string]any)
	if sc["stdout"] != "finished-late\n" {
		t.Fatalf("the call's structured result: %v", out.StructuredContent)
	}
	if s.TasksRunning() != 0 {
		t.Fatalf("TasksRunning after the end = %d", s.TasksRunning())
	}
	// The call is on record once, as it really ended.
	awaitCallsEnded(t, s, "exec", 1)
	for _, e := range s.Activity() {
		if e.Tool == "exec" && (e.Outcome != "ok" || e.DurationMs < 1900) {
			t.Fatalf("activity records the exec as %s after %.0f ms", e.Outcome, e.DurationMs)
		}
	}
}

// TestQuickCallIsNoTask: a call that ends before task_after answers as usual.
func TestQuickCallIsNoTask(t *testing.T) {
	s, sock := taskHub(t, t.TempDir(), t.TempDir())
	cs := dialAs(t, sock, "agent-a")
	var out tools.ExecOutput
	mustCall(t, cs, "exec", map[string]any{"command": "echo", "args": []string{"hi"}}, &out)
	if out.Stdout != "hi\n" || len(s.Tasks()) != 0 {
		t.Fatalf("quick exec: %+v, tasks %v", out, s.Tasks())
	}
}

// TestTaskCancelKillsTheProcess: tasks_cancel ends the call's context, which kills exec's
// process group; the task reads cancelled.
func TestTaskCancelKillsTheProcess(t *testing.T) {
	ws := t.TempDir()
	_, sock := taskHub(t, ws, t.TempDir())
	cs := dialAs(t, sock, "agent-a")
	id := handOff(t, cs, "exec", map[string]any{"command": "sh", "args": []string{"-c", "echo $$ > pid; sleep 300"}, "timeout": 600}, 300*time.Second)
	var pid int
	testutil.Eventually(t, "the shell to write its pid", func() bool {
		raw, err := os.ReadFile(filepath.Join(ws, "pid"))
		pid, _ = strconv.Atoi(strings.TrimSpace(string(raw)))
		return err == nil && pid > 0
	})
	// The call's progress (exec reports every second, on the token the hub asked for) is the task's.
	testutil.Eventually(t, "the task to show exec's progress", func() bool {
		var out tools.TaskGetOutput
		mustCall(t, cs, "tasks_get", map[string]any{"task_id": id}, &out)
		return out.Progress != nil && out.Progress.Done > 0 && strings.Contains(out.Progress.Message, "sh")
	})
	var c tools.TaskCancelOutput
	mustCall(t, cs, "tasks_cancel", map[string]any{"task_id": id}, &c)
	if c.Status != "cancelled" {
		t.Fatalf("tasks_cancel: %+v", c)
	}
	if !testutil.Gone(t, pid, testutil.Patience) {
		t.Fatalf("the cancelled task's process %d still runs", pid)
	}
	out, _ := collect(t, cs, id)
	if out.Status != "cancelled" {
		t.Fatalf("after cancel: %+v", out)
	}
}

// TestFinishedTaskSurvivesARestart: a task that finished is collected from a new hub on the
// same state directory, by the same client.
func TestFinishedTaskSurvivesARestart(t *testing.T) {
	state, ws := t.TempDir(), t.TempDir()
	s, sock := taskHub(t, ws, state)
	cs := dialAs(t, sock, "agent-a")
	id := handOff(t, cs, "exec", map[string]any{"command": "sh", "args": []string{"-c", "sleep 1; echo survived"}}, time.Second)
	collect(t, cs, id)
	// One still running when the hub stops: its process ends with the hub, the task is kept
	// as cancelled.
	running := handOff(t, cs, "exec", map[string]any{"command": "sh", "args": []string{"-c", "echo $$ > pid; sleep 300"}, "timeout": 600}, 300*time.Second)
	var pid int
	testutil.Eventually(t, "the shell to write its pid", func() bool {
		raw, err := os.ReadFile(filepath.Join(ws, "pid"))
		pid, _ = strconv.Atoi(strings.TrimSpace(string(raw)))
		return err == nil && pid > 0
	})
	cs.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}

	_, sock2 := taskHub(t, t.TempDir(), state)
	cs2 := dialAs(t, sock2, "agent-a")
	out, res := collect(t, cs2, id)
	if out.Status != "completed" || !strings.Contains(toolText(res), "survived") {
		t.Fatalf("after a restart: %+v %q", out, toolText(res))
	}
	other := dialAs(t, sock2, "agent-b")
	if e := call(t, other, "tasks_get", map[string]any{"task_id": id}, nil); !strings.Contains(e, "belongs to another client") {
		t.Fatalf("another client read the restored task: %q", e)
	}
	if !testutil.Gone(t, pid, testutil.Patience) {
		t.Fatalf("the running task's process %d outlived the hub", pid)
	}
	var out2 tools.TaskGetOutput
	mustCall(t, cs2, "tasks_get", map[string]any{"task_id": running}, &out2)
	if out2.Status != "cancelled" || !strings.Contains(out2.StatusMessage, "hub stopped") {
		t.Fatalf("a task running at shutdown, after the restart: %+v", out2)
	}
}

// rawSocket is a client speaking raw JSON-RPC over the hub's Unix socket.
type rawSocket struct {
	t    *testing.T
	conn net.Conn
	sc   *bufio.Scanner
}

func dialRaw(t *testing.T, path string) *rawSocket {
	t.Helper()
	conn, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	sc := bufio.NewScanner(conn)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	return &rawSocket{t: t, conn: conn, sc: sc}
}

// ask sends a request and returns its reply, skipping notifications.
func (r *rawSocket) ask(id int, method string, params any) map[string]any {
	r.t.Helper()
	raw, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	if _, err := r.conn.Write(append(raw, '\n')); err != nil {
		r.t.Fatal(err)
	}
	_ = r.conn.SetReadDeadline(time.Now().Add(testutil.Patience))
	for r.sc.Scan() {
		var m map[string]any
		if json.Unmarshal(r.sc.Bytes(), &m) == nil && fmt.Sprint(m["id"]) == strconv.Itoa(id) {
			return m
		}
	}
	r.t.Fatalf("%s: no reply: %v", method, r.sc.Err())
	return nil
}

func (r *rawSocket) notify(method string) {
	raw, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": method})
	_, _ = r.conn.Write(append(raw, '\n'))
}

func (r *rawSocket) initialize(name string, extension bool) {
	r.t.Helper()
	caps := map[string]any{}
	if extension {
		caps["extensions"] = map[string]any{TasksExtension: map[string]any{}}
	}
	m := r.ask(0, "initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": caps,
		"clientInfo": map[string]any{"name": name, "version": "1"}})
	if m["error"] != nil {
		r.t.Fatalf("initialize: %v", m["error"])
	}
	// The hub announces the extension.
	raw, _ := json.Marshal(m["result"])
	if !strings.Contains(string(raw), `"extensions":{"`+TasksExtension+`":{}}`) {
		r.t.Fatalf("initialize does not announce %s: %s", TasksExtension, raw)
	}
	r.notify("notifications/initialized")
}

// TestTasksExtension: a client that declares io.modelcontextprotocol/tasks gets a
// CreateTaskResult (resultType "task") for a long call and polls tasks/get until the call's
// result is inlined; tasks/cancel and tasks/update answer with an acknowledgement; a client
// that did not declare the extension gets -32021 from tasks/get.
func TestTasksExtension(t *testing.T) {
	_, sock := taskHub(t, t.TempDir(), t.TempDir())
	rc := dialRaw(t, sock)
	rc.initialize("ext-client", true)
	start := time.Now()
	m := rc.ask(1, "tools/call", map[string]any{"name": "exec", "arguments": map[string]any{"command": "sh", "args": []string{"-c", "sleep 1.5; echo via-extension"}}})
	if time.Since(start) >= 1500*time.Millisecond {
		t.Fatalf("the CreateTaskResult came after the call ended")
	}
	res, _ := m["result"].(map[string]any)
	id, _ := res["taskId"].(string)
	if res["resultType"] != "task" || id == "" || res["status"] != "working" || res["createdAt"] == nil {
		t.Fatalf("not a CreateTaskResult: %v", m)
	}
	got := rc.ask(2, "tasks/get", map[string]any{"taskId": id})
	if r, _ := got["result"].(map[string]any); r["status"] != "working" || r["resultType"] != "complete" || r["pollIntervalMs"] == nil {
		t.Fatalf("tasks/get while running: %v", got)
	}
	if ack := rc.ask(3, "tasks/update", map[string]any{"taskId": id, "inputResponses": map[string]any{"x": map[string]any{"action": "accept"}}}); ack["error"] != nil {
		t.Fatalf("tasks/update: %v", ack)
	}
	var final map[string]any
	n := 10
	testutil.Eventually(t, "the task to complete", func() bool {
		n++
		r, _ := rc.ask(n, "tasks/get", map[string]any{"taskId": id})["result"].(map[string]any)
		final = r
		return r["status"] == "completed"
	})
	inner, _ := final["result"].(map[string]any)
	raw, _ := json.Marshal(inner)
	if !strings.Contains(string(raw), "via-extension") || final["ttlMs"] == nil {
		t.Fatalf("the completed task does not inline the call's result: %v", final)
	}
	if e := rc.ask(100, "tasks/get", map[string]any{"taskId": "task-nope"})["error"].(map[string]any); e["code"] != float64(-32602) {
		t.Fatalf("unknown task: %v", e)
	}

	// Cancel through the extension.
	m = rc.ask(101, "tools/call", map[string]any{"name": "exec", "arguments": map[string]any{"command": "sleep", "args": []string{"300"}, "timeout": 600}})
	id2, _ := m["result"].(map[string]any)["taskId"].(string)
	if ack := rc.ask(102, "tasks/cancel", map[string]any{"taskId": id2}); ack["error"] != nil {
		t.Fatalf("tasks/cancel: %v", ack)
	}
	if r, _ := rc.ask(103, "tasks/get", map[string]any{"taskId": id2})["result"].(map[string]any); r["status"] != "cancelled" {
		t.Fatalf("after tasks/cancel: %v", r)
	}

	// A 2026-07-28 client: no initialize, the extension declared in each request's _meta.
	modern := dialRaw(t, sock)
	meta := func(ext bool) map[string]any {
		caps := map[string]any{}
		if ext {
			caps["extensions"] = map[string]any{TasksExtension: map[string]any{}}
		}
		return map[string]any{"io.modelcontextprotocol/protocolVersion": "2026-07-28",
			"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "modern-client", "version": "1"},
			"io.modelcontextprotocol/clientCapabilities": caps}
	}
	d := modern.ask(0, "server/discover", map[string]any{"_meta": meta(true)})
	if raw, _ := json.Marshal(d["result"]); !strings.Contains(string(raw), `"extensions":{"`+TasksExtension+`":{}}`) {
		t.Fatalf("server/discover does not announce %s: %v", TasksExtension, d)
	}
	m = modern.ask(1, "tools/call", map[string]any{"_meta": meta(true), "name": "exec", "arguments": map[string]any{"command": "sleep", "args": []string{"2"}}})
	id3, _ := m["result"].(map[string]any)["taskId"].(string)
	if m["result"].(map[string]any)["resultType"] != "task" || id3 == "" {
		t.Fatalf("a 2026-07-28 client declaring the extension per request: %v", m)
	}
	if r, _ := modern.ask(2, "tasks/get", map[string]any{"_meta": meta(true), "taskId": id3})["result"].(map[string]any); r["status"] != "working" {
		t.Fatalf("tasks/get on 2026-07-28: %v", r)
	}
	// The same client without the extension on this request gets the tool-result handle.
	m = modern.ask(3, "tools/call", map[string]any{"_meta": meta(false), "name": "exec", "arguments": map[string]any{"command": "sleep", "args": []string{"2"}}})
	r, _ := m["result"].(map[string]any)
	rm, _ := r["_meta"].(map[string]any)
	if r["resultType"] != "complete" || rm[TaskIDMetaKey] == nil || r["isError"] != true {
		t.Fatalf("a 2026-07-28 request without the extension: %v", m)
	}

	plain := dialRaw(t, sock)
	plain.initialize("ext-client", false)
	e, _ := plain.ask(1, "tasks/get", map[string]any{"taskId": id})["error"].(map[string]any)
	if e == nil || e["code"] != float64(codeMissingCapability) {
		t.Fatalf("a client without the extension used tasks/get: %v", e)
	}
}

// TestTaskOverHTTP: over Streamable HTTP the handle comes back on the call's own response, the
// call goes on after that response stream ended (its progress no longer has one), and the same
// client on a new HTTP session collects the result.
func TestTaskOverHTTP(t *testing.T) {
	s := newTestService(t, WithProcessService(process.New(process.Options{})), WithTasks(t.TempDir(), taskAfter))
	tr := s.NewTransports(TransportConfig{HTTPAddr: "127.0.0.1:0", HTTPToken: "s3cret"})
	if err := tr.Start(TransportHTTP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.StopAll(context.Background()) })
	url := "http://" + tr.Addr(TransportHTTP) + "/mcp"
	dialHTTP := func() *sdk.ClientSession {
		hc := &http.Client{Transport: bearer{"s3cret", http.DefaultTransport}}
		cs, err := sdk.NewClient(&sdk.Implementation{Name: "http-agent", Version: "1"}, nil).Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: url, HTTPClient: hc}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	cs := dialHTTP()
	id := handOff(t, cs, "exec", map[string]any{"command": "sh", "args": []string{"-c", "sleep 2; echo over-http"}}, 2*time.Second)
	cs.Close()
	out, res := collect(t, dialHTTP(), id)
	if out.Status != "completed" || !strings.Contains(toolText(res), "over-http") {
		t.Fatalf("over http: %+v %q", out, toolText(res))
	}
}

// TestUpstreamCallBecomesATask: a long call to an upstream server (the real server-everything's
// long-running operation, which reports progress) is handed back as a task; the server's progress
// is the task's (through the token the hub asked with), never the client's, and tasks_get
// collects the server's result.
func TestUpstreamCallBecomesATask(t *testing.T) {
	s, m := upstreamHub(t, WithTasks(t.TempDir(), taskAfter))
	c := connectUpstreamClient(t, s)
	waitUpstream(t, m, "everything", func(st upstream.Status) bool {
		return slices.ContainsFunc(st.Tools, func(ts upstream.ToolStatus) bool { return ts.Name == "trigger-long-running-operation" })
	})
	if _, err := m.Approve(t.Context(), "everything"); err != nil { // its tools: quarantined until approved
		t.Fatal(err)
	}
	testutil.Eventually(t, "everything's tools to be served", func() bool {
		return slices.Contains(toolNames(t, c.cs), "everything__trigger-long-running-operation")
	})
	id := handOff(t, c.cs, "everything__trigger-long-running-operation", map[string]any{"duration": 3, "steps": 6}, 3*time.Second)
	testutil.Eventually(t, "the server's progress on the task", func() bool {
		var out tools.TaskGetOutput
		mustCall(t, c.cs, "tasks_get", map[string]any{"task_id": id}, &out)
		return out.Progress != nil && out.Progress.Total == 6 && out.Progress.Done >= 1
	})
	out, res := collect(t, c.cs, id)
	if out.Status != "completed" || !strings.Contains(strings.ToLower(toolText(res)), "long running operation completed") {
		t.Fatalf("the upstream call's result: %+v %q", out, toolText(res))
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.progress) != 0 {
		t.Fatalf("the client got progress it never asked for: %v %v", c.progress, c.progressTokens)
	}
}

// TestCancelBeforeTheHandBack: until task_after the request owns the call as before: the
// client's notifications/cancelled kills exec's process, no task is made and no reply is sent.
func TestCancelBeforeTheHandBack(t *testing.T) {
	ws := t.TempDir()
	s := newTestService(t, WithWorkspaceRoot(ws), WithProcessService(process.New(process.Options{})), WithTasks(t.TempDir(), time.Minute))
	rc := newRawConn(t, s)
	rc.send(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"exec","arguments":{"command":"sh","args":["-c","echo $$ > pid; sleep 300"],"timeout":600}}}`)
	var pid int
	testutil.Eventually(t, "the shell to write its pid", func() bool {
		raw, err := os.ReadFile(filepath.Join(ws, "pid"))
		pid, _ = strconv.Atoi(strings.TrimSpace(string(raw)))
		return err == nil && pid > 0
	})
	rc.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"user"}}`)
	if !testutil.Gone(t, pid, testutil.Patience) {
		t.Fatalf("the cancelled call's process %d still runs", pid)
	}
	awaitCallsEnded(t, s, "exec", 1)
	rc.send(`{"jsonrpc":"2.0","id":8,"method":"ping"}`)
	_, before := rc.next(func(m map[string]any) bool { return fmt.Sprint(m["id"]) == "8" }, 5*time.Second)
	for _, m := range before {
		if fmt.Sprint(m["id"]) == "7" {
			t.Fatalf("a reply to the cancelled request: %v", m)
		}
		if m["method"] == "notifications/progress" {
			t.Fatalf("progress the client never asked for: %v", m)
		}
	}
	if len(s.Tasks()) != 0 {
		t.Fatalf("a task for a call cancelled before task_after: %+v", s.Tasks())
	}
}

// TestTaskAsksItsClient: a call that runs as a task for a client of the Tasks extension meets an
// ask in one of its inner calls (a script's file_rename after a while): the task shows
// input_required with the question in tasks/get's inputRequests, the client's tasks/update
// answers it, and the task completes with the inner call approved. A declined answer refuses
// the inner call and the script goes on. Nothing goes to the dashboard.
func TestTaskAsksItsClient(t *testing.T) {
	p, err := policy.Compile(policy.Config{Rules: []policy.RuleSpec{{Tool: "file_rename", Action: "ask"}}}, policy.RootsConfig{})
	if err != nil {
		t.Fatal(err)
	}
	ws := t.TempDir()
	s, sock := taskHub(t, ws, t.TempDir(), WithPolicy(policy.NewStore("", p), policy.NewBroker()))
	rc := dialRaw(t, sock)
	meta := map[string]any{"io.modelcontextprotocol/protocolVersion": "2026-07-28",
		"io.modelcontextprotocol/clientInfo": map[string]any{"name": "task-client", "version": "1"},
		"io.modelcontextprotocol/clientCapabilities": map[string]any{"elicitation": map[string]any{},
			"extensions": map[string]any{TasksExtension: map[string]any{}}}}
	for i, answer := range []string{"accept", "decline"} {
		name := fmt.Sprintf("r%d.txt", i)
		if err := os.WriteFile(filepath.Join(ws, name), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		code := fmt.Sprintf(`await tools.exec({command: "sleep", args: ["0.6"]});
			try { await tools.file_rename({oldPath: %q, newPath: %q}); return "renamed"; } catch (e) { return "refused: " + e.message; }`, name, "done-"+name)
		base := 100 * (i + 1)
		m := rc.ask(base, "tools/call", map[string]any{"_meta": meta, "name": "script_run", "arguments": map[string]any{"code": code}})
		res, _ := m["result"].(map[string]any)
		id, _ := res["taskId"].(string)
		if res["resultType"] != "task" || id == "" {
			t.Fatalf("script_run did not become a task: %v", m)
		}
		var asked map[string]any
		n := base
		testutil.Eventually(t, "the task to ask its client", func() bool {
			n++
			r, _ := rc.ask(n, "tasks/get", map[string]any{"_meta": meta, "taskId": id})["result"].(map[string]any)
			asked = r
			return r["status"] == "input_required"
		})
		reqs, _ := asked["inputRequests"].(map[string]any)
		if len(reqs) != 1 {
			t.Fatalf("input_required without one question: %v", asked)
		}
		var key string
		for k, v := range reqs {
			key = k
			raw, _ := json.Marshal(v)
			if !strings.Contains(string(raw), `"method":"elicitation/create"`) || !strings.Contains(string(raw), "file_rename") {
				t.Fatalf("the question: %s", raw)
			}
		}
		if ack := rc.ask(n+1, "tasks/update", map[string]any{"_meta": meta, "taskId": id, "inputResponses": map[string]any{key: map[string]any{"action": answer}}}); ack["error"] != nil {
			t.Fatalf("tasks/update: %v", ack)
		}
		var final map[string]any
		n += 2
		testutil.Eventually(t, "the task to complete", func() bool {
			n++
			r, _ := rc.ask(n, "tasks/get", map[string]any{"_meta": meta, "taskId": id})["result"].(map[string]any)
			final = r
			return r["status"] == "completed"
		})
		raw, _ := json.Marshal(final["result"])
		_, statErr := os.Stat(filepath.Join(ws, "done-"+name))
		switch answer {
		case "accept":
			if !strings.Contains(string(raw), "renamed") || statErr != nil {
				t.Errorf("approved through tasks/update, the script gave %s (rename: %v)", raw, statErr)
			}
		default:
			if !strings.Contains(string(raw), "refused") || !strings.Contains(string(raw), "declined") || statErr == nil {
				t.Errorf("declined through tasks/update, the script gave %s (rename happened: %v)", raw, statErr == nil)
			}
		}
	}
	if p := s.Approvals().Pending(); len(p) != 0 {
		t.Errorf("a question also went to the dashboard: %+v", p)
	}
}

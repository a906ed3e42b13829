package mcp

import (
	"bufio"
	"encoding/json"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-hub/switchboard/internal/clienttokens"
	"github.com/switchboard-hub/switchboard/internal/process"
)

// statelessPost sends one 2026-07-28 request with raw JSON-RPC as client name with token, the
// Tasks extension declared or not, and returns the response (the caller reads and closes it).
func statelessPost(t *testing.T, url, token, name string, ext bool, id int, method, mcpName string, params map[string]any) *http.Response {
	t.Helper()
	caps := map[string]any{}
	if ext {
		caps["extensions"] = map[string]any{TasksExtension: map[string]any{}}
	}
	if params == nil {
		params = map[string]any{}
	}
	params["_meta"] = map[string]any{"io.modelcontextprotocol/protocolVersion": "2026-07-28",
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": name, "version": "1"},
		"io.modelcontextprotocol/clientCapabilities": caps}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", method)
	if mcpName != "" {
		req.Header.Set("Mcp-Name", mcpName)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// sseMessages reads a response's SSE (or plain JSON) messages into a channel, closed at its end.
func sseMessages(resp *http.Response) <-chan map[string]any {
	out := make(chan map[string]any, 64)
	go func() { // ends with the response body (the test's context or the stream's end)
		defer close(out)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			if d, ok := strings.CutPrefix(line, "data: "); ok {
				line = d
			} else if !strings.HasPrefix(line, "{") {
				continue
			}
			var m map[string]any
			if json.Unmarshal([]byte(line), &m) == nil {
				out <- m
			}
		}
	}()
	return out
}

// oneReply is the JSON-RPC reply of a request that is not a stream.
func oneReply(t *testing.T, resp *http.Response) map[string]any {
	t.Helper()
	for m := range sseMessages(resp) {
		if _, ok := m["id"]; ok {
			return m
		}
	}
	t.Fatal("no reply")
	return nil
}

// TestTaskStatusOnListen: a 2026-07-28 client over stateless HTTP that declares the Tasks
// extension follows its tasks on subscriptions/listen (params.notifications.taskIds): the
// acknowledgement lists only its own tasks (another client's and an unknown id are left out),
// notifications/tasks arrives when a task is cancelled and when one completes (with the result
// inlined, as tasks/get has it), and the stream ends once every followed task has ended. Another
// client that names the first one's task is acknowledged nothing and hears nothing of it; a
// listen for tasks without the extension is refused with the missing-capability error.
func TestTaskStatusOnListen(t *testing.T) {
	s := newTestService(t, WithWorkspaceRoot(t.TempDir()), WithProcessService(process.New(process.Options{})), WithTasks(t.TempDir(), taskAfter))
	store, err := clienttokens.Open(filepath.Join(t.TempDir(), "client-tokens.json"))
	if err != nil {
		t.Fatal(err)
	}
	alice, _ := store.Issue("alice")
	bob, _ := store.Issue("bob")
	url := "http://" + listen(t, s, TransportHTTP, TransportConfig{HTTPAddr: "127.0.0.1:0", HTTPToken: "s3cret", HTTPClientTokens: store}) + "/mcp"

	startTask := func(token, name, script string) string {
		t.Helper()
		m := oneReply(t, statelessPost(t, url, token, name, true, 1, "tools/call", "exec",
			map[string]any{"name": "exec", "arguments": map[string]any{"command": "sh", "args": []string{"-c", script}, "timeout": 600}}))
		res, _ := m["result"].(map[string]any)
		id, _ := res["taskId"].(string)
		if res["resultType"] != "task" || id == "" {
			t.Fatalf("not a task: %v", m)
		}
		return id
	}
	finishing := startTask(alice, "agent", "sleep 2; echo listened-result")
	cancelled := startTask(alice, "agent", "sleep 300")
	bobs := startTask(bob, "agent", "sleep 1")

	// Bob names Alice's task: acknowledged nothing, and the stream ends at once.
	var bobSaw []map[string]any
	for m := range sseMessages(statelessPost(t, url, bob, "agent", true, 9, "subscriptions/listen", "",
		map[string]any{"notifications": map[string]any{"taskIds": []string{finishing}}})) {
		bobSaw = append(bobSaw, m)
	}
	raw, _ := json.Marshal(bobSaw)
	for _, m := range bobSaw {
		p, _ := m["params"].(map[string]any)
		notes, _ := p["notifications"].(map[string]any)
		if m["method"] == TaskStatusNotification || notes["taskIds"] != nil {
			t.Fatalf("another client's listen heard of alice's task: %s", raw)
		}
	}
	if len(bobSaw) == 0 || bobSaw[len(bobSaw)-1]["result"] == nil {
		t.Fatalf("bob's listen did not end with its result: %s", raw)
	}

	// Without the extension: the missing-capability error.
	m := oneReply(t, statelessPost(t, url, alice, "agent", false, 8, "subscriptions/listen", "",
		map[string]any{"notifications": map[string]any{"taskIds": []string{finishing}}}))
	if e, _ := m["error"].(map[string]any); e == nil || e["code"] != float64(codeMissingCapability) {
		t.Fatalf("a listen for tasks without the extension: %v", m)
	}

	stream := sseMessages(statelessPost(t, url, alice, "agent", true, 7, "subscriptions/listen", "",
		map[string]any{"notifications": map[string]any{"taskIds": []string{finishing, cancelled, bobs, "task-nope"}}}))
	next := func(what string) map[string]any {
		t.Helper()
		select {
		case m, ok := <-stream:
			if !ok {
				t.Fatalf("the listen stream ended before %s", what)
			}
			return m
		case <-time.After(20 * time.Second):
			t.Fatalf("no %s on the listen stream", what)
		}
		return nil
	}
	ack := next("acknowledgement")
	notes, _ := ack["params"].(map[string]any)["notifications"].(map[string]any)
	if ack["method"] != "notifications/subscriptions/acknowledged" || notes == nil {
		t.Fatalf("first message: %v", ack)
	}
	var ids []string
	for _, v := range notes["taskIds"].([]any) {
		ids = append(ids, v.(string))
	}
	if !slices.Equal(ids, []string{finishing, cancelled}) {
		t.Fatalf("acknowledged task ids %v, want alice's own [%s %s]", ids, finishing, cancelled)
	}

	if r := oneReply(t, statelessPost(t, url, alice, "agent", true, 2, "tasks/cancel", "", map[string]any{"taskId": cancelled})); r["error"] != nil {
		t.Fatalf("tasks/cancel: %v", r)
	}
	statuses := map[string]map[string]any{}
	for len(statuses) < 2 {
		n := next("task notification")
		if n["method"] != TaskStatusNotification {
			t.Fatalf("unexpected message on the listen stream: %v", n)
		}
		p, _ := n["params"].(map[string]any)
		id, _ := p["taskId"].(string)
		if id == bobs || (id != finishing && id != cancelled) {
			t.Fatalf("a notification for a task alice does not own: %v", n)
		}
		if meta, _ := p["_meta"].(map[string]any); meta["io.modelcontextprotocol/subscriptionId"] != float64(7) {
			t.Errorf("notification without the listen's subscription id: %v", n)
		}
		if _, dup := statuses[id]; dup {
			t.Fatalf("task %s announced twice: %v", id, n)
		}
		statuses[id] = p
	}
	if statuses[cancelled]["status"] != "cancelled" {
		t.Errorf("cancelled task: %v", statuses[cancelled])
	}
	done := statuses[finishing]
	res, _ := json.Marshal(done["result"])
	if done["status"] != "completed" || !strings.Contains(string(res), "listened-result") || done["ttlMs"] == nil {
		t.Errorf("completed task: %v", done)
	}
	// Every followed task ended: the listen is answered and the stream closes.
	if last := next("the listen's result"); last["result"] == nil || last["id"] != float64(7) {
		t.Fatalf("after the last task ended: %v", last)
	}
	if m, ok := <-stream; ok {
		t.Fatalf("more after the listen's result: %v", m)
	}
}

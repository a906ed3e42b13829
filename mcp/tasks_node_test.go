//go:build unix

package mcp_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestTypeScriptSDKTaskHandle: the TypeScript SDK's client (under Claude Code and Gemini CLI),
// which checks a result's structured content against the tool's output schema, gets a long
// exec's task handle before the command ends and collects exec's output with tasks_get
// (test/node/tasks.mjs, against the built binary with task_after = "1s").
func TestTypeScriptSDKTaskHandle(t *testing.T) {
	dir := nodeTestDir(t)
	bin := buildBinary(t)
	out, err := runNode(t, dir, 2*time.Minute, "tasks.mjs", bin)
	line := strings.TrimSpace(out[strings.LastIndex(strings.TrimSpace(out), "\n")+1:])
	var got struct {
		OK          bool    `json:"ok"`
		HandleMs    float64 `json:"handleMs"`
		FirstStatus string  `json:"firstStatus"`
		Error       string  `json:"error"`
	}
	if jerr := json.Unmarshal([]byte(line), &got); jerr != nil || err != nil || !got.OK {
		t.Fatalf("node tasks.mjs: %v (%v)\n%s", err, jerr, out)
	}
	t.Logf("TypeScript SDK: handle after %.0f ms, tasks_get said %s, then the result", got.HandleMs, got.FirstStatus)
}

// TestNinetySecondCallFromSixtySecondClient is the named case, with nothing shortened:
// the TypeScript SDK 1.32 client with its default 60 s request timeout, through `switchboard
// connect` to a hub with the default task_after (45 s), calls exec with a command that takes
// 90 s. It gets the task handle (not a timeout), disconnects, reconnects as a new session of
// the same client, collects "done" and exit code 0 with tasks_get, and collects it again from
// a restarted hub on the same data directories (test/node/long-call.mjs). It takes about 95 s
// of wall time by design, so it runs in parallel with the package's other tests.
func TestNinetySecondCallFromSixtySecondClient(t *testing.T) {
	t.Parallel()
	dir := nodeTestDir(t)
	bin := buildBinary(t)
	out, err := runNode(t, dir, 4*time.Minute, "long-call.mjs", bin)
	line := strings.TrimSpace(out[strings.LastIndex(strings.TrimSpace(out), "\n")+1:])
	var got struct {
		OK               bool     `json:"ok"`
		DefaultTimeoutMs float64  `json:"defaultTimeoutMs"`
		HandleMs         float64  `json:"handleMs"`
		DoneMs           float64  `json:"doneMs"`
		ExitCode         *int     `json:"exitCode"`
		FinalStdout      string   `json:"finalStdout"`
		RestartStatus    string   `json:"restartStatus"`
		Failed           []string `json:"failed"`
		Error            string   `json:"error"`
	}
	if jerr := json.Unmarshal([]byte(line), &got); jerr != nil || err != nil || !got.OK {
		t.Fatalf("node long-call.mjs: %v (%v); failed checks %q\n%s", err, jerr, got.Failed, out)
	}
	// The script checks these too; asserted here so the Go test cannot pass on a script that
	// checked nothing.
	if got.DefaultTimeoutMs != 60000 || got.HandleMs >= got.DefaultTimeoutMs || got.HandleMs < 45000 || got.DoneMs < 90000 ||
		got.ExitCode == nil || *got.ExitCode != 0 || got.FinalStdout != "done\n" || got.RestartStatus != "completed" {
		t.Fatalf("node long-call.mjs reported ok with %+v\n%s", got, out)
	}
	t.Logf("TypeScript SDK (timeout %.0f ms): handle after %.0f ms, result collected after %.0f ms on a new session, again after a hub restart",
		got.DefaultTimeoutMs, got.HandleMs, got.DoneMs)
}

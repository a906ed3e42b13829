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

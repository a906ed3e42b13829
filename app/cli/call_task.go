package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/mcp"
	"github.com/switchboard-hub/switchboard/mcp/tools"
)

// taskPoll is how often `call` asks after a call the hub handed back as a task.
const taskPoll = time.Second

// awaitTask follows a call the hub handed back as a task (it ran past task_after) to its end and
// returns the call's own result: `switchboard call` is a script's way to call a tool, and a
// script wants the result, not a handle. When ctx ends first (Ctrl-C), the task is cancelled, as
// the call would have been.
func awaitTask(ctx context.Context, cs *sdk.ClientSession, res *sdk.CallToolResult) (*sdk.CallToolResult, error) {
	id, _ := res.Meta[mcp.TaskIDMetaKey].(string)
	if id == "" {
		return res, nil
	}
	tick := time.NewTicker(taskPoll)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			stop, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			_, _ = cs.CallTool(stop, &sdk.CallToolParams{Name: tools.TasksCancelTool, Arguments: map[string]any{"task_id": id}})
			return nil, fmt.Errorf("task %s: %w (cancelled)", id, ctx.Err())
		case <-tick.C:
		}
		got, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: tools.TasksGetTool, Arguments: map[string]any{"task_id": id}})
		if err != nil {
			return nil, fmt.Errorf("task %s: %w", id, err)
		}
		var out tools.TaskGetOutput
		raw, _ := json.Marshal(got.StructuredContent)
		if json.Unmarshal(raw, &out) != nil || out.TaskID == "" {
			return got, nil // tasks_get's own error (an expired task): shown as it is
		}
		if !out.Done {
			continue
		}
		return &sdk.CallToolResult{Content: got.Content, IsError: got.IsError || out.Status != "completed", StructuredContent: out.StructuredContent}, nil
	}
}

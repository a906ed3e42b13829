package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/internal/tasks"
	"github.com/switchboard-hub/switchboard/mcp/tool"
)

// Tool names of the tasks group: the hub's answer to a call that outlived its client's patience
// names them.
const (
	TasksGetTool    = "tasks_get"
	TasksCancelTool = "tasks_cancel"
)

// TaskOwners is what the tasks group needs of the hub: who is calling, as a task's owner sees it.
type TaskOwners interface {
	TaskOwner(ctx context.Context, req sdk.Request) tasks.Owner
}

// TasksTools serves tasks_get and tasks_cancel: a client without the Tasks extension collects a
// call the hub handed back as a task (internal/tasks) with them.
type TasksTools struct {
	owners TaskOwners
	store  *tasks.Store
}

// NewTasksTools is the tasks group's dependencies.
func NewTasksTools(owners TaskOwners, store *tasks.Store) *TasksTools {
	return &TasksTools{owners: owners, store: store}
}

// TaskIDInput names a task.
type TaskIDInput struct {
	TaskID string `json:"task_id" jsonschema:"the task_id a call answered with when it ran longer than the hub's task_after"`
}

// TaskProgress is a running task's latest progress.
type TaskProgress struct {
	Done    float64 `json:"done" jsonschema:"work done so far (seconds elapsed when the tool reports no measure)"`
	Total   float64 `json:"total,omitempty" jsonschema:"total work, when known"`
	Message string  `json:"message,omitempty" jsonschema:"what the call is doing"`
}

// TaskGetOutput is a task's state and, once it ended, the call's result.
type TaskGetOutput struct {
	TaskID        string        `json:"task_id"`
	Tool          string        `json:"tool" jsonschema:"the tool the call ran"`
	Status        string        `json:"status" jsonschema:"working, input_required, completed, failed or cancelled"`
	StatusMessage string        `json:"status_message,omitempty"`
	Progress      *TaskProgress `json:"progress,omitempty"`
	Created       string        `json:"created" jsonschema:"when the call started (RFC 3339)"`
	AgeSeconds    float64       `json:"age_seconds" jsonschema:"seconds since the call started"`
	// Done: the call ended; its result is this tool result's content (and structured_content).
	Done bool `json:"done"`
	// StructuredContent is the ended call's structured result, when it had one.
	StructuredContent any    `json:"structured_content,omitempty" jsonschema:"the call's structured result, when it had one"`
	IsError           bool   `json:"is_error,omitempty" jsonschema:"the call's result was an error"`
	Truncated         bool   `json:"truncated,omitempty" jsonschema:"the result was larger than the hub keeps and was cut"`
	Error             string `json:"error,omitempty" jsonschema:"why the call failed (status failed)"`
}

// TaskCancelOutput is what tasks_cancel did.
type TaskCancelOutput struct {
	TaskID string `json:"task_id"`
	Status string `json:"status" jsonschema:"the task's status after the request: cancelled, or how it had already ended"`
}

// TasksGroup declares tasks_get and tasks_cancel. They are in no toolset, so they are served
// whatever toolsets a client is given: any call may come back as a task to collect.
func TasksGroup() tool.Group {
	return tool.NewGroup("",
		tool.Func(sdk.Tool{Name: TasksGetTool, Annotations: tool.ReadOnly("Get a task"),
			Description: "Collect a call that ran longer than the hub's task_after and was answered with a task_id: returns its status and progress while it runs and, once it ended, " +
				"the call's own result (its content, and its structured result as structured_content). Poll every few seconds until done is true. " +
				"Only the client that started the call (the same session, or the same client reconnecting over the same kind of connection) may read it; " +
				"finished tasks are kept for an hour, across a hub restart."}, (*TasksTools).get),
		tool.Func(sdk.Tool{Name: TasksCancelTool, Annotations: tool.Write("Cancel a task", true, true),
			Description: "Stop a call that was answered with a task_id: its context is cancelled (an exec's process group is killed). A task that already ended is left as it is."}, (*TasksTools).cancel),
	)
}

func (g *TasksTools) lookup(ctx context.Context, req *sdk.CallToolRequest, id string) (tasks.Task, error) {
	if strings.TrimSpace(id) == "" {
		return tasks.Task{}, errors.New("task_id: required; give the task_id the call answered with")
	}
	t, err := g.store.Get(id, g.owners.TaskOwner(ctx, req))
	if err != nil {
		return t, fmt.Errorf("task_id %q: %w", id, err)
	}
	return t, nil
}

func (g *TasksTools) get(ctx context.Context, req *sdk.CallToolRequest, in TaskIDInput) (*sdk.CallToolResult, TaskGetOutput, error) {
	t, err := g.lookup(ctx, req, in.TaskID)
	if err != nil {
		return nil, TaskGetOutput{}, err
	}
	out := TaskGetOutput{TaskID: t.ID, Tool: t.Tool, Status: string(t.Status), StatusMessage: t.StatusMessage,
		Created: t.Created.Format(time.RFC3339), AgeSeconds: time.Since(t.Created).Round(time.Millisecond).Seconds(),
		Done: t.Status.Terminal(), Truncated: t.Truncated}
	if p := t.Progress; p != nil {
		out.Progress = &TaskProgress{Done: p.Done, Total: p.Total, Message: p.Message}
	}
	switch t.Status {
	case tasks.Completed:
		var res sdk.CallToolResult
		if err := json.Unmarshal(t.Result, &res); err != nil {
			return nil, out, fmt.Errorf("task %s: its stored result is unreadable: %w", t.ID, err)
		}
		out.StructuredContent, out.IsError = res.StructuredContent, res.IsError
		content := res.Content
		if content == nil {
			content = []sdk.Content{}
		}
		// The call's own content is what the model reads, as if the call had answered in time.
		return &sdk.CallToolResult{Content: content, IsError: res.IsError}, out, nil
	case tasks.Failed:
		if t.Error != nil {
			out.Error = t.Error.Message
		}
		return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: fmt.Sprintf("%s failed: %s", t.Tool, out.Error)}}}, out, nil
	case tasks.Cancelled:
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: fmt.Sprintf("%s was cancelled (%s); it has no result", t.Tool, t.StatusMessage)}}}, out, nil
	}
	msg := fmt.Sprintf("%s is still running (%s so far)", t.Tool, time.Since(t.Created).Round(time.Second))
	if p := t.Progress; p != nil && p.Message != "" {
		msg += ": " + p.Message
	}
	msg += fmt.Sprintf("; call tasks_get {\"task_id\": %q} again in a few seconds", t.ID)
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: msg}}}, out, nil
}

func (g *TasksTools) cancel(ctx context.Context, req *sdk.CallToolRequest, in TaskIDInput) (*sdk.CallToolResult, TaskCancelOutput, error) {
	if strings.TrimSpace(in.TaskID) == "" {
		return nil, TaskCancelOutput{}, errors.New("task_id: required; give the task_id the call answered with")
	}
	owner := g.owners.TaskOwner(ctx, req)
	if err := g.store.Cancel(in.TaskID, &owner); err != nil {
		return nil, TaskCancelOutput{}, fmt.Errorf("task_id %q: %w", in.TaskID, err)
	}
	t, err := g.store.Get(in.TaskID, owner)
	if err != nil {
		return nil, TaskCancelOutput{}, fmt.Errorf("task_id %q: %w", in.TaskID, err)
	}
	return nil, TaskCancelOutput{TaskID: t.ID, Status: string(t.Status)}, nil
}

package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/internal/script"
	"github.com/switchboard-hub/switchboard/mcp/tool"
)

// script_run: the agent's JavaScript, run in the hub's sandbox (internal/script), calling the
// offered tools as `await tools.<name>(args)`. The sandbox has no authority of its own: every
// inner call is made through ScriptHost.CallInner, the same chain of layers (toolsets, grants,
// quarantine, policy and its approvals, workspace, audit) a client's call goes through, linked
// to the script's call in the audit trail and the Activity view.

// ToolScriptRun is the script tool's name.
const ToolScriptRun = "script_run"

// MaxScriptTimeout bounds script_run's timeout argument: a script that needs longer should be
// several, or a process (exec) whose output it reads.
const MaxScriptTimeout = 600 // seconds

// ScriptRunInput is script_run's input.
type ScriptRunInput struct {
	Code    string  `json:"code" jsonschema:"JavaScript: the body of an async function. Call tools as await tools.file_read({path: \"go.mod\"}) (upstream tools by full name: tools[\"server__tool\"](…)); find them and their TypeScript declarations with tools_search; console.log to log; return the result"`
	Timeout float64 `json:"timeout,omitempty" jsonschema:"seconds the script may run (default 60, at most 600)"`
}

// ScriptRunOutput is script_run's result.
type ScriptRunOutput struct {
	// Result is the script's return value (null when it returns nothing).
	Result any `json:"result" jsonschema:"the value the script returned"`
	// Logs are its console lines.
	Logs []string `json:"logs,omitempty" jsonschema:"console.log lines, in order"`
	// Calls counts its tool calls.
	Calls int `json:"calls" jsonschema:"how many tool calls the script made"`
	// DurationMs is its wall time.
	DurationMs float64 `json:"duration_ms" jsonschema:"how long it ran, in milliseconds"`
}

// ScriptHost is what script_run needs of the hub.
type ScriptHost interface {
	// Offered is the tools the hub offers now.
	Offered() []*sdk.Tool
	// CallInner makes one tool call on behalf of the running call parent, through every layer
	// a client's call goes through.
	CallInner(ctx context.Context, parent *sdk.CallToolRequest, name string, args json.RawMessage) (*sdk.CallToolResult, error)
}

// ScriptTools is script_run's group.
type ScriptTools struct{ h ScriptHost }

// NewScriptTools is the group's dependencies.
func NewScriptTools(h ScriptHost) *ScriptTools { return &ScriptTools{h: h} }

// ScriptGroup declares script_run (in no toolset: the tools modes decide who lists it; it can
// do only what the tools it calls may do).
func ScriptGroup() tool.Group {
	run := tool.Func(sdk.Tool{Name: ToolScriptRun,
		Annotations: tool.OpenWorld(tool.Write("Run a script of tool calls", true, false)),
		Description: "Run JavaScript that calls the hub's tools (await tools.<name>({…})) and returns only what you need: " +
			"intermediate results stay out of the conversation. Each call is checked, approved and audited like a direct call. " +
			"No file system, network, timers or modules except through tools. Errors name the script's line and column."},
		(*ScriptTools).run)
	// No output schema: a client holds a result to its tool's schema, and a large result of a
	// script is kept as a handle in search and script mode (mcp/modes.go) like any other.
	run.Def.OutputSchema = nil
	return tool.NewGroup("", run)
}

func (g *ScriptTools) run(ctx context.Context, req *sdk.CallToolRequest, in ScriptRunInput) (*sdk.CallToolResult, ScriptRunOutput, error) {
	if strings.TrimSpace(in.Code) == "" {
		return nil, ScriptRunOutput{}, errors.New("code: required; write the body of an async function, e.g. const r = await tools.file_read({path: \"go.mod\"}); return r.content.split(\"\\n\")[0]")
	}
	if in.Timeout < 0 || in.Timeout > MaxScriptTimeout || math.IsNaN(in.Timeout) {
		return nil, ScriptRunOutput{}, fmt.Errorf("timeout: %v is out of range; give seconds from 1 to %d (default 60)", in.Timeout, MaxScriptTimeout)
	}
	lim := script.Limits{Wall: time.Duration(in.Timeout * float64(time.Second))}
	var names []string
	for _, t := range g.h.Offered() {
		if t.Name != ToolScriptRun {
			names = append(names, t.Name)
		}
	}
	res, err := script.Run(ctx, in.Code, names, innerCaller{h: g.h, parent: req}, lim)
	out := ScriptRunOutput{Logs: res.Logs, Calls: res.Calls, DurationMs: float64(res.Duration.Microseconds()) / 1000}
	if err != nil {
		var le *script.LimitError
		var se *script.CodeError
		msg := err.Error()
		switch {
		case errors.As(err, &le), errors.As(err, &se):
		case ctx.Err() != nil:
			msg = "the call was cancelled: " + msg
		}
		if len(res.Logs) > 0 {
			msg += "\n\nconsole:\n" + strings.Join(res.Logs, "\n")
		}
		return tool.ErrorText("script_run: " + msg), out, nil
	}
	if len(res.Value) > 0 {
		_ = json.Unmarshal(res.Value, &out.Result)
	}
	text := string(res.Value)
	if text == "" {
		text = "null"
	}
	if len(res.Logs) > 0 {
		text += "\n\nconsole:\n" + strings.Join(res.Logs, "\n")
	}
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: text}}}, out, nil
}

// innerCaller is the script's Caller: each call goes through the hub as the script's call.
type innerCaller struct {
	h      ScriptHost
	parent *sdk.CallToolRequest
}

func (c innerCaller) Call(ctx context.Context, name string, args json.RawMessage) (script.CallResult, error) {
	r, err := c.h.CallInner(ctx, c.parent, name, args)
	if err != nil {
		return script.CallResult{}, err
	}
	var out script.CallResult
	out.IsError = r.IsError
	var texts []string
	for _, ct := range r.Content {
		if t, ok := ct.(*sdk.TextContent); ok {
			texts = append(texts, t.Text)
		}
	}
	out.Text = strings.Join(texts, "\n")
	if r.StructuredContent != nil && !r.IsError {
		b, err := json.Marshal(r.StructuredContent)
		if err != nil {
			return script.CallResult{}, fmt.Errorf("%s: its structured result: %w", name, err)
		}
		out.Structured = b
	}
	return out, nil
}

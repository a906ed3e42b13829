package tools

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/mcp/tool"

	"github.com/switchboard-hub/switchboard/internal/process"
)

// Process tools (docs/tools.md): the core six (process_start, process_stop, process_kill, process_list,
// process_output, process_input) plus process_wait and exec. Every process belongs to the shared
// process.Service, so a process one client starts is visible to all clients and the dashboard.

// ProcessStartInput is process_start's arguments: a command run without a shell, in a directory of
// the workspace, on pipes or a pseudo-terminal.
type ProcessStartInput struct {
	Command string   `json:"command" jsonschema:"executable to run: a name looked up in PATH, or a path"`
	Args    []string `json:"args,omitempty" jsonschema:"command-line arguments"`
	Dir     string   `json:"dir,omitempty" jsonschema:"working directory relative to the workspace root; default the root" workspace:"path"`
	Env     []string `json:"env,omitempty" jsonschema:"additional environment variables as KEY=VALUE"`
	PTY     bool     `json:"pty,omitempty" jsonschema:"run on a pseudo-terminal (for programs that need a TTY); output is then one combined stream"`
}

// ProcessStartOutput is process_start's result: the ID the other process tools take.
type ProcessStartOutput struct {
	ID        string    `json:"id" jsonschema:"process ID to pass to the other process tools"`
	PID       int       `json:"pid" jsonschema:"operating system process ID"`
	Command   string    `json:"command" jsonschema:"echoed command"`
	Args      []string  `json:"args" jsonschema:"echoed arguments"`
	StartedAt time.Time `json:"startedAt" jsonschema:"start time"`
}

// ProcessIDInput is the arguments of process_stop and process_kill: the process to end.
type ProcessIDInput struct {
	ID string `json:"id" jsonschema:"process ID returned by process_start"`
}

// ProcessControlOutput is the result of process_stop and process_kill.
type ProcessControlOutput struct {
	ID      string `json:"id" jsonschema:"echoed process ID"`
	Success bool   `json:"success" jsonschema:"whether this call ended the process (false if it had already ended)"`
	Message string `json:"message" jsonschema:"what happened, with the final status and exit code"`
}

// ProcessListInput is process_list's arguments.
type ProcessListInput struct {
	RunningOnly bool `json:"running_only,omitempty" jsonschema:"list only running processes; default false lists ended ones too"`
}

// ProcessInfo is one process record in process_list's result, with the working directory relative
// to the workspace root.
type ProcessInfo struct {
	ID        string        `json:"id" jsonschema:"process ID"`
	Command   string        `json:"command" jsonschema:"executable"`
	Args      []string      `json:"args" jsonschema:"arguments"`
	Dir       string        `json:"dir" jsonschema:"working directory, relative to the workspace root"`
	Status    string        `json:"status" jsonschema:"running, exited, stopped, killed or failed"`
	PID       int           `json:"pid" jsonschema:"operating system process ID"`
	ExitCode  int           `json:"exitCode" jsonschema:"exit code once ended; 128+N when ended by signal N"`
	StartedAt time.Time     `json:"startedAt" jsonschema:"start time"`
	EndedAt   time.Time     `json:"endedAt,omitzero" jsonschema:"end time, once ended"`
	Duration  time.Duration `json:"duration" jsonschema:"run time so far, or total once ended, in nanoseconds"`
	PTY       bool          `json:"pty" jsonschema:"whether it runs on a pseudo-terminal"`
	Error     string        `json:"error,omitempty" jsonschema:"why it could not start (status failed)"`
}

// ProcessListOutput is process_list's result: the processes of the shared process.Service,
// whichever client started them.
type ProcessListOutput struct {
	Processes []ProcessInfo `json:"processes" jsonschema:"process records, oldest start first"`
	Total     int           `json:"total" jsonschema:"number of records returned"`
}

// ProcessOutputInput is process_output's arguments: which output to read, from an offset (to poll
// for new output) or only the tail.
type ProcessOutputInput struct {
	ID    string `json:"id" jsonschema:"process ID"`
	Since int64  `json:"since,omitempty" jsonschema:"byte offset to read from: pass the previous call's next to get only new output; default 0 reads from the oldest kept byte"`
	Tail  int    `json:"tail,omitempty" jsonschema:"return at most the last N bytes of the selected output; default all"`
}

// ProcessOutputOutput is process_output's result: the selected output and the offset to continue
// from.
type ProcessOutputOutput struct {
	ID      string `json:"id" jsonschema:"echoed process ID"`
	Output  string `json:"output" jsonschema:"captured stdout and stderr, interleaved as they arrived"`
	Next    int64  `json:"next" jsonschema:"offset to pass as since on the next call to continue where this one ended"`
	Dropped int64  `json:"dropped" jsonschema:"bytes of early output no longer kept (only the tail of large output is buffered)"`
	Status  string `json:"status" jsonschema:"current process status"`
}

// ProcessInputInput is process_input's arguments: text for the process's stdin.
type ProcessInputInput struct {
	ID    string `json:"id" jsonschema:"process ID"`
	Input string `json:"input" jsonschema:"text to write to stdin; no newline is added, include \\n to end a line"`
}

// ProcessInputOutput is process_input's result.
type ProcessInputOutput struct {
	ID      string `json:"id" jsonschema:"echoed process ID"`
	Success bool   `json:"success" jsonschema:"whether the input was delivered"`
	Message string `json:"message" jsonschema:"status message"`
}

// ProcessWaitInput is process_wait's arguments: the process and how long to wait for it to end.
type ProcessWaitInput struct {
	ID      string `json:"id" jsonschema:"process ID"`
	Timeout int    `json:"timeout,omitempty" jsonschema:"seconds to wait, 1 to 600; default 30"`
}

// ProcessWaitOutput is process_wait's result: whether the process ended in time, its status and the
// tail of its output.
type ProcessWaitOutput struct {
	ID       string        `json:"id" jsonschema:"echoed process ID"`
	Exited   bool          `json:"exited" jsonschema:"whether the process has ended; false means the timeout passed first"`
	Status   string        `json:"status" jsonschema:"current process status"`
	ExitCode int           `json:"exitCode" jsonschema:"exit code if ended; 128+N when ended by signal N"`
	Output   string        `json:"output" jsonschema:"last 4 KiB of output; use process_output for more"`
	Duration time.Duration `json:"duration" jsonschema:"run time so far, or total once ended, in nanoseconds"`
}

// ExecInput is exec's arguments: a command run to completion without a shell, with a timeout and
// optional stdin.
type ExecInput struct {
	Command string   `json:"command" jsonschema:"executable to run: a name looked up in PATH, or a path; no shell is involved, use sh -c for pipes"`
	Args    []string `json:"args,omitempty" jsonschema:"command-line arguments"`
	Dir     string   `json:"dir,omitempty" jsonschema:"working directory relative to the workspace root; default the root" workspace:"path"`
	Env     []string `json:"env,omitempty" jsonschema:"additional environment variables as KEY=VALUE"`
	Timeout int      `json:"timeout,omitempty" jsonschema:"seconds before the command and everything it started is killed, 1 to 600; default 60"`
	Stdin   string   `json:"stdin,omitempty" jsonschema:"text fed to the command's stdin; default none (end of file)"`
}

// ExecOutput is exec's result: the exit code and the captured stdout and stderr.
type ExecOutput struct {
	ExitCode   int    `json:"exit_code" jsonschema:"exit code; 128+N when ended by signal N (137 after a timeout)"`
	Stdout     string `json:"stdout" jsonschema:"standard output (beginning and end kept if very large)"`
	Stderr     string `json:"stderr" jsonschema:"standard error (beginning and end kept if very large)"`
	DurationMs int64  `json:"duration_ms" jsonschema:"wall time in milliseconds"`
	TimedOut   bool   `json:"timed_out" jsonschema:"whether the timeout killed the command"`
	Truncated  bool   `json:"truncated" jsonschema:"whether the middle of stdout or stderr was left out to stay within 1 MiB per stream"`
}

const (
	defaultWaitSeconds = 30
	defaultExecSeconds = 60
	maxToolSeconds     = 600
	waitOutputTail     = 4 << 10
)

// ProcessTools are the process_* tools and exec (WithProcesses).
type ProcessTools struct {
	Workspaces
	Sessions
	procs *process.Service
}

// NewProcessTools is the process tools' dependencies: the shared process service.
func NewProcessTools(w Workspaces, sess Sessions, procs *process.Service) *ProcessTools {
	return &ProcessTools{Workspaces: w, Sessions: sess, procs: procs}
}

// ProcessGroup declares the group's tools (toolset process) as values that need no hub;
// NewProcessTools builds the dependencies they are bound to.
func ProcessGroup() tool.Group {
	return tool.NewGroup("process",
		tool.Func(sdk.Tool{Name: "process_start", Annotations: tool.Write("Start process", false, false),
			Description: "Start a long-running process (server, watcher, build) in the background and return its ID at once. " +
				"Output is captured; read it with process_output, wait for the end with process_wait. For a short command whose result you need now, use exec."}, (*ProcessTools).processStart),
		tool.Func(sdk.Tool{Name: "process_stop", Annotations: tool.Write("Stop process", true, true),
			Description: "Stop a process gracefully: SIGTERM to it and everything it started, SIGKILL after a grace period. Returns once it has ended."}, (*ProcessTools).processStop),
		tool.Func(sdk.Tool{Name: "process_kill", Annotations: tool.Write("Kill process", true, true),
			Description: "Kill a process and everything it started at once (SIGKILL). Use when process_stop is too slow."}, (*ProcessTools).processKill),
		tool.Func(sdk.Tool{Name: "process_list", Annotations: tool.ReadOnly("List processes"),
			Description: "List processes started through this hub by any client, with status, exit code and run time."}, (*ProcessTools).processList),
		tool.Func(sdk.Tool{Name: "process_output", Annotations: tool.ReadOnly("Process output"),
			Description: "Read a process's captured output (stdout and stderr interleaved). Pass the returned next as since to get only new output; use tail to get just the end."}, (*ProcessTools).processOutput),
		tool.Func(sdk.Tool{Name: "process_input", Annotations: tool.Write("Process input", false, false),
			Description: "Write text to a running process's stdin. No newline is added; include \\n to end a line."}, (*ProcessTools).processInput),
		tool.Func(sdk.Tool{Name: "process_wait", Annotations: tool.ReadOnly("Wait for process"),
			Description: "Wait until a process ends or the timeout passes, then return its status, exit code and the last 4 KiB of output."}, (*ProcessTools).processWait),
		tool.Func(sdk.Tool{Name: "exec", Annotations: tool.Write("Run command", true, false),
			Description: "Run a command to completion and return its exit code, stdout and stderr. A non-zero exit is a normal result. " +
				"On timeout the command and everything it started is killed. For long-running processes use process_start."}, (*ProcessTools).exec),
	)
}

func (g *ProcessTools) processStart(ctx context.Context, req *sdk.CallToolRequest, in ProcessStartInput) (*sdk.CallToolResult, ProcessStartOutput, error) {
	if strings.TrimSpace(in.Command) == "" {
		return nil, ProcessStartOutput{}, errCommandRequired
	}
	dirFile, dir, err := g.processDir(ctx, req, in.Dir)
	if err != nil {
		return nil, ProcessStartOutput{}, err
	}
	defer dirFile.Close()
	info, err := g.procs.Start(ctx, process.StartOptions{Command: in.Command, Args: in.Args, Dir: dir, DirFile: dirFile, Env: in.Env, PTY: in.PTY})
	if err != nil {
		return nil, ProcessStartOutput{}, processError(in.Command, err)
	}
	if req != nil {
		g.OwnProcess(info.ID, req.Session)
	}
	return nil, ProcessStartOutput{ID: info.ID, PID: info.PID, Command: info.Command, Args: info.Args, StartedAt: info.StartedAt}, nil
}

func (g *ProcessTools) processStop(ctx context.Context, req *sdk.CallToolRequest, in ProcessIDInput) (*sdk.CallToolResult, ProcessControlOutput, error) {
	if err := requireID(in.ID); err != nil {
		return nil, ProcessControlOutput{}, err
	}
	p := tool.StartProgress(ctx, req, "stopping process "+in.ID+" (SIGTERM, then SIGKILL after the grace period)")
	info, err := g.procs.Stop(ctx, in.ID)
	p.Stop()
	return controlResult(in.ID, "stopped", info, err)
}

func (g *ProcessTools) processKill(_ context.Context, _ *sdk.CallToolRequest, in ProcessIDInput) (*sdk.CallToolResult, ProcessControlOutput, error) {
	if err := requireID(in.ID); err != nil {
		return nil, ProcessControlOutput{}, err
	}
	info, err := g.procs.Kill(in.ID)
	return controlResult(in.ID, "killed", info, err)
}

// controlResult maps Stop/Kill outcomes: ending a process that had already ended is not a tool
// error (the caller's goal holds) but success is false.
func controlResult(id, verb string, info process.Info, err error) (*sdk.CallToolResult, ProcessControlOutput, error) {
	switch {
	case errors.Is(err, process.ErrNotRunning):
		return nil, ProcessControlOutput{ID: id, Success: false,
			Message: fmt.Sprintf("process %s had already ended: status %s, exit code %d", id, info.Status, info.ExitCode)}, nil
	case err != nil && info.ID == "":
		return nil, ProcessControlOutput{}, processError("", err)
	case err != nil:
		// ctx ended during the grace period: the process was killed instead.
		return nil, ProcessControlOutput{ID: id, Success: true,
			Message: fmt.Sprintf("process %s killed before its grace period ended (%v): status %s, exit code %d", id, err, info.Status, info.ExitCode)}, nil
	}
	msg := fmt.Sprintf("process %s %s: status %s, exit code %d", id, verb, info.Status, info.ExitCode)
	if verb == "stopped" && info.ExitCode == 128+9 {
		msg += " (it ignored SIGTERM and was killed after the grace period)"
	}
	return nil, ProcessControlOutput{ID: id, Success: true, Message: msg}, nil
}

func (g *ProcessTools) processList(ctx context.Context, req *sdk.CallToolRequest, in ProcessListInput) (*sdk.CallToolResult, ProcessListOutput, error) {
	infos := g.procs.List(in.RunningOnly)
	out := ProcessListOutput{Processes: make([]ProcessInfo, len(infos)), Total: len(infos)}
	for i, info := range infos {
		out.Processes[i] = g.processInfo(ctx, req, info)
	}
	return nil, out, nil
}

func (g *ProcessTools) processOutput(_ context.Context, _ *sdk.CallToolRequest, in ProcessOutputInput) (*sdk.CallToolResult, ProcessOutputOutput, error) {
	if err := requireID(in.ID); err != nil {
		return nil, ProcessOutputOutput{}, err
	}
	if in.Since < 0 {
		return nil, ProcessOutputOutput{}, errors.New("since: must be a byte offset >= 0; pass the next value of a previous process_output call")
	}
	if in.Tail < 0 {
		return nil, ProcessOutputOutput{}, errors.New("tail: must be a byte count >= 0; 0 returns everything kept")
	}
	out, err := g.procs.Output(in.ID, process.OutputQuery{Since: in.Since, Tail: in.Tail})
	if err != nil {
		return nil, ProcessOutputOutput{}, processError("", err)
	}
	info, err := g.procs.Get(in.ID)
	if err != nil {
		return nil, ProcessOutputOutput{}, processError("", err)
	}
	return nil, ProcessOutputOutput{ID: in.ID, Output: out.Text, Next: out.Next, Dropped: out.Dropped, Status: string(info.Status)}, nil
}

func (g *ProcessTools) processInput(_ context.Context, _ *sdk.CallToolRequest, in ProcessInputInput) (*sdk.CallToolResult, ProcessInputOutput, error) {
	if err := requireID(in.ID); err != nil {
		return nil, ProcessInputOutput{}, err
	}
	if in.Input == "" {
		return nil, ProcessInputOutput{}, errors.New(`input: required; give the text to send, ending with "\n" for a line`)
	}
	if err := g.procs.Input(in.ID, []byte(in.Input)); err != nil {
		return nil, ProcessInputOutput{}, processError("", err)
	}
	return nil, ProcessInputOutput{ID: in.ID, Success: true, Message: fmt.Sprintf("wrote %d bytes to the stdin of %s", len(in.Input), in.ID)}, nil
}

func (g *ProcessTools) processWait(ctx context.Context, req *sdk.CallToolRequest, in ProcessWaitInput) (*sdk.CallToolResult, ProcessWaitOutput, error) {
	if err := requireID(in.ID); err != nil {
		return nil, ProcessWaitOutput{}, err
	}
	secs, err := toolSeconds(in.Timeout, defaultWaitSeconds)
	if err != nil {
		return nil, ProcessWaitOutput{}, err
	}
	waitCtx, cancel := context.WithTimeout(ctx, secs)
	defer cancel()
	p := tool.StartProgress(ctx, req, "waiting for process "+in.ID)
	info, err := g.procs.Wait(waitCtx, in.ID)
	p.Stop()
	switch {
	case err == nil:
	case ctx.Err() != nil:
		return nil, ProcessWaitOutput{}, fmt.Errorf("process_wait %s: %w", in.ID, ctx.Err())
	case errors.Is(err, context.DeadlineExceeded):
		// Our own timeout: report the process as still running.
	default:
		return nil, ProcessWaitOutput{}, processError("", err)
	}
	out, err := g.procs.Output(in.ID, process.OutputQuery{Tail: waitOutputTail})
	if err != nil {
		return nil, ProcessWaitOutput{}, processError("", err)
	}
	return nil, ProcessWaitOutput{
		ID: in.ID, Exited: info.Status != process.StatusRunning, Status: string(info.Status),
		ExitCode: info.ExitCode, Output: out.Text, Duration: info.Duration,
	}, nil
}

func (g *ProcessTools) exec(ctx context.Context, req *sdk.CallToolRequest, in ExecInput) (*sdk.CallToolResult, ExecOutput, error) {
	if strings.TrimSpace(in.Command) == "" {
		return nil, ExecOutput{}, errCommandRequired
	}
	secs, err := toolSeconds(in.Timeout, defaultExecSeconds)
	if err != nil {
		return nil, ExecOutput{}, err
	}
	dirFile, dir, err := g.processDir(ctx, req, in.Dir)
	if err != nil {
		return nil, ExecOutput{}, err
	}
	defer dirFile.Close()
	if lr := takeListedRun(ctx); lr != nil {
		return g.execListed(ctx, req, in, lr, dirFile, dir, secs)
	}
	// A cancelled call (notifications/cancelled) ends ctx: Exec then kills the process group.
	p := tool.StartProgress(ctx, req, "running "+in.Command)
	res, err := g.procs.Exec(ctx, process.ExecOptions{Command: in.Command, Args: in.Args, Dir: dir, DirFile: dirFile, Env: in.Env, Timeout: secs, Stdin: in.Stdin})
	p.Stop()
	if err != nil {
		return nil, ExecOutput{}, processError(in.Command, err)
	}
	if res.Truncated && req != nil {
		g.LogTo(req.Session, "warning", "exec %s: output exceeded 1 MiB per stream; the middle was left out (redirect to a file and read it with file_read for all of it)", in.Command)
	}
	return nil, ExecOutput{
		ExitCode: res.ExitCode, Stdout: res.Stdout, Stderr: res.Stderr, DurationMs: res.Duration.Milliseconds(),
		TimedOut: res.TimedOut, Truncated: res.Truncated,
	}, nil
}

var errCommandRequired = errors.New(`command: required; give an executable name or path, e.g. "go" with args ["test", "./..."]`)

func requireID(id string) error {
	if id == "" {
		return errors.New("id: required; pass the id returned by process_start (process_list shows all)")
	}
	return nil
}

// toolSeconds validates a timeout argument in seconds.
func toolSeconds(n, def int) (time.Duration, error) {
	switch {
	case n == 0:
		return time.Duration(def) * time.Second, nil
	case n < 0 || n > maxToolSeconds:
		return 0, fmt.Errorf("timeout: %d seconds is out of range; give 1 to %d (default %d)", n, maxToolSeconds, def)
	}
	return time.Duration(n) * time.Second, nil
}

// processDir opens a workspace-relative working directory through the sandbox and returns the
// open handle (the child starts in exactly that directory, however the path changes afterwards)
// and its absolute name for the record. The caller closes the handle once the child has started.
func (g *ProcessTools) processDir(ctx context.Context, req *sdk.CallToolRequest, dir string) (*os.File, string, error) {
	ws, err := g.WorkspaceFor(ctx, req)
	if err != nil {
		return nil, "", err
	}
	f, abs, err := ws.OpenDir(dir)
	if err != nil {
		return nil, "", fmt.Errorf("dir: %w", err)
	}
	return f, abs, nil
}

// processInfo maps a domain record to the documented ProcessInfo, showing the working directory
// relative to the caller's workspace like every other path the tools return (listing never
// asks the user about roots: a root not approved yet shows the hub's workspace).
func (g *ProcessTools) processInfo(ctx context.Context, req *sdk.CallToolRequest, in process.Info) ProcessInfo {
	dir := in.Dir
	base := g.HubDir()
	if ws, err := g.ResolveWorkspace(ctx, req, false); err == nil {
		base = ws.Dir()
	}
	if rel, err := filepath.Rel(base, in.Dir); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
		dir = rel
	}
	return ProcessInfo{
		ID: in.ID, Command: in.Command, Args: in.Args, Dir: dir, Status: string(in.Status), PID: in.PID,
		ExitCode: in.ExitCode, StartedAt: in.StartedAt, EndedAt: in.EndedAt, Duration: in.Duration, PTY: in.PTY, Error: in.Error,
	}
}

// processError rewrites the process service's errors so they name the field and the fix.
func processError(command string, err error) error {
	var msg string
	switch {
	case errors.Is(err, process.ErrNotFound):
		msg = fmt.Sprintf("id: %v; call process_list to see known IDs", err)
	case errors.Is(err, process.ErrNotRunning):
		msg = fmt.Sprintf("id: %v; start it again with process_start", err)
	case errors.Is(err, process.ErrLimit):
		msg = fmt.Sprintf("%v; stop one with process_stop or process_kill (process_list shows what runs)", err)
	case errors.Is(err, process.ErrNoCommand):
		return errCommandRequired
	case errors.Is(err, process.ErrClosed):
		msg = "the hub is shutting down; no new processes can start"
	case errors.Is(err, process.ErrBadEnv):
		msg = fmt.Sprintf("env: %v", err)
	case command != "":
		msg = fmt.Sprintf("command: %v", err)
	default:
		return err
	}
	return errors.New(msg)
}

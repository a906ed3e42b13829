package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/internal/process"
	"github.com/switchboard-hub/switchboard/mcp/tool"
)

// A listed run is a command run to completion as a process of the shared process service, so
// it shows in Processes (process_list, the dashboard) while it runs and can be killed there:
// project_run's way of running. When the policy asks before the exec call equivalent to
// project_run's command, project_run makes that exec call through the hub's chain (so the user is
// asked exactly as for exec and the audit shows it under project_run's call) and the exec handler,
// finding a listedRun in its context, runs the approved command this way instead of as a bare
// exec, and hands back the process.

// listedRun is what project_run's inner exec call reports back: the process it ran.
type listedRun struct {
	mu       sync.Mutex
	used     bool
	info     process.Info
	timedOut bool
	ran      bool
	err      error
}

type listedRunKey struct{}

// withListedRun marks ctx so the one exec call made with it runs as a listed process and
// reports it in lr. Only project_run sets it, on the context of its own inner call.
func withListedRun(ctx context.Context, lr *listedRun) context.Context {
	return context.WithValue(ctx, listedRunKey{}, lr)
}

// takeListedRun is ctx's listedRun, once: a second exec call on the same context (none is made)
// would run as a plain exec.
func takeListedRun(ctx context.Context) *listedRun {
	lr, _ := ctx.Value(listedRunKey{}).(*listedRun)
	if lr == nil {
		return nil
	}
	lr.mu.Lock()
	defer lr.mu.Unlock()
	if lr.used {
		return nil
	}
	lr.used = true
	return lr
}

// errRunCancelled is runListed's error when the call ended before the command did.
var errRunCancelled = errors.New("cancelled")

// runListed starts o as a process owned by req's session, waits up to secs for it and kills it
// (with everything it started) when the time is up or ctx ends. timedOut reports the former;
// the latter is an error wrapping errRunCancelled.
func runListed(ctx context.Context, req *sdk.CallToolRequest, procs *process.Service, sess Sessions, o process.StartOptions, secs time.Duration, label string) (info process.Info, timedOut bool, err error) {
	info, err = procs.Start(ctx, o)
	if err != nil {
		return info, false, processError(o.Command, err)
	}
	if req != nil && sess != nil {
		sess.OwnProcess(info.ID, req.Session)
	}
	id := info.ID
	p := tool.StartProgress(ctx, req, label)
	waitCtx, cancel := context.WithTimeout(ctx, secs)
	info, err = procs.Wait(waitCtx, id)
	cancel()
	p.Stop()
	if err == nil {
		return info, false, nil
	}
	// Cancelled or out of time: the command and everything it started end with the call.
	timedOut = ctx.Err() == nil
	if k, kerr := procs.Kill(id); kerr == nil {
		info = k
	} else if w, werr := procs.Get(id); werr == nil {
		info = w
	}
	if !timedOut {
		return info, false, fmt.Errorf("%w (%v); process %s was killed", errRunCancelled, context.Cause(ctx), id)
	}
	return info, true, nil
}

// execListed is exec run for project_run (see listedRun): the command as a listed process, its
// interleaved output as stdout.
func (g *ProcessTools) execListed(ctx context.Context, req *sdk.CallToolRequest, in ExecInput, lr *listedRun, dirFile *os.File, dir string, secs time.Duration) (*sdk.CallToolResult, ExecOutput, error) {
	info, timedOut, err := runListed(ctx, req, g.procs, g.Sessions, process.StartOptions{Command: in.Command, Args: in.Args, Dir: dir, DirFile: dirFile, Env: in.Env}, secs, "running "+in.Command)
	lr.mu.Lock()
	lr.info, lr.timedOut, lr.err, lr.ran = info, timedOut, err, info.ID != ""
	lr.mu.Unlock()
	if err != nil {
		return nil, ExecOutput{}, err
	}
	o, err := g.procs.Output(info.ID, process.OutputQuery{Tail: runOutputTail})
	if err != nil {
		return nil, ExecOutput{}, processError("", err)
	}
	return nil, ExecOutput{ExitCode: info.ExitCode, Stdout: o.Text, DurationMs: info.Duration.Milliseconds(), TimedOut: timedOut}, nil
}

// runAsked runs project_run's command as the exec call a policy rule asks about, through the
// hub's chain (CallInner): the user is asked as for that exec call (an elicitation for a client
// that answers them, else the dashboard or tray), the audit shows it under project_run's call,
// and the exec handler runs it as a listed process (listedRun). Any answer but yes refuses
// project_run, naming the rule.
func (g *CodeTools) runAsked(ctx context.Context, req *sdk.CallToolRequest, line string, ask *ExecAsk, secs time.Duration) (process.Info, bool, error) {
	if g.inner == nil || req == nil || req.Session == nil {
		return process.Info{}, false, fmt.Errorf("command: %q needs the user's approval for exec (%s), which this hub cannot ask for from project_run; run it with exec", line, ask.Rule)
	}
	args, err := json.Marshal(map[string]any{"command": ask.Command, "args": ask.Args, "timeout": int(secs / time.Second)})
	if err != nil {
		return process.Info{}, false, fmt.Errorf("command: %w", err)
	}
	lr := &listedRun{}
	res, err := g.inner(withListedRun(ctx, lr), req, "exec", args)
	if err != nil {
		return process.Info{}, false, fmt.Errorf("project_run: the exec call %s asks about could not be made: %w", ask.Rule, err)
	}
	lr.mu.Lock()
	defer lr.mu.Unlock()
	if lr.err != nil {
		return lr.info, false, lr.err
	}
	if !lr.ran {
		return process.Info{}, false, fmt.Errorf("command: %q not run: %s asks before exec runs it, and the exec call was refused: %s", line, ask.Rule, resultText(res))
	}
	return lr.info, lr.timedOut, nil
}

// resultText is a tool result's text content.
func resultText(r *sdk.CallToolResult) string {
	if r == nil {
		return ""
	}
	var b strings.Builder
	for _, c := range r.Content {
		if t, ok := c.(*sdk.TextContent); ok {
			if b.Len() > 0 {
				b.WriteString("; ")
			}
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

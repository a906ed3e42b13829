package mcp

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/internal/tasks"
	"github.com/switchboard-hub/switchboard/internal/wshub"
	"github.com/switchboard-hub/switchboard/mcp/channel"
	"github.com/switchboard-hub/switchboard/mcp/tool"
	"github.com/switchboard-hub/switchboard/mcp/toolcall"
	"github.com/switchboard-hub/switchboard/mcp/tools"
	mcptransport "github.com/switchboard-hub/switchboard/mcp/transport"
)

// Long calls and tasks (docs/architecture.md, "Long calls and tasks").
//
// Every tools/call runs on a context of its own, detached from the request's: until task_after
// the request waits for it as usual (and a cancelled request cancels it); past task_after the
// request is answered with a task and the call goes on. A client that declared the Tasks
// extension (io.modelcontextprotocol/tasks) gets a CreateTaskResult and polls tasks/get; any
// other client gets a tool result whose text says to call tasks_get (handle, below, on its
// shape). The task keeps the call's progress (its notifications/progress, which stop
// reaching the client once the request has been answered) and its result (internal/tasks).

// TasksExtension is the Tasks extension's identifier.
const TasksExtension = "io.modelcontextprotocol/tasks"

// extensionTaskAfter is how soon a call becomes a task for a client that declared the Tasks
// extension: such a client polls anyway, so a short wait spares nothing, and a long call does
// not hold a request open (the configured task_after still applies when it is shorter).
const extensionTaskAfter = time.Second

// taskPollInterval is the pollIntervalMs the hub suggests.
const taskPollInterval = 2 * time.Second

// maxRunningTasks bounds the calls running as tasks at once. The transports bound the calls
// in flight per connection, and a handed-back call no longer counts there: past this many, a
// long call keeps its request waiting as it would without tasks.
const maxRunningTasks = 256

// codeMissingCapability is the JSON-RPC error for a tasks/* request from a client that did not
// declare the extension (Missing Required Client Capability).
const codeMissingCapability = -32021

// WithTasks turns on tasks: a call running past after (0: never) is handed back as a task.
// Finished tasks are written under dir ("" keeps them in memory only) and kept for an hour. The
// Service closes the store on Shutdown, cancelling calls still running.
func WithTasks(dir string, after time.Duration) Option {
	return func(s *Service) error {
		s.opts.tasksOn, s.opts.tasksDir, s.opts.taskAfter = true, dir, after
		return nil
	}
}

// newTaskRunner opens the task store WithTasks asked for (nil when it did not) and serves the
// extension's methods on the hub's server; New adds its middleware.
func (s *Service) newTaskRunner() (*taskRunner, error) {
	if !s.opts.tasksOn {
		return nil, nil
	}
	st, err := tasks.Open(tasks.Options{Dir: s.opts.tasksDir, Logger: s.logger})
	if err != nil {
		return nil, err
	}
	r := &taskRunner{store: st, owner: s.TaskOwner}
	r.after.Store(int64(s.opts.taskAfter))
	if err := r.addMethods(s.server); err != nil {
		st.Close()
		return nil, fmt.Errorf("tasks: %w", err)
	}
	return r, nil
}

// taskRunner is the hub's part that turns long calls into tasks.
type taskRunner struct {
	store *tasks.Store
	// after is task_after (a time.Duration; 0: off), changed live by SetTaskAfter.
	after atomic.Int64
	owner func(ctx context.Context, req sdk.Request) tasks.Owner
	// schemaless reports whether a tool is known to declare no output schema (its handle may
	// then carry structuredContent.task_id).
	schemaless func(tool string) bool

	calls     sync.Map       // progressKey → *runningCall: calls that may become (or are) tasks
	handed    sync.WaitGroup // calls handed back as tasks and still running (close waits for them)
	questions sync.Map       // task id → *taskQuestion: the question a task waits on (askThroughTask)
}

// taskQuestion is an inner call's question to the client of a task (input_required), and the
// client's answer from tasks/update.
type taskQuestion struct {
	id     string
	req    sdk.InputRequest
	answer chan json.RawMessage // buffered: the first answer counts
}

// progressKey finds a running call from its progress notifications: tokens are the client's,
// so they are unique only within a session.
type progressKey struct {
	ss    *sdk.ServerSession
	token string
}

// runningCall is one call on its detached context.
type runningCall struct {
	synthetic bool // the progress token is the hub's: its notifications never reach the client

	mu          sync.Mutex
	taskID      string // set when the call was handed back as a task
	finished    bool
	res         sdk.Result
	err         error
	progress    tasks.Progress
	hasProgress bool

	askMu sync.Mutex // one question at a time through the task
}

// threshold is how long a call runs before it becomes a task for a client that did or did not
// declare the extension; 0 never.
func (r *taskRunner) threshold(extension bool) time.Duration {
	if r == nil {
		return 0
	}
	after := time.Duration(r.after.Load())
	if after <= 0 {
		return 0
	}
	if extension {
		return min(after, extensionTaskAfter)
	}
	return after
}

// SetTaskAfter changes task_after in the running hub (0: calls are never handed back), from the
// next call on; a call already waiting keeps the threshold it started with. Tasks already
// handed back run on. It fails when the hub was built without tasks.
func (s *Service) SetTaskAfter(d time.Duration) error {
	if s.tasks == nil {
		return errors.New("task_after: this hub runs without tasks; restart it to use the new value")
	}
	if d < 0 {
		return fmt.Errorf("task_after: %s is negative", d)
	}
	s.tasks.after.Store(int64(d))
	return nil
}

// TaskAfter is the task_after in force (0: off, or no tasks on this hub).
func (s *Service) TaskAfter() time.Duration {
	if s.tasks == nil {
		return 0
	}
	return time.Duration(s.tasks.after.Load())
}

// middleware is the outermost receiving middleware: the whole call, audit and policy included,
// runs on the detached context, so the audit line and the activity feed record how the call
// really ended.
func (r *taskRunner) middleware(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		if method != "tools/call" {
			return next(ctx, method, req)
		}
		p, _ := req.GetParams().(*sdk.CallToolParamsRaw)
		if p == nil || p.Name == tools.TasksGetTool || p.Name == tools.TasksCancelTool {
			return next(ctx, method, req)
		}
		extension := declaresTasks(req)
		after := r.threshold(extension)
		if after <= 0 {
			return next(ctx, method, req)
		}
		ss, _ := req.GetSession().(*sdk.ServerSession)
		c := &runningCall{}
		token := p.GetProgressToken()
		if token == nil {
			// Tools report progress only when asked: ask on the task's behalf.
			token = "switchboard-task-" + randomHex(8)
			p.SetProgressToken(token)
			c.synthetic = true
		}
		key := progressKey{ss, fmt.Sprint(token)}
		r.calls.Store(key, c)
		began := time.Now()
		callCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		callCtx = toolcall.WithHandOff(callCtx, func() bool {
			c.mu.Lock()
			defer c.mu.Unlock()
			return c.taskID != ""
		})
		if extension {
			// Its client polls tasks/get and can answer through tasks/update.
			callCtx = toolcall.WithTaskAsker(callCtx, func(ctx context.Context, id string, q sdk.InputRequest) (sdk.InputResponse, error) {
				return r.askThroughTask(ctx, c, id, q)
			})
		}
		done := make(chan struct{})
		// Owned by the call: it ends when the call returns; cancel (the request's, before the
		// hand-back; the task's, after) ends the call.
		go func() {
			res, err := next(callCtx, method, req)
			cancel()
			r.calls.Delete(key)
			c.mu.Lock()
			c.finished, c.res, c.err = true, res, err
			id := c.taskID
			c.mu.Unlock()
			if id != "" {
				r.finish(id, res, err)
				r.handed.Done()
			}
			close(done)
		}()
		timer := time.NewTimer(after)
		defer timer.Stop()
		select {
		case <-done:
			return c.res, c.err
		case <-ctx.Done():
			cancel() // the client cancelled the request, or went away, before the hand-back
			<-done
			return c.res, c.err
		case <-timer.C:
		}
		if r.store.Running() >= maxRunningTasks {
			select {
			case <-done:
			case <-ctx.Done():
				cancel()
				<-done
			}
			return c.res, c.err
		}
		c.mu.Lock()
		if c.finished {
			c.mu.Unlock()
			<-done
			return c.res, c.err
		}
		t := r.store.Start(r.owner(ctx, req), p.Name, began, cancel)
		r.handed.Add(1) // under c.mu: the call's goroutine sees the task id, and Done, only after
		c.taskID = t.ID
		if c.hasProgress {
			r.store.SetProgress(t.ID, c.progress)
		}
		c.mu.Unlock()
		if extension {
			return r.createTaskResult(t), nil
		}
		return r.handle(req, t, after), nil
	}
}

// askThroughTask puts an inner call's question to the client of the task c runs as: the task
// shows input_required with the question (tasks/get's inputRequests) until the client's
// tasks/update answers it, or ctx ends (the ask's timeout, the task's cancellation).
func (r *taskRunner) askThroughTask(ctx context.Context, c *runningCall, id string, q sdk.InputRequest) (sdk.InputResponse, error) {
	c.mu.Lock()
	tid := c.taskID
	c.mu.Unlock()
	if tid == "" {
		return nil, errors.New("the call is not a task yet")
	}
	c.askMu.Lock()
	defer c.askMu.Unlock()
	tq := &taskQuestion{id: id, req: q, answer: make(chan json.RawMessage, 1)}
	r.questions.Store(tid, tq)
	defer r.questions.Delete(tid)
	r.store.SetStatus(tid, tasks.InputRequired, "waiting for the client's answer (tasks/update)")
	defer r.store.SetStatus(tid, tasks.Working, "")
	select {
	case raw := <-tq.answer:
		var m sdk.InputResponseMap
		if err := json.Unmarshal([]byte(`{"a":`+string(raw)+`}`), &m); err != nil {
			return nil, fmt.Errorf("tasks/update: inputResponses[%q]: %w", id, err)
		}
		return m["a"], nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// close cancels the calls running as tasks and waits until they have returned and been
// recorded, or ctx ends.
func (r *taskRunner) close(ctx context.Context) error {
	r.store.Close()
	ended := make(chan struct{})
	go func() { r.handed.Wait(); close(ended) }() // ends when the last task call has returned
	select {
	case <-ended:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("tasks: calls still running at shutdown: %w", ctx.Err())
	}
}

// finish stores a task's outcome: the tool result as JSON, or the JSON-RPC error.
func (r *taskRunner) finish(id string, res sdk.Result, err error) {
	if err != nil {
		re := &tasks.RPCError{Code: jsonrpc.CodeInternalError, Message: err.Error()}
		var je *jsonrpc.Error
		if errors.As(err, &je) {
			re.Code, re.Message = je.Code, je.Message
		}
		r.store.Finish(id, nil, re)
		return
	}
	raw, merr := json.Marshal(res)
	if merr != nil {
		r.store.Finish(id, nil, &tasks.RPCError{Code: jsonrpc.CodeInternalError, Message: "encode the result: " + merr.Error()})
		return
	}
	r.store.Finish(id, raw, nil)
}

// TaskIDMetaKey is the _meta key of a task handle naming the task, for programs reading the
// result; RelatedTaskMetaKey is the same id as the Tasks specification's related-task.
const (
	TaskIDMetaKey      = "switchboard/task_id"
	RelatedTaskMetaKey = "io.modelcontextprotocol/related-task"
)

// handle is the answer to a client without the extension: a tool result naming the task and how
// to collect it. A tool that declares an output schema must answer structured content that
// conforms to it (the MCP specification), and clients check (the TypeScript SDK, under Claude
// Code and Gemini CLI, throws "Structured content does not match the tool's output schema"):
// for such a tool the handle is an error result with the id in its text and _meta, the only
// shape every client passes to the model; a tool without one gets structuredContent.task_id.
func (r *taskRunner) handle(req sdk.Request, t tasks.Task, after time.Duration) sdk.Result {
	text := fmt.Sprintf("%s is still running after %s, so the hub answers now and the call goes on as task %s. "+
		"Call tasks_get {\"task_id\": %q} to see its progress and, once it ends, its result (kept for %s after it ends); "+
		"tasks_cancel {\"task_id\": %q} stops it.", t.Tool, after, t.ID, t.ID, r.store.TTL(), t.ID)
	res := &sdk.CallToolResult{
		Content: []sdk.Content{&sdk.TextContent{Text: text}},
		Meta:    sdk.Meta{TaskIDMetaKey: t.ID, RelatedTaskMetaKey: map[string]any{"taskId": t.ID}},
	}
	if r.schemaless != nil && r.schemaless(t.Tool) {
		res.StructuredContent = map[string]any{"task_id": t.ID, "status": string(t.Status), "tool": t.Tool}
	} else {
		res.IsError = true // not a failure: the only way past clients' output-schema checks
	}
	return completeResultType(req, res)
}

// completeResultType gives a result the hub built on a 2026-07-28 session resultType "complete"
// (see withResultType: go-sdk keeps the field unexported).
func completeResultType(req sdk.Request, res *sdk.CallToolResult) sdk.Result {
	if !modernSession(req) {
		return res
	}
	raw, err := json.Marshal(res)
	if err != nil {
		return res
	}
	var wire map[string]json.RawMessage
	if json.Unmarshal(raw, &wire) != nil {
		return res
	}
	wire["resultType"] = json.RawMessage(`"complete"`)
	var out sdk.CallToolResult
	if raw, err = json.Marshal(wire); err != nil || json.Unmarshal(raw, &out) != nil {
		return res
	}
	return &out
}

// wireTask is a Task as the extension writes it (DetailedTask, with the result or error
// inlined once it ended).
type wireTask struct {
	TaskID         string              `json:"taskId"`
	Status         string              `json:"status"`
	StatusMessage  string              `json:"statusMessage,omitempty"`
	CreatedAt      string              `json:"createdAt"`
	LastUpdatedAt  string              `json:"lastUpdatedAt"`
	TTLMs          *int64              `json:"ttlMs"`
	PollIntervalMs int64               `json:"pollIntervalMs,omitempty"`
	Result         json.RawMessage     `json:"result,omitempty"`
	Error          *tasks.RPCError     `json:"error,omitempty"`
	InputRequests  sdk.InputRequestMap `json:"inputRequests,omitempty"`
}

func (r *taskRunner) wire(t tasks.Task) wireTask {
	w := wireTask{TaskID: t.ID, Status: string(t.Status), StatusMessage: t.StatusMessage,
		CreatedAt: t.Created.Format(time.RFC3339Nano), LastUpdatedAt: t.Updated.Format(time.RFC3339Nano)}
	if t.Status.Terminal() {
		// Kept for the TTL from the end: the TTL from creation is known only then. Running
		// tasks have none (null: they are kept until they end).
		ms := t.Updated.Add(r.store.TTL()).Sub(t.Created).Milliseconds()
		w.TTLMs = &ms
	} else {
		w.PollIntervalMs = taskPollInterval.Milliseconds()
		if p := t.Progress; p != nil && w.StatusMessage == "" {
			w.StatusMessage = progressText(*p)
		}
	}
	switch t.Status {
	case tasks.Completed:
		w.Result = t.Result
	case tasks.Failed:
		w.Error = t.Error
	case tasks.InputRequired:
		if q, ok := r.questions.Load(t.ID); ok {
			tq := q.(*taskQuestion)
			w.InputRequests = sdk.InputRequestMap{tq.id: tq.req}
		}
	}
	return w
}

func progressText(p tasks.Progress) string {
	s := fmt.Sprintf("%g", p.Done)
	if p.Total > 0 {
		s += fmt.Sprintf(" of %g", p.Total)
	}
	if p.Message != "" {
		s += ": " + p.Message
	}
	return s
}

// createTaskResult is the extension's CreateTaskResult: a task in place of the call's result.
type createTaskResult struct {
	sdk.ResultBase
	ResultType string `json:"resultType"`
	wireTask
}

func (r *taskRunner) createTaskResult(t tasks.Task) sdk.Result {
	return &createTaskResult{ResultType: "task", wireTask: r.wire(t)}
}

// taskParams are the params of tasks/get, tasks/update and tasks/cancel.
type taskParams struct {
	sdk.ParamsBase
	TaskID         string                     `json:"taskId"`
	InputResponses map[string]json.RawMessage `json:"inputResponses,omitempty"`
}

// getTaskResult answers tasks/get.
type getTaskResult struct {
	sdk.ResultBase
	ResultType string `json:"resultType"`
	wireTask
}

// ackResult answers tasks/update and tasks/cancel.
type ackResult struct {
	sdk.ResultBase
	ResultType string `json:"resultType"`
}

// addMethods serves the extension's methods on server.
func (r *taskRunner) addMethods(server *sdk.Server) error {
	lookup := func(ctx context.Context, ss *sdk.ServerSession, p *taskParams) (tasks.Owner, error) {
		req := &sdk.ServerRequest[*taskParams]{Session: ss, Params: p}
		if !declaresTasks(req) {
			return tasks.Owner{}, &jsonrpc.Error{Code: codeMissingCapability, Message: "Missing required client capability: declare the " + TasksExtension + " extension in the client's capabilities to use tasks/*",
				Data: json.RawMessage(`{"requiredCapabilities":{"extensions":{"` + TasksExtension + `":{}}}}`)}
		}
		if p == nil || p.TaskID == "" {
			return tasks.Owner{}, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "taskId: required"}
		}
		return r.owner(ctx, req), nil
	}
	taskErr := func(id string, err error) error {
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("taskId %q: %v", id, err)}
	}
	if err := sdk.AddReceivingCustomMethod(server, "tasks/get", func(ctx context.Context, ss *sdk.ServerSession, p *taskParams) (*getTaskResult, error) {
		owner, err := lookup(ctx, ss, p)
		if err != nil {
			return nil, err
		}
		t, err := r.store.Get(p.TaskID, owner)
		if err != nil {
			return nil, taskErr(p.TaskID, err)
		}
		return &getTaskResult{ResultType: "complete", wireTask: r.wire(t)}, nil
	}); err != nil {
		return err
	}
	if err := sdk.AddReceivingCustomMethod(server, "tasks/update", func(ctx context.Context, ss *sdk.ServerSession, p *taskParams) (*ackResult, error) {
		owner, err := lookup(ctx, ss, p)
		if err != nil {
			return nil, err
		}
		// A task asks its client only when an inner call of its (a script's, project_run's
		// exec) meets an ask (askThroughTask): the response to that question is taken;
		// responses to keys that are not outstanding are ignored, as the extension says.
		if _, err := r.store.Get(p.TaskID, owner); err != nil {
			return nil, taskErr(p.TaskID, err)
		}
		if q, ok := r.questions.Load(p.TaskID); ok {
			tq := q.(*taskQuestion)
			if raw, ok := p.InputResponses[tq.id]; ok {
				select {
				case tq.answer <- raw:
				default: // answered already
				}
			}
		}
		return &ackResult{ResultType: "complete"}, nil
	}); err != nil {
		return err
	}
	return sdk.AddReceivingCustomMethod(server, "tasks/cancel", func(ctx context.Context, ss *sdk.ServerSession, p *taskParams) (*ackResult, error) {
		owner, err := lookup(ctx, ss, p)
		if err != nil {
			return nil, err
		}
		if err := r.store.Cancel(p.TaskID, &owner); err != nil {
			return nil, taskErr(p.TaskID, err)
		}
		return &ackResult{ResultType: "complete"}, nil
	})
}

// sendingMiddleware keeps a running call's progress for its task, and holds back the
// notifications the client did not ask for (the hub's own token) or can no longer place (its
// request was answered with the task).
func (r *taskRunner) sendingMiddleware(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		if method != "notifications/progress" {
			return next(ctx, method, req)
		}
		p, _ := req.GetParams().(*sdk.ProgressNotificationParams)
		ss, _ := req.GetSession().(*sdk.ServerSession)
		if p == nil {
			return next(ctx, method, req)
		}
		v, ok := r.calls.Load(progressKey{ss, fmt.Sprint(p.ProgressToken)})
		if !ok {
			return next(ctx, method, req)
		}
		c := v.(*runningCall)
		prog := tasks.Progress{Done: p.Progress, Total: p.Total, Message: p.Message}
		c.mu.Lock()
		c.progress, c.hasProgress = prog, true
		id := c.taskID
		c.mu.Unlock()
		if id != "" {
			r.store.SetProgress(id, prog)
		}
		if c.synthetic || id != "" {
			return nil, nil
		}
		return next(ctx, method, req)
	}
}

// declaresTasks reports whether the request's client declared the Tasks extension: in the
// request's own capabilities (2026-07-28, where only those count), else in initialize's.
func declaresTasks(req sdk.Request) bool {
	if p := req.GetParams(); p != nil {
		if caps, ok := p.GetMeta()[sdk.MetaKeyClientCapabilities]; ok {
			raw, err := json.Marshal(caps)
			if err != nil {
				return false
			}
			var c struct {
				Extensions map[string]json.RawMessage `json:"extensions"`
			}
			if json.Unmarshal(raw, &c) != nil {
				return false
			}
			_, ok := c.Extensions[TasksExtension]
			return ok
		}
	}
	ss, _ := req.GetSession().(*sdk.ServerSession)
	if ss == nil {
		return false
	}
	ip := ss.InitializeParams()
	if ip == nil || ip.Capabilities == nil {
		return false
	}
	_, ok := ip.Capabilities.Extensions[TasksExtension]
	return ok
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// wireFeed publishes the tasks on the hub's "tasks" channel.
func (r *taskRunner) wireFeed(h *wshub.Hub) {
	if r == nil || h == nil {
		return
	}
	h.SetSnapshotProvider(channel.Tasks, func(string) (any, bool) {
		return TasksSnapshot{Tasks: r.store.List()}, true
	})
	r.store.Subscribe(func(c tasks.Change) { h.Publish(channel.Tasks, wshub.TypeEvent, c) })
}

// TaskOwner is the owner a task started by req's caller gets (tools.TaskOwners).
func (s *Service) TaskOwner(ctx context.Context, req sdk.Request) tasks.Owner {
	id, transport := s.sessionID(ctx, req)
	return tasks.Owner{Session: id, Client: callerName(req), Transport: transport, Identity: mcptransport.Identity(ctx)}
}

// Tasks lists the hub's tasks, newest first, without their results (nil when tasks are off).
func (s *Service) Tasks() []tasks.Task {
	if s.tasks == nil {
		return nil
	}
	return s.tasks.store.List()
}

// TasksRunning counts the tasks whose call still runs.
func (s *Service) TasksRunning() int {
	if s.tasks == nil {
		return 0
	}
	return s.tasks.store.Running()
}

// OnTasksChange calls fn with every task that starts, progresses or ends, until cancel; fn must
// not block.
func (s *Service) OnTasksChange(fn func(tasks.Change)) (cancel func()) {
	if s.tasks == nil {
		return func() {}
	}
	return s.tasks.store.Subscribe(fn)
}

// CancelTask stops a task's call for the user (the dashboard, the tray): any task, whoever
// started it.
func (s *Service) CancelTask(id string) error {
	if s.tasks == nil {
		return errors.New("tasks are off on this hub (task_after = \"0s\")")
	}
	if err := s.tasks.store.Cancel(id, nil); err != nil {
		return fmt.Errorf("task %s: %w", id, err)
	}
	return nil
}

// schemalessTools is the set of the hub's own tools that declare no output schema. Upstream
// tools are not in it: whether one declares a schema is the server's to change at any time, so
// its handle is the error-shaped one that passes either way.
func schemalessTools(inv *tool.Inventory) func(string) bool {
	set := map[string]bool{}
	for _, d := range inv.Defs() {
		if d.OutputSchema == nil {
			set[d.Name] = true
		}
	}
	return func(name string) bool { return set[name] }
}

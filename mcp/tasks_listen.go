package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/internal/tasks"
	mcptransport "github.com/switchboard-hub/switchboard/mcp/transport"
)

// TaskStatusNotification is the Tasks extension's status notification: its params are the
// task as tasks/get answers it (DetailedTask), sent on a subscriptions/listen stream that named
// the task in params.notifications.taskIds.
const TaskStatusNotification = "notifications/tasks"

// listenMiddleware follows tasks on a stateless client's subscriptions/listen stream (the
// extension's taskIds): it accepts the ids of the caller's own tasks (another client's are
// left out of the acknowledgement, as unknown ones are), sends notifications/tasks each time one
// of them changes status (working, input_required, completed, failed, cancelled), and keeps the
// stream open until every accepted task has ended or the client goes away. go-sdk answers the
// rest of the listen (list changes) as before. A client that asks for task notifications without
// declaring the extension gets the extension's missing-capability error.
func (r *taskRunner) listenMiddleware(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		tap := mcptransport.ListenTapFrom(ctx)
		if method != "subscriptions/listen" || tap == nil {
			return next(ctx, method, req)
		}
		if !declaresTasks(req) {
			return nil, &jsonrpc.Error{Code: codeMissingCapability, Message: "Missing required client capability: declare the " + TasksExtension + " extension in the request's client capabilities to follow tasks (notifications.taskIds) on subscriptions/listen",
				Data: json.RawMessage(`{"requiredCapabilities":{"extensions":{"` + TasksExtension + `":{}}}}`)}
		}
		if len(tap.TaskIDs) > mcptransport.MaxListenTasks {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("notifications.taskIds: %d ids; follow at most %d tasks per listen stream", len(tap.TaskIDs), mcptransport.MaxListenTasks)}
		}
		owner := r.owner(ctx, req)
		watched := map[string]tasks.Status{} // accepted id → the status last sent
		var accepted []string
		for _, id := range tap.TaskIDs {
			if _, dup := watched[id]; dup {
				continue
			}
			if t, err := r.store.Get(id, owner); err == nil {
				watched[id] = t.Status
				accepted = append(accepted, id)
			}
		}
		tap.Accept(accepted)
		if len(accepted) == 0 {
			tap.Finish()
			return next(ctx, method, req)
		}

		// Changes arrive from the store's goroutines and are coalesced (a burst of progress
		// updates is one wake-up); one goroutine (below) reads the tasks and sends, in order.
		follow := make(map[string]bool, len(accepted))
		for _, id := range accepted {
			follow[id] = true
		}
		var mu sync.Mutex
		pending := map[string]bool{}
		wake := make(chan struct{}, 1)
		stop := r.store.Subscribe(func(c tasks.Change) {
			if !follow[c.Task.ID] { // follow is never written after this point
				return
			}
			mu.Lock()
			pending[c.Task.ID] = true
			mu.Unlock()
			select {
			case wake <- struct{}{}:
			default:
			}
		})
		defer stop()
		ended := make(chan struct{})
		sender, cancel := context.WithCancel(ctx)
		defer cancel()
		// Owned by this listen: it returns when every accepted task has ended, or the stream's
		// request ends (the client went away, the hub shuts down).
		go func() {
			defer close(ended)
			// A task that ended before the client listened is sent once now: its status will
			// not change again.
			for _, id := range accepted {
				if watched[id].Terminal() {
					delete(watched, id)
					r.sendTaskStatus(tap, id, owner, watched)
				}
			}
			for !allEnded(watched) {
				select {
				case <-wake:
				case <-sender.Done():
					return
				}
				mu.Lock()
				ids := pending
				pending = map[string]bool{}
				mu.Unlock()
				for _, id := range accepted { // in the order the client named them
					if ids[id] {
						r.sendTaskStatus(tap, id, owner, watched)
					}
				}
			}
		}()
		// go-sdk sends the acknowledgement (with the accepted ids, by the tap) and, when the
		// listen also asked for list changes, holds the stream until the client leaves.
		res, err := next(ctx, method, req)
		select {
		case <-ended:
		case <-ctx.Done():
		}
		cancel()
		<-ended
		tap.Finish()
		return res, err
	}
}

// sendTaskStatus sends task id's state when its status differs from the one last sent (sent: id →
// that status; a task without an entry has had none sent). A task that ended is sent once.
func (r *taskRunner) sendTaskStatus(tap *mcptransport.ListenTap, id string, owner tasks.Owner, sent map[string]tasks.Status) {
	prev, had := sent[id]
	if had && prev.Terminal() {
		return
	}
	t, err := r.store.Get(id, owner)
	if err != nil {
		// Gone (its TTL passed, or the store closed): nothing more will come for it.
		sent[id] = tasks.Cancelled
		return
	}
	if had && prev == t.Status {
		return // progress only: the extension's notification is for status changes
	}
	raw, err := json.Marshal(r.wire(t))
	if err != nil {
		return
	}
	var params map[string]any
	if json.Unmarshal(raw, &params) != nil {
		return
	}
	if tap.Notify(TaskStatusNotification, params) == nil {
		sent[id] = t.Status
	}
	if t.Status.Terminal() {
		sent[id] = t.Status // ended: not followed further, whether or not the write went out
	}
}

func allEnded(watched map[string]tasks.Status) bool {
	for _, st := range watched {
		if !st.Terminal() {
			return false
		}
	}
	return true
}

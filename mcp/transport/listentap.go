package transport

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"sync"
)

// ListenTap lets the hub put its own notifications on a stateless client's subscriptions/listen
// stream, which go-sdk writes: the Tasks extension's notifications/tasks, for which go-sdk has no
// support (it drops params.notifications.taskIds, acknowledges only the list notifications and
// offers no way to send a notification it does not know). The tap sits in front of the stream's
// response writer: it adds the task ids the hub accepted to go-sdk's acknowledgement, and writes
// the hub's notifications as whole SSE events between go-sdk's (go-sdk writes each event in
// one Write).
type ListenTap struct {
	// TaskIDs are the tasks the request's params.notifications.taskIds asks to follow.
	TaskIDs []string
	// id is the listen request's JSON-RPC id, stamped on every notification of the stream
	// (io.modelcontextprotocol/subscriptionId), as go-sdk stamps its own.
	id json.RawMessage

	mu       sync.Mutex
	w        http.ResponseWriter
	ackIDs   []string // the accepted task ids, added to the acknowledgement
	acked    bool     // the acknowledgement went out: notifications may follow it
	queued   [][]byte // notifications emitted before the acknowledgement
	finished bool     // the hub is done with the stream: nothing more is written
}

type listenTapKey struct{}

// ListenTapFrom is the tap of the listen request ctx belongs to, nil when there is none (a
// session's listen, another transport, another method).
func ListenTapFrom(ctx context.Context) *ListenTap {
	t, _ := ctx.Value(listenTapKey{}).(*ListenTap)
	return t
}

// newListenTap returns the tap for a stateless request when it is a subscriptions/listen that
// asks for task notifications (nil otherwise), reading the ids from the raw body.
func newListenTap(body []byte, w http.ResponseWriter) *ListenTap {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Notifications struct {
				TaskIDs []string `json:"taskIds"`
			} `json:"notifications"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &m) != nil || m.Method != "subscriptions/listen" || len(m.Params.Notifications.TaskIDs) == 0 {
		return nil
	}
	return &ListenTap{TaskIDs: m.Params.Notifications.TaskIDs, id: m.ID, w: w}
}

// MaxListenTasks bounds the task ids one listen stream may follow.
const MaxListenTasks = 64

// Accept names the task ids the hub will send notifications for: the acknowledgement lists them.
// Call it before the listen is handed on to go-sdk, which sends the acknowledgement.
func (t *ListenTap) Accept(ids []string) {
	t.mu.Lock()
	t.ackIDs = append([]string{}, ids...)
	t.mu.Unlock()
}

// errTapFinished: the stream is over; the notification is dropped.
var errTapFinished = errors.New("the listen stream has ended")

// Notify writes a notification on the stream (after the acknowledgement, which the protocol
// wants first: one emitted before it waits for it).
func (t *ListenTap) Notify(method string, params map[string]any) error {
	if params == nil {
		params = map[string]any{}
	}
	meta, _ := params["_meta"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
	}
	meta["io.modelcontextprotocol/subscriptionId"] = t.id
	params["_meta"] = meta
	data, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": method, "params": params})
	if err != nil {
		return err
	}
	ev := append(append([]byte("event: message\ndata: "), data...), '\n', '\n')
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case t.finished:
		return errTapFinished
	case !t.acked:
		t.queued = append(t.queued, ev)
		return nil
	}
	return t.writeLocked(ev)
}

// Finish ends the hub's part of the stream: later notifications are dropped. go-sdk's answer to
// the listen request follows.
func (t *ListenTap) Finish() {
	t.mu.Lock()
	t.finished = true
	t.mu.Unlock()
}

func (t *ListenTap) writeLocked(ev []byte) error {
	if _, err := t.w.Write(ev); err != nil {
		return err
	}
	_ = http.NewResponseController(t.w).Flush()
	return nil
}

// tapWriter is the listen stream's response writer with the tap in front of it.
type tapWriter struct {
	http.ResponseWriter
	tap *ListenTap
}

// ackMethod is the notification go-sdk opens a listen stream with.
var ackMethod = []byte(`"notifications/subscriptions/acknowledged"`)

func (w *tapWriter) Write(p []byte) (int, error) {
	t := w.tap
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.acked || !bytes.Contains(p, ackMethod) {
		return t.w.Write(p)
	}
	out := p
	if len(t.ackIDs) > 0 {
		out = withAckedTasks(p, t.ackIDs)
	}
	if _, err := t.w.Write(out); err != nil {
		return 0, err
	}
	t.acked = true
	for _, ev := range t.queued {
		if err := t.writeLocked(ev); err != nil {
			return 0, err
		}
	}
	t.queued = nil
	return len(p), nil
}

// Flush and WriteHeader take the tap's lock too: the hub's notifications are written from
// another goroutine, and an HTTP/1.1 response's chunked writer is not safe for concurrent use.
func (w *tapWriter) Flush() {
	w.tap.mu.Lock()
	defer w.tap.mu.Unlock()
	_ = http.NewResponseController(w.ResponseWriter).Flush()
}

func (w *tapWriter) WriteHeader(code int) {
	w.tap.mu.Lock()
	defer w.tap.mu.Unlock()
	w.ResponseWriter.WriteHeader(code)
}

func (w *tapWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// withAckedTasks is the acknowledgement event ev with params.notifications.taskIds set to ids;
// ev unchanged when it is not the single-data-line event go-sdk writes.
func withAckedTasks(ev []byte, ids []string) []byte {
	const prefix = "data: "
	lines := bytes.Split(ev, []byte("\n"))
	for i, ln := range lines {
		if !bytes.HasPrefix(ln, []byte(prefix)) {
			continue
		}
		var msg map[string]any
		if json.Unmarshal(ln[len(prefix):], &msg) != nil {
			return ev
		}
		params, _ := msg["params"].(map[string]any)
		notes, _ := params["notifications"].(map[string]any)
		if params == nil || notes == nil {
			return ev
		}
		notes["taskIds"] = ids
		data, err := json.Marshal(msg)
		if err != nil {
			return ev
		}
		lines[i] = append([]byte(prefix), data...)
		return bytes.Join(lines, []byte("\n"))
	}
	return ev
}

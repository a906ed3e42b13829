// Package tasks keeps the hub's tasks: tool calls that outlived the request that started them.
// A call that runs past a threshold is handed back to its client as a task id while it goes on
// running; the client (or one with the same identity after a reconnect) collects the result
// later. The package knows nothing of MCP: the call's result is opaque JSON, its owner a few
// strings, and cancelling it is the context.CancelFunc of the call's context.
//
// A finished task is kept for the store's TTL (default 1 h) from the moment it finished, and is
// written to the store's directory as it finishes, so a hub restart loses no finished result.
// Results over MaxResultBytes are stored truncated, with a note saying so.
package tasks

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/switchboard-hub/switchboard/internal/listeners"
)

// Errors Get and Cancel return; the message of each says what to do.
var (
	ErrNotFound = errors.New("no such task (it may have expired: finished tasks are kept for their TTL)")
	ErrNotOwner = errors.New("this task belongs to another client: only the session that started it, or the same client reconnecting over the same kind of connection, may read or cancel it")
)

// Options configure a Store.
type Options struct {
	// Dir is where finished tasks are written (one JSON file each); "" keeps them in memory only.
	Dir string
	// TTL is how long a finished task is kept (default 1 h).
	TTL time.Duration
	// MaxResultBytes bounds a stored result (default 1 MiB); a larger one is cut.
	MaxResultBytes int
	Logger         *slog.Logger
}

// DefaultTTL is how long a finished task is kept when Options.TTL is 0.
const DefaultTTL = time.Hour

// DefaultMaxResultBytes bounds a stored result when Options.MaxResultBytes is 0.
const DefaultMaxResultBytes = 1 << 20

// Store holds the tasks. Its methods are safe for concurrent use.
type Store struct {
	dir    string
	ttl    time.Duration
	max    int
	logger *slog.Logger

	mu      sync.Mutex
	tasks   map[string]*entry
	changes listeners.Set[Change]

	stop chan struct{}
	done chan struct{}
	once sync.Once
}

type entry struct {
	task    Task
	cancel  context.CancelFunc // stops the call
	running bool               // the call has not returned yet (a cancelled call may still be ending)
	ends    time.Time          // when a finished task expires
}

// Open makes a store, loading the finished tasks Dir holds (expired ones are removed), and
// starts the sweeper that drops expired tasks; Close stops it.
func Open(o Options) (*Store, error) {
	s := &Store{dir: o.Dir, ttl: o.TTL, max: o.MaxResultBytes, logger: o.Logger, tasks: map[string]*entry{},
		stop: make(chan struct{}), done: make(chan struct{})}
	if s.ttl <= 0 {
		s.ttl = DefaultTTL
	}
	if s.max <= 0 {
		s.max = DefaultMaxResultBytes
	}
	if s.logger == nil {
		s.logger = slog.New(slog.DiscardHandler)
	}
	if s.dir != "" {
		if err := os.MkdirAll(s.dir, 0o700); err != nil {
			return nil, fmt.Errorf("tasks: state directory: %w", err)
		}
		if err := s.load(); err != nil {
			return nil, err
		}
	}
	go s.sweepLoop()
	return s, nil
}

// TTL is how long a finished task is kept.
func (s *Store) TTL() time.Duration { return s.ttl }

// load reads the finished tasks written before a restart.
func (s *Store) load() error {
	ents, err := os.ReadDir(s.dir)
	if err != nil {
		return fmt.Errorf("tasks: read %s: %w", s.dir, err)
	}
	now := time.Now()
	for _, de := range ents {
		name := de.Name()
		if !strings.HasSuffix(name, ".json") {
			continue
		}
		path := filepath.Join(s.dir, name)
		raw, err := os.ReadFile(path)
		if err != nil {
			s.logger.Warn("tasks: unreadable task file", "path", path, "error", err)
			continue
		}
		var t Task
		if err := json.Unmarshal(raw, &t); err != nil || t.ID+".json" != name || !t.Status.Terminal() {
			s.logger.Warn("tasks: dropping a task file that is not a finished task", "path", path)
			_ = os.Remove(path)
			continue
		}
		ends := t.Updated.Add(s.ttl)
		if now.After(ends) {
			_ = os.Remove(path)
			continue
		}
		// Session ids are counters of one hub run: after a restart "unix-1" is someone else.
		// The client reconnecting over the same kind of connection still may collect it.
		t.Owner.Session = ""
		s.tasks[t.ID] = &entry{task: t, ends: ends}
	}
	return nil
}

// newID is an unguessable task id: 128 random bits.
func newID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return "task-" + hex.EncodeToString(b)
}

// Start records a running task for tool, owned by owner, whose call began at began (its age
// counts from there) and which cancel stops; it returns the task as stored. The task exists
// (Get finds it) when Start returns.
func (s *Store) Start(owner Owner, tool string, began time.Time, cancel context.CancelFunc) Task {
	now := time.Now().UTC()
	t := Task{ID: newID(), Owner: owner, Tool: tool, Status: Working, Created: began.UTC(), Updated: now}
	s.mu.Lock()
	s.tasks[t.ID] = &entry{task: t, cancel: cancel, running: true}
	s.mu.Unlock()
	s.changes.Notify(Change{Kind: "started", Task: t})
	return t
}

// SetProgress records a running task's latest progress.
func (s *Store) SetProgress(id string, p Progress) {
	s.mu.Lock()
	e := s.tasks[id]
	if e == nil || e.task.Status.Terminal() {
		s.mu.Unlock()
		return
	}
	e.task.Progress = &p
	e.task.Updated = time.Now().UTC()
	t := e.task
	s.mu.Unlock()
	s.changes.Notify(Change{Kind: "updated", Task: t})
}

// SetStatus moves a running task between working and input_required, with a message saying why.
func (s *Store) SetStatus(id string, st Status, message string) {
	if st.Terminal() {
		return
	}
	s.mu.Lock()
	e := s.tasks[id]
	if e == nil || e.task.Status.Terminal() {
		s.mu.Unlock()
		return
	}
	e.task.Status, e.task.StatusMessage, e.task.Updated = st, message, time.Now().UTC()
	t := e.task
	s.mu.Unlock()
	s.changes.Notify(Change{Kind: "updated", Task: t})
}

// Finish records that a task's call returned: with result (the call's result as JSON) when
// rpcErr is nil, Failed with rpcErr otherwise; a task cancelled meanwhile stays Cancelled. The
// finished task is written to the store's directory and kept for the TTL from now.
func (s *Store) Finish(id string, result json.RawMessage, rpcErr *RPCError) {
	s.mu.Lock()
	e := s.tasks[id]
	if e == nil || !e.running {
		s.mu.Unlock()
		return
	}
	now := time.Now().UTC()
	t := &e.task
	switch {
	case t.Status == Cancelled:
	case rpcErr != nil:
		t.Status, t.Error, t.StatusMessage = Failed, rpcErr, rpcErr.Message
	default:
		t.Status, t.StatusMessage = Completed, ""
		t.Result, t.Truncated = s.bound(result)
		if t.Truncated {
			t.StatusMessage = fmt.Sprintf("the result was %d bytes; the hub keeps %d, so it was cut", len(result), s.max)
		}
	}
	t.Updated = now
	e.running, e.cancel = false, nil
	e.ends = now.Add(s.ttl)
	done := *t
	s.mu.Unlock()
	s.persist(done)
	s.changes.Notify(Change{Kind: "ended", Task: done.Summary()})
}

// bound returns result as stored: whole when it fits, else an MCP tool result of its head as
// text, with a note (the JSON cannot be cut and stay a result).
func (s *Store) bound(result json.RawMessage) (json.RawMessage, bool) {
	if len(result) <= s.max {
		return result, false
	}
	cut := max(0, s.max-512) // room for the note and the JSON around the text
	for cut > 0 && !utf8.RuneStart(result[cut]) {
		cut--
	}
	head := string(result[:cut])
	out, _ := json.Marshal(map[string]any{"content": []map[string]any{
		{"type": "text", "text": head},
		{"type": "text", "text": fmt.Sprintf("[truncated: the result was %d bytes; the hub keeps the first %d of a task's result]", len(result), len(head))},
	}})
	return out, true
}

// persist writes a finished task (atomically: a temporary file renamed into place).
func (s *Store) persist(t Task) {
	if s.dir == "" {
		return
	}
	raw, err := json.Marshal(t)
	if err != nil {
		s.logger.Warn("tasks: encode", "task", t.ID, "error", err)
		return
	}
	tmp, err := os.CreateTemp(s.dir, t.ID+".*.tmp")
	if err != nil {
		s.logger.Warn("tasks: persist", "task", t.ID, "error", err)
		return
	}
	_, werr := tmp.Write(raw)
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		_ = os.Remove(tmp.Name())
		s.logger.Warn("tasks: persist", "task", t.ID, "error", err)
		return
	}
	if err := os.Rename(tmp.Name(), filepath.Join(s.dir, t.ID+".json")); err != nil {
		_ = os.Remove(tmp.Name())
		s.logger.Warn("tasks: persist", "task", t.ID, "error", err)
	}
}

// Get returns the task id for caller, who must be allowed by its owner (Owner.Allows).
func (s *Store) Get(id string, caller Owner) (Task, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.tasks[id]
	if e == nil {
		return Task{}, ErrNotFound
	}
	if !e.task.Owner.Allows(caller) {
		return Task{}, ErrNotOwner
	}
	return e.task, nil
}

// Cancel asks a running task's call to stop (its context is cancelled; exec's processes are
// killed with it). caller nil is the user (dashboard, tray), who may cancel any task. Cancelling
// a finished task does nothing. The task reads Cancelled at once.
func (s *Store) Cancel(id string, caller *Owner) error {
	s.mu.Lock()
	e := s.tasks[id]
	if e == nil {
		s.mu.Unlock()
		return ErrNotFound
	}
	if caller != nil && !e.task.Owner.Allows(*caller) {
		s.mu.Unlock()
		return ErrNotOwner
	}
	if e.task.Status.Terminal() {
		s.mu.Unlock()
		return nil
	}
	cancel := e.cancel
	e.task.Status, e.task.StatusMessage, e.task.Updated = Cancelled, "cancelled", time.Now().UTC()
	if caller == nil {
		e.task.StatusMessage = "cancelled by the user on the dashboard"
	}
	t := e.task
	s.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	s.changes.Notify(Change{Kind: "updated", Task: t})
	return nil
}

// List returns every task without its result, newest first.
func (s *Store) List() []Task {
	s.mu.Lock()
	out := make([]Task, 0, len(s.tasks))
	for _, e := range s.tasks {
		out = append(out, e.task.Summary())
	}
	s.mu.Unlock()
	slices.SortFunc(out, func(a, b Task) int { return b.Created.Compare(a.Created) })
	return out
}

// Running counts the tasks not yet finished.
func (s *Store) Running() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, e := range s.tasks {
		if !e.task.Status.Terminal() {
			n++
		}
	}
	return n
}

// Subscribe calls fn with every change until cancel; fn must not block.
func (s *Store) Subscribe(fn func(Change)) (cancel func()) { return s.changes.Add(fn) }

// Sweep drops the finished tasks whose TTL has passed (the sweeper does it every minute).
func (s *Store) Sweep(now time.Time) {
	var gone []Task
	s.mu.Lock()
	for id, e := range s.tasks {
		if !e.running && now.After(e.ends) {
			delete(s.tasks, id)
			gone = append(gone, e.task.Summary())
		}
	}
	s.mu.Unlock()
	for _, t := range gone {
		if s.dir != "" {
			_ = os.Remove(filepath.Join(s.dir, t.ID+".json"))
		}
		s.changes.Notify(Change{Kind: "removed", Task: t})
	}
}

func (s *Store) sweepLoop() {
	defer close(s.done)
	t := time.NewTicker(time.Minute)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case now := <-t.C:
			s.Sweep(now)
		}
	}
}

// Close stops the sweeper and cancels the calls still running: the hub is going away, and their
// processes with it. Such a task ends Cancelled ("the hub stopped"), written like any finished
// one once its call returns, so a client asking after the restart learns what became of it.
func (s *Store) Close() {
	s.once.Do(func() {
		close(s.stop)
		<-s.done
		var cancels []context.CancelFunc
		var changed []Task
		s.mu.Lock()
		now := time.Now().UTC()
		for _, e := range s.tasks {
			if e.running && !e.task.Status.Terminal() {
				e.task.Status, e.task.StatusMessage, e.task.Updated = Cancelled, "the hub stopped while the call ran", now
				changed = append(changed, e.task.Summary())
			}
			if e.running && e.cancel != nil {
				cancels = append(cancels, e.cancel)
			}
		}
		s.mu.Unlock()
		for _, c := range cancels {
			c()
		}
		for _, t := range changed {
			s.changes.Notify(Change{Kind: "updated", Task: t})
		}
	})
}

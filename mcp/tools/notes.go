package tools

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/internal/notes"
	"github.com/switchboard-hub/switchboard/internal/wshub"
	"github.com/switchboard-hub/switchboard/mcp/channel"
	"github.com/switchboard-hub/switchboard/mcp/tool"
)

// Memory and todo tools (internal/notes): notes that persist per workspace under the data dir,
// and one todo list per client session, shown live on the dashboard (hub channel "todos").

// MemoryWriteInput is memory_write's arguments: a note in the caller's workspace, written, replaced
// or (with empty content) deleted.
type MemoryWriteInput struct {
	tool.InWorkspace `json:"-"`
	Key              string `json:"key" jsonschema:"note name: letters, digits, '.', '_' and '-' (no path separators), at most 128 characters"`
	Content          string `json:"content" jsonschema:"note text (at most 256 KiB); empty deletes the note"`
}

// MemoryWriteOutput is memory_write's result.
type MemoryWriteOutput struct {
	Key      string `json:"key" jsonschema:"echoed key"`
	Size     int    `json:"size" jsonschema:"bytes stored (0 after a delete)"`
	Deleted  bool   `json:"deleted" jsonschema:"the note was deleted (empty content)"`
	Replaced bool   `json:"replaced" jsonschema:"an existing note was overwritten or deleted"`
}

// MemoryReadInput is memory_read's arguments: one note's key, or none to list the workspace's
// notes.
type MemoryReadInput struct {
	tool.InWorkspace `json:"-"`
	Key              string `json:"key,omitempty" jsonschema:"note to read; omit to list every note's key, size and time"`
}

// MemoryNote is one entry of memory_read's listing: a note's key, size and last write, without its
// content.
type MemoryNote struct {
	Key     string    `json:"key" jsonschema:"note name"`
	Size    int64     `json:"size" jsonschema:"bytes"`
	Updated time.Time `json:"updated" jsonschema:"last write"`
}

// MemoryReadOutput is memory_read's result: one note's content when a key was given, else the list
// of notes.
type MemoryReadOutput struct {
	Key     string       `json:"key,omitempty" jsonschema:"the note read (with key)"`
	Content string       `json:"content,omitempty" jsonschema:"its text (with key)"`
	Size    int64        `json:"size,omitempty" jsonschema:"its size in bytes (with key)"`
	Updated *time.Time   `json:"updated,omitempty" jsonschema:"its last write (with key)"`
	Notes   []MemoryNote `json:"notes,omitempty" jsonschema:"every note of this workspace, by key (without key)"`
}

// TodoItem is one step of a session's todo list, in todo_write's arguments and the todo tools'
// results.
type TodoItem struct {
	Content string `json:"content" jsonschema:"what the step is"`
	Status  string `json:"status" jsonschema:"pending, in_progress or completed"`
}

// TodoWriteInput is todo_write's arguments: the session's whole list, which replaces the previous
// one.
type TodoWriteInput struct {
	Items []TodoItem `json:"items" jsonschema:"the whole list, in order; replaces this session's list (empty clears it)"`
}

// TodoListOutput is the result of todo_write and todo_read: the session's list and how many items
// are in each state.
type TodoListOutput struct {
	Items      []TodoItem `json:"items" jsonschema:"this session's list"`
	Pending    int        `json:"pending" jsonschema:"items pending"`
	InProgress int        `json:"in_progress" jsonschema:"items in progress"`
	Completed  int        `json:"completed" jsonschema:"items completed"`
}

// TodoReadInput is todo_read's arguments: none (the list is the calling session's).
type TodoReadInput struct{}

// NotesState is the hub's memory stores (one per workspace) and todo lists.
type NotesState struct {
	dataDir string
	todos   *notes.Todos

	mu       sync.Mutex
	stores   map[string]*notes.Memory
	watching map[string]bool // sessions whose end removes their list
}

// NotesTools are memory_* and todo_* (WithNotes).
type NotesTools struct {
	Workspaces
	Sessions
	notes *NotesState
}

// NewNotesState keeps memory notes under dataDir.
func NewNotesState(dataDir string) (*NotesState, error) {
	if dataDir == "" {
		return nil, errors.New("notes: data dir is empty")
	}
	return &NotesState{dataDir: dataDir, todos: notes.NewTodos(), stores: map[string]*notes.Memory{}, watching: map[string]bool{}}, nil
}

// Todos is every session's todo list.
func (n *NotesState) Todos() *notes.Todos { return n.todos }

// ForgetSession drops the todo list of a session that left the hub's registry.
func (n *NotesState) ForgetSession(id string) { n.todos.Remove(id) }

// NewNotesTools is the notes tools' dependencies.
func NewNotesTools(w Workspaces, sess Sessions, st *NotesState) *NotesTools {
	return &NotesTools{Workspaces: w, Sessions: sess, notes: st}
}

// WireNotesFeed publishes todo lists on the hub channel "todos" (snapshot + change events).
func WireNotesFeed(h *wshub.Hub, st *NotesState) {
	h.SetSnapshotProvider(channel.Todos, func(string) (any, bool) {
		return TodosSnapshot{Lists: st.todos.All()}, true
	})
	st.todos.Subscribe(func(c notes.TodoChange) { h.Publish(channel.Todos, wshub.TypeEvent, c) })
}

// NotesGroup declares the group's tools (toolset memory) as values that need no hub;
// NewNotesTools builds the dependencies they are bound to.
func NotesGroup() tool.Group {
	return tool.NewGroup("memory",
		tool.Func(sdk.Tool{Name: "memory_write", Annotations: tool.Write("Write memory note", true, true),
			Description: "Save a note under a key for later sessions (persists per workspace across restarts); empty content deletes it."}, (*NotesTools).memoryWrite),
		tool.Func(sdk.Tool{Name: "memory_read", Annotations: tool.ReadOnly("Read memory notes"),
			Description: "Read the note under key, or without a key list every note (key, size, last write) of this workspace."}, (*NotesTools).memoryRead),
		tool.Func(sdk.Tool{Name: "todo_write", Annotations: tool.Write("Write todo list", false, true),
			Description: "Replace this session's todo list (the whole list each time). The user sees it live on the dashboard's Sessions view."}, (*NotesTools).todoWrite),
		tool.Func(sdk.Tool{Name: "todo_read", Annotations: tool.ReadOnly("Read todo list"),
			Description: "Return this session's todo list."}, (*NotesTools).todoRead),
	)
}

func (g *NotesTools) memoryFor(ctx context.Context, req *sdk.CallToolRequest) (*notes.Memory, error) {
	ws, err := g.WorkspaceFor(ctx, req)
	if err != nil {
		return nil, err
	}
	g.notes.mu.Lock()
	defer g.notes.mu.Unlock()
	if m, ok := g.notes.stores[ws.Dir()]; ok {
		return m, nil
	}
	m, err := notes.OpenMemory(g.notes.dataDir, ws.Dir())
	if err != nil {
		return nil, err
	}
	g.notes.stores[ws.Dir()] = m
	return m, nil
}

func notesErr(err error) error {
	var fe *notes.FieldError
	if errors.As(err, &fe) {
		return fe
	}
	return err
}

func (g *NotesTools) memoryWrite(ctx context.Context, req *sdk.CallToolRequest, in MemoryWriteInput) (*sdk.CallToolResult, MemoryWriteOutput, error) {
	m, err := g.memoryFor(ctx, req)
	if err != nil {
		return nil, MemoryWriteOutput{}, err
	}
	existed, err := m.Write(in.Key, in.Content)
	if err != nil {
		return nil, MemoryWriteOutput{}, notesErr(err)
	}
	return nil, MemoryWriteOutput{Key: in.Key, Size: len(in.Content), Deleted: in.Content == "", Replaced: existed}, nil
}

func (g *NotesTools) memoryRead(ctx context.Context, req *sdk.CallToolRequest, in MemoryReadInput) (*sdk.CallToolResult, MemoryReadOutput, error) {
	m, err := g.memoryFor(ctx, req)
	if err != nil {
		return nil, MemoryReadOutput{}, err
	}
	if in.Key == "" {
		list, err := m.List()
		if err != nil {
			return nil, MemoryReadOutput{}, err
		}
		out := MemoryReadOutput{Notes: make([]MemoryNote, len(list))}
		for i, n := range list {
			out.Notes[i] = MemoryNote(n)
		}
		return nil, out, nil
	}
	n, err := m.Read(in.Key)
	if err != nil {
		return nil, MemoryReadOutput{}, notesErr(err)
	}
	return nil, MemoryReadOutput{Key: n.Key, Content: n.Content, Size: n.Size, Updated: &n.Updated}, nil
}

// todoSession names the calling session's list: the hub's session registry ID (what the
// dashboard shows) when the connection has one, else the MCP session ID, else the session
// object itself (in-process clients have neither). A list under a registry ID is dropped when
// that entry leaves the registry (the Service does it: NotesState.ForgetSession), which for a
// stateless client is when its identity does, not when one request's go-sdk session ends; the
// others when their session ends.
func (g *NotesTools) todoSession(ctx context.Context, req *sdk.CallToolRequest) string {
	key, _ := g.SessionID(ctx, req)
	if key != "" {
		return key
	}
	if req.Session != nil {
		key = req.Session.ID()
	}
	if key == "" {
		key = fmt.Sprintf("session-%p", req.Session)
	}
	g.notes.mu.Lock()
	watch := !g.notes.watching[key]
	g.notes.watching[key] = true
	g.notes.mu.Unlock()
	if watch && req.Session != nil {
		go func() {
			_ = req.Session.Wait()
			g.notes.todos.Remove(key)
			g.notes.mu.Lock()
			delete(g.notes.watching, key)
			g.notes.mu.Unlock()
		}()
	}
	return key
}

func todoOut(l notes.TodoList) TodoListOutput {
	out := TodoListOutput{Items: make([]TodoItem, len(l.Items))}
	for i, it := range l.Items {
		out.Items[i] = TodoItem(it)
		switch it.Status {
		case notes.Pending:
			out.Pending++
		case notes.InProgress:
			out.InProgress++
		case notes.Completed:
			out.Completed++
		}
	}
	return out
}

func (g *NotesTools) todoWrite(ctx context.Context, req *sdk.CallToolRequest, in TodoWriteInput) (*sdk.CallToolResult, TodoListOutput, error) {
	items := make([]notes.TodoItem, len(in.Items))
	for i, it := range in.Items {
		items[i] = notes.TodoItem(it)
	}
	if err := notes.CheckItems(items); err != nil {
		return nil, TodoListOutput{}, notesErr(err)
	}
	l, err := g.notes.todos.Set(g.todoSession(ctx, req), items)
	if err != nil {
		return nil, TodoListOutput{}, notesErr(err)
	}
	return nil, todoOut(l), nil
}

func (g *NotesTools) todoRead(ctx context.Context, req *sdk.CallToolRequest, _ TodoReadInput) (*sdk.CallToolResult, TodoListOutput, error) {
	return nil, todoOut(g.notes.todos.Get(g.todoSession(ctx, req))), nil
}

package notes

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/switchboard-hub/switchboard/internal/listeners"
)

// Todo statuses.
const (
	Pending    = "pending"
	InProgress = "in_progress"
	Completed  = "completed"
)

// Limits for todo lists.
const (
	MaxTodoItems = 100
	MaxTodoText  = 1000
)

// TodoItem is one entry of a list.
type TodoItem struct {
	Content string `json:"content"`
	Status  string `json:"status"`
}

// TodoList is one session's list.
type TodoList struct {
	Session string     `json:"session"`
	Items   []TodoItem `json:"items"`
	Updated time.Time  `json:"updated"`
}

// TodoChange is a notification: kind "updated" (the list replaced) or "removed" (session gone).
type TodoChange struct {
	Kind string   `json:"kind"`
	List TodoList `json:"list"`
}

// Todos holds every session's list. Safe for concurrent use.
type Todos struct {
	mu        sync.Mutex
	lists     map[string]TodoList
	listeners listeners.Set[TodoChange]
}

// NewTodos returns an empty store.
func NewTodos() *Todos { return &Todos{lists: map[string]TodoList{}} }

// CheckItems validates a list, naming the item at fault.
func CheckItems(items []TodoItem) error {
	if len(items) > MaxTodoItems {
		return &FieldError{"items", fmt.Sprintf("%d items is over the limit of %d", len(items), MaxTodoItems)}
	}
	for i, it := range items {
		switch it.Status {
		case Pending, InProgress, Completed:
		default:
			return &FieldError{fmt.Sprintf("items[%d].status", i), fmt.Sprintf("unknown status %q; use pending, in_progress or completed", it.Status)}
		}
		if strings.TrimSpace(it.Content) == "" {
			return &FieldError{fmt.Sprintf("items[%d].content", i), "empty; say what the step is"}
		}
		if len(it.Content) > MaxTodoText {
			return &FieldError{fmt.Sprintf("items[%d].content", i), fmt.Sprintf("longer than %d bytes", MaxTodoText)}
		}
	}
	return nil
}

// Set replaces session's list (an empty list clears it) and notifies listeners.
func (t *Todos) Set(session string, items []TodoItem) (TodoList, error) {
	if err := CheckItems(items); err != nil {
		return TodoList{}, err
	}
	l := TodoList{Session: session, Items: append([]TodoItem{}, items...), Updated: time.Now().UTC()}
	t.mu.Lock()
	t.lists[session] = l
	t.mu.Unlock()
	t.listeners.Notify(TodoChange{Kind: "updated", List: l})
	return l, nil
}

// Get returns session's list (empty when none).
func (t *Todos) Get(session string) TodoList {
	t.mu.Lock()
	defer t.mu.Unlock()
	l, ok := t.lists[session]
	if !ok {
		return TodoList{Session: session, Items: []TodoItem{}}
	}
	return l
}

// Remove drops session's list (the session ended).
func (t *Todos) Remove(session string) {
	t.mu.Lock()
	l, ok := t.lists[session]
	delete(t.lists, session)
	t.mu.Unlock()
	if ok {
		t.listeners.Notify(TodoChange{Kind: "removed", List: l})
	}
}

// All returns every list, by session.
func (t *Todos) All() []TodoList {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]TodoList, 0, len(t.lists))
	for _, l := range t.lists {
		out = append(out, l)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Session < out[j].Session })
	return out
}

// Subscribe calls fn on every change (from the goroutine that made it) until cancel is called.
func (t *Todos) Subscribe(fn func(TodoChange)) (cancel func()) {
	return t.listeners.Add(fn)
}

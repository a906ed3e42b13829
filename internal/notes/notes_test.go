package notes

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestMemoryPersistsPerWorkspace(t *testing.T) {
	data := t.TempDir()
	m, err := OpenMemory(data, "/work/a")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Write("plan", "step 1"); err != nil {
		t.Fatal(err)
	}
	if replaced, _ := m.Write("plan", "step 2"); !replaced {
		t.Error("overwrite not reported")
	}
	// Reopen: same workspace sees it, another does not.
	again, _ := OpenMemory(data, "/work/a")
	n, err := again.Read("plan")
	if err != nil || n.Content != "step 2" || n.Size != 6 || n.Updated.IsZero() {
		t.Fatalf("read after reopen = %+v, %v", n, err)
	}
	other, _ := OpenMemory(data, "/work/b")
	if list, _ := other.List(); len(list) != 0 {
		t.Errorf("other workspace sees %v", list)
	}
	if deleted, err := again.Write("plan", ""); err != nil || !deleted {
		t.Errorf("delete = %v, %v", deleted, err)
	}
	if _, err := again.Read("plan"); err == nil || !strings.HasPrefix(err.Error(), "key: no note") {
		t.Errorf("read deleted = %v", err)
	}
	if filepath.Dir(m.Dir()) != filepath.Join(data, "memory") {
		t.Errorf("store dir %s not under the data dir", m.Dir())
	}
}

func TestMemoryKeys(t *testing.T) {
	m, _ := OpenMemory(t.TempDir(), "/w")
	for _, bad := range []string{"", "../x", "a/b", `a\b`, ".hidden", "x.tmp", strings.Repeat("k", 129), "a b", "naïve"} {
		if _, err := m.Write(bad, "x"); err == nil || !strings.HasPrefix(err.Error(), "key: ") {
			t.Errorf("key %q: %v", bad, err)
		}
	}
	if _, err := m.Write("ok", strings.Repeat("x", MaxNoteBytes+1)); err == nil || !strings.HasPrefix(err.Error(), "content: ") {
		t.Errorf("oversized content: %v", err)
	}
	entries, _ := os.ReadDir(filepath.Dir(m.Dir()))
	if len(entries) != 1 {
		t.Errorf("files outside the store: %v", entries)
	}
}

func TestTodos(t *testing.T) {
	td := NewTodos()
	var changes []TodoChange
	td.Subscribe(func(c TodoChange) { changes = append(changes, c) })
	if _, err := td.Set("s1", []TodoItem{{"read code", Completed}, {"write test", InProgress}, {"ship", Pending}}); err != nil {
		t.Fatal(err)
	}
	if _, err := td.Set("s1", []TodoItem{{"x", "done"}}); err == nil || err.Error() != `items[0].status: unknown status "done"; use pending, in_progress or completed` {
		t.Errorf("bad status: %v", err)
	}
	if _, err := td.Set("s1", []TodoItem{{"ok", Pending}, {" ", Pending}}); err == nil || !strings.HasPrefix(err.Error(), "items[1].content: ") {
		t.Errorf("empty content: %v", err)
	}
	if l := td.Get("s1"); len(l.Items) != 3 || l.Items[1].Status != InProgress {
		t.Errorf("get = %+v", l)
	}
	if l := td.Get("s2"); len(l.Items) != 0 {
		t.Errorf("other session = %+v", l)
	}
	td.Remove("s1")
	if len(changes) != 2 || changes[0].Kind != "updated" || changes[1].Kind != "removed" || len(td.All()) != 0 {
		t.Errorf("changes = %+v", changes)
	}
}

package sessions

import "testing"

func TestRegistryLifecycleAndNotifications(t *testing.T) {
	r := New()
	var changes []Change
	cancel := r.Subscribe(func(c Change) { changes = append(changes, c) })
	a := r.Add("unix", "pid 42")
	b := r.Add("http", "127.0.0.1:5555")
	r.SetClient(a, "claude-code", "1.2.3", "2025-06-18")
	r.CountCall(a, "file_read")
	r.CountCall(a, "dir_list")
	got, ok := r.Get(a)
	if !ok || got.Calls != 2 || got.LastTool != "dir_list" || got.ClientName != "claude-code" || got.Protocol != "2025-06-18" || got.LastCallAt.IsZero() {
		t.Fatalf("session a = %+v", got)
	}
	if l := r.List(); len(l) != 2 || l[0].ID != a || l[1].ID != b {
		t.Fatalf("List = %+v", l)
	}
	r.Remove(a)
	r.Remove(a) // idempotent: no second notification
	r.CountCall(a, "x")
	cancel()
	r.Remove(b)
	kinds := []string{}
	for _, c := range changes {
		kinds = append(kinds, c.Kind)
	}
	want := []string{"connected", "connected", "updated", "updated", "updated", "disconnected"}
	if len(kinds) != len(want) {
		t.Fatalf("kinds = %v, want %v", kinds, want)
	}
	for i := range want {
		if kinds[i] != want[i] {
			t.Fatalf("kinds = %v, want %v", kinds, want)
		}
	}
	if len(r.List()) != 0 {
		t.Fatal("sessions left after Remove")
	}
}

package listeners

import (
	"slices"
	"sync"
	"testing"
)

func TestAddNotifyCancel(t *testing.T) {
	var s Set[int]
	var got []string
	cancelA := s.Add(func(v int) { got = append(got, "a") })
	s.Add(func(v int) { got = append(got, "b") })
	cancelC := s.Add(func(v int) { got = append(got, "c") })
	s.Notify(1)
	if want := []string{"a", "b", "c"}; !slices.Equal(got, want) {
		t.Fatalf("first notify: %v, want %v (registration order)", got, want)
	}
	cancelA()
	cancelA() // idempotent
	cancelC()
	got = nil
	s.Notify(2)
	if want := []string{"b"}; !slices.Equal(got, want) {
		t.Fatalf("after cancel: %v, want %v", got, want)
	}
	if s.Len() != 1 {
		t.Fatalf("Len = %d, want 1", s.Len())
	}
}

// A callback may cancel itself or others while Notify runs, and Add/cancel race with Notify
// (run with -race).
func TestCancelDuringNotify(t *testing.T) {
	var s Set[int]
	calls := 0
	var cancel func()
	cancel = s.Add(func(int) { calls++; cancel() })
	s.Notify(1)
	s.Notify(2)
	if calls != 1 {
		t.Fatalf("self-cancelling callback ran %d times, want 1", calls)
	}
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(2)
		go func() { defer wg.Done(); c := s.Add(func(int) {}); s.Notify(0); c() }()
		go func() { defer wg.Done(); s.Notify(1) }()
	}
	wg.Wait()
	if s.Len() != 0 {
		t.Fatalf("Len = %d after every cancel, want 0", s.Len())
	}
}

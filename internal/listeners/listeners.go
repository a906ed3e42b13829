// Package listeners is the one way change subscriptions work in Switchboard: Add registers a
// callback and returns the function that removes it, Notify calls every callback registered at
// that moment, in registration order, without taking a lock (hot paths such as process output
// notify for every chunk).
package listeners

import (
	"sync"
	"sync/atomic"
)

// Set holds the callbacks of one kind of change. The zero value is ready to use.
type Set[T any] struct {
	mu   sync.Mutex // serialises Add and cancel; Notify only loads fns
	next uint64
	fns  atomic.Pointer[[]entry[T]] // copy on write: a published slice is never modified
}

type entry[T any] struct {
	id uint64
	fn func(T)
}

func (s *Set[T]) load() []entry[T] {
	if p := s.fns.Load(); p != nil {
		return *p
	}
	return nil
}

// Add registers fn and returns cancel, which removes it; cancel may be called more than once.
// After cancel returns, Notify calls that start later do not call fn.
func (s *Set[T]) Add(fn func(T)) (cancel func()) {
	s.mu.Lock()
	s.next++
	id := s.next
	cur := s.load()
	next := make([]entry[T], len(cur), len(cur)+1)
	copy(next, cur)
	next = append(next, entry[T]{id, fn})
	s.fns.Store(&next)
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		cur := s.load()
		for i, e := range cur {
			if e.id == id {
				next := make([]entry[T], 0, len(cur)-1)
				next = append(append(next, cur[:i]...), cur[i+1:]...)
				s.fns.Store(&next)
				return
			}
		}
	}
}

// Notify calls every registered callback with v on the calling goroutine. Callbacks run one
// after another, so each must return quickly; one may Add or cancel (itself included).
func (s *Set[T]) Notify(v T) {
	for _, e := range s.load() {
		e.fn(v)
	}
}

// Len reports how many callbacks are registered.
func (s *Set[T]) Len() int { return len(s.load()) }

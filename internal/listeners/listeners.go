// Package listeners is the one way change subscriptions work in Switchboard: Add registers a
// callback and returns the function that removes it, Notify calls every callback registered at
// that moment, in registration order, without holding the set's lock.
package listeners

import "sync"

// Set holds the callbacks of one kind of change. The zero value is ready to use.
type Set[T any] struct {
	mu   sync.Mutex
	next uint64
	fns  []entry[T]
}

type entry[T any] struct {
	id uint64
	fn func(T)
}

// Add registers fn and returns cancel, which removes it; cancel may be called more than once.
// After cancel returns, Notify calls that start later do not call fn.
func (s *Set[T]) Add(fn func(T)) (cancel func()) {
	s.mu.Lock()
	s.next++
	id := s.next
	s.fns = append(s.fns, entry[T]{id, fn})
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		for i, e := range s.fns {
			if e.id == id {
				s.fns = append(s.fns[:i:i], s.fns[i+1:]...)
				return
			}
		}
	}
}

// Notify calls every registered callback with v on the calling goroutine.
func (s *Set[T]) Notify(v T) {
	s.mu.Lock()
	fns := s.fns // Add and cancel never modify a published slice in place
	s.mu.Unlock()
	for _, e := range fns {
		e.fn(v)
	}
}

// Len reports how many callbacks are registered.
func (s *Set[T]) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.fns)
}

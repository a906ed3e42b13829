package policy

import (
	"path/filepath"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/switchboard-hub/switchboard/internal/listeners"
)

// Status is what the dashboard and doctor show about the live policy.
type Status struct {
	Path       string    `json:"path"`
	Default    Action    `json:"default"`
	AskTimeout string    `json:"askTimeout"`
	Rules      int       `json:"rules"`
	RootsAllow []string  `json:"rootsAllow"`
	LoadedAt   time.Time `json:"loadedAt"`
	// Error is why the file on disk is not in force (the last good policy is); empty when the
	// file and the policy in force agree.
	Error   string    `json:"error,omitempty"`
	ErrorAt time.Time `json:"errorAt,omitzero"`
	// Warnings are the policy in force's rules that can never match (Policy.Warnings), each
	// naming the rule and what to write instead.
	Warnings []string `json:"warnings,omitempty"`
}

// Store holds the policy in force and reloads it when its file changes. An invalid file never
// replaces a good policy: the last good one stays and Status says why the new one was refused.
type Store struct {
	path string
	cur  atomic.Pointer[Policy]

	mu        sync.Mutex
	status    Status
	listeners listeners.Set[Status]
}

// NewStore starts with p (AllowAll when nil) for the file at path ("" = never reloads).
func NewStore(path string, p *Policy) *Store {
	if p == nil {
		p = AllowAll()
	}
	s := &Store{path: path}
	if path != "" {
		if abs, err := filepath.Abs(path); err == nil {
			s.path = abs
		}
	}
	s.set(p)
	return s
}

func (s *Store) set(p *Policy) {
	s.cur.Store(p)
	s.status = Status{Path: s.path, Default: p.Default, AskTimeout: p.AskTimeout.String(), Rules: len(p.Rules),
		RootsAllow: append([]string{}, p.RootsAllow...), LoadedAt: time.Now().UTC(), Warnings: slices.Clone(p.Warnings)}
}

// Policy returns the policy in force. It never returns nil.
func (s *Store) Policy() *Policy { return s.cur.Load() }

// Path is the watched file.
func (s *Store) Path() string { return s.path }

// Status returns the policy's state.
func (s *Store) Status() Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.status
	st.RootsAllow = append([]string{}, st.RootsAllow...)
	st.Warnings = slices.Clone(st.Warnings)
	return st
}

// Subscribe calls fn after every reload attempt that changed the status.
func (s *Store) Subscribe(fn func(Status)) (cancel func()) { return s.listeners.Add(fn) }

// Apply puts p in force, or, when err is set (the file did not load), keeps the policy in force
// and records why, and tells the subscribers. The hub's config watcher (config.Watch) calls it
// with the policy of each version of the file: the store never reads the file itself, so the
// policy and the rest of the config come from one read.
func (s *Store) Apply(p *Policy, err error) error {
	s.mu.Lock()
	if err != nil {
		s.status.Error = err.Error() + " (the previous policy stays in force until the file is fixed)"
		s.status.ErrorAt = time.Now().UTC()
	} else {
		if s.status.Error == "" && samePolicy(s.cur.Load(), p) {
			// The same rules again (a save read back by the file watcher, an edit elsewhere in
			// the file): nothing changed, nothing to announce.
			s.mu.Unlock()
			return nil
		}
		s.set(p)
	}
	st := s.status
	s.mu.Unlock()
	s.listeners.Notify(st)
	return err
}

// samePolicy reports whether a and b decide alike: the same default, question timeout, rules
// (as written) and granted roots.
func samePolicy(a, b *Policy) bool {
	if a == nil || b == nil || a.Default != b.Default || a.AskTimeout != b.AskTimeout || len(a.Rules) != len(b.Rules) || !slices.Equal(a.RootsAllow, b.RootsAllow) {
		return false
	}
	for i := range a.Rules {
		if a.Rules[i].Action != b.Rules[i].Action || !reflect.DeepEqual(a.Rules[i].Spec, b.Rules[i].Spec) {
			return false
		}
	}
	return true
}

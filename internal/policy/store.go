package policy

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/switchboard-hub/switchboard/internal/listeners"
)

// fileSections is the part of the config file this package reads. Other keys are the config
// package's business (it reports unknown ones); here they are ignored.
type fileSections struct {
	Policy Config      `toml:"policy"`
	Roots  RootsConfig `toml:"roots"`
}

// LoadFile reads the [policy] and [roots] sections of a config file. An absent file is the
// allow-all policy; an unreadable, malformed or invalid one is an error naming the file.
func LoadFile(path string) (*Policy, error) {
	var sec fileSections
	if _, err := toml.DecodeFile(path, &sec); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return AllowAll(), nil
		}
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	p, err := Compile(sec.Policy, sec.Roots)
	if err != nil {
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	return p, nil
}

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
}

// Store holds the policy in force and reloads it when its file changes. An invalid file never
// replaces a good policy: the last good one stays and Status says why the new one was refused.
type Store struct {
	path string
	cur  atomic.Pointer[Policy]

	mu        sync.Mutex
	status    Status
	stamp     os.FileInfo
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
		s.stamp, _ = os.Stat(s.path)
	}
	s.set(p)
	return s
}

func (s *Store) set(p *Policy) {
	s.cur.Store(p)
	s.status = Status{Path: s.path, Default: p.Default, AskTimeout: p.AskTimeout.String(), Rules: len(p.Rules),
		RootsAllow: append([]string{}, p.RootsAllow...), LoadedAt: time.Now().UTC()}
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
	return st
}

// Subscribe calls fn after every reload attempt that changed the status.
func (s *Store) Subscribe(fn func(Status)) (cancel func()) { return s.listeners.Add(fn) }

// Reload reads the file now. On error the policy in force is kept and the error recorded.
func (s *Store) Reload() error {
	if s.path == "" {
		return nil
	}
	fi, _ := os.Stat(s.path)
	p, err := LoadFile(s.path)
	s.mu.Lock()
	s.stamp = fi
	if err != nil {
		s.status.Error = err.Error() + " (the previous policy stays in force until the file is fixed)"
		s.status.ErrorAt = time.Now().UTC()
	} else {
		s.set(p)
	}
	st := s.status
	s.mu.Unlock()
	s.listeners.Notify(st)
	return err
}

// changed reports whether the file differs from the one last read (size, time, or a new file
// renamed into place, as editors save).
func (s *Store) changed() bool {
	fi, err := os.Stat(s.path)
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.stamp
	switch {
	case err != nil && old == nil:
		return false
	case err != nil || old == nil:
		return true
	}
	return !os.SameFile(fi, old) || fi.Size() != old.Size() || !fi.ModTime().Equal(old.ModTime())
}

// DefaultPollInterval is how often Watch looks at the file: one stat call, cheap enough to do
// every second, and it follows editors that replace the file by renaming a new one over it.
const DefaultPollInterval = time.Second

// Watch reloads the file whenever it changes, until ctx ends.
func (s *Store) Watch(ctx context.Context, every time.Duration) {
	if s.path == "" {
		return
	}
	if every <= 0 {
		every = DefaultPollInterval
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if s.changed() {
				_ = s.Reload()
			}
		}
	}
}

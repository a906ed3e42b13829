package rag

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/switchboard-hub/switchboard/internal/listeners"
)

// Live is the RAG engine in force in a running hub, and the one owner of the switch to another
// (the Settings view's save, a hand edit of [rag]). Every operation takes the engine for its own
// length (Acquire, then release): one that started before a switch finishes on the engine it
// started on, one that starts after it gets the new engine, and nothing keeps an engine beyond
// its operation.
//
// A backend is closed once no engine in force, no engine prepared and no operation uses it: at
// the switch when nothing runs on it, else by the release of the last operation that does (so
// no goroutine waits for the drain). Backends are shared by what they are: an embedded store is
// reused, not opened again, when the next engine stores in the same directory, whether it is
// the one in force or one still draining (two stores on one directory would each cache it in
// memory and write manifests over each other's); so is a Qdrant connection to the same server
// with the same key.
type Live struct {
	mu     sync.Mutex
	cur    *Engine
	curSt  *openStore
	stores []*openStore // open: in force, prepared, or used by operations in flight
	closed bool

	changed  listeners.Set[Info]
	released listeners.Set[Closed]
}

// openStore is one open backend and what uses it.
type openStore struct {
	backend Backend
	key     string // what the backend is, to share it ("" : never shared)
	users   int    // the engine in force or prepared on it (one each), and operations in flight
	ingests *ingestGuard
}

// BackendSpec is where an engine stores: the embedded store in Dir, or the Qdrant server at URL.
type BackendSpec struct {
	Kind   string // "embedded" (also "") or "qdrant"
	Dir    string // embedded: the store's directory
	URL    string // qdrant: host:port or a URL; "" = DefaultQdrantAddr
	APIKey string // qdrant: the key itself (resolved), or ""
}

// Spec is one configuration of the RAG engine.
type Spec struct {
	Backend  BackendSpec
	Embedder Embedder // nil: the offline embedder
	// Collection is the default collection ("" : DefaultCollection).
	Collection string
}

// Info describes the engine in force, for messages and the dashboard.
type Info struct {
	Backend    string // "embedded" or "qdrant"
	Location   string // the store's directory or the server's address
	Embedder   string
	Model      string
	Collection string // the default collection
}

// Closed reports a backend Live closed because no engine or operation used it any more.
type Closed struct {
	Backend  string
	Location string
	Err      error // Close's error
}

// ErrClosed is Acquire's and Commit's answer once the Live is closed (the hub is shutting down).
var ErrClosed = errors.New("rag: the hub is shutting down; retry once it runs again")

// Open opens the backend spec names, without checking that it answers (a Qdrant server may
// start after the hub), and puts an engine on it in force.
func Open(spec Spec) (*Live, error) {
	if err := checkSpec(spec); err != nil {
		return nil, err
	}
	b, key, err := openBackend(spec.Backend)
	if err != nil {
		return nil, err
	}
	l := &Live{}
	st := &openStore{backend: b, key: key, users: 1, ingests: newIngestGuard()}
	l.stores = []*openStore{st}
	l.cur, l.curSt = newSpecEngine(spec, st), st
	return l, nil
}

// Hold puts an engine built by the caller in force; the Live owns its backend from now on (it
// closes it when it is no longer used, or with Close).
func Hold(e *Engine) *Live {
	if e.ingests == nil {
		e.ingests = newIngestGuard()
	}
	key := ""
	if emb, ok := e.Backend.(*Embedded); ok {
		key, _ = embeddedKey(emb.Location())
	}
	st := &openStore{backend: e.Backend, key: key, users: 1, ingests: e.ingests}
	return &Live{cur: e, curSt: st, stores: []*openStore{st}}
}

func newIngestGuard() *ingestGuard { return &ingestGuard{active: map[string]bool{}} }

func checkSpec(spec Spec) error {
	switch spec.Backend.Kind {
	case "", "embedded", "qdrant":
	default:
		return fmt.Errorf("backend: %q is not a backend; use \"embedded\" or \"qdrant\"", spec.Backend.Kind)
	}
	if spec.Collection != "" {
		return ValidateCollection(spec.Collection)
	}
	return nil
}

func newSpecEngine(spec Spec, st *openStore) *Engine {
	e := NewEngine(st.backend, spec.Embedder)
	if spec.Collection != "" {
		e.DefaultCollection = spec.Collection
	}
	e.ingests = st.ingests
	return e
}

// openBackend opens the backend of b and says what it is (openStore.key).
func openBackend(b BackendSpec) (Backend, string, error) {
	if b.Kind == "qdrant" {
		q, err := NewQdrant(b.URL, b.APIKey)
		if err != nil {
			return nil, "", err
		}
		return q, "qdrant\x00" + q.Location() + "\x00" + b.APIKey, nil
	}
	e, err := OpenEmbedded(b.Dir)
	if err != nil {
		return nil, "", err
	}
	key, err := embeddedKey(b.Dir)
	if err != nil {
		return nil, "", fmt.Errorf("rag store %s: %w", b.Dir, err)
	}
	return e, key, nil
}

// embeddedKey is the embedded store's key: its directory with symbolic links resolved, so two
// spellings of one directory are one store.
func embeddedKey(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	return "embedded\x00" + abs, nil
}

// Acquire returns the engine in force for one operation; release, called once it ends (more
// calls do nothing), lets a switch close the engine's backend.
func (l *Live) Acquire() (e *Engine, release func(), err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil, nil, ErrClosed
	}
	st := l.curSt
	st.users++
	var once sync.Once
	return l.cur, func() { once.Do(func() { l.drop(st) }) }, nil
}

// Info describes the engine in force.
func (l *Live) Info() Info {
	l.mu.Lock()
	defer l.mu.Unlock()
	return infoOf(l.cur)
}

func infoOf(e *Engine) Info {
	return Info{Backend: e.Backend.Kind(), Location: e.Backend.Location(), Embedder: e.Embedder.Name(), Model: e.Embedder.Model(), Collection: e.DefaultCollection}
}

// OnChange calls fn with the new engine's Info after each Commit, on Commit's goroutine.
func (l *Live) OnChange(fn func(Info)) (cancel func()) { return l.changed.Add(fn) }

// OnClosed calls fn when a backend no longer used is closed (after a switch, once the operations
// that started on it ended), on the goroutine that ended the last use. Close does not call it.
func (l *Live) OnClosed(fn func(Closed)) (cancel func()) { return l.released.Add(fn) }

// drop ends one use of st, closing it when it was the last.
func (l *Live) drop(st *openStore) {
	l.mu.Lock()
	last := l.dropLocked(st)
	l.mu.Unlock()
	if last {
		l.closeStore(st)
	}
}

// dropLocked ends one use of st; it reports whether st is now unused and removed, to be closed
// outside the lock. After Close, every store is already closed.
func (l *Live) dropLocked(st *openStore) bool {
	st.users--
	if st.users > 0 || l.closed {
		return false
	}
	for i, s := range l.stores {
		if s == st {
			l.stores = append(l.stores[:i], l.stores[i+1:]...)
			break
		}
	}
	return true
}

func (l *Live) closeStore(st *openStore) {
	err := st.backend.Close()
	l.released.Notify(Closed{Backend: st.backend.Kind(), Location: st.backend.Location(), Err: err})
}

// findLocked returns the open store with key, or nil.
func (l *Live) findLocked(key string) *openStore {
	if key == "" {
		return nil
	}
	for _, st := range l.stores {
		if st.key == key {
			return st
		}
	}
	return nil
}

// Next is an engine Prepare made ready to be put in force: Commit puts it in force, Discard
// drops it. Exactly one of them must be called.
type Next struct {
	l    *Live
	eng  *Engine
	st   *openStore
	done bool
}

// Prepare readies an engine for spec without changing the one in force. A backend already open
// (in force, or still used by operations that started before a switch) is reused; a new one is
// opened and checked: an embedded store's directory must be writable, a Qdrant server must
// answer and accept the key (within ctx). On error nothing changes.
func (l *Live) Prepare(ctx context.Context, spec Spec) (*Next, error) {
	if err := checkSpec(spec); err != nil {
		return nil, err
	}
	if spec.Backend.Kind == "qdrant" {
		return l.prepareQdrant(ctx, spec)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil, ErrClosed
	}
	// Opened and looked up under the lock: two Prepares of one directory get one store. (An
	// Embedded holds nothing until it is used: the one made here is dropped unused when the
	// directory's store is open already.)
	b, key, err := openBackend(spec.Backend)
	if err != nil {
		return nil, err
	}
	if st := l.findLocked(key); st != nil {
		return l.nextLocked(spec, st), nil
	}
	if err := probeWritable(spec.Backend.Dir); err != nil {
		return nil, err
	}
	st := &openStore{backend: b, key: key, ingests: newIngestGuard()}
	l.stores = append(l.stores, st)
	return l.nextLocked(spec, st), nil
}

// prepareQdrant is Prepare for a Qdrant server: the connection is checked outside the lock.
func (l *Live) prepareQdrant(ctx context.Context, spec Spec) (*Next, error) {
	b, key, err := openBackend(spec.Backend)
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	if st := l.findLocked(key); st != nil && !l.closed {
		n := l.nextLocked(spec, st)
		l.mu.Unlock()
		_ = b.Close()
		return n, nil
	}
	l.mu.Unlock()
	if _, err := b.Collections(ctx); err != nil {
		_ = b.Close()
		return nil, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		_ = b.Close()
		return nil, ErrClosed
	}
	st := &openStore{backend: b, key: key, ingests: newIngestGuard()}
	l.stores = append(l.stores, st)
	return l.nextLocked(spec, st), nil
}

func (l *Live) nextLocked(spec Spec, st *openStore) *Next {
	st.users++
	return &Next{l: l, eng: newSpecEngine(spec, st), st: st}
}

// probeWritable checks that a file can be created in dir.
func probeWritable(dir string) error {
	f, err := os.CreateTemp(dir, ".switchboard-probe-*")
	if err != nil {
		return fmt.Errorf("rag store %s is not writable: %w", dir, err)
	}
	name := f.Name()
	f.Close()
	return os.Remove(name)
}

// Info describes the prepared engine.
func (n *Next) Info() Info { return infoOf(n.eng) }

// Commit puts the prepared engine in force. The one it replaces serves the operations that
// started on it; its backend is closed once they end, unless the new engine uses it too.
func (n *Next) Commit() error {
	l := n.l
	l.mu.Lock()
	if n.done {
		l.mu.Unlock()
		return errors.New("rag: this engine was already committed or discarded")
	}
	n.done = true
	if l.closed {
		l.mu.Unlock()
		return ErrClosed
	}
	old := l.curSt
	l.cur, l.curSt = n.eng, n.st // the prepared use becomes the use in force
	last := l.dropLocked(old)
	info := infoOf(n.eng)
	l.mu.Unlock()
	if last {
		l.closeStore(old)
	}
	l.changed.Notify(info)
	return nil
}

// Discard drops the prepared engine: its backend is closed unless something else uses it.
func (n *Next) Discard() {
	l := n.l
	l.mu.Lock()
	if n.done {
		l.mu.Unlock()
		return
	}
	n.done = true
	last := l.dropLocked(n.st)
	l.mu.Unlock()
	if last {
		l.closeStore(n.st)
	}
}

// Close closes every open backend: the one in force and those operations still use (the hub
// drains its calls before). Acquire, Prepare and Commit fail after it. Safe to call more than
// once.
func (l *Live) Close() error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil
	}
	l.closed = true
	stores := l.stores
	l.stores = nil
	l.mu.Unlock()
	var errs []error
	for _, st := range stores {
		if err := st.backend.Close(); err != nil {
			errs = append(errs, fmt.Errorf("%s at %s: %w", st.backend.Kind(), st.backend.Location(), err))
		}
	}
	return errors.Join(errs...)
}

package rag

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/switchboard-hub/switchboard/internal/rag/qdrantsim"
	"github.com/switchboard-hub/switchboard/internal/testutil"
)

// gateEmbedder is the offline embedder that holds its first Embed until open is closed, telling
// started when it is held: an ingest that is in flight for as long as a test needs.
type gateEmbedder struct {
	Offline
	started chan struct{}
	open    chan struct{}
	once    sync.Once
}

func newGate() *gateEmbedder {
	return &gateEmbedder{started: make(chan struct{}, 1), open: make(chan struct{})}
}

func (g *gateEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	g.once.Do(func() { g.started <- struct{}{} })
	select {
	case <-g.open:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return g.Offline.Embed(ctx, texts)
}

// Name is another embedder's than Offline's, so the ingest takes the generic path (Embed).
func (g *gateEmbedder) Name() string { return "gate" }

// closedLog collects what Live.OnClosed reports.
type closedLog struct {
	mu  sync.Mutex
	got []Closed
	ch  chan Closed
}

func watchClosed(l *Live) *closedLog {
	c := &closedLog{ch: make(chan Closed, 16)}
	l.OnClosed(func(cl Closed) {
		c.mu.Lock()
		c.got = append(c.got, cl)
		c.mu.Unlock()
		c.ch <- cl
	})
	return c
}

func (c *closedLog) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.got)
}

func acquire(t *testing.T, l *Live) (*Engine, func()) {
	t.Helper()
	e, release, err := l.Acquire()
	if err != nil {
		t.Fatal(err)
	}
	return e, release
}

func commit(t *testing.T, l *Live, spec Spec) {
	t.Helper()
	n, err := l.Prepare(t.Context(), spec)
	if err != nil {
		t.Fatalf("prepare %+v: %v", spec.Backend, err)
	}
	if err := n.Commit(); err != nil {
		t.Fatal(err)
	}
}

// TestLiveSwitch: a switch keeps the open store when the directory stays (only the embedder or
// the default collection change); a new directory gets a new store, and the old one is closed
// when the last operation on it ends, not before; switching back to a directory whose store
// still drains reuses that store.
func TestLiveSwitch(t *testing.T) {
	dirA, dirB := t.TempDir(), t.TempDir()
	l, err := Open(Spec{Backend: BackendSpec{Dir: dirA}})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	closed := watchClosed(l)
	changes := make(chan Info, 8)
	l.OnChange(func(i Info) { changes <- i })

	e0, release := acquire(t, l)
	storeA := e0.Backend
	release()
	if i := l.Info(); i.Backend != "embedded" || i.Location != dirA || i.Embedder != "offline" || i.Collection != DefaultCollection {
		t.Fatalf("info at start: %+v", i)
	}

	// Same directory, another collection and embedder: the store stays open and is shared.
	gate := newGate()
	commit(t, l, Spec{Backend: BackendSpec{Kind: "embedded", Dir: dirA + "/"}, Embedder: gate, Collection: "notes"})
	if i := testutil.Receive(t, changes, "the change"); i.Collection != "notes" || i.Embedder != "gate" {
		t.Fatalf("change: %+v", i)
	}
	e1, release1 := acquire(t, l)
	if e1.Backend != storeA || e1.DefaultCollection != "notes" || e1.Embedder != gate {
		t.Fatalf("engine after an embedder change: %+v; want the open store of %s", e1, dirA)
	}
	if closed.count() != 0 {
		t.Fatalf("a store was closed though still in force: %+v", closed.got)
	}

	// An ingest on A is in flight (held by the gate) while the hub switches to B.
	ws := wsOf(t, fstest.MapFS{"docs/a.md": {Data: []byte("# Alpha\n\nThe alpha document.\n")}})
	ingested := make(chan error, 1)
	go func() {
		_, err := e1.Ingest(t.Context(), ws, "docs", IngestOptions{Collection: "notes"})
		release1()
		ingested <- err
	}()
	testutil.Receive(t, gate.started, "the ingest's first embedding")

	commit(t, l, Spec{Backend: BackendSpec{Dir: dirB}})
	e2, release2 := acquire(t, l)
	if e2.Backend == storeA || e2.Backend.Location() != dirB {
		t.Fatalf("engine after the switch stores in %s", e2.Backend.Location())
	}
	release2()
	if closed.count() != 0 {
		t.Fatalf("A was closed while its ingest ran: %+v", closed.got)
	}

	// Back to A while its ingest still runs: the draining store is taken up again, and B (unused)
	// is closed.
	commit(t, l, Spec{Backend: BackendSpec{Dir: dirA}, Embedder: gate, Collection: "notes"})
	if c := testutil.Receive(t, closed.ch, "B closed"); c.Location != dirB || c.Err != nil {
		t.Fatalf("closed: %+v; want %s", c, dirB)
	}
	e3, release3 := acquire(t, l)
	if e3.Backend != storeA {
		t.Fatalf("switching back to %s opened a second store on it", dirA)
	}
	// One ingest per collection across the engines of one store.
	if _, err := e3.Ingest(t.Context(), ws, "docs", IngestOptions{Collection: "notes"}); err == nil || !strings.Contains(err.Error(), "already running") {
		t.Fatalf("a second ingest into notes on the same store: %v", err)
	}
	release3()

	close(gate.open)
	if err := testutil.Receive(t, ingested, "the ingest"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dirA, "notes", "manifest.json")); err != nil {
		t.Fatalf("the ingest in flight did not finish in A: %v", err)
	}
	if closed.count() != 1 {
		t.Fatalf("A, in force, was closed: %+v", closed.got)
	}

	// To B again, with nothing running on A: A is closed at the switch.
	commit(t, l, Spec{Backend: BackendSpec{Dir: dirB}})
	if c := testutil.Receive(t, closed.ch, "A closed"); c.Location != dirA {
		t.Fatalf("closed: %+v; want %s", c, dirA)
	}
}

// TestLiveRefused: a switch that cannot be made (a directory that is a file, a Qdrant server that
// is unreachable or refuses the key) fails with the reason and leaves the engine in force; a
// prepared engine that is discarded leaves it too.
func TestLiveRefused(t *testing.T) {
	dir := t.TempDir()
	l, err := Open(Spec{Backend: BackendSpec{Dir: dir}})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	sim, err := qdrantsim.Start("right-key")
	if err != nil {
		t.Fatal(err)
	}
	defer sim.Stop()
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, nil, 0o600)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()

	var unreachable *UnreachableError
	var refused *RefusedError
	for _, c := range []struct {
		name string
		spec BackendSpec
		want func(error) bool
	}{
		{"dir is a file", BackendSpec{Dir: filepath.Join(file, "rag")}, func(err error) bool { return strings.Contains(err.Error(), "not a directory") }},
		{"unknown backend", BackendSpec{Kind: "chroma"}, func(err error) bool { return strings.Contains(err.Error(), `"chroma" is not a backend`) }},
		{"qdrant unreachable", BackendSpec{Kind: "qdrant", URL: "127.0.0.1:1"}, func(err error) bool { return errors.As(err, &unreachable) }},
		{"qdrant refuses the key", BackendSpec{Kind: "qdrant", URL: sim.Addr, APIKey: "wrong"}, func(err error) bool { return errors.As(err, &refused) }},
		{"bad url", BackendSpec{Kind: "qdrant", URL: "localhost:port"}, func(err error) bool { return strings.Contains(err.Error(), "no valid port") }},
	} {
		if _, err := l.Prepare(ctx, Spec{Backend: c.spec}); err == nil || !c.want(err) {
			t.Errorf("%s: %v", c.name, err)
		}
		if i := l.Info(); i.Backend != "embedded" || i.Location != dir {
			t.Fatalf("%s: the engine in force changed: %+v", c.name, i)
		}
	}

	n, err := l.Prepare(ctx, Spec{Backend: BackendSpec{Kind: "qdrant", URL: sim.Addr, APIKey: "right-key"}})
	if err != nil {
		t.Fatal(err)
	}
	if n.Info().Backend != "qdrant" {
		t.Fatalf("prepared: %+v", n.Info())
	}
	closed := watchClosed(l)
	n.Discard()
	if c := testutil.Receive(t, closed.ch, "the discarded connection closed"); c.Backend != "qdrant" {
		t.Fatalf("closed: %+v", c)
	}
	if err := n.Commit(); err == nil {
		t.Fatal("a discarded engine was committed")
	}
	if i := l.Info(); i.Backend != "embedded" {
		t.Fatalf("after a discard: %+v", i)
	}
}

// TestLiveClose: Close closes the store in force and those still draining; later operations are
// refused and late releases do nothing.
func TestLiveClose(t *testing.T) {
	l, err := Open(Spec{Backend: BackendSpec{Dir: t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	closed := watchClosed(l)
	_, release := acquire(t, l)
	commit(t, l, Spec{Backend: BackendSpec{Dir: t.TempDir()}})
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	release()
	release()
	if closed.count() != 0 {
		t.Fatalf("OnClosed after Close: %+v", closed.got)
	}
	if _, _, err := l.Acquire(); !errors.Is(err, ErrClosed) {
		t.Fatalf("Acquire after Close: %v", err)
	}
	if _, err := l.Prepare(t.Context(), Spec{Backend: BackendSpec{Dir: t.TempDir()}}); !errors.Is(err, ErrClosed) {
		t.Fatalf("Prepare after Close: %v", err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
}

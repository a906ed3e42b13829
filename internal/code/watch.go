package code

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/switchboard-hub/switchboard/internal/lsp"
)

// Edits made through the hub's tools reach the servers at once (Pool.Changed, called by the
// tools that write); edits from anywhere else (an editor, a build, git from a terminal) are
// picked up by watching the workspace with fsnotify and passed on the same way, ~100 ms later.

// maxWatchedDirs bounds how many directories one workspace watcher adds (inotify watches are a
// per-user resource).
const maxWatchedDirs = 8000

// skipDir reports whether a directory is left unwatched: hidden ones (.git), dependencies
// and build output that servers do not need to hear about.
func skipDir(name string) bool {
	if strings.HasPrefix(name, ".") && name != "." {
		return true
	}
	switch name {
	case "node_modules", "__pycache__", "target", "dist", "build", "vendor", "bazel-out":
		return true
	}
	return false
}

// watcher watches one workspace and forwards changes to its servers.
type watcher struct {
	pool *Pool
	root string
	fw   *fsnotify.Watcher
	once sync.Once
	done chan struct{}
	dirs int
}

func (p *Pool) ensureWatcher(root string) {
	p.mu.Lock()
	if p.closed || p.watchers[root] != nil {
		p.mu.Unlock()
		return
	}
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		p.mu.Unlock()
		p.log.Warn("code: cannot watch the workspace; edits from outside the hub reach language servers only through its tools", "workspace", root, "err", err)
		return
	}
	w := &watcher{pool: p, root: root, fw: fw, done: make(chan struct{})}
	p.watchers[root] = w
	p.mu.Unlock()
	w.addTree(root, nil)
	go w.loop()
}

// dropUnusedWatchers closes the watchers of workspaces that have no server any more.
func (p *Pool) dropUnusedWatchers() {
	p.mu.Lock()
	var drop []*watcher
	for root, w := range p.watchers {
		used := false
		for k := range p.servers {
			if k.root == root {
				used = true
				break
			}
		}
		if !used {
			drop = append(drop, w)
			delete(p.watchers, root)
		}
	}
	p.mu.Unlock()
	for _, w := range drop {
		w.close()
	}
}

func (w *watcher) close() {
	w.once.Do(func() {
		w.fw.Close()
		<-w.done
	})
}

// addTree watches dir and the directories beneath it. For a directory that appeared while the
// hub watched (created), the files already in it are reported as created: they may have been
// written before its watch was added.
func (w *watcher) addTree(dir string, created map[string]int) {
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if !d.IsDir() {
			if created != nil && d.Type().IsRegular() {
				created[p] = lsp.FileCreated
			}
			return nil
		}
		if p != dir && skipDir(d.Name()) {
			return filepath.SkipDir
		}
		if w.dirs >= maxWatchedDirs {
			return filepath.SkipAll
		}
		if w.fw.Add(p) == nil {
			w.dirs++
		}
		return nil
	})
}

func (w *watcher) loop() {
	defer close(w.done)
	pending := map[string]int{}
	var flush <-chan time.Time
	for {
		select {
		case ev, ok := <-w.fw.Events:
			if !ok {
				return
			}
			name := filepath.Base(ev.Name)
			if strings.HasPrefix(name, ".") && strings.HasSuffix(name, ".tmp") {
				continue // the hub's own atomic-write temporaries
			}
			switch {
			case ev.Has(fsnotify.Create):
				if fi, err := os.Lstat(ev.Name); err == nil && fi.IsDir() {
					if !skipDir(name) {
						w.addTree(ev.Name, pending)
						if flush == nil {
							flush = time.After(100 * time.Millisecond)
						}
					}
					continue
				}
				pending[ev.Name] = lsp.FileCreated
			case ev.Has(fsnotify.Remove), ev.Has(fsnotify.Rename):
				pending[ev.Name] = lsp.FileDeleted
			case ev.Has(fsnotify.Write):
				if _, seen := pending[ev.Name]; !seen {
					pending[ev.Name] = lsp.FileChanged
				}
			default:
				continue
			}
			if flush == nil {
				flush = time.After(100 * time.Millisecond)
			}
		case _, ok := <-w.fw.Errors:
			if !ok {
				return
			}
		case <-flush:
			flush = nil
			events := pending
			pending = map[string]int{}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			w.pool.forward(ctx, w.root, events)
			cancel()
		}
	}
}

// Changed tells the servers of workspace root that the files at paths (relative to root, or
// absolute inside it) were just written, created or removed by the hub's own tools (file_write,
// file_edit, file_patch, code_rename; a git checkout is seen by the watcher): open documents get
// their new text (didChange) and every server of the workspace gets
// workspace/didChangeWatchedFiles. It returns once the servers have been told; it starts no
// server.
func (p *Pool) Changed(root string, paths ...string) {
	real, err := workspaceRoot(root)
	if err != nil {
		return
	}
	if real != root {
		// Paths given absolute under the root as the caller spelt it move with it.
		paths = slices.Clone(paths)
		for i, rel := range paths {
			if r, err := filepath.Rel(root, rel); err == nil && filepath.IsAbs(rel) && filepath.IsLocal(r) {
				paths[i] = r
			}
		}
		root = real
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	events := map[string]int{}
	for _, rel := range paths {
		abs := rel
		if !filepath.IsAbs(abs) {
			abs = filepath.Join(root, rel)
		}
		if _, err := os.Stat(abs); errors.Is(err, fs.ErrNotExist) {
			events[abs] = lsp.FileDeleted
		} else {
			events[abs] = lsp.FileChanged
		}
	}
	p.forward(ctx, root, events)
}

// forward passes file changes (absolute path → LSP change type) to the running servers of root.
func (p *Pool) forward(ctx context.Context, root string, events map[string]int) {
	if len(events) == 0 {
		return
	}
	for path := range events {
		p.texts.forget(path)
	}
	p.mu.Lock()
	var servers []*server
	for k, s := range p.servers {
		if k.root == root {
			servers = append(servers, s)
		}
	}
	p.mu.Unlock()
	for _, s := range servers {
		if !s.isReady() {
			continue
		}
		var fe []lsp.FileEvent
		for path, typ := range events {
			uri := lsp.URI(path)
			if s.client.IsOpen(uri) {
				if typ == lsp.FileDeleted {
					_ = s.client.CloseDocument(ctx, uri)
				} else if text, err := readDocument(root, path); err == nil {
					_, _, _ = s.client.Sync(ctx, uri, languageID(s.key.lang, path), text)
				}
			}
			fe = append(fe, lsp.FileEvent{URI: uri, Type: typ})
		}
		_ = s.client.FilesChanged(ctx, fe)
	}
}

func (s *server) isReady() bool {
	select {
	case <-s.ready:
		return s.startErr == nil && !s.dead()
	default:
		return false
	}
}

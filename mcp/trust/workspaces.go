package trust

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"sync/atomic"

	"github.com/switchboard-hub/switchboard/internal/listeners"
	"github.com/switchboard-hub/switchboard/internal/webview"
	"github.com/switchboard-hub/switchboard/internal/workspace"
)

// Workspaces holds the sandboxes the hub works in: its own workspace, and one per client root or
// relay directory in use (mcp/trust/roots.go decides which a session may use). Each directory is opened
// once, by handle, and shared by every session that works in it; Shutdown closes them all.
type Workspaces struct {
	hubState    []string         // the hub's own config, data and runtime directories (WithHubState): off limits in every sandbox
	noWorkspace string           // why there is no hub workspace and how to choose one (WithNoWorkspace)
	browser     *webview.Webview // shows the hub workspace's files; nil without the browser tools
	logger      *slog.Logger

	// hub is the hub's workspace: where clients without usable roots or relay directory work.
	// nil while the hub has none (WithNoWorkspace, until SetWorkspace). Read it through
	// hubWorkspace; setHub swaps it under mu.
	hub      atomic.Pointer[workspace.Root]
	mu       sync.Mutex
	cache    map[string]*workspace.Root // root directory → its sandbox
	onChange listeners.Set[string]      // the hub's new workspace directory (OnWorkspaceChange)
}

// NewWorkspaces keeps the hub's sandboxes: hubState are the hub's own config, data and runtime
// directories (off limits in every sandbox), noWorkspace why the hub has no workspace of its
// own yet and how to choose one ("" when it has one), browser what shows the workspace's files
// (nil without the browser tools).
func NewWorkspaces(hubState []string, noWorkspace string, browser *webview.Webview, logger *slog.Logger) *Workspaces {
	return &Workspaces{hubState: hubState, noWorkspace: noWorkspace, browser: browser, logger: logger}
}

// Hub is the hub's workspace, nil while it has none.
func (ws *Workspaces) Hub() *workspace.Root { return ws.hub.Load() }

// UseHub makes root the hub's workspace (at start, before anyone is served).
func (ws *Workspaces) UseHub(root *workspace.Root) { ws.hub.Store(root) }

// OnChange calls f with the new directory after each change of the hub's workspace, until
// cancel is called.
func (ws *Workspaces) OnChange(f func(dir string)) (cancel func()) { return ws.onChange.Add(f) }

// NotifyChange tells OnChange's listeners that the hub's workspace is now dir.
func (ws *Workspaces) NotifyChange(dir string) { ws.onChange.Notify(dir) }

// OpenHub opens dir as the hub's workspace: the hub's own files stay off limits even inside it,
// and the browser may show its files (and a client's root once a webview call of that client has
// used it, see checkURL); the hub serves every file:// load of the browser from these, whatever
// asked for it (a tool, a link, a frame).
func (ws *Workspaces) OpenHub(dir string) (*workspace.Root, error) {
	root, err := workspace.Open(dir)
	if err != nil {
		return nil, err
	}
	root.Protect(ws.hubState...)
	if ws.browser != nil {
		ws.browser.AllowFiles(root)
	}
	return root, nil
}

// HubWorkspace is the hub's workspace, or the error WithNoWorkspace set while there is none.
func (ws *Workspaces) HubWorkspace() (*workspace.Root, error) {
	if w := ws.hub.Load(); w != nil {
		return w, nil
	}
	return nil, errors.New(ws.noWorkspace)
}

// HubDir is the hub's workspace directory, "" while there is none.
func (ws *Workspaces) HubDir() string {
	if w := ws.hub.Load(); w != nil {
		return w.Dir()
	}
	return ""
}

// SetHub makes dir the hub's workspace (Service.SetWorkspace) and returns it, or nil when dir
// already is. The previous workspace's sandbox stays open among the client roots' (a client
// whose root is that directory keeps using it; Shutdown closes it), so nothing running loses its
// handle.
func (ws *Workspaces) SetHub(dir string) (*workspace.Root, error) {
	ws.mu.Lock()
	old := ws.hub.Load()
	real := dir
	if r, err := filepath.EvalSymlinks(dir); err == nil {
		real = r
	}
	if old != nil && old.Dir() == real {
		ws.mu.Unlock()
		return nil, nil
	}
	next, reused := ws.cache[real]
	if reused {
		delete(ws.cache, real) // a client's root became the hub's: one sandbox, one owner
	} else {
		var err error
		if next, err = ws.OpenHub(real); err != nil {
			ws.mu.Unlock()
			return nil, fmt.Errorf("workspace: %w", err)
		}
	}
	if old != nil {
		if ws.cache == nil {
			ws.cache = map[string]*workspace.Root{}
		}
		ws.cache[old.Dir()] = old
	}
	ws.hub.Store(next)
	ws.mu.Unlock()
	if !reused {
		ws.Sweep(next)
	}
	return next, nil
}

// Sweep removes, in the background, the temp files that writes interrupted by a kill left in w
// (workspace.Root.StartSweep: bounded, owned by w, stopped by its Close in Shutdown). In the
// background because a walk of a large tree would delay the hub's first answer, and nothing
// waits for it: the temp files are hidden from every listing meanwhile.
func (ws *Workspaces) Sweep(w *workspace.Root) {
	w.StartSweep(func(res workspace.SweepResult, err error) {
		switch {
		case err != nil && !errors.Is(err, context.Canceled):
			ws.logger.Warn("workspace: sweep of interrupted writes' temp files stopped", "dir", w.Dir(), "entries", res.Entries, "removed", len(res.Removed), "err", err)
		case len(res.Removed) > 0 || res.Partial:
			ws.logger.Info("workspace: swept temp files of interrupted writes", "dir", w.Dir(), "removed", res.Removed, "entries", res.Entries, "partial", res.Partial)
		}
	})
}

// forRoot returns the (shared, cached) sandbox for a root directory.
func (ws *Workspaces) forRoot(dir string) (*workspace.Root, error) {
	ws.mu.Lock() // also orders this with setHub, so one directory never gets two sandboxes
	defer ws.mu.Unlock()
	if w := ws.hub.Load(); w != nil && dir == w.Dir() {
		return w, nil
	}
	if w, ok := ws.cache[dir]; ok {
		return w, nil
	}
	// The directory was judged by its resolved name; OpenExact refuses it if that name no longer
	// leads there, and the handle is what every later call uses (grants hold handles, not names).
	w, err := workspace.OpenExact(dir)
	if err != nil {
		return nil, fmt.Errorf("workspace: root %s: %w", dir, err)
	}
	w.Protect(ws.hubState...)
	if ws.cache == nil {
		ws.cache = map[string]*workspace.Root{}
	}
	ws.cache[dir] = w
	ws.Sweep(w)
	return w, nil
}

// CloseRoots closes the sandboxes of client roots (and former hub workspaces).
func (ws *Workspaces) CloseRoots() error {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	var first error
	for _, w := range ws.cache {
		if err := w.Close(); err != nil && first == nil {
			first = err
		}
	}
	ws.cache = nil
	return first
}

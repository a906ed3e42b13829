package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/internal/policy"
	"github.com/switchboard-hub/switchboard/internal/sessions"
	"github.com/switchboard-hub/switchboard/internal/workspace"
)

// A client that declares the roots capability works in its own roots instead of the hub's
// workspace: relative paths resolve against its first root, absolute paths are accepted inside
// any of its roots. A root inside a [roots] allow directory is granted; any other root is put to
// the user once per session (the same ask flow as policy questions) before a call may use it.

// Root statuses (sessions.Root.Status).
const (
	rootGranted  = "granted"  // inside a [roots] allow directory
	rootApproved = "approved" // the user said yes for this session
	rootDeclined = "declined" // the user said no (or did not answer in time)
	rootPending  = "pending"  // not needed by a call yet, so not asked yet
	rootInvalid  = "invalid"  // not a local directory
)

// sessionRoots is one session's roots and what the user said about them. mu serialises listing
// and asking, so one question per root is asked however many calls arrive at once.
type sessionRoots struct {
	mu      sync.Mutex
	loaded  bool
	stale   bool // notifications/roots/list_changed arrived: list again before the next use
	regID   string
	roots   []sessions.Root
	answers map[string]sessions.Root // by Dir: decisions survive a re-listing
}

func clientHasRoots(ss *sdk.ServerSession) bool {
	p := ss.InitializeParams()
	return p != nil && p.Capabilities != nil && p.Capabilities.RootsV2 != nil
}

func (s *Service) rootsOf(ss *sdk.ServerSession) *sessionRoots {
	if v, ok := s.roots.Load(ss); ok {
		return v.(*sessionRoots)
	}
	v, loaded := s.roots.LoadOrStore(ss, &sessionRoots{answers: map[string]sessions.Root{}})
	if !loaded {
		go func() { _ = ss.Wait(); s.roots.Delete(ss) }() // owned by the session: ends with it
	}
	return v.(*sessionRoots)
}

// onRootsListChanged marks the session's roots stale and lists them again for the dashboard.
func (s *Service) onRootsListChanged(ctx context.Context, req *sdk.RootsListChangedRequest) {
	ss := req.Session
	if ss == nil {
		return
	}
	st := s.rootsOf(ss)
	st.mu.Lock()
	st.stale = true
	st.mu.Unlock()
	go func() { // bounded by the timeout; the notification handler must not block the session
		lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		st.mu.Lock()
		defer st.mu.Unlock()
		if err := s.loadRootsLocked(lctx, ss, st); err != nil {
			s.logger.Warn("re-read client roots", "error", err)
		}
	}()
}

// onInitialized lists a roots client's roots right away, so the Sessions view shows them
// before the first call.
func (s *Service) onInitialized(ctx context.Context, req *sdk.InitializedRequest) {
	ss := req.Session
	if ss == nil || !clientHasRoots(ss) {
		return
	}
	go func() {
		lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		st := s.rootsOf(ss)
		st.mu.Lock()
		defer st.mu.Unlock()
		if !st.loaded {
			_ = s.loadRootsLocked(lctx, ss, st)
		}
	}()
}

// loadRootsLocked asks the client for its roots and classifies them. Earlier answers for the
// same directory stand.
func (s *Service) loadRootsLocked(ctx context.Context, ss *sdk.ServerSession, st *sessionRoots) error {
	if st.loaded && !st.stale {
		return nil
	}
	res, err := ss.ListRoots(ctx, nil)
	if err != nil {
		return fmt.Errorf("roots: the client declared the roots capability but roots/list failed: %w", err)
	}
	pol := s.policy.Policy()
	var list []sessions.Root
	for _, r := range res.Roots {
		e := sessions.Root{URI: r.URI, Name: r.Name}
		dir, err := policy.RootDir(r.URI)
		switch {
		case err != nil:
			e.Status, e.Detail = rootInvalid, err.Error()
		default:
			e.Dir = dir
			if prev, ok := st.answers[dir]; ok {
				e.Status, e.Detail = prev.Status, prev.Detail
			} else if allow, ok := pol.RootGranted(dir); ok {
				e.Status, e.Detail = rootGranted, "inside [roots] allow "+allow
			} else {
				e.Status = rootPending
			}
		}
		list = append(list, e)
	}
	st.roots, st.loaded, st.stale = list, true, false
	s.publishRoots(st)
	return nil
}

func (s *Service) publishRoots(st *sessionRoots) {
	if st.regID != "" {
		s.sessions.SetRoots(st.regID, st.roots)
	}
}

// workspaceFor returns the workspace a tool call's paths resolve against. Every tool that takes
// a path asks here, never s.ws directly. Clients without the roots capability (or with no
// roots) share the hub's workspace; others get the root their paths need: the first root for
// relative paths, the root that contains an absolute one. A root not granted by [roots] allow is
// put to the user first; a declined root is an error saying which one and how to allow it.
func (s *Service) workspaceFor(req *sdk.CallToolRequest) (*workspace.Root, error) {
	return s.resolveWorkspace(req, true)
}

// displayWorkspace is the directory a session's relative paths resolve against, without asking
// anyone: for messages and listings.
func (s *Service) displayWorkspace(ss *sdk.ServerSession) string {
	if ss == nil || !clientHasRoots(ss) {
		return s.ws.Dir()
	}
	st := s.rootsOf(ss)
	if !st.mu.TryLock() {
		return s.ws.Dir() // a question about roots is open; do not wait for it
	}
	defer st.mu.Unlock()
	for _, r := range st.roots {
		if r.Dir != "" {
			return r.Dir
		}
	}
	return s.ws.Dir()
}

func (s *Service) callContext(req *sdk.CallToolRequest) (context.Context, context.CancelFunc) {
	if v, ok := s.callCtx.Load(req); ok {
		return v.(context.Context), func() {}
	}
	return context.WithTimeout(context.Background(), s.policy.Policy().AskTimeout+30*time.Second)
}

func (s *Service) resolveWorkspace(req *sdk.CallToolRequest, ask bool) (*workspace.Root, error) {
	if req == nil || req.Session == nil || !clientHasRoots(req.Session) {
		return s.ws, nil
	}
	ss := req.Session
	ctx, cancel := s.callContext(req)
	defer cancel()
	st := s.rootsOf(ss)
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.regID == "" {
		st.regID, _ = s.sessionID(ctx, req)
	}
	if err := s.loadRootsLocked(ctx, ss, st); err != nil {
		return nil, err
	}
	first := -1
	for i, r := range st.roots {
		if r.Dir != "" {
			first = i
			break
		}
	}
	if first < 0 {
		return s.ws, nil // no usable roots: the hub's workspace, as for clients without roots
	}
	idx, err := pickRoot(st.roots, first, req.Params.Arguments)
	if err != nil {
		return nil, err
	}
	r := &st.roots[idx]
	if r.Status == rootPending && ask {
		s.askRootLocked(ctx, req, st, idx)
	}
	switch r.Status {
	case rootGranted, rootApproved:
	case rootDeclined:
		return nil, fmt.Errorf("workspace: the client's root %s was declined for this session (%s); to use it, add it or a parent directory to [roots] allow in %s, or reconnect and approve it", r.Dir, r.Detail, s.policyFile())
	default:
		return nil, fmt.Errorf("workspace: the client's root %s has not been approved yet", r.Dir)
	}
	return s.openWorkspace(r.Dir)
}

// askRootLocked puts one root to the user and records the answer for the session.
func (s *Service) askRootLocked(ctx context.Context, req *sdk.CallToolRequest, st *sessionRoots, idx int) {
	r := &st.roots[idx]
	pol := s.policy.Policy()
	out := s.askUser(ctx, req, policy.Approval{Kind: policy.KindRoot, Root: r.Dir, Client: clientName(req.Session), Workspace: r.Dir,
		Tool: req.Params.Name, Rule: "MCP root outside [roots] allow"}, pol.AskTimeout)
	if ctx.Err() != nil && !out.Approved {
		return // the call went away: ask again next time instead of remembering a non-answer
	}
	if out.Approved {
		r.Status, r.Detail = rootApproved, "approved by "+out.By
	} else {
		r.Status, r.Detail = rootDeclined, out.Result()
		if out.By != "" {
			r.Detail += " by " + out.By
		}
	}
	st.answers[r.Dir] = *r
	noteFrom(ctx).addRoot(fmt.Sprintf("%s %s", r.Dir, r.Detail))
	s.publishRoots(st)
}

// pathKeys are the argument names that carry paths, across every tool group.
func isPathKey(k string) bool {
	switch k {
	case "path", "paths", "oldPath", "newPath", "dir", "cwd", "file", "files", "root", "directory", "source", "destination":
		return true
	}
	return strings.HasSuffix(k, "Path") || strings.HasSuffix(k, "_path") || strings.HasSuffix(k, "Dir") || strings.HasSuffix(k, "_dir")
}

// pickRoot chooses the root a call needs: the one containing its absolute path arguments, else
// the first. Absolute paths in two different roots are refused (one call, one workspace).
func pickRoot(roots []sessions.Root, first int, raw json.RawMessage) (int, error) {
	var args map[string]any
	if len(raw) > 0 {
		_ = json.Unmarshal(raw, &args)
	}
	chosen := -1
	var chosenPath string
	consider := func(key, p string) error {
		if !filepath.IsAbs(p) {
			return nil
		}
		clean := filepath.Clean(p)
		best := -1
		for i, r := range roots {
			if r.Dir != "" && policy.Within(r.Dir, clean) && (best < 0 || len(r.Dir) > len(roots[best].Dir)) {
				best = i
			}
		}
		if best < 0 {
			if real, err := filepath.EvalSymlinks(clean); err == nil && real != clean {
				for i, r := range roots {
					if r.Dir != "" && policy.Within(r.Dir, real) && (best < 0 || len(r.Dir) > len(roots[best].Dir)) {
						best = i
					}
				}
			}
		}
		if best < 0 {
			return nil // outside every root: the workspace refuses it with its own error
		}
		if chosen >= 0 && chosen != best && roots[best].Dir != roots[chosen].Dir {
			return fmt.Errorf("%s: %s and %s lie in different roots (%s, %s); one call works in one root, so split it", key, chosenPath, p, roots[chosen].Dir, roots[best].Dir)
		}
		chosen, chosenPath = best, p
		return nil
	}
	for k, v := range args {
		if !isPathKey(k) {
			continue
		}
		switch x := v.(type) {
		case string:
			if err := consider(k, x); err != nil {
				return 0, err
			}
		case []any:
			for _, e := range x {
				if p, ok := e.(string); ok {
					if err := consider(k, p); err != nil {
						return 0, err
					}
				}
			}
		}
	}
	if chosen < 0 {
		return first, nil
	}
	return chosen, nil
}

// openWorkspace returns the (shared, cached) sandbox for a root directory.
func (s *Service) openWorkspace(dir string) (*workspace.Root, error) {
	if dir == s.ws.Dir() {
		return s.ws, nil
	}
	s.wsMu.Lock()
	defer s.wsMu.Unlock()
	if w, ok := s.wsCache[dir]; ok {
		return w, nil
	}
	w, err := workspace.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("workspace: root %s: %w", dir, err)
	}
	if s.wsCache == nil {
		s.wsCache = map[string]*workspace.Root{}
	}
	s.wsCache[dir] = w
	return w, nil
}

func (s *Service) closeRootWorkspaces() error {
	s.wsMu.Lock()
	defer s.wsMu.Unlock()
	var first error
	for _, w := range s.wsCache {
		if err := w.Close(); err != nil && first == nil {
			first = err
		}
	}
	s.wsCache = nil
	return first
}

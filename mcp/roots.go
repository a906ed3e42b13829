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

// speaksMRTR reports whether the client negotiated multi round-trip requests, where the hub
// may not send it requests of its own outside a call's input_required answer.
func speaksMRTR(ss *sdk.ServerSession) bool {
	p := ss.InitializeParams()
	return p != nil && p.ProtocolVersion >= mrtrProtocol
}

// onRootsListChanged marks the session's roots stale; older clients are asked for the new list
// at once (for the Sessions view), newer ones with their next call.
func (s *Service) onRootsListChanged(ctx context.Context, req *sdk.RootsListChangedRequest) {
	ss := req.Session
	if ss == nil || !clientHasRoots(ss) {
		return // a client that never declared roots has none to re-read: do not ask it
	}
	st := s.rootsOf(ss)
	st.mu.Lock()
	st.stale = true
	if st.regID == "" {
		st.regID, _ = s.sessionID(ctx, req)
	}
	st.mu.Unlock()
	if !speaksMRTR(ss) {
		go s.listRootsNow(ctx, ss) // bounded by its timeout; a notification handler must not block
	}
}

// onInitialized lists a roots client's roots right away, so the Sessions view shows them
// before the first call.
func (s *Service) onInitialized(ctx context.Context, req *sdk.InitializedRequest) {
	if ss := req.Session; ss != nil && clientHasRoots(ss) && !speaksMRTR(ss) {
		st := s.rootsOf(ss)
		st.mu.Lock()
		if st.regID == "" {
			st.regID, _ = s.sessionID(ctx, req)
		}
		st.mu.Unlock()
		go s.listRootsNow(ctx, ss)
	}
}

func (s *Service) listRootsNow(ctx context.Context, ss *sdk.ServerSession) {
	lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	st := s.rootsOf(ss)
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.loaded && !st.stale {
		return
	}
	res, err := ss.ListRoots(lctx, nil)
	if err != nil {
		s.logger.Debug("list client roots", "error", err)
		return
	}
	s.setRootsLocked(st, res)
}

// setRootsLocked classifies a roots/list answer. Earlier answers for the same directory stand.
func (s *Service) setRootsLocked(st *sessionRoots, res *sdk.ListRootsResult) {
	pol := s.policy.Policy()
	var list []sessions.Root
	for _, r := range res.Roots {
		if r == nil {
			continue
		}
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
}

// prepareRoots runs before a path-taking tool of a roots client: it lists the roots when they
// are unknown or changed, and asks about the root the call needs when nobody has yet. Questions
// for multi round-trip clients are queued on the round.
func (s *Service) prepareRoots(ctx context.Context, rd *round, consent bool) error {
	ss := rd.ss
	st := s.rootsOf(ss)
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.regID == "" {
		st.regID, _ = s.sessionID(ctx, rd.req)
		s.publishRoots(st)
	}
	if !st.loaded || st.stale {
		res, ok, err := rd.listRoots(ctx)
		if !ok {
			return nil // asked as an input request
		}
		if err != nil {
			// A client that declares roots but cannot list them works as one without roots:
			// in the hub's workspace, as before roots existed. Asked again after list_changed.
			s.logger.Warn("client declared roots but roots/list failed; using the hub's workspace", "client", clientName(ss), "error", err)
			res = &sdk.ListRootsResult{}
		}
		s.setRootsLocked(st, res)
	}
	first := firstUsable(st.roots)
	if first < 0 || !consent {
		return nil
	}
	idx, err := pickRoot(st.roots, first, rd.req.Params.Arguments)
	if err != nil {
		return err
	}
	if st.roots[idx].Status == rootPending {
		s.askRootLocked(ctx, rd, st, idx)
	}
	return nil
}

func firstUsable(roots []sessions.Root) int {
	for i, r := range roots {
		if r.Dir != "" {
			return i
		}
	}
	return -1
}

func (s *Service) publishRoots(st *sessionRoots) {
	if st.regID != "" {
		s.sessions.SetRoots(st.regID, st.roots)
	}
}

// workspaceFor returns the workspace a tool call's paths resolve against. Every tool that takes
// a path asks here, never s.ws directly. Clients without the roots capability (or with no
// usable roots) share the hub's workspace; others get the root their paths need: the first root
// for relative paths, the root that contains an absolute one. The policy middleware has already
// listed the roots and asked about the one needed (prepareRoots); a declined root is an error
// saying which one and how to allow it.
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
	if i := firstUsable(st.roots); i >= 0 {
		return st.roots[i].Dir
	}
	return s.ws.Dir()
}

// resolveWorkspace picks the call's workspace from what is known; strict makes a root that is
// not usable an error (tools), otherwise the hub's workspace stands in (listings).
func (s *Service) resolveWorkspace(req *sdk.CallToolRequest, strict bool) (*workspace.Root, error) {
	if req == nil || req.Session == nil || !clientHasRoots(req.Session) {
		return s.ws, nil
	}
	ss := req.Session
	st := s.rootsOf(ss)
	st.mu.Lock()
	defer st.mu.Unlock()
	if !st.loaded || st.stale {
		// The policy middleware lists roots before every call of a roots client, so this is a
		// call that bypassed it; older clients can still be asked here.
		if !strict || speaksMRTR(ss) {
			if !st.loaded {
				return s.ws, nil
			}
		} else {
			ctx, cancel := s.callContext(req)
			defer cancel()
			res, err := ss.ListRoots(ctx, nil)
			if err != nil {
				res = &sdk.ListRootsResult{}
			}
			s.setRootsLocked(st, res)
		}
	}
	first := firstUsable(st.roots)
	if first < 0 {
		return s.ws, nil // no usable roots: the hub's workspace
	}
	idx, err := pickRoot(st.roots, first, req.Params.Arguments)
	if err != nil {
		return nil, err
	}
	if strict && st.roots[idx].Status == rootPending {
		// A tool whose arguments did not look like paths to the middleware: ask now. A
		// 2026-07-28 client cannot be sent a question from inside the call, so the dashboard
		// and tray get it instead.
		ctx, cancel := s.callContext(req)
		defer cancel()
		s.askRootLocked(ctx, &round{s: s, ctx: ctx, req: req, ss: ss, mrtr: speaksMRTR(ss), noQueue: true}, st, idx)
	}
	r := st.roots[idx]
	switch {
	case r.Status == rootGranted || r.Status == rootApproved:
		return s.openWorkspace(r.Dir)
	case !strict:
		return s.ws, nil
	case r.Status == rootDeclined:
		return nil, fmt.Errorf("workspace: the client's root %s was declined for this session (%s); to use it, add it or a parent directory to [roots] allow in %s, or reconnect and approve it", r.Dir, r.Detail, s.policyFile())
	}
	return nil, fmt.Errorf("workspace: the client's root %s has not been approved yet; call again to be asked", r.Dir)
}

// askRootLocked puts one root to the user and records the answer for the session.
func (s *Service) askRootLocked(ctx context.Context, rd *round, st *sessionRoots, idx int) {
	r := &st.roots[idx]
	pol := s.policy.Policy()
	out, pending := s.askUser(ctx, rd, "switchboard-approve-root", policy.Approval{Kind: policy.KindRoot, Root: r.Dir,
		Client: clientName(rd.ss), Workspace: r.Dir, Tool: rd.req.Params.Name, Rule: "MCP root outside [roots] allow"}, pol.AskTimeout)
	if pending || (ctx.Err() != nil && !out.Approved) {
		return // asked as an input request, or the call went away: nothing to remember yet
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

// computePathTools records which tools take a path-like argument: only they need the client's
// roots, so a roots client is never asked about a root for, say, lang_list.
func (s *Service) computePathTools() {
	s.pathTools = map[string]bool{}
	for _, t := range s.tools {
		raw, err := json.Marshal(t.InputSchema)
		if err != nil {
			continue
		}
		var schema struct {
			Properties map[string]struct {
				Description string `json:"description"`
			} `json:"properties"`
		}
		if json.Unmarshal(raw, &schema) != nil {
			continue
		}
		for k, p := range schema.Properties {
			d := strings.ToLower(p.Description)
			if isPathKey(k) || strings.Contains(d, "path") || strings.Contains(d, "director") || strings.Contains(d, "workspace") || strings.Contains(d, "file://") {
				s.pathTools[t.Name] = true
			}
		}
	}
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
	s.sweepWorkspace(w)
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

// callContext is the context of a running call (the policy middleware records it; a tool handler
// gets the same request pointer), or a bounded one for a call that did not pass the middleware.
func (s *Service) callContext(req *sdk.CallToolRequest) (context.Context, context.CancelFunc) {
	if v, ok := s.callCtx.Load(req); ok {
		return v.(context.Context), func() {}
	}
	return context.WithTimeout(context.Background(), s.policy.Policy().AskTimeout+30*time.Second)
}

package trust

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/internal/policy"
	"github.com/switchboard-hub/switchboard/internal/sessions"
	"github.com/switchboard-hub/switchboard/internal/workspace"
	"github.com/switchboard-hub/switchboard/mcp/tool"
	"github.com/switchboard-hub/switchboard/mcp/toolcall"
	mcptransport "github.com/switchboard-hub/switchboard/mcp/transport"
)

// Each session works in one workspace, chosen in this order:
//   - a client that declares the roots capability works in its roots: relative paths resolve
//     against its first root, absolute paths are accepted inside any of its roots;
//   - a client that came through `switchboard connect` works in the directory it started the
//     relay in (transport.RelayMethod);
//   - every other client works in the hub's workspace.
//
// A root or relay directory is used without asking where users expect it (policy.AutoGrant: the
// hub's workspace, [roots] allow, the relay's directory, projects in the home directory) and
// asked about where consent protects something (the home itself, ~/.ssh and other hidden home
// directories, the hub's own state, anything outside the home). Only a real answer is
// remembered for the session: a dismissed prompt, or nobody able to answer, refuses that call.

// Root statuses (sessions.Root.Status), as the Sessions view shows them.
const (
	RootGranted  = "granted"  // granted without asking (policy.AutoGrant says why)
	RootApproved = "approved" // the user said yes for this session
	RootDeclined = "declined" // the user said no (or did not answer in time)
	RootPending  = "pending"  // not needed by a call yet, so not asked yet
	RootInvalid  = "invalid"  // not a local directory
)

// sessionRoots is one session's roots and what the user said about them. mu serialises listing
// and asking, so one question per root is asked however many calls arrive at once.
type sessionRoots struct {
	mu     sync.Mutex
	loaded bool
	stale  bool // notifications/roots/list_changed arrived: list again before the next use
	// reg is the session's registry id, set once (identify). Atomic so GrantWorkspace can find a
	// session without waiting for mu, which an open question may hold as long as the user takes.
	reg     atomic.Pointer[string]
	roots   []sessions.Root
	answers map[string]sessions.Root // by Dir: decisions survive a re-listing
	relay   *sessions.Root           // the connect relay's directory, nil when none
}

// id is the session's registry id, "" until identify has run.
func (st *sessionRoots) id() string {
	if p := st.reg.Load(); p != nil {
		return *p
	}
	return ""
}

// identify records the session's registry id the first time it is known and reports whether it
// did (the caller may then publish what it holds).
func (tr *Trust) identify(ctx context.Context, st *sessionRoots, req sdk.Request) bool {
	if st.reg.Load() != nil {
		return false
	}
	id, _ := tr.ids.SessionID(ctx, req)
	st.reg.Store(&id)
	return true
}

// grounds are what AutoGrant judges a session's directories against.
func (tr *Trust) grounds(st *sessionRoots) policy.Grounds {
	g := policy.Grounds{Workspace: tr.HubDir(), Home: tr.home, HubState: tr.ws.hubState}
	if st != nil && st.relay != nil {
		g.Relay = st.relay.Dir
	}
	return g
}

// noteRelay records, once per session, the directory its connect relay announced.
func (tr *Trust) noteRelay(ctx context.Context, req *sdk.CallToolRequest, cwd string) {
	st := tr.rootsOf(req.Session)
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.relay != nil {
		return
	}
	r := sessions.Root{URI: "file://" + cwd}
	dir, err := policy.RootDir(r.URI)
	switch {
	case err != nil:
		r.Status, r.Detail = RootInvalid, err.Error()
	default:
		r.Dir = dir
		g := tr.grounds(nil)
		if why := policy.Protected(dir, g); why != "" {
			// A client started in the home directory (or /, as desktop apps start their
			// servers) did not choose a project: it works in the hub's workspace.
			r.Status, r.Detail = RootPending, why
		} else {
			r.Status, r.Detail = RootGranted, "the directory the client started in"
		}
	}
	st.relay = &r
	tr.identify(ctx, st, req)
	tr.holdGranted(st)
	tr.publishRoots(st)
}

// clientHasRoots reports whether the session's client declared roots. A stateless client's
// roots are not asked for: roots are deprecated from 2026-07-28, and asking would cost every one
// of its calls a round trip (its session lasts one request); it works in the workspace its
// identity gives it (the hub's, or [roots] allow).
func clientHasRoots(ctx context.Context, ss *sdk.ServerSession) bool {
	if mcptransport.Stateless(ctx) {
		return false
	}
	p := ss.InitializeParams()
	return p != nil && p.Capabilities != nil && p.Capabilities.RootsV2 != nil
}

func (tr *Trust) rootsOf(ss *sdk.ServerSession) *sessionRoots {
	if v, ok := tr.roots.Load(ss); ok {
		return v.(*sessionRoots)
	}
	v, loaded := tr.roots.LoadOrStore(ss, &sessionRoots{answers: map[string]sessions.Root{}})
	if !loaded {
		go func() { _ = ss.Wait(); tr.roots.Delete(ss) }() // owned by the session: ends with it
	}
	return v.(*sessionRoots)
}

// OnRootsListChanged marks the session's roots stale; older clients are asked for the new list
// at once (for the Sessions view), newer ones with their next call.
func (tr *Trust) OnRootsListChanged(ctx context.Context, req *sdk.RootsListChangedRequest) {
	ss := req.Session
	if ss == nil || !clientHasRoots(ctx, ss) {
		return // a client that never declared roots has none to re-read: do not ask it
	}
	st := tr.rootsOf(ss)
	st.mu.Lock()
	st.stale = true
	tr.identify(ctx, st, req)
	st.mu.Unlock()
	if !mcptransport.SpeaksMRTR(ss) {
		go tr.listRootsNow(ctx, ss) // bounded by its timeout; a notification handler must not block
	}
}

// OnInitialized lists a roots client's roots right away, so the Sessions view shows them
// before the first call.
func (tr *Trust) OnInitialized(ctx context.Context, req *sdk.InitializedRequest) {
	if ss := req.Session; ss != nil && clientHasRoots(ctx, ss) && !mcptransport.SpeaksMRTR(ss) {
		st := tr.rootsOf(ss)
		st.mu.Lock()
		tr.identify(ctx, st, req)
		st.mu.Unlock()
		go tr.listRootsNow(ctx, ss)
	}
}

func (tr *Trust) listRootsNow(ctx context.Context, ss *sdk.ServerSession) {
	lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	st := tr.rootsOf(ss)
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.loaded && !st.stale {
		return
	}
	res, err := ss.ListRoots(lctx, nil)
	if err != nil {
		tr.logger.Debug("list client roots", "error", err)
		return
	}
	tr.setRootsLocked(st, res)
}

// setRootsLocked classifies a roots/list answer. Earlier answers for the same directory stand.
func (tr *Trust) setRootsLocked(st *sessionRoots, res *sdk.ListRootsResult) {
	pol := tr.policy.Policy()
	g := tr.grounds(st)
	var list []sessions.Root
	for _, r := range res.Roots {
		if r == nil {
			continue
		}
		e := sessions.Root{URI: r.URI, Name: r.Name}
		dir, err := policy.RootDir(r.URI)
		switch {
		case err != nil:
			e.Status, e.Detail = RootInvalid, err.Error()
		default:
			e.Dir = dir
			if prev, ok := st.answers[dir]; ok {
				e.Status, e.Detail = prev.Status, prev.Detail
			} else if why, ok := pol.AutoGrant(dir, g); ok {
				e.Status, e.Detail = RootGranted, why
			} else {
				e.Status, e.Detail = RootPending, why
			}
		}
		list = append(list, e)
	}
	st.roots, st.loaded, st.stale = list, true, false
	tr.holdGranted(st)
	tr.publishRoots(st)
}

// prepareRoots runs before a path-taking tool of a roots client: it lists the roots when they
// are unknown or changed, and asks about the root the call needs when nobody has yet. Questions
// for multi round-trip clients are queued on the round.
func (tr *Trust) prepareRoots(ctx context.Context, rd *round, consent bool) error {
	ss := rd.ss
	st := tr.rootsOf(ss)
	st.mu.Lock()
	defer st.mu.Unlock()
	if tr.identify(ctx, st, rd.req) {
		tr.publishRoots(st)
	}
	if !st.loaded || st.stale {
		res, ok, err := rd.listRoots(ctx)
		if !ok {
			return nil // asked as an input request
		}
		if err != nil {
			// A client that declares roots but cannot list them works as one without roots:
			// in the hub's workspace, as before roots existed. Asked again after list_changed.
			tr.logger.Warn("client declared roots but roots/list failed; using the hub's workspace", "client", mcptransport.ClientName(ss), "error", err)
			res = &sdk.ListRootsResult{}
		}
		tr.setRootsLocked(st, res)
	}
	first := firstUsable(st.roots)
	if first < 0 || !consent {
		return nil
	}
	idx, err := pickRoot(st.roots, first, toolcall.From(ctx, rd.req).Members(), tr.pathArgs[rd.req.Params.Name])
	if err != nil {
		return err
	}
	if st.roots[idx].Status == RootPending {
		return tr.askRootLocked(ctx, rd, st, idx)
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

// RepublishRoots shows every session's workspace again after the hub's changed. A session
// whose roots are being asked about is skipped: it publishes when the question is answered.
func (tr *Trust) RepublishRoots() {
	tr.roots.Range(func(_, v any) bool {
		st := v.(*sessionRoots)
		if st.mu.TryLock() {
			tr.publishRoots(st)
			st.mu.Unlock()
		}
		return true
	})
}

// publishRoots shows the session's roots, relay directory and workspace on the dashboard.
func (tr *Trust) publishRoots(st *sessionRoots) {
	id := st.id()
	if id == "" {
		return
	}
	tr.sessions.SetRoots(id, st.roots)
	dir, from := tr.HubDir(), policy.FromHub
	if i := firstUsable(st.roots); i >= 0 {
		dir, from = st.roots[i].Dir, policy.FromRoot
	} else if usable(st.relay) {
		dir, from = st.relay.Dir, policy.FromRelay
	}
	tr.sessions.SetWorkspace(id, st.relay, dir, from)
}

// holdGranted opens (and caches) the workspace of every usable root and relay directory of st
// as soon as it is granted, so the directory used is the one that was judged, by handle; a
// directory that cannot be opened that way becomes invalid.
func (tr *Trust) holdGranted(st *sessionRoots) {
	hold := func(r *sessions.Root) {
		if !usable(r) {
			return
		}
		if _, err := tr.ws.forRoot(r.Dir); err != nil {
			r.Status, r.Detail = RootInvalid, err.Error()
		}
	}
	for i := range st.roots {
		hold(&st.roots[i])
	}
	hold(st.relay)
}

// usable reports whether a session may work in r.
func usable(r *sessions.Root) bool {
	return r != nil && (r.Status == RootGranted || r.Status == RootApproved)
}

// relayWorkspace is the workspace of a session without usable roots: its relay's directory when
// it may use it, else the hub's.
func (tr *Trust) relayWorkspace(st *sessionRoots) (*workspace.Root, error) {
	switch {
	case st == nil || st.relay == nil:
	case usable(st.relay):
		return tr.ws.forRoot(st.relay.Dir)
	case st.relay.Status == RootDeclined:
		// The user revoked it: falling back to the hub's workspace would put this client's
		// writes somewhere it does not expect.
		return nil, fmt.Errorf("workspace: the directory this client started in (%s) was revoked for this session (%s); grant it again on the dashboard's Sessions view, or reconnect from another directory", st.relay.Dir, st.relay.Detail)
	}
	return tr.ws.HubWorkspace()
}

// WorkspaceFor returns the workspace a tool call's paths resolve against. Every tool that takes
// a path asks here, never the hub's workspace directly. Clients without the roots capability (or with no
// usable roots) share the hub's workspace; others get the root their paths need: the first root
// for relative paths, the root that contains an absolute one.
//
// It never asks anyone: the policy middleware has already listed the roots and asked about the
// one needed (prepareRoots), for every tool that declares workspace paths. A tool that calls
// workspaceFor without that declaration gets an error saying so, so a missing declaration shows
// up in the first test instead of as a call that skipped the user's consent.
func (tr *Trust) WorkspaceFor(ctx context.Context, req *sdk.CallToolRequest) (*workspace.Root, error) {
	if req != nil && req.Params != nil && !tr.pathTools[req.Params.Name] {
		return nil, fmt.Errorf("workspace: tool %s works in the workspace without declaring it (tag its path arguments workspace:\"path\" or embed tool.InWorkspace in its input)", req.Params.Name)
	}
	return tr.ResolveWorkspace(ctx, req, true)
}

// DisplayWorkspace is the directory a session's relative paths resolve against, without asking
// anyone: for messages and listings.
// "" when the session would work in the hub's workspace and there is none.
func (tr *Trust) DisplayWorkspace(ss *sdk.ServerSession) string {
	if ss == nil {
		return tr.HubDir()
	}
	v, ok := tr.roots.Load(ss)
	if !ok {
		return tr.HubDir()
	}
	st := v.(*sessionRoots)
	if !st.mu.TryLock() {
		return tr.HubDir() // a question about roots is open; do not wait for it
	}
	defer st.mu.Unlock()
	if i := firstUsable(st.roots); i >= 0 && clientHasRoots(context.Background(), ss) {
		return st.roots[i].Dir
	}
	if usable(st.relay) {
		return st.relay.Dir
	}
	return tr.HubDir()
}

// ResolveWorkspace picks the call's workspace from what is known; strict makes a root that is
// not usable an error (tools), otherwise the hub's workspace stands in (listings).
func (tr *Trust) ResolveWorkspace(ctx context.Context, req *sdk.CallToolRequest, strict bool) (*workspace.Root, error) {
	if req == nil || req.Session == nil {
		return tr.ws.HubWorkspace()
	}
	ss := req.Session
	if dir := tr.clientProject(ctx); dir != "" {
		// A client identity's own project ([clients.NAME] project), set by the user.
		if id, _ := tr.ids.SessionID(ctx, req); id != "" {
			if prev, ok := tr.shown.Swap(id, dir); !ok || prev != dir {
				tr.sessions.SetWorkspace(id, nil, dir, "client")
			}
		}
		return tr.ws.forRoot(dir)
	}
	if !clientHasRoots(ctx, ss) {
		v, ok := tr.roots.Load(ss)
		if !ok {
			return tr.ws.HubWorkspace() // no roots, no relay: the hub's workspace
		}
		st := v.(*sessionRoots)
		st.mu.Lock()
		defer st.mu.Unlock()
		return tr.relayWorkspace(st)
	}
	st := tr.rootsOf(ss)
	st.mu.Lock()
	defer st.mu.Unlock()
	if !st.loaded {
		// The policy middleware lists roots before every call of a roots client, so this is a
		// request that bypassed it.
		if strict {
			return nil, fmt.Errorf("workspace: this client's roots have not been listed yet; call again")
		}
		return tr.ws.HubWorkspace()
	}
	// Roots marked stale by a list_changed since the middleware ran: the call uses the roots
	// that were judged for it; they are listed again before the next call.
	first := firstUsable(st.roots)
	if first < 0 {
		return tr.relayWorkspace(st) // no usable roots: the relay's directory or the hub's workspace
	}
	idx, err := pickRoot(st.roots, first, toolcall.From(ctx, req).Members(), tr.pathArgs[req.Params.Name])
	if err != nil {
		return nil, err
	}
	r := st.roots[idx]
	switch {
	case r.Status == RootGranted || r.Status == RootApproved:
		return tr.ws.forRoot(r.Dir)
	case !strict:
		return tr.ws.HubWorkspace()
	case r.Status == RootDeclined:
		return nil, fmt.Errorf("workspace: the client's root %s was declined for this session (%s); to use it, grant it on the dashboard's Sessions view, or add it or a parent directory to [roots] allow in %s", r.Dir, r.Detail, tr.PolicyFile())
	}
	return nil, fmt.Errorf("workspace: the client's root %s has not been approved yet; call again to be asked", r.Dir)
}

// askRootLocked puts one root to the user and records a real answer for the session. A prompt
// that was dismissed, or that nobody could answer, is not remembered: the call fails with how to
// allow the root, and the next call asks again.
func (tr *Trust) askRootLocked(ctx context.Context, rd *round, st *sessionRoots, idx int) error {
	r := &st.roots[idx]
	pol := tr.policy.Policy()
	why := r.Detail
	out, pending := tr.askUser(ctx, rd, "switchboard-approve-root", policy.Approval{Kind: policy.KindRoot, Root: r.Dir,
		Client: mcptransport.ClientName(rd.ss), Workspace: r.Dir, Tool: rd.req.Params.Name, Rule: "MCP root needs consent: " + why}, pol.AskTimeout)
	if pending {
		return nil // asked as an input request
	}
	if !out.Approved && out.Dismissed {
		toolcall.From(ctx, nil).AddRoot(fmt.Sprintf("%s %s", r.Dir, out.Result()))
		return fmt.Errorf("workspace: the client's root %s needs the user's consent (%s) and got none: %s. To allow it: grant it on the dashboard's Sessions view, answer the prompt when your client shows it, or add it (or a parent directory) to [roots] allow in %s", r.Dir, why, out.Reason, tr.PolicyFile())
	}
	if out.Approved {
		r.Status, r.Detail = RootApproved, "approved by "+out.By
	} else {
		r.Status, r.Detail = RootDeclined, out.Result()
		if out.By != "" {
			r.Detail += " by " + out.By
		}
	}
	st.answers[r.Dir] = *r
	toolcall.From(ctx, nil).AddRoot(fmt.Sprintf("%s %s", r.Dir, r.Detail))
	tr.holdGranted(st)
	tr.publishRoots(st)
	return nil
}

// GrantWorkspace is Service.GrantWorkspace.
func (tr *Trust) GrantWorkspace(sessionID, dir string, allow bool, by string) error {
	if sessionID == "" || dir == "" {
		return fmt.Errorf("session and dir: both required; the Sessions view lists each session's roots")
	}
	var found *sessionRoots
	tr.roots.Range(func(_, v any) bool {
		st := v.(*sessionRoots)
		if st.id() == sessionID {
			found = st
			return false
		}
		return true
	})
	if found == nil {
		return fmt.Errorf("session %q: not connected, or it has neither roots nor a relay directory", sessionID)
	}
	st := found
	st.mu.Lock()
	defer st.mu.Unlock()
	status, detail := RootDeclined, "revoked on the "+by
	if allow {
		status, detail = RootApproved, "granted on the "+by
	}
	hit := false
	for i := range st.roots {
		if st.roots[i].Dir == dir {
			st.roots[i].Status, st.roots[i].Detail = status, detail
			st.answers[dir] = st.roots[i]
			hit = true
		}
	}
	if st.relay != nil && st.relay.Dir == dir {
		st.relay.Status, st.relay.Detail = status, detail
		hit = true
	}
	if !hit {
		return fmt.Errorf("dir: %s is not a root or the relay directory of session %s", dir, sessionID)
	}
	tr.holdGranted(st)
	tr.publishRoots(st)
	return nil
}

// ComputePathTools records, from each tool's declaration (tool.Func: fields tagged
// workspace:"path", or an embedded tool.InWorkspace), which tools work in the caller's workspace
// — only they need a roots client's consent — and which of their arguments are workspace paths.
// The declaration decides, never an argument's name or description.
func (tr *Trust) ComputePathTools(tools []tool.Tool) {
	tr.pathTools = map[string]bool{}
	tr.pathArgs = map[string][]string{}
	for _, t := range tools {
		if t.Workspace {
			tr.pathTools[t.Def.Name] = true
		}
		if len(t.PathArgs) > 0 {
			tr.pathArgs[t.Def.Name] = t.PathArgs
		}
	}
}

// pickRoot chooses the root a call needs: the one containing its absolute path arguments, else
// the first. Absolute paths in two different roots are refused (one call, one workspace).
func pickRoot(roots []sessions.Root, first int, members map[string]json.RawMessage, pathArgs []string) (int, error) {
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
	for _, k := range pathArgs { // declared order: the same call always gets the same error
		v, ok := members[k]
		if !ok {
			continue
		}
		var one string
		var many []string
		switch {
		case json.Unmarshal(v, &one) == nil:
			many = []string{one}
		case json.Unmarshal(v, &many) == nil:
		}
		for _, p := range many {
			if err := consider(k, p); err != nil {
				return 0, err
			}
		}
	}
	if chosen < 0 {
		return first, nil
	}
	return chosen, nil
}

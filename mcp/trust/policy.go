package trust

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/internal/policy"
	"github.com/switchboard-hub/switchboard/internal/sessions"
	"github.com/switchboard-hub/switchboard/internal/workspace"
	"github.com/switchboard-hub/switchboard/internal/wshub"
	"github.com/switchboard-hub/switchboard/mcp/channel"
	"github.com/switchboard-hub/switchboard/mcp/tool"
	"github.com/switchboard-hub/switchboard/mcp/toolcall"
	mcptransport "github.com/switchboard-hub/switchboard/mcp/transport"
)

// Trust decides what a call may do and where it works: the policy's rules (this file), the
// questions put to the client or the user (elicitation, multi round-trip rounds, the approvals
// broker), and each session's workspace — its MCP roots or relay directory and what the user
// said about them (roots.go). It is the tool groups' tools.Workspaces and the proxy's
// proxy.Workspaces.
type Trust struct {
	policy    *policy.Store
	approvals *policy.Broker
	ws        *Workspaces        // the sandboxes of the directories it grants
	sessions  *sessions.Registry // shows each session's roots and workspace on the dashboard
	ids       SessionIdentity
	logger    *slog.Logger
	home      string // the user's home directory, symlinks resolved ("" when unknown)

	rounds     pending[sdk.InputResponseMap]                    // multi round-trip state of calls waiting for a client's answers
	resumes    func(context.Context, *sdk.CallToolRequest) bool // SetResumes
	held       pending[*heldOuter]                              // held outer calls waiting for their client's retry (held.go)
	holdsInner map[string]bool                                  // SetHoldsInner
	roots      sync.Map                                         // *sdk.ServerSession → *sessionRoots
	pathTools  map[string]bool                                  // tools that work in the caller's workspace (declared; they need a roots client's consent)
	pathArgs   map[string][]string                              // each tool's declared workspace-path arguments (tool.Func, workspace:"path")

	// projects is each client identity's project ([clients.NAME] project): where a stateless
	// client known by its own token works instead of the hub's workspace.
	projects atomic.Pointer[map[string]string]
	shown    sync.Map // registry id → project dir already shown in the Sessions view
}

// SetClientProjects sets each client identity's project directory ([clients.NAME] project).
func (tr *Trust) SetClientProjects(p map[string]string) {
	p = maps.Clone(p)
	tr.projects.Store(&p)
}

// clientProject is the project directory of the request's client identity (a stateless client,
// or a relay's client proved by its token: mcptransport.ProjectIdentity), "" when there is none
// or its client has no project.
func (tr *Trust) clientProject(ctx context.Context) string {
	id := mcptransport.ProjectIdentity(ctx)
	p := tr.projects.Load()
	if id == "" || p == nil {
		return ""
	}
	dir := (*p)[id]
	if dir == "" {
		return ""
	}
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real // the sandbox is opened by its resolved name (workspace.OpenExact)
	}
	return dir
}

// SessionIdentity is what Trust needs of the hub's record of client sessions.
type SessionIdentity interface {
	// SessionID is the dashboard's id of the request's session and its transport.
	SessionID(ctx context.Context, req sdk.Request) (id, transport string)
}

// New enforces store's rules (nil: allow everything) and asks through broker (nil: a private
// one) when no client can answer. A session's questions end with it (sessions), and the broker
// counts the dashboard as present while h has subscribers to the approvals channel.
func New(store *policy.Store, broker *policy.Broker, ws *Workspaces, reg *sessions.Registry, ids SessionIdentity, logger *slog.Logger, h *wshub.Hub) *Trust {
	if store == nil {
		store = policy.NewStore("", nil)
	}
	if broker == nil {
		broker = policy.NewBroker()
	}
	tr := &Trust{policy: store, approvals: broker, ws: ws, sessions: reg, ids: ids, logger: logger}
	tr.held.expire = func(h *heldOuter) { h.cancel() } // nobody came back for it
	if home, err := os.UserHomeDir(); err == nil && filepath.IsAbs(home) {
		if real, err := filepath.EvalSymlinks(home); err == nil {
			home = real
		}
		tr.home = filepath.Clean(home)
	}
	// A session's questions end with it: its client can no longer use an answer, and an
	// approval left on the dashboard would let a click run a dead client's call.
	reg.Subscribe(func(c sessions.Change) {
		if c.Kind == "disconnected" {
			broker.Withdraw(c.Session.ID, "withdrawn: the client's session "+c.Session.ID+" ended")
		}
	})
	if h != nil {
		broker.AddPresence(func() bool { return h.HasSubscribers(channel.Approvals) })
	}
	return tr
}

// Policy is the policy store in force.
func (tr *Trust) Policy() *policy.Store { return tr.policy }

// Approvals is the broker holding questions for the dashboard and the tray.
func (tr *Trust) Approvals() *policy.Broker { return tr.approvals }

// PathTool reports whether a tool declared that it works in the caller's workspace.
func (tr *Trust) PathTool(name string) bool { return tr.pathTools[name] }

// PathArgs is a tool's declared workspace-path arguments.
func (tr *Trust) PathArgs(name string) []string { return tr.pathArgs[name] }

// HubDir is the hub's workspace directory ("" while it has none), for tools.Workspaces.
func (tr *Trust) HubDir() string { return tr.ws.HubDir() }

// clientName is the calling client's self-reported name ("" before initialize).

// PolicyMiddleware decides every tools/call before it runs: allow passes it on, deny answers
// with a tool error naming the rule, ask puts the question to the client (elicitation) or to
// the user (dashboard, tray) and waits. For clients with MCP roots it then makes sure the root
// the call needs is known and consented to, so workspaceFor can answer without asking.
func (tr *Trust) PolicyMiddleware(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		if method != "tools/call" {
			return next(ctx, method, req)
		}
		creq, ok := req.(*sdk.CallToolRequest)
		if !ok || creq.Params == nil {
			return next(ctx, method, req)
		}
		ss := creq.Session
		if cwd := mcptransport.RelayDir(ctx); cwd != "" && ss != nil {
			tr.noteRelay(ctx, creq, cwd)
		}
		pol := tr.policy.Policy()
		c := toolcall.From(ctx, creq)
		members := c.Members
		if names := pol.ArgNames(creq.Params.Name, mcptransport.ClientName(ss)); len(names) > 0 {
			members = func() map[string]json.RawMessage { return tr.canonicalPathArgs(ctx, creq, names, c.Members()) }
		}
		d := pol.DecideMembers(creq.Params.Name, mcptransport.ClientName(ss), members)
		c.Decide(string(d.Action), d.RuleName())
		if d.Action == policy.Deny {
			return tool.ErrorText(fmt.Sprintf("%s: denied by %s in the policy of %s; edit that rule to allow it",
				creq.Params.Name, d.RuleName(), tr.PolicyFile())), nil
		}
		if d.Action == policy.Ask && tr.resumes != nil && tr.resumes(ctx, creq) {
			// The next round of a call that was approved when it started (a held upstream
			// call, mcp/proxy/bridge.go): asking again would ask at every round.
			d.Action = policy.Allow
		}
		var rd *round // only calls that ask something need one
		if d.Action == policy.Ask || (ss != nil && clientHasRoots(ctx, ss)) {
			rd = tr.newRound(ctx, creq)
		}
		if d.Action == policy.Ask {
			out, pending := tr.askUser(ctx, rd, "switchboard-approve-call", policy.Approval{
				Kind: policy.KindCall, Tool: creq.Params.Name, Arguments: policy.Summarize(creq.Params.Arguments),
				Client: mcptransport.ClientName(ss), Rule: d.RuleName(),
			}, pol.AskTimeout)
			if !pending {
				c.Answer(out.Result(), out.By)
				if !out.Approved {
					return tool.ErrorText(fmt.Sprintf("%s: not run: %s asks for approval and it was %s (%s)",
						creq.Params.Name, d.RuleName(), out.Result(), out.Reason)), nil
				}
			}
		}
		if ss != nil && clientHasRoots(ctx, ss) {
			// Roots are listed for every tool (once per session, again after list_changed);
			// consent is asked here, before the handler runs, for tools that declare workspace
			// paths: a handler only reads what was decided (workspaceFor never asks).
			if err := tr.prepareRoots(ctx, rd, tr.pathTools[creq.Params.Name]); err != nil {
				toolcall.Refuse(ctx)
				return tool.ErrorText(err.Error()), nil
			}
		}
		if rd != nil && rd.needsInput() {
			res, err := rd.inputRequired() // not audited: the client's retry is
			if err == nil && res.IsError {
				toolcall.Refuse(ctx) // too many calls wait for answers
			}
			return res, err
		}
		c.Start()
		return next(ctx, method, req)
	}
}

// SetResumes tells the policy which calls are the next round of a call it already allowed
// (a 2026-era client's retry of a held upstream call): those are not asked about again.
func (tr *Trust) SetResumes(f func(context.Context, *sdk.CallToolRequest) bool) { tr.resumes = f }

// PolicyFile names the file holding the policy, for error messages that tell the user which
// file to edit (tools.Workspaces).
func (tr *Trust) PolicyFile() string {
	if p := tr.policy.Path(); p != "" {
		return p
	}
	return "the config file"
}

// askUser asks whoever can answer: the calling client when it declared elicitation, otherwise
// the dashboard and tray through the broker. While the hub waits, a client that sent a progress
// token gets a progress notification every second, so its request timeout does not fire.
// pending is true when the question went to the client as an input request (multi round-trip)
// and the call must return input_required.
func (tr *Trust) askUser(ctx context.Context, rd *round, id string, a policy.Approval, timeout time.Duration) (out policy.Outcome, pending bool) {
	req, ss := rd.req, rd.ss
	if a.Session == "" {
		a.Session, _ = tr.ids.SessionID(ctx, req)
	}
	if a.Workspace == "" {
		a.Workspace = tr.clientProject(ctx)
	}
	if a.Workspace == "" {
		a.Workspace = tr.DisplayWorkspace(ss)
	}
	tick := tr.progressTicker(ctx, req, timeout, a)
	// A 2026-07-28 client takes questions only as input_required, which an inner call (a
	// script's) cannot return itself: its questions go through its held outer call (held.go),
	// or, when the outer call is not held, to the dashboard.
	if mcptransport.CanElicit(ss) && (rd.mrtr || !mcptransport.SpeaksMRTR(ss) || innerAsker(ctx) != nil) {
		out, ok, err := tr.elicitApproval(ctx, rd, id, a, timeout, tick)
		if !ok {
			return policy.Outcome{}, true
		}
		if err == nil {
			return out, false
		}
		tr.logger.Warn("elicitation failed; asking on the dashboard instead", "client", a.Client, "error", err)
	}
	return tr.approvals.Ask(ctx, a, timeout, tick), false
}

// progressTicker returns the per-second callback that keeps a waiting client informed, or nil
// when the client sent no progress token.
func (tr *Trust) progressTicker(ctx context.Context, req *sdk.CallToolRequest, timeout time.Duration, a policy.Approval) func(time.Duration) {
	tok := req.Params.GetProgressToken()
	if tok == nil || req.Session == nil {
		return nil
	}
	what := "this call"
	if a.Kind == policy.KindRoot {
		what = "root " + a.Root
	}
	return func(waited time.Duration) {
		_ = req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{
			ProgressToken: tok, Progress: waited.Seconds(), Total: timeout.Seconds(),
			Message: fmt.Sprintf("waiting for the user to approve %s (%s of %s)", what, waited.Round(time.Second), timeout),
		})
	}
}

// elicitApproval asks the client's user. accept (with or without content) approves once;
// decline and cancel refuse. ok is false when the question was queued as an input request; an
// error means the client could not ask at all.
func (tr *Trust) elicitApproval(ctx context.Context, rd *round, id string, a policy.Approval, timeout time.Duration, tick func(time.Duration)) (out policy.Outcome, ok bool, err error) {
	ectx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if tick != nil && !rd.mrtr {
		start := time.Now()
		done := make(chan struct{})
		defer close(done)
		go func() { // owned by this call: ends when the question is answered
			tk := time.NewTicker(time.Second)
			defer tk.Stop()
			for {
				select {
				case <-done:
					return
				case <-tk.C:
					tick(time.Since(start))
				}
			}
		}()
	}
	res, ok, err := rd.elicit(ectx, id, &sdk.ElicitParams{
		Message:         approvalMessage(a),
		RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{}},
	})
	switch {
	case !ok:
		return policy.Outcome{}, false, nil
	case err != nil && ctx.Err() == nil && ectx.Err() != nil:
		return policy.Outcome{By: policy.ByTimeout, Reason: fmt.Sprintf("no answer within %s (policy.ask_timeout)", timeout), Dismissed: true}, true, nil
	case err != nil && ctx.Err() != nil:
		return policy.Outcome{Reason: "the call was cancelled while waiting for approval", Dismissed: true}, true, nil
	case err != nil:
		return policy.Outcome{}, true, err
	case res.Action == "accept":
		return policy.Outcome{Approved: true, By: policy.ByClient}, true, nil
	case res.Action == "cancel":
		// The prompt was dismissed (or the client could not show it: Claude Code in -p mode
		// answers cancel at once). Nobody said no, so nothing is remembered.
		return policy.Outcome{By: policy.ByClient, Reason: "the prompt was dismissed (the client answered cancel)", Dismissed: true}, true, nil
	}
	return policy.Outcome{By: policy.ByClient, Reason: "the client answered " + res.Action}, true, nil
}

// approvalMessage is what the user reads: which client wants what, where.
func approvalMessage(a policy.Approval) string {
	if a.Kind == policy.KindRoot {
		return fmt.Sprintf("Switchboard: %s wants to use %s as its workspace (MCP root %s).\nAccept to allow it for this session; decline to keep the client out of it.", orUnknown(a.Client), a.Root, a.Root)
	}
	return fmt.Sprintf("Switchboard: %s wants to run the tool %s.\nArguments:\n%s\nWorkspace: %s\nPolicy: %s\nAccept to run it once; decline to refuse.", orUnknown(a.Client), a.Tool, a.Arguments, a.Workspace, a.Rule)
}

func orUnknown(name string) string {
	if name == "" {
		return "a client"
	}
	return name
}

// DecideApproval is Service.DecideApproval.
func (tr *Trust) DecideApproval(id, decision, by string, scopes ...string) error {
	var allow bool
	switch decision {
	case "allow":
		allow = true
	case "deny":
	default:
		return fmt.Errorf("decision: %q is not a decision; use \"allow\" or \"deny\"", decision)
	}
	if id == "" {
		return errors.New("id: required; GET /api/approvals lists the pending approvals")
	}
	return tr.approvals.DecideScopes(id, allow, by, scopes)
}

// WireFeeds publishes approvals and policy reloads on the `approvals` hub channel.
func (tr *Trust) WireFeeds(h *wshub.Hub) {
	if h == nil {
		return
	}
	h.SetSnapshotProvider(channel.Approvals, func(string) (any, bool) {
		return ApprovalsSnapshot{Approvals: tr.approvals.Pending(), Policy: tr.policy.Status()}, true
	})
	tr.approvals.Subscribe(func(c policy.ApprovalChange) {
		a := c.Approval
		h.Publish(channel.Approvals, wshub.TypeEvent, ApprovalsEvent{Kind: c.Kind, Approval: &a, Outcome: c.Outcome})
	})
	tr.policy.Subscribe(func(st policy.Status) {
		h.Publish(channel.Approvals, wshub.TypeEvent, ApprovalsEvent{Kind: "policy", Policy: &st})
	})
}

// canonicalPathArgs rewrites the declared path arguments among names to their canonical spelling
// (workspace.Canonical: workspace-relative, cleaned, symlinks resolved), so a rule on
// "src/*" matches "./src/a", "x/../src/a", the absolute path and a link into src alike. Only
// the policy sees the rewritten members (a copy); the tool gets what the client sent.
func (tr *Trust) canonicalPathArgs(ctx context.Context, req *sdk.CallToolRequest, names []string, members map[string]json.RawMessage) map[string]json.RawMessage {
	declared := tr.pathArgs[req.Params.Name]
	if members == nil || !slices.ContainsFunc(names, func(n string) bool { return slices.Contains(declared, n) }) {
		return members
	}
	ws, err := tr.ResolveWorkspace(ctx, req, false)
	if err != nil {
		return members
	}
	canon := func(p string) string {
		if c, err := ws.Canonical(p); err == nil {
			return c
		}
		return p
	}
	var out map[string]json.RawMessage // copied on the first rewrite
	for _, k := range names {
		v, ok := members[k]
		if !ok || !slices.Contains(declared, k) {
			continue
		}
		var one string
		var many []string
		switch {
		case json.Unmarshal(v, &one) == nil:
			v, _ = json.Marshal(canon(one))
		case json.Unmarshal(v, &many) == nil:
			for i := range many {
				many[i] = canon(many[i])
			}
			v, _ = json.Marshal(many)
		default:
			continue
		}
		if out == nil {
			out = maps.Clone(members)
		}
		out[k] = v
	}
	if out == nil {
		return members
	}
	return out
}

// WalkSkip is what a walking tool (file_grep, file_glob, rag_ingest) leaves out of its results:
// the hub's own state, and files that the policy's path rules deny or hold for approval for this
// tool or for file_read (reading a file's content through a search is reading it). nil when
// nothing needs leaving out, so an ordinary walk pays nothing.
func (tr *Trust) WalkSkip(req *sdk.CallToolRequest, ws *workspace.Root) func(rel string, isDir bool) bool {
	pol := tr.policy.Policy()
	client := mcptransport.ClientName(req.Session)
	type check struct{ tool, arg string }
	var checks []check
	for _, name := range []string{req.Params.Name, "file_read"} {
		for _, n := range pol.ArgNames(name, client) {
			if slices.Contains(tr.pathArgs[name], n) {
				checks = append(checks, check{name, n})
			}
		}
	}
	if len(checks) == 0 && !ws.HasProtected() {
		return nil
	}
	return func(rel string, isDir bool) bool {
		if ws.ProtectedRel(filepath.FromSlash(rel)) {
			return true
		}
		for _, c := range checks {
			val, _ := json.Marshal(rel)
			members := func() map[string]json.RawMessage { return map[string]json.RawMessage{c.arg: val} }
			if d := pol.DecideMembers(c.tool, client, members); d.Action != policy.Allow {
				return true
			}
		}
		return false
	}
}

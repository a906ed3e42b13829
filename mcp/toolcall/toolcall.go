// Package toolcall is one tools/call as the hub's layers see it on its way to the handler: its
// arguments, split once into their top-level members for every layer that reads them by name
// (policy argument rules, canonical paths, picking a root, the typed handler's key check), and
// what the layers decide about it (the policy decision and any approval, the roots checked, a
// refusal), which the audit line records. The outermost layer creates it (New, With); every
// layer inside reads the same one (From).
package toolcall

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/internal/jsonobj"
)

// Call is one tools/call. Its methods are safe for concurrent use.
type Call struct {
	mu         sync.Mutex
	id         string // the audit call id ("" until the call is audited before the fact or linked)
	decision   string // allow | deny | ask
	rule       string
	approval   string // approved | declined | timed out
	by         string // client | dashboard | tray | timeout
	refused    bool   // the hub answered in the tool's place without running it (Refuse)
	rootChecks []string
	started    func() // writes the audit "started" line; run once the call is allowed to run

	args      json.RawMessage
	argsSplit bool
	splitOK   bool                       // the arguments are an object whose members were split
	keys      [][]byte                   // the members' names, in the client's order (within args)
	vals      [][]byte                   // their values (within args)
	members   map[string]json.RawMessage // built from keys and vals when first asked for
	unusual   bool                       // split by encoding/json: keys and vals are copies, not in args
	keyBuf    [8][]byte                  // keys and vals of a small object, without allocating
	valBuf    [8][]byte
}

// New is a call with the given arguments (the request's raw "arguments").
func New(args json.RawMessage) *Call { return &Call{args: args} }

type ctxKey struct{}

// With returns ctx carrying c.
func With(ctx context.Context, c *Call) context.Context { return context.WithValue(ctx, ctxKey{}, c) }

// From returns the call ctx carries, or a fresh one for req's arguments (a request that did not
// come through the hub's middleware, e.g. in a test): what is recorded on it goes nowhere.
func From(ctx context.Context, req *sdk.CallToolRequest) *Call {
	if c, ok := ctx.Value(ctxKey{}).(*Call); ok {
		return c
	}
	c := &Call{}
	if req != nil && req.Params != nil {
		c.args = req.Params.Arguments
	}
	return c
}

// Carried returns the call ctx carries, if any.
func Carried(ctx context.Context) (*Call, bool) {
	c, ok := ctx.Value(ctxKey{}).(*Call)
	return c, ok
}

// Members returns the call's top-level argument members (nil when the arguments are not an
// object), splitting them on first use only.
func (c *Call) Members() map[string]json.RawMessage {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.splitLocked()
	if c.members == nil && len(c.keys) > 0 {
		c.members = make(map[string]json.RawMessage, len(c.keys))
		for i, k := range c.keys {
			c.members[string(k)] = json.RawMessage(c.vals[i])
		}
	}
	return c.members
}

// Keys returns the members' names in the order the client sent them (slices of the arguments:
// read, never modify), and whether the arguments were an object whose members could be split
// (false: the caller decodes them itself, to report what is wrong with them).
func (c *Call) Keys() ([][]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.splitLocked()
	return c.keys, c.splitOK
}

// Split returns the arguments with their members split in place (keys[i] and vals[i] are
// subslices of args, in the client's order), for a layer that reads them all (the audit
// summary); inPlace is false when the arguments were not an ordinary object, and the caller
// reads args itself.
func (c *Call) Split() (args json.RawMessage, keys, vals [][]byte, inPlace bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.splitLocked()
	if !c.splitOK || c.unusual {
		return c.args, nil, nil, false
	}
	return c.args, c.keys, c.vals, true
}

func isEmpty(raw json.RawMessage) bool {
	return len(raw) == 0 || string(raw) == "null" || string(raw) == "{}"
}

// splitLocked splits the arguments once: one walk in place (jsonobj) for an ordinary object,
// keeping the members as slices of the arguments; unusual ones (escaped keys, duplicates) go to
// encoding/json. Arguments that are not an object stay unsplit.
func (c *Call) splitLocked() {
	if c.argsSplit {
		return
	}
	c.argsSplit = true
	if isEmpty(c.args) {
		c.splitOK = true
		return
	}
	keys, vals := c.keyBuf[:0], c.valBuf[:0]
	if jsonobj.Members(c.args, func(k, v []byte) {
		keys = append(keys, k)
		vals = append(vals, v)
	}) {
		c.keys, c.vals, c.splitOK = keys, vals, true
		return
	}
	var members map[string]json.RawMessage
	if json.Unmarshal(c.args, &members) != nil {
		return
	}
	names := slices.Sorted(maps.Keys(members))
	c.keys, c.vals = make([][]byte, len(names)), make([][]byte, len(names))
	for i, k := range names {
		c.keys[i], c.vals[i] = []byte(k), members[k]
	}
	c.members, c.splitOK, c.unusual = members, true, true
}

// SetID records the call's audit id.
func (c *Call) SetID(id string) {
	c.mu.Lock()
	c.id = id
	c.mu.Unlock()
}

// EnsureID returns the call's audit id, recording newID() first when it has none.
func (c *Call) EnsureID(newID func() string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.id == "" {
		c.id = newID()
	}
	return c.id
}

// ID is the call's audit id, "" when it has none yet.
func (c *Call) ID() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.id
}

// Inner is what a call made inside another call (a script's tool call) carries: the outer
// call's audit id, which its audit line records as its parent.
type Inner struct {
	Parent string
}

type innerKey struct{}

// WithInner marks ctx as an inner call's, made on behalf of the call whose audit id is parent.
func WithInner(ctx context.Context, parent string) context.Context {
	return context.WithValue(ctx, innerKey{}, Inner{Parent: parent})
}

// InnerOf reports whether ctx is an inner call's, and its parent.
func InnerOf(ctx context.Context) (Inner, bool) {
	in, ok := ctx.Value(innerKey{}).(Inner)
	return in, ok
}

type handOffKey struct{}

// WithHandOff marks ctx as a call's that may be answered with a task handle while it runs;
// handed reports whether it has been.
func WithHandOff(ctx context.Context, handed func() bool) context.Context {
	return context.WithValue(ctx, handOffKey{}, handed)
}

// HandedOff reports whether the call ctx carries was answered with a task handle: its client no
// longer waits on the request, so nothing can be returned to it but the final result.
func HandedOff(ctx context.Context) bool {
	f, _ := ctx.Value(handOffKey{}).(func() bool)
	return f != nil && f()
}

// TaskAsker puts a question (an elicitation) to the client of a call that was answered with a
// task handle, through the Tasks extension: the task shows input_required with the question,
// and the client's tasks/update brings the answer.
type TaskAsker func(ctx context.Context, id string, q sdk.InputRequest) (sdk.InputResponse, error)

type taskAskerKey struct{}

// WithTaskAsker gives the call ctx carries a way to ask its client once it runs as a task.
func WithTaskAsker(ctx context.Context, a TaskAsker) context.Context {
	return context.WithValue(ctx, taskAskerKey{}, a)
}

// TaskAskerOf is the call's TaskAsker, nil when its client cannot be asked through its task.
func TaskAskerOf(ctx context.Context) TaskAsker {
	a, _ := ctx.Value(taskAskerKey{}).(TaskAsker)
	return a
}

// Decide records the policy's decision and the rule that made it.
func (c *Call) Decide(decision, rule string) {
	c.mu.Lock()
	c.decision, c.rule = decision, rule
	c.mu.Unlock()
}

// Answer records how an ask was answered and by whom.
func (c *Call) Answer(approval, by string) {
	c.mu.Lock()
	c.approval, c.by = approval, by
	c.mu.Unlock()
}

// AddRoot records a root check ("/srv/x declined by client").
func (c *Call) AddRoot(s string) {
	c.mu.Lock()
	c.rootChecks = append(c.rootChecks, s)
	c.mu.Unlock()
}

// OnStart sets what runs once the call is allowed to run (the audit "started" line).
func (c *Call) OnStart(f func()) {
	c.mu.Lock()
	c.started = f
	c.mu.Unlock()
}

// Start runs what OnStart set, if anything.
func (c *Call) Start() {
	c.mu.Lock()
	f := c.started
	c.mu.Unlock()
	if f != nil {
		f()
	}
}

// Refuse marks the call in ctx as refused by the hub for a reason other than the policy's
// decision (a held or quarantined server tool, a refused root, too many open rounds): the
// dashboard's activity feed shows it as refused rather than as a failure of the tool.
func Refuse(ctx context.Context) {
	if c, ok := ctx.Value(ctxKey{}).(*Call); ok {
		c.mu.Lock()
		c.refused = true
		c.mu.Unlock()
	}
}

// Record is what the layers decided about a call, for its audit line.
type Record struct {
	Decision, Rule, Approval, By string
	Refused                      bool
	Roots                        []string
}

// Record returns what was recorded on the call.
func (c *Call) Record() Record {
	c.mu.Lock()
	defer c.mu.Unlock()
	return Record{Decision: c.decision, Rule: c.rule, Approval: c.approval, By: c.by, Refused: c.refused, Roots: append([]string(nil), c.rootChecks...)}
}

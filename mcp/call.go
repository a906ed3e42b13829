package mcp

import (
	"context"
	"encoding/json"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// toolCall is what the hub's middleware learns about one tools/call on its way to the handler: the
// policy decision and any approval (for the call's one audit line), the roots checked, and when
// to write the audit "started" line. The audit middleware creates it and puts it in the call's
// context; the policy middleware and the roots code inside fill it in.
type toolCall struct {
	mu         sync.Mutex
	decision   string // allow | deny | ask
	rule       string
	approval   string // approved | declined | timed out
	by         string // client | dashboard | tray | timeout
	refused    bool   // the hub answered in the tool's place without running it (see refuse)
	rootChecks []string
	started    func() // writes the audit "started" line; called once the call is allowed to run

	// The arguments' top-level members, decoded once for everything before the handler that
	// needs them by name (policy argument rules, canonical paths, picking a root); the handler
	// decodes the arguments into its own input type (tool.Func).
	args      json.RawMessage
	members   map[string]json.RawMessage
	argsSplit bool
}

// argMembers returns the call's top-level argument members (nil when the arguments are not an
// object), decoding them on first use only.
func (c *toolCall) argMembers() map[string]json.RawMessage {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.argsSplit {
		c.argsSplit = true
		if len(c.args) > 0 {
			_ = json.Unmarshal(c.args, &c.members) // not an object: no members
		}
	}
	return c.members
}

type callCtxKey struct{}

// refuse marks the call in ctx as refused by the hub for a reason other than the policy's
// decision (a held or quarantined server tool, a refused root, too many open rounds): the
// dashboard's activity feed shows it as refused rather than as a failure of the tool.
func refuse(ctx context.Context) {
	if c, ok := ctx.Value(callCtxKey{}).(*toolCall); ok {
		c.mu.Lock()
		c.refused = true
		c.mu.Unlock()
	}
}

// withCall returns ctx carrying c.
func withCall(ctx context.Context, c *toolCall) context.Context {
	return context.WithValue(ctx, callCtxKey{}, c)
}

// callFrom returns the call ctx carries, or a fresh one for req's arguments (a request that did
// not come through the audit middleware, e.g. in a test): writes to it are simply not recorded.
func callFrom(ctx context.Context, req *sdk.CallToolRequest) *toolCall {
	if c, ok := ctx.Value(callCtxKey{}).(*toolCall); ok {
		return c
	}
	c := &toolCall{}
	if req != nil && req.Params != nil {
		c.args = req.Params.Arguments
	}
	return c
}

func (c *toolCall) addRoot(s string) {
	c.mu.Lock()
	c.rootChecks = append(c.rootChecks, s)
	c.mu.Unlock()
}

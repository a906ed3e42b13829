package mcp

import (
	"context"
	"sync"
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
	rootChecks []string
	started    func() // writes the audit "started" line; called once the call is allowed to run
}

type callCtxKey struct{}

// withCall returns ctx carrying c.
func withCall(ctx context.Context, c *toolCall) context.Context {
	return context.WithValue(ctx, callCtxKey{}, c)
}

// callFrom returns the call ctx carries, or a fresh one (a request that did not come through
// the audit middleware, e.g. in a test): writes to it are simply not recorded.
func callFrom(ctx context.Context) *toolCall {
	if c, ok := ctx.Value(callCtxKey{}).(*toolCall); ok {
		return c
	}
	return &toolCall{}
}

func (c *toolCall) addRoot(s string) {
	c.mu.Lock()
	c.rootChecks = append(c.rootChecks, s)
	c.mu.Unlock()
}

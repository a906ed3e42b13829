package mcp

import (
	"context"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// DiscoverTTL is how long a 2026-07-28 client may keep the hub's server/discover answer: its
// protocol versions and capabilities are fixed for the hub's life (the instructions follow the
// served toolsets; they are guidance, and a stale copy names a set that is off or misses one).
//
// The lists (tools, prompts, resources) get no TTL: they change while the hub runs — a toolset
// switched on the dashboard, an upstream server's tools arriving, changing or going — and a
// client that does not listen for list changes would keep a stale list for the whole TTL (go-sdk's
// client caches by ttlMs and drops its copy only on a list_changed it subscribed to). Changes are
// announced (notifications/tools/list_changed to sessions and to subscriptions/listen streams),
// and tools are listed in name order (go-sdk keeps them sorted), so the same set is always the
// same list, byte for byte.
const DiscoverTTL = 5 * time.Minute

// cacheHints decides the cache fields (ttlMs, cacheScope) of every result that has them
// (sdk.ServerOptions.SetCacheable). Scope is private: the answers are this hub's, behind its
// token, and no intermediary may serve them to someone else.
func cacheHints(_ context.Context, req sdk.Request, c *sdk.Cacheable) {
	c.CacheScope = "private"
	c.TTLMs = 0
	if _, ok := req.(*sdk.ServerRequest[*sdk.DiscoverParams]); ok {
		c.TTLMs = int(DiscoverTTL / time.Millisecond)
	}
}

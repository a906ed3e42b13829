package mcp

import (
	"context"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// ListTTL is how long a 2026-07-28 client may keep the hub's lists (server/discover and the
// tools, prompts and resources lists) before asking again. They change only when a toolset is
// switched, an upstream server's tools arrive or change, or the config is edited, and every such
// change is announced (notifications/tools/list_changed to sessions and to subscriptions/listen
// streams), on which go-sdk's client, among others, drops its cached copy: the TTL only bounds
// how stale a client that does not listen can be. Tools are listed in name order (go-sdk keeps
// them sorted), so the same set is always the same list, byte for byte.
const ListTTL = 5 * time.Minute

// cacheHints decides the cache fields (ttlMs, cacheScope) of every result that has them
// (sdk.ServerOptions.SetCacheable). Scope is private: the lists are this hub's, behind its
// token, and no intermediary may serve them to someone else. resources/read is never cached
// (its content is a file or a feed that changes when it likes).
func cacheHints(_ context.Context, req sdk.Request, c *sdk.Cacheable) {
	c.CacheScope = "private"
	switch req.(type) {
	case *sdk.ListToolsRequest, *sdk.ListPromptsRequest, *sdk.ListResourcesRequest, *sdk.ListResourceTemplatesRequest, *sdk.DiscoverRequest:
		c.TTLMs = int(ListTTL / time.Millisecond)
	default:
		c.TTLMs = 0
	}
}

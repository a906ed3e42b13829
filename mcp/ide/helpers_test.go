package ide

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/mcp/ide/agenticsim"
)

// recordingPublisher stands in for internal/wshub (not yet in the tree when
// these tests were written): it records every publication as JSON, which
// also proves each payload serialises, and keeps the snapshot providers.
type recordingPublisher struct {
	mu        sync.Mutex
	events    []published
	providers map[string]func(string) (any, bool)
}

type published struct {
	Channel string
	Type    string
	Data    map[string]any
}

func newRecordingPublisher() *recordingPublisher {
	return &recordingPublisher{providers: map[string]func(string) (any, bool){}}
}

func (p *recordingPublisher) Publish(channel, msgType string, data any) {
	raw, err := json.Marshal(data)
	if err != nil {
		panic("publish " + channel + ": " + err.Error())
	}
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.events = append(p.events, published{Channel: channel, Type: msgType, Data: m})
}

func (p *recordingPublisher) SetSnapshotProvider(prefix string, fn func(string) (any, bool)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.providers[prefix] = fn
}

// snapshot resolves a channel the way the hub does: longest prefix wins. The
// result is round-tripped through JSON like a hub client would see it.
func (p *recordingPublisher) snapshot(t *testing.T, channel string) (map[string]any, bool) {
	t.Helper()
	p.mu.Lock()
	prefixes := make([]string, 0, len(p.providers))
	for prefix := range p.providers {
		if strings.HasPrefix(channel, prefix) {
			prefixes = append(prefixes, prefix)
		}
	}
	sort.Slice(prefixes, func(i, j int) bool { return len(prefixes[i]) > len(prefixes[j]) })
	var fn func(string) (any, bool)
	if len(prefixes) > 0 {
		fn = p.providers[prefixes[0]]
	}
	p.mu.Unlock()
	if fn == nil {
		return nil, false
	}
	data, ok := fn(channel)
	if !ok {
		return nil, false
	}
	return roundTrip[map[string]any](t, data), true
}

func (p *recordingPublisher) on(channel string) []published {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []published
	for _, e := range p.events {
		if e.Channel == channel {
			out = append(out, e)
		}
	}
	return out
}

func roundTrip[T any](t *testing.T, v any) T {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("marshal %T: %v", v, err)
	}
	var out T
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("unmarshal into %T: %v (json %s)", out, err, raw)
	}
	return out
}

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// startSim runs a simulator on a free loopback port for the test's lifetime.
func startSim(t *testing.T, opts agenticsim.Options) *agenticsim.Server {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = quietLogger()
	}
	sim := agenticsim.New(opts)
	if _, err := sim.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.Close() })
	return sim
}

// startSubsystem starts a subsystem against url with fast reconnects and
// stops it at cleanup.
func startSubsystem(t *testing.T, pub Publisher, url string, opts ...Option) *Subsystem {
	t.Helper()
	all := append([]Option{
		WithBackendURL(url),
		WithReconnectInterval(10 * time.Millisecond),
		WithMaxReconnectInterval(50 * time.Millisecond),
		WithResponseWait(2 * time.Second),
		WithLogger(quietLogger()),
	}, opts...)
	sub := New(pub, all...)
	sub.Start(context.Background())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := sub.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	})
	return sub
}

// connectTools serves sub's tools to an in-memory MCP client.
func connectTools(t *testing.T, sub *Subsystem) *mcp.ClientSession {
	t.Helper()
	server := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "0"}, nil)
	for _, t := range sub.Tools().Bind(sub) {
		server.AddTool(t.Def, t.Handler)
	}
	clientT, serverT := mcp.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := server.Connect(ctx, serverT, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "0"}, nil).Connect(ctx, clientT, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cs.Close()
		_ = ss.Wait()
	})
	return cs
}

// callTool calls a tool that must succeed and decodes its structured output.
func callTool[T any](t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) T {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if res.IsError {
		t.Fatalf("%s: tool error: %s", name, toolText(res))
	}
	return roundTrip[T](t, res.StructuredContent)
}

// callToolError calls a tool that must fail and returns its error text.
func callToolError(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) string {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if !res.IsError {
		t.Fatalf("%s: expected a tool error, got %v", name, res.StructuredContent)
	}
	return toolText(res)
}

func toolText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

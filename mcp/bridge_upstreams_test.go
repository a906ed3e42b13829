package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Upstream servers of both protocol eras for the bridge tests, built with go-sdk v1.8 in the
// test: "modern" speaks 2026-07-28 over stateless Streamable HTTP and asks through
// input_required results (multi round-trip); "legacy" speaks only 2025-11-25 over a Streamable
// HTTP session and asks by sending requests during the call. Both record what they saw.

// testUpstream is one such server and what it recorded.
type testUpstream struct {
	url    string
	server *sdk.Server

	mu        sync.Mutex
	protocols []string // the protocol version of each tools/call
	lateErr   chan error
	cancelled chan string
	started   chan struct{} // a long slow call began
}

func (u *testUpstream) saw(req *sdk.CallToolRequest) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if p := req.Session.InitializeParams(); p != nil {
		u.protocols = append(u.protocols, p.ProtocolVersion)
	} else {
		u.protocols = append(u.protocols, "")
	}
}

func (u *testUpstream) lastProtocol() string {
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(u.protocols) == 0 {
		return ""
	}
	return u.protocols[len(u.protocols)-1]
}

type bridgeArgs struct {
	Question string `json:"question"`
	Prompt   string `json:"prompt"`
	Times    int    `json:"times"`
	Ms       int    `json:"ms"`
}

func argsOf(req *sdk.CallToolRequest) bridgeArgs {
	var a bridgeArgs
	_ = json.Unmarshal(req.Params.Arguments, &a)
	return a
}

func textResult(format string, args ...any) *sdk.CallToolResult {
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: fmt.Sprintf(format, args...)}}}
}

var anySchema = map[string]any{"type": "object", "properties": map[string]any{}}

func bridgeTool(name string) *sdk.Tool {
	return &sdk.Tool{Name: name, Description: "bridge test tool " + name, InputSchema: map[string]any{"type": "object", "properties": map[string]any{
		"question": map[string]any{"type": "string"}, "prompt": map[string]any{"type": "string"},
		"times": map[string]any{"type": "integer"}, "ms": map[string]any{"type": "integer"},
	}}}
}

var answerSchema = map[string]any{"type": "object", "properties": map[string]any{"answer": map[string]any{"type": "string"}}}

func elicitAnswer(r *sdk.ElicitResult) string {
	if r == nil {
		return "none"
	}
	a, _ := r.Content["answer"].(string)
	return strings.TrimSpace(r.Action + " " + a)
}

func samplingText(c sdk.Content) string {
	if tc, ok := c.(*sdk.TextContent); ok {
		return tc.Text
	}
	return fmt.Sprintf("%T", c)
}

// slowTool sends progress every 50 ms until ms have passed or its call is cancelled.
func (u *testUpstream) slowTool(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
	u.saw(req)
	a := argsOf(req)
	tok := req.Params.GetProgressToken()
	if a.Ms > 1000 {
		u.started <- struct{}{}
	}
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(time.Duration(a.Ms) * time.Millisecond)
	for i := 1; ; i++ {
		select {
		case <-ctx.Done():
			u.cancelled <- "slow"
			return nil, ctx.Err()
		case <-deadline:
			return textResult("slept %d", a.Ms), nil
		case <-tick.C:
			if tok != nil {
				_ = req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: tok, Progress: float64(i), Message: "working"})
			}
		}
	}
}

// modernUpstream is a 2026-07-28 server over stateless Streamable HTTP whose tools ask through
// input_required.
func modernUpstream(t testing.TB) *testUpstream {
	t.Helper()
	u := &testUpstream{cancelled: make(chan string, 8), started: make(chan struct{}, 8)}
	srv := sdk.NewServer(&sdk.Implementation{Name: "modern-upstream", Version: "1"}, &sdk.ServerOptions{
		Capabilities: &sdk.ServerCapabilities{Tools: &sdk.ToolCapabilities{ListChanged: true}},
	})
	srv.AddTool(bridgeTool("ask"), func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		u.saw(req)
		if r, ok := req.Params.InputResponses["question"].(*sdk.ElicitResult); ok && req.Params.RequestState == "modern-ask" {
			return textResult("answered: %s", elicitAnswer(r)), nil
		}
		return &sdk.CallToolResult{InputRequests: sdk.InputRequestMap{"question": &sdk.ElicitParams{Message: argsOf(req).Question, RequestedSchema: answerSchema}}, RequestState: "modern-ask"}, nil
	})
	srv.AddTool(bridgeTool("sample"), func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		u.saw(req)
		switch r := req.Params.InputResponses["sample"].(type) {
		case *sdk.CreateMessageWithToolsResult:
			if len(r.Content) == 1 {
				return textResult("sampled: %s", samplingText(r.Content[0])), nil
			}
		case *sdk.CreateMessageResult:
			return textResult("sampled: %s", samplingText(r.Content)), nil
		}
		return &sdk.CallToolResult{InputRequests: sdk.InputRequestMap{"sample": &sdk.CreateMessageParams{MaxTokens: 50,
			Messages: []*sdk.SamplingMessage{{Role: "user", Content: &sdk.TextContent{Text: argsOf(req).Prompt}}}}}}, nil
	})
	srv.AddTool(bridgeTool("roots"), func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		u.saw(req)
		if r, ok := req.Params.InputResponses["roots"].(*sdk.ListRootsResult); ok {
			var uris []string
			for _, root := range r.Roots {
				uris = append(uris, root.URI)
			}
			return textResult("roots: %s", strings.Join(uris, " ")), nil
		}
		return &sdk.CallToolResult{InputRequests: sdk.InputRequestMap{"roots": &sdk.ListRootsParams{}}}, nil
	})
	srv.AddTool(bridgeTool("ask-forever"), func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		u.saw(req)
		n := len(req.Params.InputResponses)
		return &sdk.CallToolResult{InputRequests: sdk.InputRequestMap{fmt.Sprintf("q%d", n): &sdk.ElicitParams{Message: "again?", RequestedSchema: anySchema}}, RequestState: "forever"}, nil
	})
	srv.AddTool(bridgeTool("slow"), u.slowTool)
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, &sdk.StreamableHTTPOptions{Stateless: true, PropagateRequestCancellation: true})
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	u.url, u.server = ts.URL, srv
	return u
}

// legacyUpstream is a server that speaks only 2025-11-25, over a Streamable HTTP session: its
// tools ask by sending requests to the hub during the call.
func legacyUpstream(t testing.TB) *testUpstream {
	t.Helper()
	u := &testUpstream{lateErr: make(chan error, 1), cancelled: make(chan string, 8), started: make(chan struct{}, 8)}
	srv := sdk.NewServer(&sdk.Implementation{Name: "legacy-upstream", Version: "1"}, &sdk.ServerOptions{
		SupportedProtocolVersions: []string{"2025-11-25"},
		Capabilities:              &sdk.ServerCapabilities{Tools: &sdk.ToolCapabilities{ListChanged: true}},
	})
	srv.AddTool(bridgeTool("ask"), func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		u.saw(req)
		r, err := req.Session.Elicit(ctx, &sdk.ElicitParams{Message: argsOf(req).Question, RequestedSchema: answerSchema})
		if err != nil {
			return textResult("ask failed: %v", err), nil
		}
		return textResult("answered: %s", elicitAnswer(r)), nil
	})
	srv.AddTool(bridgeTool("ask-many"), func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		u.saw(req)
		for i := range argsOf(req).Times {
			if _, err := req.Session.Elicit(ctx, &sdk.ElicitParams{Message: fmt.Sprintf("question %d", i+1), RequestedSchema: anySchema}); err != nil {
				return textResult("ask %d failed: %v", i+1, err), nil
			}
		}
		return textResult("all answered"), nil
	})
	srv.AddTool(bridgeTool("ask-parallel"), func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		u.saw(req)
		var wg sync.WaitGroup
		var mu sync.Mutex
		failed := 0
		for i := range argsOf(req).Times {
			wg.Go(func() {
				if _, err := req.Session.Elicit(ctx, &sdk.ElicitParams{Message: fmt.Sprintf("question %d", i+1), RequestedSchema: anySchema}); err != nil {
					mu.Lock()
					failed++
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		return textResult("%d of %d failed", failed, argsOf(req).Times), nil
	})
	srv.AddTool(bridgeTool("ask-late"), func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		u.saw(req)
		ss := req.Session
		go func() { // asks after its call has ended: the hub must refuse, not hang
			time.Sleep(300 * time.Millisecond)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_, err := ss.Elicit(ctx, &sdk.ElicitParams{Message: "too late?", RequestedSchema: anySchema})
			u.lateErr <- err
		}()
		return textResult("returned before asking"), nil
	})
	srv.AddTool(bridgeTool("sample"), func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		u.saw(req)
		r, err := req.Session.CreateMessage(ctx, &sdk.CreateMessageParams{MaxTokens: 50,
			Messages: []*sdk.SamplingMessage{{Role: "user", Content: &sdk.TextContent{Text: argsOf(req).Prompt}}}})
		if err != nil {
			return textResult("sample failed: %v", err), nil
		}
		return textResult("sampled: %s", samplingText(r.Content)), nil
	})
	srv.AddTool(bridgeTool("hang"), func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		u.saw(req)
		<-ctx.Done() // never answers: only a cancellation ends it
		u.cancelled <- "hang"
		return nil, ctx.Err()
	})
	srv.AddTool(bridgeTool("slow"), u.slowTool)
	// A prompt and a resource that ask their client before answering (a 2025-era server's
	// elicitation during prompts/get and resources/read).
	srv.AddPrompt(&sdk.Prompt{Name: "ask-prompt", Description: "asks, then answers",
		Arguments: []*sdk.PromptArgument{{Name: "question"}}}, func(ctx context.Context, req *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
		r, err := req.Session.Elicit(ctx, &sdk.ElicitParams{Message: req.Params.Arguments["question"], RequestedSchema: answerSchema})
		if err != nil {
			return nil, fmt.Errorf("ask failed: %w", err)
		}
		return &sdk.GetPromptResult{Messages: []*sdk.PromptMessage{{Role: "user", Content: &sdk.TextContent{Text: "prompted: " + elicitAnswer(r)}}}}, nil
	})
	srv.AddResource(&sdk.Resource{URI: "bridge://ask", Name: "ask", MIMEType: "text/plain"}, func(ctx context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
		r, err := req.Session.Elicit(ctx, &sdk.ElicitParams{Message: "May the resource be read?", RequestedSchema: answerSchema})
		if err != nil {
			return nil, fmt.Errorf("ask failed: %w", err)
		}
		return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: "read: " + elicitAnswer(r)}}}, nil
	})
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	u.url, u.server = ts.URL, srv
	return u
}

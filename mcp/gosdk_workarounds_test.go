package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The tests in this file are canaries, one per go-sdk behaviour a workaround of ours exists for.
// Each asserts that go-sdk (the version in go.mod) still behaves that way, and fails with what
// to delete once it no longer does, so a workaround does not outlive its reason.

// go-sdk squeezes a request id into an int64 or a string: 1.5 comes back as 1, which would answer
// a different call than the client asked. Upstream: modelcontextprotocol/go-sdk PR #1178 (reject
// fractional ids) and PR #1253 (keep ids exact). Workaround: clientCalls' stand-in ids
// (mcp/transport/clientcalls.go), used by every transport.
func TestGoSDKStillSqueezesRequestIDs(t *testing.T) {
	msg, err := jsonrpc.DecodeMessage([]byte(`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`))
	if err != nil {
		t.Fatalf("go-sdk now refuses id 1.5 (%v): clientCalls must still give such calls stand-in ids; update this canary to the new behaviour", err)
	}
	out, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		ID json.RawMessage `json:"id"`
	}
	if err := json.Unmarshal(out, &back); err != nil {
		t.Fatal(err)
	}
	if string(back.ID) == "1.5" {
		t.Fatalf("go-sdk now keeps request id 1.5 exact (%s): the id aliasing in mcp/transport/clientcalls.go (needsAlias, standIn) can go", out)
	}
}

// go-sdk decodes every message through a streaming decoder that allocates a fresh 32 KiB buffer
// (internal/json), twice per request; a quarter of a trivial call's garbage. Workaround: the
// line transport decodes requests itself (lineConn.decode, parseRequest in linetransport.go).
func TestGoSDKStillAllocatesADecoderBufferPerMessage(t *testing.T) {
	data := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"file_exists","arguments":{"path":"a"}}}`)
	const n = 50
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for range n {
		if _, err := jsonrpc.DecodeMessage(data); err != nil {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	per := (after.TotalAlloc - before.TotalAlloc) / n
	if per < 16<<10 {
		t.Fatalf("go-sdk's DecodeMessage now allocates %d bytes for a %d-byte message (it was over 32 KiB): lineConn.decode's own decoding (parseRequest) may no longer be worth keeping; measure BenchmarkToolCall without it", per, len(data))
	}
}

// go-sdk's stdio transport drops the replies to calls already read when the client closes its
// input before they are answered (a one-shot pipe gets no output). Upstream: issue
// modelcontextprotocol/go-sdk#1061, fix proposed in PR #1067. Workaround: lineConn holds Read
// back on EOF until every reply owed is written (linetransport.go).
func TestGoSDKStillDropsRepliesAfterInputEOF(t *testing.T) {
	srv := sdk.NewServer(&sdk.Implementation{Name: "canary", Version: "1"}, nil)
	entered := make(chan struct{})
	// The drop is decided when go-sdk's reader sees EOF: it cancels the calls in flight and their
	// replies are lost. The handler answers only after that (or, should go-sdk stop cancelling,
	// after a grace), so the canary does not depend on which goroutine runs first.
	sdk.AddTool(srv, &sdk.Tool{Name: "slow"}, func(ctx context.Context, _ *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, struct{}, error) {
		close(entered)
		select {
		case <-ctx.Done():
		case <-time.After(3 * time.Second):
		}
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "done"}}}, struct{}{}, nil
	})
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ss, err := srv.Connect(context.Background(), &sdk.IOTransport{Reader: inR, Writer: nopWriteCloser{outW}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 16)
	go func() { // owned by the test: ends when outW is closed below
		sc := bufio.NewScanner(outR)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	write := func(s string) {
		if _, err := io.WriteString(inW, s+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	write(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
	if l := <-lines; !strings.Contains(l, `"id":1`) {
		t.Fatalf("initialize: %s", l)
	}
	write(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	write(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","arguments":{}}}`)
	<-entered
	inW.Close() // the client's input ends while the call runs
	waitErr := make(chan error, 1)
	go func() { waitErr <- ss.Wait() }()
	select {
	case <-waitErr:
	case <-time.After(10 * time.Second):
		t.Fatal("the session did not end after its input did")
	}
	outW.Close()
	for l := range lines {
		if strings.Contains(l, `"id":2`) {
			t.Fatalf("go-sdk now delivers a reply owed when the input ended (%s): issue #1061 is fixed; lineConn's hold on EOF may go (keep TestStreamEOF… tests)", l)
		}
	}
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// TestResultTypeFieldReadable: go-sdk v1.8.0 keeps a result's resultType in an unexported field
// named resultType, which withResultType reads by reflection so that only results without one
// are re-encoded. When this fails, go-sdk renamed the field (or exported it): use the new name
// or accessor in resultTypeOf (mcp/middleware.go).
func TestResultTypeFieldReadable(t *testing.T) {
	for _, r := range []sdk.Result{new(sdk.CallToolResult), new(sdk.GetPromptResult), new(sdk.ReadResourceResult)} {
		if err := json.Unmarshal([]byte(`{"content":[],"messages":[],"contents":[],"resultType":"complete"}`), r); err != nil {
			t.Fatal(err)
		}
		if rt, known := resultTypeOf(r); !known || rt != "complete" {
			t.Errorf("%T: resultTypeOf = %q, %v; want complete, true", r, rt, known)
		}
	}
}

//go:build unix

package upstream

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestDirectCallsMatchTheSession: tools/call on the direct path gives clients exactly what
// go-sdk's client session gives for the same call to the real server-everything: text,
// annotations, images, resource links, structured content, tool errors and protocol errors.
func TestDirectCallsMatchTheSession(t *testing.T) {
	m := newTestManager(t, Options{})
	if err := approveSync(m, []Spec{everythingSpec(t, "everything")}); err != nil {
		t.Fatal(err)
	}
	waitState(t, m, "everything", StateRunning)
	if _, err := m.Approve(t.Context(), "everything"); err != nil {
		t.Fatal(err)
	}
	s, err := m.get("everything")
	if err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	cs, direct := s.session, s.direct
	s.mu.Unlock()
	if direct == nil {
		t.Fatalf("server-everything over stdio (protocol %s) is not on the direct path", cs.InitializeResult().ProtocolVersion)
	}
	calls := []struct{ tool, args string }{
		{"echo", `{"message":"hello \"quoted\" é \u2028 line\nbreak"}`},
		{"get-sum", `{"a":2,"b":40.5}`},
		{"get-annotated-message", `{"messageType":"error"}`},
		{"get-annotated-message", `{"messageType":"success","includeImage":true}`},
		{"get-tiny-image", `{}`},
		{"get-resource-links", `{"count":2}`},
		{"get-structured-content", `{"location":"Chicago"}`},
		{"get-sum", `{"a":"not a number"}`}, // a tool error (isError)
		{"no-such-tool", `{}`},              // a protocol error
		{"echo", ``},                        // no arguments: {} is sent, as go-sdk does
	}
	for _, c := range calls {
		t.Run(c.tool, func(t *testing.T) {
			got, gotErr := callToolDirect(t.Context(), direct, c.tool, json.RawMessage(c.args), nil)
			want, wantErr := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: c.tool, Arguments: rawArgs(json.RawMessage(c.args))})
			if (gotErr == nil) != (wantErr == nil) {
				t.Fatalf("direct: %v; session: %v", gotErr, wantErr)
			}
			if gotErr != nil {
				var g, w *jsonrpc.Error
				if !errors.As(gotErr, &g) || !errors.As(wantErr, &w) || g.Code != w.Code || g.Message != w.Message {
					t.Fatalf("errors differ: direct %#v; session %#v", gotErr, wantErr)
				}
				return
			}
			gb, _ := json.Marshal(got)
			wb, _ := json.Marshal(want)
			if !sameJSON(gb, wb) {
				t.Fatalf("results differ:\ndirect  %s\nsession %s", gb, wb)
			}
		})
	}
}

// TestDecodeToolResultMatchesSDK: whichever way a result is read (the plain path or go-sdk's
// decoding), clients get the same bytes as go-sdk's own decoding gives.
func TestDecodeToolResultMatchesSDK(t *testing.T) {
	for _, raw := range toolResultCases {
		checkToolResult(t, raw)
	}
	for _, raw := range []string{
		`{"content":[{"type":"text","text":"x"}]}`,
		`{"content":[],"isError":true,"_meta":{"k":1}}`,
		`{"content":[{"type":"text","text":"a","_meta":{"m":"v"}}],"structuredContent":{"n":1}}`,
	} {
		if _, ok := decodeSimpleToolResult(json.RawMessage(raw)); !ok {
			t.Errorf("%s: not on the plain path; it must be", raw)
		}
	}
	for _, raw := range []string{
		`{"content":[{"type":"image","data":"AAAA","mimeType":"image/png"}]}`,
		`{"content":[{"type":"text","text":"x","extra":1}]}`,
		`{"content":[],"resultType":"complete"}`,
		`{"content":[],"isError":"yes"}`,
	} {
		if _, ok := decodeSimpleToolResult(json.RawMessage(raw)); ok {
			t.Errorf("%s: on the plain path; it must go to go-sdk's decoding", raw)
		}
	}
}

var toolResultCases = []string{
	`{"content":[{"type":"text","text":"x"}]}`,
	`{"content":[{"type":"text","text":"esc \"q\" \u00e9 \n"}],"isError":false}`,
	`{"content":[],"isError":true,"_meta":{"k":1}}`,
	`{"content":[{"type":"text","text":"a","annotations":{"audience":["user"],"priority":0.5},"_meta":{"m":"v"}}],"structuredContent":{"n":1}}`,
	`{"content":[{"type":"image","data":"AAAA","mimeType":"image/png"}]}`,
	`{"content":[{"type":"text","text":"x","extra":1}]}`,
	`{"content":[{"type":"text"}]}`,
	`{"content":null}`,
	`{"structuredContent":null,"content":[{"type":"text","text":"\ud83d\ude00"}]}`,
	`{"content":[{"type":"text","text":"x"}],"isError":null,"_meta":null}`,
	`{"content":[{"type":"resource_link","uri":"file:///x","name":"x"}]}`,
	`{"content":[{"type":"text","text":1}]}`,
	`{"content":{}}`,
	`[]`,
}

// checkToolResult compares decodeToolResult with go-sdk's decoding of raw. One difference is
// by design: structuredContent is passed on as the server sent it, where go-sdk decodes it into
// Go values and encodes them again (which sorts keys, rounds integers beyond 2^53 and refuses
// numbers beyond float64), so it is compared as JSON values, and a result go-sdk refuses only
// for such a number is accepted.
func checkToolResult(t *testing.T, raw string) {
	got, gotErr := decodeToolResult(json.RawMessage(raw))
	var want sdk.CallToolResult
	wantErr := json.Unmarshal([]byte(raw), &want)
	if gotErr == nil && wantErr != nil && strings.Contains(wantErr.Error(), "number") {
		var wire struct {
			Structured json.RawMessage `json:"structuredContent"`
		}
		var v any
		if json.Unmarshal([]byte(raw), &wire) == nil && len(wire.Structured) > 0 && json.Unmarshal(wire.Structured, &v) != nil {
			return
		}
	}
	if (gotErr == nil) != (wantErr == nil) {
		t.Fatalf("%s: decodeToolResult %v; go-sdk %v", raw, gotErr, wantErr)
	}
	if gotErr != nil {
		return
	}
	gb, gerr := json.Marshal(got)
	wb, werr := json.Marshal(&want)
	if !sameJSON(gb, wb) || (gerr == nil) != (werr == nil) {
		t.Fatalf("%s:\ndecodeToolResult %s (%v)\ngo-sdk           %s (%v)", raw, gb, gerr, wb, werr)
	}
}

// sameJSON reports whether two JSON texts hold the same value (key order aside; numbers
// compared as written, after go-sdk's rounding of large integers).
func sameJSON(a, b []byte) bool {
	var va, vb any
	if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil {
		return string(a) == string(b)
	}
	return reflect.DeepEqual(va, vb)
}

func FuzzDecodeToolResult(f *testing.F) {
	for _, raw := range toolResultCases {
		f.Add(raw)
	}
	f.Fuzz(checkToolResult)
}

// scriptedServer answers on the server's end of two pipes with fn, one request line at a time.
func scriptedServer(t *testing.T, fn func(w io.Writer, req map[string]any)) *stdioTransport {
	t.Helper()
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		defer outW.Close()
		sc := bufio.NewScanner(inR)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var req map[string]any
			if json.Unmarshal(sc.Bytes(), &req) == nil {
				fn(outW, req)
			}
		}
	}()
	t.Cleanup(func() { inR.Close() })
	return &stdioTransport{r: outR, w: inW}
}

// TestStdioTransportToleratesNoisyServers: a server that prints log lines to stdout (text,
// JSON lines, text that starts like JSON) or pretty-prints its messages over several lines still
// works; its noise goes to the log.
func TestStdioTransportToleratesNoisyServers(t *testing.T) {
	tr := scriptedServer(t, func(w io.Writer, req map[string]any) {
		id, _ := json.Marshal(req["id"])
		switch req["method"] {
		case "initialize":
			io.WriteString(w, "server starting on stdio...\n")
			io.WriteString(w, "{\n  \"jsonrpc\": \"2.0\",\n  \"id\": "+string(id)+",\n  \"result\": {\n    \"protocolVersion\": \"2025-06-18\",\n    \"capabilities\": {\"tools\": {}},\n    \"serverInfo\": {\"name\": \"noisy\", \"version\": \"1\"}\n  }\n}\n")
		case "tools/call":
			io.WriteString(w, "calling...\n")
			io.WriteString(w, `{"level":"info","msg":"a JSON log line"}`+"\n")
			io.WriteString(w, "{debug} not JSON at all\n")
			io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(id)+`,"result":{"content":[{"type":"text","text":"ok"}]}}`+"\n")
		default:
			if req["id"] != nil { // server/discover and the like: what a server before 2026-07-28 answers
				io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(id)+`,"error":{"code":-32601,"message":"method not found"}}`+"\n")
			}
		}
	})
	var junk []string
	tr.junk = func(l string) { junk = append(junk, l) }
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "t"}, nil).Connect(t.Context(), tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := callToolDirect(t.Context(), tr.conn.Load(), "x", nil, nil)
	if err != nil || len(res.Content) != 1 || res.Content[0].(*sdk.TextContent).Text != "ok" {
		t.Fatalf("call: %v %v", res, err)
	}
	if strings.Join(junk, "|") != `server starting on stdio...|calling...|{"level":"info","msg":"a JSON log line"}|{debug} not JSON at all` {
		t.Fatalf("junk lines: %q", junk)
	}
}

// TestStdioTransportLimitsAndEnds: a message over the limit ends the connection with a clear
// error, and a direct call in flight when the server goes away ends at once.
func TestStdioTransportLimitsAndEnds(t *testing.T) {
	tr := scriptedServer(t, func(w io.Writer, req map[string]any) {
		if req["method"] == "tools/call" {
			io.WriteString(w, `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"`+strings.Repeat("x", 2<<10)+`"}}`+"\n")
		}
	})
	tr.max = 1 << 10
	conn, err := tr.Connect(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_, err = conn.(*stdioConn).call(t.Context(), "tools/call", []byte(`{}`))
	if !errors.Is(err, sdk.ErrConnectionClosed) {
		t.Fatalf("call when the connection ends: %v", err)
	}
	_, err = conn.Read(context.Background())
	if err == nil || !strings.Contains(err.Error(), "larger than 1024 bytes") {
		t.Fatalf("Read after an oversized message: %v", err)
	}
}

package upstream

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestInputRequestsWithoutParams: an input request without params (the TypeScript SDK v2's
// roots/list) reaches go-sdk with empty params, over HTTP as JSON and as an event stream and
// over stdio; everything else, and what does not parse, passes unchanged.
func TestInputRequestsWithoutParams(t *testing.T) {
	const bare = `{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","inputRequests":{"roots":{"method":"roots/list"},"q":{"method":"elicitation/create","params":null}}}}`
	decodes := func(t *testing.T, raw []byte) {
		t.Helper()
		var msg struct {
			Result sdk.CallToolResult `json:"result"`
		}
		if err := json.Unmarshal(raw, &msg); err != nil {
			t.Fatalf("go-sdk cannot decode %s: %v", raw, err)
		}
		if _, ok := msg.Result.InputRequests["roots"].(*sdk.ListRootsParams); !ok {
			t.Fatalf("roots: %#v", msg.Result.InputRequests["roots"])
		}
		if _, ok := msg.Result.InputRequests["q"].(*sdk.ElicitParams); !ok {
			t.Fatalf("q: %#v", msg.Result.InputRequests["q"])
		}
	}
	var plain struct {
		Result sdk.CallToolResult `json:"result"`
	}
	if err := json.Unmarshal([]byte(bare), &plain); err == nil {
		t.Log("go-sdk now decodes input requests without params: fillInputRequestParams can go")
	}
	t.Run("stdio", func(t *testing.T) {
		msgs, err := decodeLine([]byte(bare))
		if err != nil || len(msgs) != 1 {
			t.Fatal(msgs, err)
		}
		raw, _ := json.Marshal(msgs[0])
		decodes(t, raw)
	})
	for _, sse := range []bool{false, true} {
		t.Run(fmt.Sprintf("http sse=%v", sse), func(t *testing.T) {
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				if sse {
					w.Header().Set("Content-Type", "text/event-stream")
					fmt.Fprintf(w, ": keep-alive\n\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":1,\"progress\":1}}\n\nevent: message\ndata: %s\r\n\r\n", bare)
					return
				}
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprint(w, bare)
			}))
			defer ts.Close()
			resp, err := (&http.Client{Transport: inputParamsTransport{next: http.DefaultTransport}}).Get(ts.URL)
			if err != nil {
				t.Fatal(err)
			}
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil {
				t.Fatal(err)
			}
			if !sse {
				if resp.ContentLength != int64(len(body)) {
					t.Fatalf("Content-Length %d for %d bytes", resp.ContentLength, len(body))
				}
				decodes(t, body)
				return
			}
			events := strings.Split(string(body), "\n")
			want := []string{": keep-alive", "", "event: message", `data: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}`, "", "event: message"}
			if len(events) < 8 || strings.Join(events[:6], "\n") != strings.Join(want, "\n") || !strings.HasSuffix(events[6], "\r") || events[7] != "\r" {
				t.Fatalf("the stream changed around the fixed event: %q", events)
			}
			decodes(t, []byte(strings.TrimSuffix(strings.TrimPrefix(events[6], "data: "), "\r")))
		})
	}
	for _, in := range []string{
		`{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`,
		`{"jsonrpc":"2.0","id":1,"result":{"inputRequests":{"a":{"method":"roots/list","params":{}}}}}`,
		`{"inputRequests": not json`,
		`{"jsonrpc":"2.0","id":1,"result":{"inputRequests":[1,2]}}`,
		`{"jsonrpc":"2.0","id":1,"result":{"inputRequests":{"a":null}}}`,
		`{"jsonrpc":"2.0","id":1,"result":"inputRequests"}`,
	} {
		if got := fillInputRequestParams([]byte(in)); string(got) != in {
			t.Errorf("%s changed to %s", in, got)
		}
	}
}

// TestInputParamsStreamsAndBounds: an event reaches the reader while its stream is still open
// (nothing is held past a line), and a line or body larger than a stdio message passes through
// unchanged rather than being held whole.
func TestInputParamsStreamsAndBounds(t *testing.T) {
	const bare = `{"jsonrpc":"2.0","id":1,"result":{"inputRequests":{"roots":{"method":"roots/list"}}}}`
	big := `{"jsonrpc":"2.0","id":1,"result":{"pad":"` + strings.Repeat("x", maxStdioMessage) + `","inputRequests":{"roots":{"method":"roots/list"}}}}`
	release := make(chan struct{})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/json" {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, big)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "data: %s\n\n", bare)
		w.(http.Flusher).Flush()
		<-release
		fmt.Fprintf(w, "data: %s\n\n", big)
	}))
	defer ts.Close()
	defer close(release)
	hc := &http.Client{Transport: inputParamsTransport{next: http.DefaultTransport}}

	resp, err := hc.Get(ts.URL + "/sse")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	first, err := br.ReadString('\n') // the server is still blocked: this must not wait for it
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(first, `"roots":{"method":"roots/list","params":{}}`) {
		t.Fatalf("first event: %q", first)
	}
	release <- struct{}{}
	rest, err := io.ReadAll(br)
	if err != nil {
		t.Fatal(err)
	}
	if want := "\ndata: " + big + "\n\n"; string(rest) != want {
		t.Fatalf("the oversized event changed: %d bytes, want %d unchanged", len(rest), len(want))
	}

	resp, err = hc.Get(ts.URL + "/json")
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || string(body) != big {
		t.Fatalf("the oversized body changed (%v): %d bytes, want %d unchanged", err, len(body), len(big))
	}
}

package transport

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// TestCancelFilterJSONBody: with a JSON (not SSE) response, the filter removes the replies to
// cancelled calls from the body and keeps the others; a body left empty is not written.
func TestCancelFilterJSONBody(t *testing.T) {
	calls := newClientCalls("http-")
	body := `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":"a","method":"ping"},{"jsonrpc":"2.0","id":2.50,"method":"ping"}]`
	_, _, inflight, done := prepareBody(calls, "S", []byte(body))
	defer done()
	if len(inflight) != 3 {
		t.Fatalf("registered %d calls, want 3", len(inflight))
	}
	if _, _, _, d := prepareBody(calls, "S", []byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"\u0061"}}`)); d == nil {
		t.Fatal("nil release")
	}
	if _, _, _, d := prepareBody(calls, "other-session", []byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`)); d == nil {
		t.Fatal("nil release")
	}
	rec := httptest.NewRecorder()
	rec.Header().Set("Content-Type", "application/json")
	w := &cancelFilter{ResponseWriter: rec, calls: inflight}
	w.Write([]byte(`[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","id":"a","result":{}},{"jsonrpc":"2.0","id":2.50,"result":{}}]`))
	if got := rec.Body.String(); got != `[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","id":2.50,"result":{}}]` {
		t.Errorf("batch body %s: want the reply to \"a\" (cancelled) removed, 1 (cancelled on another session) kept", got)
	}
	one := httptest.NewRecorder()
	one.Header().Set("Content-Type", "application/json")
	w = &cancelFilter{ResponseWriter: one, calls: inflight}
	w.Write([]byte(`{"jsonrpc":"2.0","id":"a","error":{"code":-32800,"message":"cancelled"}}`))
	if one.Body.Len() != 0 {
		t.Errorf("single cancelled reply written: %s", one.Body)
	}
}

// TestEncodeMessageMatchesGoSDK checks the fast response framing against go-sdk's encoder.
func TestEncodeMessageMatchesGoSDK(t *testing.T) {
	for _, raw := range []any{float64(7), "req-1"} {
		id, _ := jsonrpc.MakeID(raw)
		resp := &jsonrpc.Response{ID: id, Result: json.RawMessage(`{"content":[{"type":"text","text":"a\"b"}],"x":1}`)}
		parts, err := encodeMessage(resp, nil)
		fast := bytes.Join(parts, nil)
		if err != nil {
			t.Fatal(err)
		}
		slow, err := jsonrpc.EncodeMessage(resp)
		if err != nil {
			t.Fatal(err)
		}
		var a, b any
		json.Unmarshal(fast, &a)
		json.Unmarshal(slow, &b)
		if fmt.Sprint(a) != fmt.Sprint(b) {
			t.Errorf("id %v: fast %s != go-sdk %s", raw, fast, slow)
		}
	}
}

package trust

import (
	"context"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestHeldOuterTakenOnlyByItsCaller: a requestState resumes a held call only for the session
// and the tool call (name and arguments) it was given to, once; an expired one is gone, and the
// call it held is cancelled.
func TestHeldOuterTakenOnlyByItsCaller(t *testing.T) {
	tbl := pending[*heldOuter]{expire: func(h *heldOuter) { h.cancel() }}
	mine, other := new(sdk.ServerSession), new(sdk.ServerSession)
	key := callKey(&sdk.CallToolParamsRaw{Name: "script_run", Arguments: []byte(`{"code":"1"}`)})
	otherKey := callKey(&sdk.CallToolParamsRaw{Name: "script_run", Arguments: []byte(`{"code":"2"}`)})
	h := &heldOuter{caller: mine, key: key, cancel: func() {}}
	token, ok := tbl.put(h, mine, key, time.Minute)
	if !ok {
		t.Fatal("put refused")
	}
	for _, c := range []struct {
		name  string
		token string
		ss    *sdk.ServerSession
		key   string
	}{
		{"another session", token, other, key},
		{"other arguments", token, mine, otherKey},
		{"an unknown token", token + "x", mine, key},
	} {
		if _, ok := tbl.take(c.token, c.ss, c.key); ok {
			t.Errorf("%s took the held call", c.name)
		}
	}
	if got, ok := tbl.take(token, mine, key); !ok || got != h {
		t.Fatal("its own retry did not take the held call")
	}
	if _, ok := tbl.take(token, mine, key); ok {
		t.Fatal("a requestState was taken twice")
	}

	ctx, cancel := context.WithCancel(context.Background())
	old := &heldOuter{caller: mine, key: key, cancel: cancel}
	oldToken, _ := tbl.put(old, mine, key, -time.Second) // already expired
	if _, ok := tbl.put(&heldOuter{caller: mine, key: key, cancel: func() {}}, mine, key, time.Minute); !ok {
		t.Fatal("put refused")
	}
	if _, ok := tbl.take(oldToken, mine, key); ok {
		t.Error("an expired held call was taken")
	}
	if ctx.Err() == nil {
		t.Error("the expired held call was not cancelled")
	}
}

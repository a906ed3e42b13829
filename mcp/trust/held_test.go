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
	var tbl heldOuters
	mine, other := new(sdk.ServerSession), new(sdk.ServerSession)
	key := callKey(&sdk.CallToolParamsRaw{Name: "script_run", Arguments: []byte(`{"code":"1"}`)})
	otherKey := callKey(&sdk.CallToolParamsRaw{Name: "script_run", Arguments: []byte(`{"code":"2"}`)})
	h := &heldOuter{ss: mine, key: key, cancel: func() {}}
	token, ok := tbl.put(h, time.Minute)
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
		if got := tbl.take(c.token, c.ss, c.key); got != nil {
			t.Errorf("%s took the held call", c.name)
		}
	}
	if got := tbl.take(token, mine, key); got != h {
		t.Fatal("its own retry did not take the held call")
	}
	if got := tbl.take(token, mine, key); got != nil {
		t.Fatal("a requestState was taken twice")
	}

	ctx, cancel := context.WithCancel(context.Background())
	old := &heldOuter{ss: mine, key: key, cancel: cancel}
	oldToken, _ := tbl.put(old, -time.Second) // already expired
	if _, ok := tbl.put(&heldOuter{ss: mine, key: key, cancel: func() {}}, time.Minute); !ok {
		t.Fatal("put refused")
	}
	if tbl.take(oldToken, mine, key) != nil {
		t.Error("an expired held call was taken")
	}
	if ctx.Err() == nil {
		t.Error("the expired held call was not cancelled")
	}
}

package toolcall_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/switchboard-hub/switchboard/mcp/toolcall"
)

// TestSplitOnce: the arguments are split into their members once, in the client's order, for
// every layer that reads them; unusual objects are still split (by encoding/json), and what is
// not an object is left for the typed decode to report.
func TestSplitOnce(t *testing.T) {
	for _, tc := range []struct {
		name, args string
		keys       string // joined with ","; "-" when not split
		members    map[string]string
	}{
		{"empty", ``, "", nil},
		{"null", `null`, "", nil},
		{"empty object", `{}`, "", nil},
		{"ordinary", `{"path":"a.txt","limit":3}`, "path,limit", map[string]string{"path": `"a.txt"`, "limit": `3`}},
		{"client order kept", `{"z":1,"a":2}`, "z,a", map[string]string{"z": `1`, "a": `2`}},
		{"escaped key", `{"p\u0061th":"x"}`, "path", map[string]string{"path": `"x"`}},
		{"duplicate key: the last wins, as encoding/json", `{"a":1,"a":2}`, "a", map[string]string{"a": `2`}},
		{"not an object", `["a"]`, "-", nil},
		{"invalid", `{"a":`, "-", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := toolcall.New(json.RawMessage(tc.args))
			keys, ok := c.Keys()
			got := "-"
			if ok {
				parts := make([]string, len(keys))
				for i, k := range keys {
					parts[i] = string(k)
				}
				got = strings.Join(parts, ",")
			}
			if got != tc.keys {
				t.Errorf("keys %q, want %q", got, tc.keys)
			}
			m := c.Members()
			if len(m) != len(tc.members) {
				t.Fatalf("members %v, want %v", m, tc.members)
			}
			for k, v := range tc.members {
				if string(m[k]) != v {
					t.Errorf("member %s = %s, want %s", k, m[k], v)
				}
			}
		})
	}
}

// TestRecordedThroughContext: what the layers decide about a call, through the context they
// share, is what its audit line gets; a context without a call records nowhere.
func TestRecordedThroughContext(t *testing.T) {
	c := toolcall.New(json.RawMessage(`{}`))
	ctx := toolcall.With(context.Background(), c)
	started := 0
	c.OnStart(func() { started++ })
	toolcall.From(ctx, nil).Decide("ask", "rule 1")
	toolcall.From(ctx, nil).Answer("approved", "dashboard")
	toolcall.From(ctx, nil).AddRoot("/srv/x declined by client")
	toolcall.Refuse(ctx)
	toolcall.From(ctx, nil).Start()
	r := c.Record()
	if r.Decision != "ask" || r.Rule != "rule 1" || r.Approval != "approved" || r.By != "dashboard" || !r.Refused ||
		len(r.Roots) != 1 || started != 1 {
		t.Errorf("record %+v, started %d", r, started)
	}
	toolcall.Refuse(context.Background()) // no call: nothing to record, no panic
	if _, ok := toolcall.Carried(context.Background()); ok {
		t.Error("a bare context carries a call")
	}
}

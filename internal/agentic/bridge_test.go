package agentic

import (
	"encoding/json"
	"testing"
)

func TestRedactURL(t *testing.T) {
	tests := map[string]string{
		"ws://localhost:9876/ws":             "ws://localhost:9876/ws",
		"wss://user:pw@example.com/ws":       "wss://user:xxxxx@example.com/ws",
		"ws://127.0.0.1:1/ws?token=abc&x=1":  "ws://127.0.0.1:1/ws?token=xxxxx&x=1",
		"ws://127.0.0.1:1/ws?other=keep+me!": "ws://127.0.0.1:1/ws?other=keep+me!",
	}
	for in, want := range tests {
		if got := redactURL(in); got != want {
			t.Errorf("redactURL(%q) = %q, want %q", in, got, want)
		}
	}
}

// roundTrip encodes v and decodes it into a T, as a dashboard receiving it would.
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

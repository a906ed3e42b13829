package dashboard

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// TestClientTokensAPI: Settings › Client tokens through the real /api. A new token is in the
// issue answer only; the list names the client with when it was made, never the token; the
// token lets a client in over HTTP until it is revoked; revoking a client without a token, or
// issuing for a bad name, is a 400 naming the field.
func TestClientTokensAPI(t *testing.T) {
	_, st, chk := settingsHub(t)
	code, issued := chk.do("POST", "/api/settings/client-tokens", map[string]any{"client": "cursor"})
	token, _ := issued["token"].(string)
	if code != http.StatusOK || !strings.HasPrefix(token, "sbc_") || issued["client"] != "cursor" {
		t.Fatalf("issue: %d %v", code, issued)
	}
	code, list := chk.do("GET", "/api/settings/client-tokens", nil)
	raw, _ := json.Marshal(list)
	if code != http.StatusOK || !strings.Contains(string(raw), `"client":"cursor"`) || !strings.Contains(string(raw), `"created"`) || strings.Contains(string(raw), token) {
		t.Fatalf("list: %d %s", code, raw)
	}
	if c, ok := st.ClientTokens.Verify(token); !ok || c != "cursor" {
		t.Fatalf("the hub does not know the issued token: %q %v", c, ok)
	}
	if code, body := chk.do("POST", "/api/settings/client-tokens", map[string]any{"client": "no spaces please"}); code != http.StatusBadRequest || !strings.Contains(body["error"].(string), "letters, digits") {
		t.Errorf("a bad name: %d %v", code, body)
	}
	if code, body := chk.do("POST", "/api/settings/client-tokens", map[string]any{}); code != http.StatusBadRequest || !strings.Contains(body["error"].(string), "client") {
		t.Errorf("no client: %d %v", code, body)
	}
	code, after := chk.do("DELETE", "/api/settings/client-tokens/cursor", nil)
	if raw, _ := json.Marshal(after); code != http.StatusOK || strings.Contains(string(raw), "cursor") {
		t.Fatalf("revoke: %d %s", code, raw)
	}
	if _, ok := st.ClientTokens.Verify(token); ok {
		t.Errorf("a revoked token still works")
	}
	if code, body := chk.do("DELETE", "/api/settings/client-tokens/cursor", nil); code != http.StatusBadRequest || !strings.Contains(body["error"].(string), "has no token") {
		t.Errorf("revoking twice: %d %v", code, body)
	}
}

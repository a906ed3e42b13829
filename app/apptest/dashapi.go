package apptest

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"
)

// DashAPI sends one request to a dashboard server's /api: body is sent as is when it is a
// string, JSON-encoded otherwise (nil: no body); token "" sends no Authorization header. It
// returns the status and the decoded JSON answer.
func DashAPI(t *testing.T, baseURL, token, method, route string, body any) (int, map[string]any) {
	t.Helper()
	var rd *bytes.Reader
	switch b := body.(type) {
	case nil:
		rd = bytes.NewReader(nil)
	case string:
		rd = bytes.NewReader([]byte(b))
	default:
		enc, _ := json.Marshal(b)
		rd = bytes.NewReader(enc)
	}
	req, _ := http.NewRequest(method, baseURL+route, rd)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(res.Body).Decode(&out)
	return res.StatusCode, out
}

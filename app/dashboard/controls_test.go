package dashboard

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/switchboard-hub/switchboard/app"
	"github.com/switchboard-hub/switchboard/app/apptest"
	"github.com/switchboard-hub/switchboard/internal/config"
	"github.com/switchboard-hub/switchboard/internal/dashcontrol"
)

// TestEveryControlIsServed walks the control table on a real stack: each declared route answers
// with the dashboard token — 200 with the declared result's JSON, or 400 with an APIError from its
// argument decoding or the Controller, never the mux's 404 or 405 — and refuses a request without
// the token (401) or from a foreign Origin (403). Controls that take a body get invalid JSON, and
// path wildcards name nothing that exists, so no control changes anything.
func TestEveryControlIsServed(t *testing.T) {
	home := realTempDir(t)
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	cfgPath := filepath.Join(home, ".config", "switchboard", "config.toml")
	if err := os.MkdirAll(filepath.Dir(cfgPath), 0o700); err != nil {
		t.Fatal(err)
	}
	const original = "# mine\n"
	if err := os.WriteFile(cfgPath, []byte(original), 0o600); err != nil {
		t.Fatal(err)
	}
	st := apptest.Stack(t, "", func(c *config.Config) { c.Path = cfgPath })
	srv := httptest.NewServer(NewServer(app.NewController(st, "test"), "dash-token").Handler())
	defer srv.Close()

	wildcard := regexp.MustCompile(`\{[^}]*\}`)
	specs := app.ControlSpecs()
	if len(specs) < 40 {
		t.Fatalf("%d controls declared; the table lost some", len(specs))
	}
	send := func(s dashcontrol.Spec, token, origin string) (int, []byte) {
		t.Helper()
		var body io.Reader
		if s.ReadsBody() {
			body = strings.NewReader("[")
		}
		req, _ := http.NewRequest(s.Method, srv.URL+wildcard.ReplaceAllString(s.Path, "nosuch"), body)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, b
	}
	for _, s := range specs {
		route := s.Method + " " + s.Path
		switch code, b := send(s, "dash-token", ""); code {
		case http.StatusOK:
			dec := json.NewDecoder(bytes.NewReader(b))
			dec.DisallowUnknownFields()
			if err := dec.Decode(reflect.New(s.Result).Interface()); err != nil {
				t.Errorf("%s (%s): 200 but not a %v: %v\n%s", route, s.Name, s.Result, err, b)
			}
		case http.StatusBadRequest:
			var e APIError
			if err := json.Unmarshal(b, &e); err != nil || e.Error == "" {
				t.Errorf("%s (%s): 400 without an APIError: %s", route, s.Name, b)
			}
		default:
			t.Errorf("%s (%s): %d %s; want the control's 200 or 400", route, s.Name, code, b)
		}
		if code, b := send(s, "", ""); code != http.StatusUnauthorized {
			t.Errorf("%s (%s) without the token: %d %s; want 401", route, s.Name, code, b)
		}
		if code, b := send(s, "dash-token", "http://evil.example"); code != http.StatusForbidden {
			t.Errorf("%s (%s) from another Origin: %d %s; want 403", route, s.Name, code, b)
		}
	}
	if b, _ := os.ReadFile(cfgPath); string(b) != original {
		t.Errorf("walking the controls changed the config file:\n%s", b)
	}
}

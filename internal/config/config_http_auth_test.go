package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestHTTPAuthKeys(t *testing.T) {
	dir := t.TempDir()
	load := func(body string) (Config, error) {
		t.Helper()
		file := filepath.Join(dir, "c.toml")
		if err := os.WriteFile(file, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return LoadWith(file, Env{})
	}
	c, err := load("[http]\nauth = \"oauth\"\ncert = \"/c.pem\"\nkey = \"/k.pem\"\n")
	if err != nil || !c.OAuth() || c.HTTP.Cert != "/c.pem" || c.HTTP.Key != "/k.pem" {
		t.Fatalf("oauth with a certificate: %+v %v", c.HTTP, err)
	}
	if c, err := load("[http]\nauth = \"token\"\n"); err != nil || c.OAuth() {
		t.Fatalf("token: %v", err)
	}
	for body, want := range map[string]string{
		"[http]\nauth = \"basic\"\n":                                      "http.auth",
		"[http]\nauth = \"oauth\"\ncert = \"/c.pem\"\n":                   "give both",
		"[http]\nauth = \"token\"\ncert = \"/c.pem\"\nkey = \"/k.pem\"\n": `auth = "oauth"`,
	} {
		if _, err := load(body); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want an error with %q", body, err, want)
		}
	}
}

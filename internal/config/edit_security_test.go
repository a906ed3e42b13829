package config

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// securityFile is a person's file with the sections these edits touch, commented.
const securityFile = `# mine

[tcp]
enabled = true
# require_token = true   (on when the office wifi is shared)

[http]
enabled = true  # for the inspector
token = "kept-in-the-file"

[ml]
influx_url = "http://admin:hunter2@influx.lab:8086"  # the lab's

[web]
allow = ["intranet.example"]  # the wiki

[rag]
backend = "qdrant"
api_key = "literal-key"
`

func TestEditSecurity(t *testing.T) {
	out, err := EditSecurity([]byte(securityFile), SecurityEdit{TCPRequireToken: true, HTTPAllowedOrigins: []string{"http://localhost:6274"}})
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(securityFile, "enabled = true\n# require_token", "enabled = true\nrequire_token = true\n# require_token", 1)
	want = strings.Replace(want, "token = \"kept-in-the-file\"\n", "token = \"kept-in-the-file\"\nallowed_origins = [\"http://localhost:6274\"]\n", 1)
	if string(out) != want {
		t.Fatalf("got:\n%s\nwant:\n%s", out, want)
	}
	cfg := loadText(t, out)
	if !cfg.TCP.RequireToken || len(cfg.HTTP.AllowedOrigins) != 1 {
		t.Fatalf("loaded tcp %+v http %+v", cfg.TCP, cfg.HTTP)
	}
	// Back to the defaults: require_token written false (it is in the file now), the list goes.
	back, err := EditSecurity(out, SecurityEdit{})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(back), "allowed_origins") || !strings.Contains(string(back), "require_token = false\n") {
		t.Fatalf("back:\n%s", back)
	}
	// A file without [tcp]: the default writes nothing.
	if got, err := EditSecurity([]byte("# mine\n"), SecurityEdit{}); err != nil || string(got) != "# mine\n" {
		t.Fatalf("defaults into an empty file: %q %v", got, err)
	}
}

func TestValidateOrigins(t *testing.T) {
	for _, ok := range [][]string{nil, {"http://localhost:6274"}, {"https://app.example.com", "http://127.0.0.1:8080", "vscode-webview://abc"}} {
		if err := ValidateOrigins(ok); err != nil {
			t.Errorf("%q refused: %v", ok, err)
		}
	}
	for _, c := range []struct {
		list []string
		want string
	}{
		{[]string{"*"}, `http.allowed_origins[1]: "*": wildcards are not allowed`},
		{[]string{"http://localhost:6274", "https://*.example.com"}, `http.allowed_origins[2]: "https://*.example.com": wildcards`},
		{[]string{"null"}, `http.allowed_origins[1]: "null" is what sandboxed frames`},
		{[]string{"localhost:6274"}, `http.allowed_origins[1]: "localhost:6274" is not an origin`},
		{[]string{"http://localhost:6274/"}, `has a path; an origin is only scheme://host[:port]: write "http://localhost:6274"`},
		{[]string{"http://localhost:6274/app"}, `has a path`},
		{[]string{"HTTP://Localhost:6274"}, `browsers send origins in lower case, so this would never match; write "http://localhost:6274"`},
		{[]string{"http://user@localhost"}, `is not an origin`},
		{[]string{""}, `http.allowed_origins[1]: empty`},
		{[]string{"http://a.example", "http://a.example"}, `http.allowed_origins[2]: "http://a.example" is also entry 1`},
	} {
		err := ValidateOrigins(c.list)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: err = %v, want %q", c.list, err, c.want)
		}
		if _, err := EditSecurity([]byte(securityFile), SecurityEdit{HTTPAllowedOrigins: c.list}); err == nil {
			t.Errorf("%q: EditSecurity wrote it", c.list)
		}
	}
}

func TestEditToken(t *testing.T) {
	out, err := EditToken([]byte(securityFile), "http", "new-token")
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.Replace(securityFile, `token = "kept-in-the-file"`, `token = "new-token"`, 1); string(out) != want {
		t.Fatalf("got:\n%s", out)
	}
	if _, err := EditToken([]byte(securityFile), "unix", "x"); err == nil {
		t.Fatal("a unix token was written")
	}
}

func TestEditWeb(t *testing.T) {
	out, err := EditWeb([]byte(securityFile), WebEdit{Allow: []string{"intranet.example", "10.0.0.0/8", "build.lan:8080"}, Timeout: "90s"})
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.Replace(securityFile, `allow = ["intranet.example"]  # the wiki`, `allow = ["intranet.example", "10.0.0.0/8", "build.lan:8080"]  # the wiki`+"\ntimeout = \"90s\"", 1); string(out) != want {
		t.Fatalf("got:\n%s\nwant:\n%s", out, want)
	}
	cfg := loadText(t, out)
	if len(cfg.Web.Allow) != 3 || cfg.Web.Timeout.Duration != 90*time.Second {
		t.Fatalf("loaded web %+v", cfg.Web)
	}
	back, err := EditWeb(out, WebEdit{})
	if err != nil || strings.Contains(string(back), "allow =") || strings.Contains(string(back), "timeout") {
		t.Fatalf("emptied: %v\n%s", err, back)
	}
	for _, c := range []struct {
		e    WebEdit
		want string
	}{
		{WebEdit{Allow: []string{"a.example", "http://b.example/"}}, "web.allow[2]: \"http://b.example/\" is a URL; write the host alone, such as \"b.example\""},
		{WebEdit{Allow: []string{"a.example:99999"}}, "web.allow[1]: allow entry \"a.example:99999\": port"},
		{WebEdit{Allow: []string{" "}}, "web.allow[1]: empty"},
		{WebEdit{Allow: []string{"a.example", "a.example"}}, "web.allow[2]: \"a.example\" is also entry 1"},
		{WebEdit{Timeout: "soon"}, `web.timeout: "soon" is not a duration`},
		{WebEdit{Timeout: "1h"}, "web.timeout: 1h0m0s is out of range; choose from 1s to 10m0s"},
	} {
		if _, err := EditWeb([]byte(securityFile), c.e); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: err = %v, want %q", c.e, err, c.want)
		}
	}
}

func TestEditMLInflux(t *testing.T) {
	t.Setenv("OPENAI_BASE_URL", "")
	t.Setenv("OPENAI_API_KEY", "")
	out, err := EditML([]byte(securityFile), MLEdit{InfluxURL: "http://127.0.0.1:8086", InfluxDB: "training"})
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.Replace(securityFile, `influx_url = "http://admin:hunter2@influx.lab:8086"  # the lab's`, `influx_url = "http://127.0.0.1:8086"  # the lab's`+"\ninflux_db = \"training\"", 1); string(out) != want {
		t.Fatalf("got:\n%s\nwant:\n%s", out, want)
	}
	// Kept: the form sent back the redacted URL; the password stays in the file, unshown.
	kept, err := EditMLKeepingInfluxURL([]byte(securityFile), MLEdit{InfluxURL: RedactURL("http://admin:hunter2@influx.lab:8086"), InfluxDB: "lem"})
	if err != nil || !strings.Contains(string(kept), `influx_url = "http://admin:hunter2@influx.lab:8086"  # the lab's`+"\ninflux_db = \"lem\"") {
		t.Fatalf("kept: %v\n%s", err, kept)
	}
	if got := RedactURL("http://admin:hunter2@influx.lab:8086"); strings.Contains(got, "hunter2") || !strings.Contains(got, "admin:") {
		t.Fatalf("RedactURL = %q", got)
	}
	for _, c := range []struct {
		e    MLEdit
		want string
	}{
		{MLEdit{InfluxURL: "influx.lab:8086"}, `ml.influx_url: "influx.lab:8086" is not an http(s) URL`},
		{MLEdit{InfluxURL: "http://u:secret@influx.lab:8086"}, `ml.influx_url: "http://u:xxxxx@influx.lab:8086" holds a password`},
		{MLEdit{InfluxDB: `le"m`}, `ml.influx_db: "le\"m" contains quotes`},
		{MLEdit{InfluxDB: " lem"}, `ml.influx_db: " lem" has spaces around it`},
	} {
		_, err := EditML([]byte(securityFile), c.e)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: err = %v, want %q", c.e, err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), "secret@") {
			t.Errorf("the error shows the password: %v", err)
		}
	}
}

func TestRAGAPIKeyRefs(t *testing.T) {
	for v, want := range map[string][2]string{
		"${secret:rag-api-key}": {"secret", "rag-api-key"},
		"${QDRANT_API_KEY}":     {"env", "QDRANT_API_KEY"},
	} {
		kind, name, ok := KeyRef(v)
		if !ok || kind != want[0] || name != want[1] {
			t.Errorf("KeyRef(%q) = %q %q %v", v, kind, name, ok)
		}
		out, err := EditRAGAPIKey([]byte(securityFile), v)
		if err != nil || !strings.Contains(string(out), "api_key = \""+v+"\"\n") || strings.Contains(string(out), "literal-key") {
			t.Fatalf("EditRAGAPIKey(%q): %v\n%s", v, err, out)
		}
	}
	for _, v := range []string{"literal-key", "Bearer ${TOKEN}", "${secret:}", "${secret:bad name}", "${1X}", "$TOKEN"} {
		if _, _, ok := KeyRef(v); ok {
			t.Errorf("KeyRef(%q) took it", v)
		}
		err := ValidateKeyRef(v)
		if err == nil || !strings.HasPrefix(err.Error(), "rag.api_key: ") {
			t.Errorf("ValidateKeyRef(%q) = %v", v, err)
		}
		if _, err := EditRAGAPIKey([]byte(securityFile), v); err == nil {
			t.Errorf("EditRAGAPIKey(%q) wrote it", v)
		}
	}
	out, err := EditRAGAPIKey([]byte(securityFile), "")
	if err != nil || strings.Contains(string(out), "api_key") {
		t.Fatalf("removed: %v\n%s", err, out)
	}
}

// TestSecretsRedacted: every literal secret the file holds is found, references and short values
// are not, and Redact hides them in a diff.
func TestSecretsRedacted(t *testing.T) {
	file := securityFile + `
[hub]
token = "hub-token-123"

[[servers]]
name = "gh"
command = "npx"
env = { GITHUB_TOKEN = "ghp_literal", DEBUG = "1", API_KEY = "${secret:x}" }
headers = { Authorization = "Bearer remote-tok" }
`
	got := Secrets([]byte(file))
	for _, want := range []string{"kept-in-the-file", "hunter2", "literal-key", "hub-token-123", "ghp_literal", "Bearer remote-tok", "remote-tok"} {
		if !slices.Contains(got, want) {
			t.Errorf("Secrets misses %q: %q", want, got)
		}
	}
	for _, not := range []string{"1", "${secret:x}"} {
		if slices.Contains(got, not) {
			t.Errorf("Secrets lists %q", not)
		}
	}
	diff := " token = \"kept-in-the-file\"\n+influx_url = \"http://admin:hunter2@h:8086\"\n headers = { Authorization = \"Bearer remote-tok\" }\n"
	red := Redact(diff, got...)
	for _, s := range []string{"kept-in-the-file", "hunter2", "remote-tok"} {
		if strings.Contains(red, s) {
			t.Errorf("Redact left %q: %s", s, red)
		}
	}
	if !strings.Contains(red, `token = "(not shown)"`) {
		t.Errorf("Redact: %s", red)
	}
}

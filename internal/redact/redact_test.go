package redact

import (
	"encoding/json"
	"testing"
)

func TestOf(t *testing.T) {
	for key, want := range map[string]Class{
		"path": Shown, "command": Shown, "args": Shown, "max_tokens": Shown, "author": Shown, "key": Shown, "tokenizer": Shown,
		"content": Payload, "old_string": Payload, "stdin": Payload, "data": Payload,
		"script": Private, "prompt": Private, "message": Private, "text": Private,
		"api_key": Secret, "apiKey": Secret, "X-Api-Key": Secret, "password": Secret, "db.password": Secret,
		"token": Secret, "GITHUB_TOKEN": Secret, "access_token": Secret, "client_secret": Secret, "secret": Secret,
		"Authorization": Secret, "basic_auth": Secret, "cookie": Secret, "aws_access_key": Secret, "private_key": Secret,
	} {
		if got := Of(key); got != want {
			t.Errorf("Of(%q) = %d, want %d", key, got, want)
		}
	}
}

func TestNested(t *testing.T) {
	for _, c := range []struct{ key, in, want string }{
		{"path", `"a.txt"`, `"a.txt"`},
		{"args", `["-l", "x"]`, `["-l", "x"]`}, // nothing to hide: returned as sent
		{"env", `["HOME=/h","GITHUB_TOKEN=ghp_1","PLAIN"]`, `["HOME=/h","GITHUB_TOKEN=<redacted>","PLAIN"]`},
		{"env", `{"API_KEY":"sk-1","LANG":"C"}`, `{"API_KEY":"<redacted>","LANG":"C"}`},
		{"headers", `{"Authorization":"Bearer x","Accept":"*/*"}`, `{"Accept":"*/*","Authorization":"<redacted>"}`},
		{"config", `{"db":{"user":"u","password":"p","port":5432.50}}`, `{"db":{"password":"<redacted>","port":5432.50,"user":"u"}}`},
		{"items", `[{"token":"t"},{"n":1}]`, `[{"token":"<redacted>"},{"n":1}]`},
		{"args", `["TOKEN=x"]`, `["TOKEN=x"]`}, // only environment keys hold assignments
		{"config", `{"broken"`, `{"broken"`},
	} {
		if got := string(Nested(c.key, json.RawMessage(c.in))); got != c.want {
			t.Errorf("Nested(%s, %s) = %s, want %s", c.key, c.in, got, c.want)
		}
	}
}

// Of runs for every argument of every call: it allocates nothing.
func TestOfAllocatesNothing(t *testing.T) {
	if n := testing.AllocsPerRun(100, func() { _ = Of("some_argument_name"); _ = Of("GITHUB_TOKEN") }); n != 0 {
		t.Errorf("Of allocates %.0f times", n)
	}
}

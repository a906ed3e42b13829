package mcp

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/switchboard-hub/switchboard/internal/fetch"
	"github.com/switchboard-hub/switchboard/mcp/tools"
)

func TestWebFetch(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<html><body><h2>Docs</h2><p>Use <code>go test</code>.</p></body></html>")
	}))
	defer srv.Close()
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "INTERNAL") }))
	defer other.Close()
	f, err := fetch.New(fetch.Options{Allow: []string{strings.TrimPrefix(srv.URL, "http://")}})
	if err != nil {
		t.Fatal(err)
	}
	s := newTestService(t, WithWebFetch(f))
	cs := connect(t, s)
	var out tools.WebFetchOutput
	mustCall(t, cs, "web_fetch", map[string]any{"url": srv.URL + "/x"}, &out)
	if out.Status != 200 || out.FinalURL != srv.URL+"/x" || !strings.Contains(out.Content, "## Docs") || !strings.Contains(out.Content, "`go test`") {
		t.Fatalf("web_fetch = %+v", out)
	}
	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"url": other.URL}, "url: host 127.0.0.1 is loopback; refused (SSRF protection)"},
		{map[string]any{"url": strings.Replace(other.URL, "127.0.0.1", "localhost", 1)}, "url: refused to connect to 127.0.0.1"},
		{map[string]any{"url": "http://169.254.169.254/latest/meta-data/"}, "url: host 169.254.169.254 is link-local"},
		{map[string]any{"url": "http://0x7f000001/"}, "url: host \"0x7f000001\" is an IP address in a non-standard spelling"},
		{map[string]any{"url": "file:///etc/passwd"}, "url: scheme \"file\" is not allowed"},
		{map[string]any{"url": srv.URL, "format": "html"}, "format: "},
	} {
		if e := call(t, cs, "web_fetch", tc.args, nil); !strings.HasPrefix(e, tc.want) {
			t.Errorf("%v: error %q, want prefix %q", tc.args, e, tc.want)
		}
	}
	for _, tl := range s.Tools() {
		if tl.Name == "web_fetch" && (tl.Annotations.OpenWorldHint == nil || !*tl.Annotations.OpenWorldHint || !tl.Annotations.ReadOnlyHint) {
			t.Errorf("web_fetch annotations = %+v; want read-only and open-world", tl.Annotations)
		}
	}
}

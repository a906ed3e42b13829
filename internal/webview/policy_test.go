package webview

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-hub/switchboard/internal/workspace"
)

func TestCheckURL(t *testing.T) {
	dir := t.TempDir()
	ws, err := workspace.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	dir = ws.Dir()
	if err := os.WriteFile(filepath.Join(dir, "a b.html"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()
	_ = os.WriteFile(filepath.Join(outside, "s.html"), []byte("x"), 0o644)
	_ = os.Symlink(filepath.Join(outside, "s.html"), filepath.Join(dir, "link.html"))

	allowed := map[string]string{
		"http://127.0.0.1:8080/x?y=1#z":        "http://127.0.0.1:8080/x?y=1#z",
		"HTTPS://Example.org/":                 "https://Example.org/",
		"about:blank":                          "about:blank",
		" about:blank ":                        "about:blank",
		"file://" + dir + "/a%20b.html#top":    "file://" + dir + "/a%20b.html#top",
		"file://localhost" + dir + "/a b.html": "file://" + dir + "/a%20b.html",
	}
	for in, want := range allowed {
		got, err := CheckURL("url", in, ws.Resolve)
		if err != nil || got != want {
			t.Errorf("CheckURL(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	refused := []string{
		"", "javascript:alert(1)", "jAvAsCrIpT:alert(1)", "data:text/html,x", "chrome://version", "chrome-untrusted://x",
		"view-source:http://x/", "blob:http://x/uuid", "filesystem:http://x/temporary/a", "ftp://x/", "ws://x/",
		"about:config", "about:blank?x", "http:///nohost", "//host/path", "relative/path",
		"file://" + outside + "/s.html", "file://" + dir + "/link.html", "file://" + dir + "/../" + filepath.Base(outside) + "/s.html",
		"file://" + dir + "/missing.html", "file://evil.example/etc/passwd", "file:relative", "http://x/\nGET",
	}
	for _, in := range refused {
		got, err := CheckURL("url", in, ws.Resolve)
		if err == nil || !strings.HasPrefix(err.Error(), "url: ") {
			t.Errorf("CheckURL(%q) = %q, %v; want a url: error", in, got, err)
		}
	}
	if _, err := CheckURL("url", "file://"+dir+"/a%20b.html", nil); err == nil {
		t.Error("file URL allowed without a workspace")
	}
	if _, err := CheckURL("url", "file://"+outside+"/s.html", ws.Resolve); !errors.Is(err, workspace.ErrOutside) && !strings.Contains(err.Error(), "not inside the workspace") {
		t.Errorf("outside: %v", err)
	}
}

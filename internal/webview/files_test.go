package webview

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-hub/switchboard/internal/workspace"
)

// What the file guard serves: files under an allowed root, symlinks that stay inside, listings;
// never a path outside, through a symlink, "..", or another host.
func TestReadLocal(t *testing.T) {
	ws, err := workspace.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	dir := ws.Dir()
	outside := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("secret"), 0o644))
	must(os.MkdirAll(filepath.Join(dir, "d"), 0o755))
	must(os.WriteFile(filepath.Join(dir, "d", "page.html"), []byte("<p>hi</p>"), 0o644))
	must(os.WriteFile(filepath.Join(dir, "<b>.txt"), []byte("plain"), 0o644))
	must(os.Symlink(filepath.Join(dir, "d", "page.html"), filepath.Join(dir, "in.html")))
	must(os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(dir, "out.txt")))
	must(os.Symlink(outside, filepath.Join(dir, "outdir")))

	w := New(Options{})
	if _, _, err := w.readLocal("file://" + dir + "/d/page.html"); !errors.Is(err, ErrFileOutside) {
		t.Fatalf("served without an allowed root: %v", err)
	}
	w.AllowFiles(ws)
	w.AllowFiles(ws) // once is enough
	if len(w.fileRoots) != 1 {
		t.Fatalf("roots: %d", len(w.fileRoots))
	}
	for u, want := range map[string]string{
		"file://" + dir + "/d/page.html":          "text/html <p>hi</p>",
		"file://localhost" + dir + "/in.html":     "text/html <p>hi</p>",
		"file://" + dir + "/d/../d/page.html?x=1": "text/html <p>hi</p>",
	} {
		body, ctype, err := w.readLocal(u)
		if err != nil || ctype+" "+string(body) != want {
			t.Errorf("%s: %q %q %v; want %q", u, ctype, body, err, want)
		}
	}
	body, ctype, err := w.readLocal("file://" + dir + "/")
	if err != nil || ctype != "text/html" || !strings.Contains(string(body), `<a href="file://`+dir+`/%3Cb%3E.txt">&lt;b&gt;.txt</a>`) ||
		!strings.Contains(string(body), `<a href="file://`+dir+`/d/">d/</a>`) {
		t.Fatalf("listing: %v\n%s", err, body)
	}
	for _, u := range []string{
		"file://" + outside + "/secret.txt",
		"file://" + dir + "/out.txt",
		"file://" + dir + "/outdir/secret.txt",
		"file://" + dir + "/../" + filepath.Base(outside) + "/secret.txt",
		"file://" + dir + "/missing",
		"file://" + dir + "-evil/x",
		"file://otherhost" + dir + "/d/page.html",
		"file:relative",
	} {
		if body, _, err := w.readLocal(u); err == nil || strings.Contains(string(body), "secret") {
			t.Errorf("%s served: %q %v", u, body, err)
		}
	}
}

package fetch

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"
)

// TestSSRFRefused: addresses that must never be fetched without an allow-list entry, in every
// spelling. None of these connect anywhere: literals are refused before dialing, names at the
// dialed address.
func TestSSRFRefused(t *testing.T) {
	f, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	// A listener on loopback proves the refusal is ours, not a closed port.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nLEAKED"))
			c.Close()
		}
	}()
	p := fmt.Sprint(port)
	cases := []struct{ url, why string }{
		{"http://127.0.0.1:" + p + "/", "loopback"},
		{"http://127.0.0.2:" + p + "/", "loopback"},
		{"http://localhost:" + p + "/", "loopback"}, // a name: refused at the dialed address
		{"http://LocalHost:" + p + "/", "loopback"},
		{"http://[::1]:" + p + "/", "loopback"},
		{"http://0.0.0.0:" + p + "/", "unspecified"},
		{"http://[::]:" + p + "/", "unspecified"},
		{"http://10.0.0.1/", "private"},
		{"http://172.16.5.4/", "private"},
		{"http://192.168.1.1/", "private"},
		{"http://[fd00::1]/", "private"},
		{"http://169.254.169.254/latest/meta-data/", "link-local"},
		{"http://[fe80::1]/", "link-local"},
		{"http://100.64.0.1/", "carrier-grade NAT"},
		{"http://224.0.0.1/", "multicast"},
		{"http://[ff02::1]/", "multicast"},
		{"http://255.255.255.255/", "broadcast"},
		{"http://[::ffff:127.0.0.1]:" + p + "/", "IPv4-mapped"},
		{"http://[::ffff:7f00:1]:" + p + "/", "IPv4-mapped"},
		{"http://[::ffff:169.254.169.254]/", "IPv4-mapped"},
		{"http://[::127.0.0.1]/", "IPv4-compatible"},
		{"http://[64:ff9b::7f00:1]/", "NAT64"},
		{"http://[2002:7f00:1::1]/", "6to4"},
		{"http://2130706433:" + p + "/", "non-standard spelling"},
		{"http://0x7f000001:" + p + "/", "non-standard spelling"},
		{"http://0177.0.0.1:" + p + "/", "non-standard spelling"},
		{"http://0x7f.0.0.1:" + p + "/", "non-standard spelling"},
		{"http://127.1:" + p + "/", "non-standard spelling"},
		{"http://017700000001:" + p + "/", "non-standard spelling"},
		{"http://169.254.43518/", "non-standard spelling"},
		{"file:///etc/passwd", "scheme"},
		{"gopher://127.0.0.1:" + p + "/", "scheme"},
		{"ftp://example.com/", "scheme"},
		{"http://user:pw@example.com/", "credentials"},
		{"http://[fe80::1%25eth0]/", "zone"},
	}
	if len(cases) < 20 {
		t.Fatal("the table must hold at least 20 addresses")
	}
	for _, tc := range cases {
		t.Run(tc.url, func(t *testing.T) {
			res, err := f.Fetch(context.Background(), tc.url, 0, "raw")
			if err == nil {
				t.Fatalf("fetched %q: %+v", tc.url, res)
			}
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Field != "url" {
				t.Fatalf("error does not name url: %v", err)
			}
			if !strings.Contains(err.Error(), tc.why) {
				t.Errorf("error %q does not say %q", err, tc.why)
			}
		})
	}
}

func TestBlockedReasonPublic(t *testing.T) {
	for _, s := range []string{"93.184.216.34", "8.8.8.8", "2606:4700:4700::1111", "1.1.1.1"} {
		if r := BlockedReason(netip.MustParseAddr(s)); r != "" {
			t.Errorf("%s blocked: %s", s, r)
		}
	}
}

func serve(t *testing.T, h http.HandlerFunc) (*httptest.Server, string) {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv, strings.TrimPrefix(srv.URL, "http://")
}

// Local servers are reachable only through the allow-list, by host:port, IP or CIDR.
func TestAllowListAndContent(t *testing.T) {
	page := `<!doctype html><html><head><title>T</title><style>body{color:red}</style><script>var secret=1</script></head>
<body><h1>Hello</h1><p>Some <b>bold</b> text and a <a href="/next">link</a>.</p><ul><li>one</li><li>two</li></ul>
<table><tr><th>city</th><th>people</th></tr><tr><td>Oslo</td><td>709000</td></tr></table></body></html>`
	srv, hostport := serve(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/page":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, page)
		case "/big":
			w.Header().Set("Content-Type", "text/plain")
			fmt.Fprint(w, strings.Repeat("é", 1000))
		case "/latin1":
			w.Header().Set("Content-Type", "text/plain; charset=iso-8859-1")
			w.Write([]byte("caf\xe9"))
		case "/png":
			w.Header().Set("Content-Type", "image/png")
			w.Write([]byte("\x89PNG\r\n\x1a\n\x00\x00"))
		case "/loop":
			http.Redirect(w, r, "/loop", http.StatusFound)
		case "/hop":
			http.Redirect(w, r, "/page", http.StatusMovedPermanently)
		default:
			http.NotFound(w, r)
		}
	})
	_ = srv
	// Not allowed: refused.
	f, _ := New(Options{})
	if _, err := f.Fetch(context.Background(), "http://"+hostport+"/page", 0, ""); err == nil || !strings.Contains(err.Error(), "loopback") {
		t.Fatalf("loopback server reached without allow-list: %v", err)
	}
	for _, allow := range []string{hostport, "127.0.0.1", "127.0.0.0/8"} {
		f, err := New(Options{Allow: []string{allow}})
		if err != nil {
			t.Fatal(err)
		}
		res, err := f.Fetch(context.Background(), "http://"+hostport+"/hop", 0, "")
		if err != nil {
			t.Fatalf("allow %s: %v", allow, err)
		}
		if res.Status != 200 || !strings.HasSuffix(res.FinalURL, "/page") || !strings.Contains(res.Content, "# Hello") ||
			!strings.Contains(res.Content, "**bold**") || !strings.Contains(res.Content, "[link](http://"+hostport+"/next)") ||
			strings.Contains(res.Content, "secret") || strings.Contains(res.Content, "color:red") ||
			!strings.Contains(res.Content, "| Oslo") || !strings.Contains(res.Content, "| city") {
			t.Errorf("allow %s: markdown = %+v", allow, res)
		}
	}
	f, _ = New(Options{Allow: []string{hostport}})
	res, err := f.Fetch(context.Background(), "http://"+hostport+"/page", 0, "text")
	if err != nil || !strings.Contains(res.Content, "Hello") || strings.Contains(res.Content, "<") || strings.Contains(res.Content, "secret") {
		t.Errorf("text = %q %v", res.Content, err)
	}
	res, _ = f.Fetch(context.Background(), "http://"+hostport+"/page", 0, "raw")
	if !strings.HasPrefix(res.Content, "<!doctype html>") || res.ContentType != "text/html; charset=utf-8" {
		t.Errorf("raw = %+v", res)
	}
	res, _ = f.Fetch(context.Background(), "http://"+hostport+"/big", 101, "")
	if !res.Truncated || len(res.Content) > 101 || !strings.HasPrefix(res.Content, "éé") || strings.ContainsRune(res.Content, '\uFFFD') {
		t.Errorf("truncated = %+v (%d bytes)", res.Truncated, len(res.Content))
	}
	res, _ = f.Fetch(context.Background(), "http://"+hostport+"/latin1", 0, "")
	if res.Content != "café" {
		t.Errorf("charset: %q", res.Content)
	}
	res, err = f.Fetch(context.Background(), "http://"+hostport+"/missing", 0, "")
	if err != nil || res.Status != 404 {
		t.Errorf("404 = %+v %v", res, err)
	}
	for _, tc := range []struct {
		url, format string
		max         int
		want        string
	}{
		{"http://" + hostport + "/png", "", 0, "url: the response is image/png, not text"},
		{"http://" + hostport + "/loop", "", 0, "url: more than 5 redirects"},
		{"http://" + hostport + "/page", "pdf", 0, "format: \"pdf\" is not a format"},
		{"http://" + hostport + "/page", "", 1 << 30, "max_bytes: "},
		{"", "", 0, "url: empty"},
		{"::not a url", "", 0, "url: does not parse"},
	} {
		if _, err := f.Fetch(context.Background(), tc.url, tc.max, tc.format); err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.url, err, tc.want)
		}
	}
}

// An allowed server that redirects to a loopback port that is not allowed is refused at the
// redirect.
func TestRedirectToInternalRefused(t *testing.T) {
	_, internal := serve(t, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "INTERNAL") })
	_, public := serve(t, func(w http.ResponseWriter, r *http.Request) {
		target := map[string]string{"/a": "http://" + internal + "/", "/b": "http://localhost:" + strings.Split(internal, ":")[1] + "/",
			"/c": "http://[::ffff:127.0.0.1]:" + strings.Split(internal, ":")[1] + "/", "/d": "file:///etc/passwd"}[r.URL.Path]
		http.Redirect(w, r, target, http.StatusFound)
	})
	f, _ := New(Options{Allow: []string{public}})
	for _, p := range []string{"/a", "/b", "/c", "/d"} {
		res, err := f.Fetch(context.Background(), "http://"+public+p, 0, "raw")
		if err == nil || strings.Contains(res.Content, "INTERNAL") {
			t.Errorf("%s: redirect to internal followed: %+v %v", p, res, err)
		} else if !strings.HasPrefix(err.Error(), "url: ") {
			t.Errorf("%s: %v", p, err)
		}
	}
}

func TestParseAllow(t *testing.T) {
	if _, err := ParseAllow([]string{"example.com", "example.com:8080", "10.0.0.0/8", "127.0.0.1:9000", "[::1]:80", "::1"}); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"http://x", "x:99999", "a b"} {
		if _, err := ParseAllow([]string{bad}); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// TestConfigureWhileRunning: one Fetcher, reconfigured as the Settings view does: a host added to
// the allow-list is reached by the next fetch, removed it is refused again, a shorter timeout
// ends a slow fetch, and a bad entry changes nothing.
func TestConfigureWhileRunning(t *testing.T) {
	_, hostport := serve(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			select { // until the client gives up
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
		}
		fmt.Fprint(w, "hello")
	})
	f, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	get := func(path string) error {
		_, err := f.Fetch(context.Background(), "http://"+hostport+path, 0, "raw")
		return err
	}
	if err := get("/"); err == nil {
		t.Fatal("loopback reached before it was allowed")
	}
	if err := f.Configure([]string{hostport}, 0); err != nil {
		t.Fatal(err)
	}
	if err := get("/"); err != nil {
		t.Fatalf("allowed now, but: %v", err)
	}
	if err := f.Configure([]string{"bad entry/"}, time.Second); err == nil {
		t.Fatal("a bad allow entry was taken")
	}
	if err := get("/"); err != nil {
		t.Fatalf("a refused Configure changed the allow-list: %v", err)
	}
	if err := f.Configure([]string{hostport}, 500*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if err := get("/slow"); err == nil || !strings.Contains(err.Error(), "timed out after 500ms") {
		t.Fatalf("slow fetch with a 500ms timeout: %v", err)
	}
	if err := f.Configure(nil, 0); err != nil {
		t.Fatal(err)
	}
	if err := get("/"); err == nil || !strings.Contains(err.Error(), "loopback") {
		t.Fatalf("removed from the allow-list but reached: %v", err)
	}
}

package webview

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-hub/switchboard/internal/procgroup"
	"github.com/switchboard-hub/switchboard/internal/testutil"
)

const testPage = `<!doctype html><html><head><title>Test page</title></head><body>
<h1>Hello</h1>
<form onsubmit="return false">
<label for="name">Name</label><input id="name" value="ab">
<button id="go" onclick="document.getElementById('out').textContent='clicked '+document.getElementById('name').value; console.log('clicked', 42)">Go</button>
</form>
<a href="/second">Second page</a>
<p id="out"></p>
<ul><li class="item">one</li><li class="item">two</li><li class="item">three</li></ul>
<script>setTimeout(function(){ var d=document.createElement('div'); d.id='late'; document.body.appendChild(d); }, 300);</script>
</body></html>`

func testServer(t *testing.T) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, testPage)
	})
	mux.HandleFunc("/second", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<!doctype html><title>Second</title><button>Other</button><script src="/boom.js"></script>`)
	})
	mux.HandleFunc("/boom.js", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/javascript")
		fmt.Fprint(w, "\n\nthrow new Error('boom from script');\n")
	})
	srv := httptest.NewServer(mux) // binds 127.0.0.1
	t.Cleanup(srv.Close)
	return srv
}

func launched(t *testing.T) (*Webview, LaunchInfo) {
	t.Helper()
	testutil.RequireBrowser(t, FindBrowser)
	w := New(Options{DataDir: t.TempDir(), BrowserPath: os.Getenv("SWITCHBOARD_BROWSER")})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	info, err := w.Launch(ctx, LaunchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w, info
}

// procsWithArg lists live processes whose command line contains arg.
func procsWithArg(arg string) []string {
	var out []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.Contains(string(b), arg) && !procgroup.IsZombie(pid) {
			out = append(out, e.Name())
		}
	}
	return out
}

func TestLaunchDriveAndCloseLeavesNothing(t *testing.T) {
	w, info := launched(t)
	srv := testServer(t)
	ctx := context.Background()
	if len(procgroup.Members(info.PID)) == 0 {
		t.Fatal("no browser processes in the launched group")
	}
	if _, err := os.Stat(info.Profile); err != nil {
		t.Fatalf("profile: %v", err)
	}
	if err := w.Navigate(ctx, srv.URL+"/"); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Wait(ctx, "#go", 5*time.Second, nil); err != nil {
		t.Fatal(err)
	}
	snap, err := w.Snapshot(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`heading "Hello"`, `textbox "Name" [ref=`, `button "Go" [ref=`, `link "Second page" [ref=`} {
		if !strings.Contains(snap.Text, want) {
			t.Fatalf("snapshot lacks %q:\n%s", want, snap.Text)
		}
	}
	ref := testutil.SnapshotRef(t, snap.Text, `textbox "Name"`)
	if err := w.Type(ctx, Target{Ref: ref}, "c!"); err != nil {
		t.Fatal(err)
	}
	if err := w.Click(ctx, Target{Ref: testutil.SnapshotRef(t, snap.Text, `button "Go"`)}); err != nil {
		t.Fatal(err)
	}
	r, err := w.Eval(ctx, "document.getElementById('out').textContent")
	if err != nil || r.Result != "clicked abc!" {
		t.Fatalf("after type+click: %#v %v", r, err)
	}
	// Refs are stable within a document.
	snap2, _ := w.Snapshot(ctx, 0)
	if testutil.SnapshotRef(t, snap2.Text, `button "Go"`) != testutil.SnapshotRef(t, snap.Text, `button "Go"`) {
		t.Fatal("ref changed between snapshots of the same document")
	}
	msgs, _ := w.Console(false)
	if len(msgs) == 0 || msgs[len(msgs)-1].Text != "clicked 42" || msgs[len(msgs)-1].Type != "log" {
		t.Fatalf("console: %+v", msgs)
	}
	els, total, err := w.Query(ctx, "li.item", true)
	if err != nil || total != 3 || len(els) != 3 || els[0].TagName != "li" || els[0].Attributes["class"] != "item" || els[0].BoundingBox == nil {
		t.Fatalf("query all: %+v %d %v", els, total, err)
	}
	els, _, err = w.Query(ctx, "li.item", false)
	if err != nil || len(els) != 1 {
		t.Fatalf("query first: %+v %v", els, err)
	}
	png, err := w.Screenshot(ctx, "png", false)
	if err != nil || len(png) < 8 || string(png[1:4]) != "PNG" {
		t.Fatalf("screenshot: %d bytes %v", len(png), err)
	}
	// Navigation expires refs; the uncaught exception is captured with URL and line.
	if err := w.Click(ctx, Target{Selector: "a"}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Wait(ctx, "button", 5*time.Second, nil); err != nil {
		t.Fatal(err)
	}
	if err := w.Click(ctx, Target{Ref: ref}); err == nil || !strings.HasPrefix(err.Error(), "ref:") {
		t.Fatalf("stale ref: %v", err)
	}
	// Each console message is announced: read the console again on each until the exception.
	consoled := make(chan struct{}, 1)
	stopConsole := w.Subscribe(func(ev Event) {
		if ev.Kind == "console" {
			select {
			case consoled <- struct{}{}:
			default:
			}
		}
	})
	var exc *ConsoleMessage
	found := func() bool {
		msgs, _ = w.Console(false)
		for i := range msgs {
			if msgs[i].Type == "exception" {
				exc = &msgs[i]
			}
		}
		return exc != nil
	}
	for timeout := time.After(testutil.Patience); !found(); {
		select {
		case <-consoled:
		case <-timeout:
			t.Fatalf("no exception in the console: %+v", msgs)
		}
	}
	stopConsole()
	if exc == nil || !strings.Contains(exc.Text, "boom from script") || !strings.HasSuffix(exc.URL, "/boom.js") || exc.Line != 3 {
		t.Fatalf("exception: %+v", exc)
	}
	pid, profile := info.PID, info.Profile
	socketDir := singletonSocketDir(profile)
	if socketDir == "" {
		t.Fatal("the profile has no SingletonSocket link into a Chromium temp dir")
	}
	if !w.Disconnect() {
		t.Fatal("Disconnect: was not connected")
	}
	if left := procgroup.Members(pid); len(left) > 0 {
		t.Fatalf("processes left in the browser's group: %v", left)
	}
	if left := procsWithArg(profile); len(left) > 0 {
		t.Fatalf("processes still using the profile: %v", left)
	}
	if _, err := os.Stat(profile); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("profile not removed: %v", err)
	}
	if _, err := os.Stat(socketDir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Chromium's singleton socket dir %s not removed: %v", socketDir, err)
	}
	if _, err := w.Snapshot(ctx, 0); !errors.Is(err, ErrNotConnected) {
		t.Fatalf("after disconnect: %v", err)
	}
}

func TestConnectToRunningBrowser(t *testing.T) {
	testutil.RequireBrowser(t, FindBrowser)
	path, _ := FindBrowser(os.Getenv("SWITCHBOARD_BROWSER"))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	proc, wsURL, err := startBrowser(ctx, path, t.TempDir(), true)
	if err != nil {
		t.Fatal(err)
	}
	defer proc.close()
	host := strings.Split(strings.TrimPrefix(wsURL, "ws://"), "/")[0]
	w := New(Options{})
	defer w.Close()
	if _, err := w.Connect(ctx, ConnectOptions{DebugURL: "http://" + host, Timeout: 10 * time.Second}); err != nil {
		t.Fatal(err)
	}
	srv := testServer(t)
	if err := w.Navigate(ctx, srv.URL); err != nil {
		t.Fatal(err)
	}
	tabs, err := w.Tabs(ctx)
	if err != nil || len(tabs) != 2 { // the browser's own blank tab and ours
		t.Fatalf("tabs: %+v %v", tabs, err)
	}
	// Disconnect closes our tab and leaves the browser running.
	w.Disconnect()
	if !pidAlive(proc.Pid()) {
		t.Fatal("browser we only connected to was stopped")
	}
	w2 := New(Options{})
	defer w2.Close()
	if _, err := w2.Connect(ctx, ConnectOptions{DebugURL: wsURL}); err != nil {
		t.Fatal(err)
	}
	// Chrome answers CloseTarget before the tab is gone, and tells this new connection nothing
	// when it goes: list again and again.
	testutil.Poll(testutil.Patience, func() bool { tabs, _ = w2.Tabs(ctx); return len(tabs) == 2 })
	if len(tabs) != 2 { // the first connection's tab is gone, this one's is new
		t.Fatalf("tabs after reconnect: %+v", tabs)
	}
	// Unreachable endpoint: clear error naming the field.
	if _, err := w.Connect(ctx, ConnectOptions{DebugURL: "http://127.0.0.1:1", Timeout: 3 * time.Second}); err == nil || !strings.HasPrefix(err.Error(), "debug_url:") {
		t.Fatalf("unreachable: %v", err)
	}
}

func TestFindBrowserConfiguredMissing(t *testing.T) {
	if _, err := FindBrowser("/nonexistent/chrome"); err == nil || !strings.Contains(err.Error(), "[browser] path") {
		t.Fatalf("got %v", err)
	}
	if _, err := exec.LookPath("chromium"); err == nil {
		if p, err := FindBrowser(""); err != nil || p == "" {
			t.Fatalf("FindBrowser: %q %v", p, err)
		}
	}
}

func TestStaleProfilesAreRemoved(t *testing.T) {
	root := t.TempDir()
	stale := filepath.Join(root, "profile-dead")
	live := filepath.Join(root, "profile-live")
	fresh := filepath.Join(root, "profile-fresh")
	for _, d := range []string{stale, live, fresh} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	_ = os.Symlink("host-999999999", filepath.Join(stale, "SingletonLock"))
	// Chromium's socket dir for the stale profile goes with it; a link pointing anywhere else
	// (here: a directory of the test's own) removes nothing.
	socketDir, err := os.MkdirTemp("", "org.chromium.Chromium.")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(socketDir) })
	_ = os.Symlink(filepath.Join(socketDir, "SingletonSocket"), filepath.Join(stale, "SingletonSocket"))
	elsewhere := filepath.Join(t.TempDir(), "org.chromium.Chromium.x")
	if err := os.Mkdir(elsewhere, 0o700); err != nil {
		t.Fatal(err)
	}
	_ = os.Symlink(filepath.Join(elsewhere, "SingletonSocket"), filepath.Join(live, "SingletonSocket"))
	stale2 := filepath.Join(root, "profile-dead2")
	if err := os.Mkdir(stale2, 0o700); err != nil {
		t.Fatal(err)
	}
	_ = os.Symlink(filepath.Join(elsewhere, "SingletonSocket"), filepath.Join(stale2, "SingletonSocket"))
	_ = os.Symlink(fmt.Sprintf("host-%d", os.Getpid()), filepath.Join(live, "SingletonLock"))
	old := time.Now().Add(-time.Hour)
	_ = os.Chtimes(stale, old, old)
	_ = os.Chtimes(stale2, old, old)
	_ = os.Chtimes(live, old, old)
	removeStaleProfiles(root)
	for _, d := range []string{stale, stale2, socketDir} {
		if _, err := os.Stat(d); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("%s kept: %v", d, err)
		}
	}
	if _, err := os.Stat(elsewhere); err != nil {
		t.Fatalf("a directory outside the temp dir was removed through a profile's link: %v", err)
	}
	for _, d := range []string{live, fresh} {
		if _, err := os.Stat(d); err != nil {
			t.Fatalf("%s removed: %v", d, err)
		}
	}
}

// TestTitleParsedAfterNavigationIsAnnounced: Chrome announces a navigation with the address as
// the title ("127.0.0.1:port") and never the <title> the document parses afterwards. A listener
// that reads the title again on every state event (the dashboard's feed) must still get a state
// event once the title is there; before the load events were passed on, the Browser view kept
// showing host:port when the feed read the title before the document had parsed it. The server
// holds the <title> back until the test has read the early title, so the order is certain.
func TestTitleParsedAfterNavigationIsAnnounced(t *testing.T) {
	release := make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<!doctype html><html><head>")
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
		fmt.Fprint(w, "<title>Late title</title></head><body><p>loaded</p></body></html>")
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	t.Cleanup(func() {
		select {
		case <-release:
		default:
			close(release)
		}
	})
	w, _ := launched(t)
	events := make(chan struct{}, 64)
	cancel := w.Subscribe(func(ev Event) {
		if ev.Kind == "state" {
			select {
			case events <- struct{}{}:
			default:
			}
		}
	})
	t.Cleanup(cancel)
	ctx, done := context.WithTimeout(context.Background(), 30*time.Second)
	defer done()
	if err := w.Navigate(ctx, srv.URL+"/"); err != nil { // returns once the document is committed
		t.Fatal(err)
	}
	w.Refresh(ctx)
	if title := w.State().Title; title == "Late title" {
		t.Fatalf("title %q before the server sent it", title)
	}
	for len(events) > 0 { // what the navigation announced is read; only later events count
		<-events
	}
	close(release)
	for {
		select {
		case <-events:
			w.Refresh(ctx)
			if title := w.State().Title; title == "Late title" {
				return
			}
		case <-ctx.Done():
			w.Refresh(context.Background())
			t.Fatalf("no state event announced the parsed title (the browser has %q)", w.State().Title)
		}
	}
}

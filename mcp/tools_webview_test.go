//go:build unix

package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image/png"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/gorilla/websocket"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/internal/procgroup"
	"github.com/switchboard-hub/switchboard/internal/testutil"
	"github.com/switchboard-hub/switchboard/internal/webview"
	"github.com/switchboard-hub/switchboard/internal/webview/fakecdp"
	"github.com/switchboard-hub/switchboard/internal/wshub"
	"github.com/switchboard-hub/switchboard/mcp/tools"
)

func newBrowserService(t *testing.T, opts ...Option) (*Service, *webview.Webview) {
	t.Helper()
	w := webview.New(webview.Options{DataDir: t.TempDir(), BrowserPath: os.Getenv("SWITCHBOARD_BROWSER")})
	return newTestService(t, append([]Option{WithBrowser(w)}, opts...)...), w
}

const webviewPage = `<!doctype html><html><head><title>Form</title></head><body>
<h1>Sign up</h1>
<label for="email">Email</label><input id="email" type="email">
<label><input type="checkbox" id="agree"> I agree</label>
<button id="send" onclick="document.getElementById('status').textContent='sent '+document.getElementById('email').value+' '+document.getElementById('agree').checked; console.warn('sent!')">Send</button>
<p id="status">idle</p>
<div class="row">a</div><div class="row">b</div>
<a id="next" href="/next">Next</a>
<div style="position:relative;height:40px"><button id="hidden-by-overlay">Under</button><div id="overlay" style="position:absolute;inset:0;background:#fff"></div></div>
<script>setTimeout(function(){ var d=document.createElement('p'); d.id='late'; d.textContent='late'; document.body.appendChild(d); }, 400);</script>
</body></html>`

func webviewServer(t *testing.T) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, webviewPage)
	})
	mux.HandleFunc("/next", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<!doctype html><title>Next</title><button>Back</button><script>\nnope();\n</script>")
	})
	srv := httptest.NewServer(mux) // 127.0.0.1
	t.Cleanup(srv.Close)
	return srv
}

var webviewToolNames = []string{"webview_navigate", "webview_click", "webview_type", "webview_query", "webview_console",
	"webview_eval", "webview_screenshot", "webview_wait", "webview_snapshot", "webview_tabs"}

func TestWebviewToolsNeedAConnection(t *testing.T) {
	s, _ := newBrowserService(t)
	cs := connect(t, s)
	args := map[string]map[string]any{
		"webview_navigate": {"url": "http://127.0.0.1:1/"}, "webview_click": {"selector": "a"}, "webview_type": {"selector": "a", "text": "x"},
		"webview_query": {"selector": "a"}, "webview_console": {}, "webview_eval": {"script": "1"}, "webview_screenshot": {},
		"webview_wait": {"selector": "a"}, "webview_snapshot": {}, "webview_tabs": {"action": "list"},
	}
	for _, name := range webviewToolNames {
		e := call(t, cs, name, args[name], nil)
		if !strings.Contains(e, "not connected") || !strings.Contains(e, "webview_launch") || !strings.Contains(e, "webview_connect") {
			t.Errorf("%s without a connection: %q", name, e)
		}
	}
	var out tools.WebviewStatusOutput
	mustCall(t, cs, "webview_disconnect", map[string]any{}, &out)
	if !out.Success || out.Message != "No active connection" {
		t.Fatalf("disconnect without connection: %+v", out)
	}
	mustCall(t, cs, "webview_disconnect", map[string]any{}, &out) // safe twice
	for _, c := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{}, "debug_url: required"},
		{map[string]any{"debug_url": ""}, "debug_url: required"},
		{map[string]any{"debug_url": "http://127.0.0.1:1", "timeout": 3}, "debug_url: "},
		{map[string]any{"debug_url": "ftp://127.0.0.1:1"}, "debug_url: scheme"},
		{map[string]any{"debug_url": "http://127.0.0.1:1", "timeout": 9999}, "timeout: 9999 is out of range"},
	} {
		if e := call(t, cs, "webview_connect", c.args, nil); !strings.HasPrefix(e, c.want) {
			t.Errorf("webview_connect(%v) = %q, want prefix %q", c.args, e, c.want)
		}
	}
}

func TestWebviewAnnotationsAndAudit(t *testing.T) {
	s, _ := newBrowserService(t)
	byName := map[string]*sdk.Tool{}
	for _, tl := range s.Tools() {
		byName[tl.Name] = tl
	}
	for _, name := range append(webviewToolNames, "webview_connect", "webview_disconnect", "webview_launch") {
		tl := byName[name]
		if tl == nil {
			t.Fatalf("%s not registered", name)
		}
		if tl.Annotations == nil || tl.Annotations.OpenWorldHint == nil || !*tl.Annotations.OpenWorldHint {
			t.Errorf("%s: not annotated open-world", name)
		}
	}
	for _, name := range []string{"webview_connect", "webview_eval", "webview_navigate", "webview_click", "webview_type", "webview_launch", "webview_tabs", "webview_disconnect"} {
		if byName[name].Annotations.ReadOnlyHint || !s.toolsets.security[name] {
			t.Errorf("%s must not be read-only (audited at Security level)", name)
		}
	}
}

func TestWebviewToolsEndToEnd(t *testing.T) {
	testutil.RequireBrowser(t, webview.FindBrowser)
	s, _ := newBrowserService(t)
	cs := connect(t, s)
	srv := webviewServer(t)

	var launch tools.WebviewLaunchOutput
	mustCall(t, cs, "webview_launch", map[string]any{"url": srv.URL + "/"}, &launch)
	if !launch.Success || launch.PID <= 0 || !launch.Headless || launch.URL != srv.URL+"/" {
		t.Fatalf("launch: %+v", launch)
	}
	var st tools.WebviewStatusOutput
	mustCall(t, cs, "webview_wait", map[string]any{"selector": "#send"}, &st)
	if !st.Success || !strings.Contains(st.Message, "#send") {
		t.Fatalf("wait: %+v", st)
	}
	// The element added after 400 ms: waiting works.
	mustCall(t, cs, "webview_wait", map[string]any{"selector": "#late", "timeout": 5}, &st)
	// A selector that never matches: error after the timeout.
	start := time.Now()
	if e := call(t, cs, "webview_wait", map[string]any{"selector": "#never", "timeout": 1}, nil); !strings.HasPrefix(e, "timeout: no element matched \"#never\" within 1s") {
		t.Fatalf("wait timeout: %q", e)
	}
	if d := time.Since(start); d < time.Second || d > 5*time.Second {
		t.Fatalf("wait timeout took %s", d)
	}
	if e := call(t, cs, "webview_wait", map[string]any{"selector": "##bad"}, nil); !strings.HasPrefix(e, "selector: \"##bad\" is not a valid CSS selector") {
		t.Fatalf("wait bad selector: %q", e)
	}
	if e := call(t, cs, "webview_wait", map[string]any{"selector": ""}, nil); !strings.HasPrefix(e, "selector: required") {
		t.Fatalf("wait empty selector: %q", e)
	}

	var snap tools.WebviewSnapshotOutput
	mustCall(t, cs, "webview_snapshot", map[string]any{}, &snap)
	if snap.Title != "Form" || snap.URL != srv.URL+"/" || snap.Refs < 4 {
		t.Fatalf("snapshot header: %+v", snap)
	}
	for _, want := range []string{`heading "Sign up" level=1`, `textbox "Email" [ref=`, `checkbox "I agree" [ref=`, `button "Send" [ref=`, `link "Next" [ref=`, `text "idle"`} {
		if !strings.Contains(snap.Snapshot, want) {
			t.Fatalf("snapshot lacks %q:\n%s", want, snap.Snapshot)
		}
	}
	var small tools.WebviewSnapshotOutput
	mustCall(t, cs, "webview_snapshot", map[string]any{"max_chars": 60}, &small)
	if !small.Truncated || len(small.Snapshot) > 60+200 || !strings.Contains(small.Snapshot, "more lines not shown") {
		t.Fatalf("bounded snapshot: %+v", small)
	}
	if e := call(t, cs, "webview_snapshot", map[string]any{"max_chars": -1}, nil); !strings.HasPrefix(e, "max_chars:") {
		t.Fatalf("max_chars -1: %q", e)
	}

	// Type and click through refs, then through selectors.
	var ok tools.WebviewSuccessOutput
	mustCall(t, cs, "webview_type", map[string]any{"ref": testutil.SnapshotRef(t, snap.Snapshot, `textbox "Email"`), "text": "me@"}, &ok)
	mustCall(t, cs, "webview_type", map[string]any{"selector": "#email", "text": "example.org"}, &ok) // appends
	mustCall(t, cs, "webview_click", map[string]any{"ref": testutil.SnapshotRef(t, snap.Snapshot, `checkbox "I agree"`)}, &ok)
	mustCall(t, cs, "webview_click", map[string]any{"selector": "#send"}, &ok)
	var ev tools.WebviewEvalOutput
	mustCall(t, cs, "webview_eval", map[string]any{"script": "document.getElementById('status').textContent"}, &ev)
	if !ev.Success || ev.Result != "sent me@example.org true" {
		t.Fatalf("after typing and clicking: %+v", ev)
	}
	mustCall(t, cs, "webview_snapshot", map[string]any{}, &snap)
	if !strings.Contains(snap.Snapshot, `value="me@example.org"`) || !strings.Contains(snap.Snapshot, "checked") {
		t.Fatalf("snapshot after input lacks value/state:\n%s", snap.Snapshot)
	}
	// Element errors name the field.
	for _, c := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"webview_click", map[string]any{"selector": "#missing"}, `selector: no element matches "#missing"`},
		{"webview_click", map[string]any{"selector": "[["}, `selector: "[[" is not a valid CSS selector`},
		{"webview_click", map[string]any{}, "selector: required"},
		{"webview_click", map[string]any{"ref": "e999"}, `ref: "e999" is not a ref of the current page`},
		{"webview_click", map[string]any{"ref": "e1", "selector": "a"}, "selector: give either selector or ref, not both"},
		{"webview_click", map[string]any{"selector": "#hidden-by-overlay"}, `selector: selector "#hidden-by-overlay" is covered by another element (div#overlay)`},
		{"webview_type", map[string]any{"selector": "#status", "text": "x"}, "selector: selector \"#status\" cannot take keyboard focus"},
		{"webview_type", map[string]any{"selector": "#email"}, "text: required"},
		{"webview_query", map[string]any{"selector": ""}, "selector: required"},
		{"webview_query", map[string]any{"selector": "div..x"}, `selector: "div..x" is not a valid CSS selector`},
		{"webview_eval", map[string]any{"script": " "}, "script: required"},
		{"webview_screenshot", map[string]any{"format": "gif"}, `format: "gif" is not supported`},
	} {
		if e := call(t, cs, c.tool, c.args, nil); !strings.HasPrefix(e, c.want) {
			t.Errorf("%s(%v) = %q, want prefix %q", c.tool, c.args, e, c.want)
		}
	}

	// Eval: values, promises, and JS errors as success=false.
	mustCall(t, cs, "webview_eval", map[string]any{"script": "({a: [1, 2], b: 'x'})"}, &ev)
	if b, _ := json.Marshal(ev.Result); !ev.Success || string(b) != `{"a":[1,2],"b":"x"}` {
		t.Fatalf("eval object: %+v", ev)
	}
	mustCall(t, cs, "webview_eval", map[string]any{"script": "new Promise(r => setTimeout(() => r(7), 50))"}, &ev)
	if !ev.Success || ev.Result != float64(7) {
		t.Fatalf("eval promise: %+v", ev)
	}
	mustCall(t, cs, "webview_eval", map[string]any{"script": "throw new TypeError('bad thing')"}, &ev)
	if ev.Success || !strings.Contains(ev.Error, "TypeError: bad thing") {
		t.Fatalf("eval throw: %+v", ev)
	}
	mustCall(t, cs, "webview_eval", map[string]any{"script": "'x'.repeat(2 << 20)"}, &ev)
	if ev.Success || !strings.Contains(ev.Error, "over the 1024 KiB limit") {
		t.Fatalf("eval huge result: success=%v error=%q", ev.Success, ev.Error)
	}
	ev = tools.WebviewEvalOutput{}
	mustCall(t, cs, "webview_eval", map[string]any{"script": "this is not javascript"}, &ev)
	if ev.Success || !strings.Contains(ev.Error, "SyntaxError") {
		t.Fatalf("eval syntax error: %+v", ev)
	}

	// Query: all=false returns at most one element.
	var q tools.WebviewQueryOutput
	mustCall(t, cs, "webview_query", map[string]any{"selector": "div.row"}, &q)
	if !q.Found || q.Count != 1 || len(q.Elements) != 1 || q.Elements[0].TagName != "div" || q.Elements[0].Attributes["class"] != "row" || q.Elements[0].BoundingBox == nil || q.Elements[0].NodeID == 0 {
		t.Fatalf("query first: %+v", q)
	}
	mustCall(t, cs, "webview_query", map[string]any{"selector": "div.row", "all": true}, &q)
	if !q.Found || q.Count != 2 || len(q.Elements) != 2 {
		t.Fatalf("query all: %+v", q)
	}
	mustCall(t, cs, "webview_query", map[string]any{"selector": "table", "all": true}, &q)
	if q.Found || q.Count != 0 || q.Elements == nil || len(q.Elements) != 0 {
		t.Fatalf("query none: %+v", q)
	}

	// Screenshots: png and jpeg, base64 in data and as image content; full page.
	for _, format := range []string{"png", "jpeg"} {
		res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "webview_screenshot", Arguments: map[string]any{"format": format, "full_page": format == "jpeg"}})
		if err != nil || res.IsError {
			t.Fatalf("screenshot %s: %v %+v", format, err, res)
		}
		var out tools.WebviewScreenshotOutput
		raw, _ := json.Marshal(res.StructuredContent)
		_ = json.Unmarshal(raw, &out)
		data, err := base64.StdEncoding.DecodeString(out.Data)
		if err != nil || !out.Success || out.Format != format {
			t.Fatalf("screenshot %s: %v %+v", format, err, out.Format)
		}
		magic := map[string]string{"png": "\x89PNG", "jpeg": "\xff\xd8\xff"}[format]
		if !strings.HasPrefix(string(data), magic) {
			t.Fatalf("%s screenshot has the wrong magic: %q", format, data[:4])
		}
		var img *sdk.ImageContent
		for _, c := range res.Content {
			if ic, ok := c.(*sdk.ImageContent); ok {
				img = ic
			}
		}
		if img == nil || img.MIMEType != "image/"+format || string(img.Data) != string(data) {
			t.Fatalf("%s screenshot: no matching image content", format)
		}
	}

	// Console: the warn from the click, then clear.
	var con tools.WebviewConsoleOutput
	mustCall(t, cs, "webview_console", map[string]any{}, &con)
	found := false
	for _, m := range con.Messages {
		found = found || (m.Type == "warning" || m.Type == "warn") && m.Text == "sent!" && m.URL == srv.URL+"/" && m.Line > 0
	}
	if !found || con.Count != len(con.Messages) {
		t.Fatalf("console lacks the warning: %+v", con)
	}
	mustCall(t, cs, "webview_console", map[string]any{"clear": true}, &con)
	mustCall(t, cs, "webview_console", map[string]any{}, &con)
	if con.Count != 0 || con.Messages == nil {
		t.Fatalf("console after clear: %+v", con)
	}

	// Navigating by clicking a link: refs expire, the uncaught error is captured with URL and line.
	oldRef := testutil.SnapshotRef(t, snap.Snapshot, `button "Send"`)
	mustCall(t, cs, "webview_click", map[string]any{"ref": testutil.SnapshotRef(t, snap.Snapshot, `link "Next"`)}, &ok)
	mustCall(t, cs, "webview_wait", map[string]any{"selector": "button"}, &st)
	if e := call(t, cs, "webview_click", map[string]any{"ref": oldRef}, nil); !strings.HasPrefix(e, "ref: ") || !strings.Contains(e, "take a new snapshot") {
		t.Fatalf("stale ref after navigation: %q", e)
	}
	deadline := time.Now().Add(5 * time.Second)
	var exc *webview.ConsoleMessage
	for exc == nil && time.Now().Before(deadline) {
		mustCall(t, cs, "webview_console", map[string]any{}, &con)
		for i := range con.Messages {
			if con.Messages[i].Type == "exception" {
				exc = &con.Messages[i]
			}
		}
	}
	if exc == nil || !strings.Contains(exc.Text, "nope is not defined") || exc.URL != srv.URL+"/next" || exc.Line != 2 {
		t.Fatalf("uncaught exception: %+v", exc)
	}

	// Navigate, with the documented output (docs/tools.md).
	var nav tools.WebviewNavigateOutput
	mustCall(t, cs, "webview_navigate", map[string]any{"url": srv.URL + "/?x=1"}, &nav)
	if !nav.Success || nav.URL != srv.URL+"/?x=1" {
		t.Fatalf("navigate: %+v", nav)
	}
	closed := closedPortURL(t)
	if e := call(t, cs, "webview_navigate", map[string]any{"url": closed}, nil); !strings.HasPrefix(e, "url: navigation to "+closed+" failed: net::ERR_CONNECTION_REFUSED") {
		t.Fatalf("navigate refused: %q", e)
	}
	mustCall(t, cs, "webview_navigate", map[string]any{"url": srv.URL + "/?x=1"}, &nav) // off the error page

	// Tabs: list, new, select, close and their errors.
	var tabs tools.WebviewTabsOutput
	mustCall(t, cs, "webview_tabs", map[string]any{"action": "list"}, &tabs)
	if len(tabs.Tabs) != 1 || !tabs.Tabs[0].Active {
		t.Fatalf("tabs: %+v", tabs)
	}
	first := tabs.Tabs[0].ID
	mustCall(t, cs, "webview_tabs", map[string]any{"action": "new", "url": srv.URL + "/next"}, &tabs)
	if len(tabs.Tabs) != 2 {
		t.Fatalf("tabs after new: %+v", tabs)
	}
	var second string
	for _, tb := range tabs.Tabs {
		if tb.Active {
			second = tb.ID
		}
	}
	if second == "" || second == first {
		t.Fatalf("new tab not active: %+v", tabs)
	}
	mustCall(t, cs, "webview_wait", map[string]any{"selector": "button"}, &st)
	mustCall(t, cs, "webview_eval", map[string]any{"script": "location.pathname"}, &ev)
	if ev.Result != "/next" {
		t.Fatalf("tools do not act on the new tab: %+v", ev)
	}
	mustCall(t, cs, "webview_tabs", map[string]any{"action": "select", "id": first}, &tabs)
	ev = tools.WebviewEvalOutput{}
	mustCall(t, cs, "webview_eval", map[string]any{"script": "location.search"}, &ev)
	if ev.Result != "?x=1" {
		t.Fatalf("select did not switch back: %+v", ev)
	}
	mustCall(t, cs, "webview_tabs", map[string]any{"action": "close", "id": first}, &tabs)
	if len(tabs.Tabs) != 1 || tabs.Tabs[0].ID != second || !tabs.Tabs[0].Active {
		t.Fatalf("after closing the active tab: %+v", tabs)
	}
	for _, c := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"action": "close", "id": second}, "id: this is the last tab"},
		{map[string]any{"action": "select", "id": "nope"}, `id: no tab "nope"`},
		{map[string]any{"action": "close"}, "id: required"},
		{map[string]any{"action": "select"}, "id: required"},
		{map[string]any{"action": "open"}, `action: "open" is not one of list, new, select, close`},
		{map[string]any{}, "action: required"},
		{map[string]any{"action": "new", "url": "javascript:alert(1)"}, `url: scheme "javascript:" is not allowed`},
	} {
		if e := call(t, cs, "webview_tabs", c.args, nil); !strings.HasPrefix(e, c.want) {
			t.Errorf("webview_tabs(%v) = %q, want prefix %q", c.args, e, c.want)
		}
	}

	// Disconnect closes the browser: no process of its group is left.
	mustCall(t, cs, "webview_disconnect", map[string]any{}, &st)
	if !st.Success || st.Message != "Disconnected" {
		t.Fatalf("disconnect: %+v", st)
	}
	if left := procgroup.Members(launch.PID); len(left) > 0 {
		t.Fatalf("browser processes left after disconnect: %v", left)
	}
	if e := call(t, cs, "webview_snapshot", map[string]any{}, nil); !strings.Contains(e, "not connected") {
		t.Fatalf("after disconnect: %q", e)
	}
}

// closedPortURL is an http URL on a loopback port nobody listens on.
func closedPortURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr + "/"
}

func TestWebviewNavigationPolicy(t *testing.T) {
	testutil.RequireBrowser(t, webview.FindBrowser)
	s, _ := newBrowserService(t)
	cs := connect(t, s)
	ws := s.Workspace().Dir()
	if err := os.WriteFile(filepath.Join(ws, "page.html"), []byte("<title>Local</title><p>inside</p>"), 0o644); err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret.html"), []byte("<p>secret</p>"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A symlink inside the workspace that leads outside is refused too.
	if err := os.Symlink(filepath.Join(outside, "secret.html"), filepath.Join(ws, "link.html")); err != nil {
		t.Fatal(err)
	}
	refused := map[string]string{
		"javascript:alert(1)":                                             `url: scheme "javascript:" is not allowed`,
		"JavaScript:alert(1)":                                             `url: scheme "javascript:" is not allowed`,
		"data:text/html,<script>alert(1)</script>":                        `url: scheme "data:" is not allowed`,
		"chrome://settings":                                               `url: scheme "chrome:" is not allowed`,
		"view-source:http://127.0.0.1/":                                   `url: scheme "view-source:" is not allowed`,
		"about:config":                                                    "url: only about:blank is allowed",
		"file://" + filepath.Join(outside, "secret.html"):                 "url: file " + filepath.Join(outside, "secret.html") + " is not inside the workspace",
		"file://" + filepath.Join(ws, "link.html"):                        "url: file " + filepath.Join(ws, "link.html") + " is not inside the workspace",
		"file://" + ws + "/../" + filepath.Base(outside) + "/secret.html": "url: file ",
		"file://otherhost/etc/passwd":                                     "url: file URLs on other hosts",
		"/relative/path":                                                  "url: \"/relative/path\" is not an absolute URL",
		"":                                                                "url: required",
	}
	// Refused before any browser exists: launch with a bad url starts nothing.
	if e := call(t, cs, "webview_launch", map[string]any{"url": "javascript:alert(1)"}, nil); !strings.HasPrefix(e, `url: scheme "javascript:" is not allowed`) {
		t.Fatalf("launch with javascript: url = %q", e)
	}
	if s.browser.Connected() {
		t.Fatal("a refused launch url still started a browser")
	}
	var launch tools.WebviewLaunchOutput
	mustCall(t, cs, "webview_launch", map[string]any{}, &launch)
	for u, want := range refused {
		if e := call(t, cs, "webview_navigate", map[string]any{"url": u}, nil); !strings.HasPrefix(e, want) {
			t.Errorf("navigate %q = %q, want prefix %q", u, e, want)
		}
	}
	var ev tools.WebviewEvalOutput
	mustCall(t, cs, "webview_eval", map[string]any{"script": "location.href"}, &ev)
	if ev.Result != "about:blank" {
		t.Fatalf("a refused URL was opened: %v", ev.Result)
	}
	var nav tools.WebviewNavigateOutput
	mustCall(t, cs, "webview_navigate", map[string]any{"url": "file://" + filepath.Join(ws, "page.html")}, &nav)
	mustCall(t, cs, "webview_wait", map[string]any{"selector": "p"}, nil)
	mustCall(t, cs, "webview_eval", map[string]any{"script": "document.querySelector('p').textContent"}, &ev)
	if ev.Result != "inside" {
		t.Fatalf("workspace file: %+v", ev)
	}
	// A page inside the workspace that links out: the page's own navigation is bounced.
	linker := filepath.Join(ws, "linker.html")
	if err := os.WriteFile(linker, []byte(`<a id="out" href="file://`+filepath.Join(outside, "secret.html")+`">out</a>`), 0o644); err != nil {
		t.Fatal(err)
	}
	mustCall(t, cs, "webview_navigate", map[string]any{"url": "file://" + linker}, &nav)
	mustCall(t, cs, "webview_wait", map[string]any{"selector": "#out"}, nil)
	mustCall(t, cs, "webview_console", map[string]any{"clear": true}, nil)
	mustCall(t, cs, "webview_click", map[string]any{"selector": "#out"}, nil)
	// What the page does after the click shows only through the tools: ask again and again.
	var con tools.WebviewConsoleOutput
	if !testutil.Poll(testutil.Patience, func() bool {
		mustCall(t, cs, "webview_console", map[string]any{}, &con)
		return slices.ContainsFunc(con.Messages, func(m webview.ConsoleMessage) bool {
			return strings.Contains(m.Text, "secret.html blocked by the hub")
		})
	}) {
		t.Fatalf("navigation out of the workspace not reported: %+v", con)
	}
	testutil.Poll(testutil.Patience, func() bool {
		mustCall(t, cs, "webview_eval", map[string]any{"script": "location.href"}, &ev)
		return ev.Result == "about:blank"
	})
	if ev.Result != "about:blank" {
		t.Fatalf("the page stayed on %v", ev.Result)
	}
}

func TestWebviewTwoClientsShareOneBrowser(t *testing.T) {
	testutil.RequireBrowser(t, webview.FindBrowser)
	s, _ := newBrowserService(t)
	a, b := connect(t, s), connect(t, s)
	srv := webviewServer(t)
	mustCall(t, a, "webview_launch", map[string]any{"url": srv.URL}, nil)
	mustCall(t, b, "webview_wait", map[string]any{"selector": "#send"}, nil)
	var snap tools.WebviewSnapshotOutput
	mustCall(t, b, "webview_snapshot", map[string]any{}, &snap)
	if snap.Title != "Form" {
		t.Fatalf("client b sees %+v", snap)
	}
	// b types via its ref, a clicks; both see the result.
	mustCall(t, b, "webview_type", map[string]any{"ref": testutil.SnapshotRef(t, snap.Snapshot, `textbox "Email"`), "text": "b@x"}, nil)
	mustCall(t, a, "webview_click", map[string]any{"selector": "#send"}, nil)
	var ev tools.WebviewEvalOutput
	mustCall(t, b, "webview_eval", map[string]any{"script": "document.getElementById('status').textContent"}, &ev)
	if ev.Result != "sent b@x false" {
		t.Fatalf("shared state: %+v", ev)
	}
	// Concurrent calls from both clients are served (the connection is shared, not locked up).
	var wg sync.WaitGroup
	errs := make(chan string, 20)
	for i := 0; i < 10; i++ {
		for _, cs := range []*sdk.ClientSession{a, b} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "webview_eval", Arguments: map[string]any{"script": "1+1"}})
				if err != nil || res.IsError {
					errs <- fmt.Sprint(err, res)
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	// One client disconnects: the other sees the connection is gone.
	mustCall(t, a, "webview_disconnect", map[string]any{}, nil)
	if e := call(t, b, "webview_eval", map[string]any{"script": "1"}, nil); !strings.Contains(e, "not connected") {
		t.Fatalf("b after a disconnected: %q", e)
	}
}

func TestWebviewConnectToRunningBrowser(t *testing.T) {
	testutil.RequireBrowser(t, webview.FindBrowser)
	// A browser started elsewhere (here by a second Webview), reached over its DevTools URL.
	other := webview.New(webview.Options{DataDir: t.TempDir()})
	info, err := other.Launch(context.Background(), webview.LaunchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	host := strings.Split(strings.TrimPrefix(info.Endpoint, "ws://"), "/")[0]
	s, _ := newBrowserService(t)
	cs := connect(t, s)
	var st tools.WebviewStatusOutput
	mustCall(t, cs, "webview_connect", map[string]any{"debug_url": "http://" + host, "timeout": 10}, &st)
	if !st.Success || !strings.Contains(st.Message, host) {
		t.Fatalf("connect: %+v", st)
	}
	srv := webviewServer(t)
	mustCall(t, cs, "webview_navigate", map[string]any{"url": srv.URL}, nil)
	var tabs tools.WebviewTabsOutput
	mustCall(t, cs, "webview_tabs", map[string]any{"action": "list"}, &tabs)
	if len(tabs.Tabs) != 2 {
		t.Fatalf("tabs: %+v", tabs)
	}
	mustCall(t, cs, "webview_disconnect", map[string]any{}, &st)
	// The browser we only connected to keeps running.
	if len(procgroup.Members(info.PID)) == 0 {
		t.Fatal("disconnect stopped a browser it had not launched")
	}
}

func TestWebviewDashboardFeed(t *testing.T) {
	testutil.RequireBrowser(t, webview.FindBrowser)
	h := wshub.New(wshub.Options{})
	s, _ := newBrowserService(t, WithWSHub(h))
	conn := subscribeBrowser(t, h)
	read := func() (string, BrowserFeed) {
		var m struct {
			Type string      `json:"type"`
			Data BrowserFeed `json:"data"`
		}
		_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		if err := conn.ReadJSON(&m); err != nil {
			t.Fatal(err)
		}
		return m.Type, m.Data
	}
	for {
		typ, d := read()
		if typ == wshub.TypeSnapshot {
			if d.State.Connected || d.Screenshot != "" {
				t.Fatalf("snapshot before launch: %+v", d)
			}
			break
		}
	}
	cs := connect(t, s)
	srv := webviewServer(t)
	mustCall(t, cs, "webview_launch", map[string]any{"url": srv.URL}, nil)
	mustCall(t, cs, "webview_wait", map[string]any{"selector": "#send"}, nil)
	mustCall(t, cs, "webview_click", map[string]any{"selector": "#send"}, nil)
	var got BrowserFeed
	sawWarn := false
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		_, d := read()
		for _, m := range d.Console {
			sawWarn = sawWarn || m.Text == "sent!"
		}
		if d.State.Connected && d.State.Title == "Form" && d.Screenshot != "" {
			got = d
			if sawWarn {
				break
			}
		}
	}
	if got.Screenshot == "" || !sawWarn || got.State.URL != srv.URL+"/" {
		t.Fatalf("feed: state %+v, screenshot %d bytes, console warn seen %v", got.State, len(got.Screenshot), sawWarn)
	}
	jpeg, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(got.Screenshot, "data:image/jpeg;base64,"))
	if err != nil || !strings.HasPrefix(string(jpeg), "\xff\xd8\xff") || len(jpeg) > 200<<10 {
		t.Fatalf("feed screenshot: %d bytes, %v", len(jpeg), err)
	}
	mustCall(t, cs, "webview_disconnect", map[string]any{}, nil)
	for {
		_, d := read()
		if !d.State.Connected {
			if d.Screenshot != "" {
				t.Fatal("screenshot kept after disconnect")
			}
			break
		}
	}
}

func TestWebviewHubShutdownClosesLaunchedBrowser(t *testing.T) {
	testutil.RequireBrowser(t, webview.FindBrowser)
	dataDir := t.TempDir()
	w := webview.New(webview.Options{DataDir: dataDir, BrowserPath: os.Getenv("SWITCHBOARD_BROWSER")})
	s, err := New(WithWorkspaceRoot(t.TempDir()), WithBrowser(w))
	if err != nil {
		t.Fatal(err)
	}
	cs := connect(t, s)
	var launch tools.WebviewLaunchOutput
	mustCall(t, cs, "webview_launch", map[string]any{}, &launch)
	profiles, _ := os.ReadDir(filepath.Join(dataDir, "browser"))
	if len(profiles) != 1 || len(procgroup.Members(launch.PID)) == 0 {
		t.Fatalf("after launch: profiles %v, group %v", profiles, procgroup.Members(launch.PID))
	}
	// A second launch replaces the first browser: still one browser, one profile.
	var again tools.WebviewLaunchOutput
	mustCall(t, cs, "webview_launch", map[string]any{}, &again)
	if left := procgroup.Members(launch.PID); len(left) > 0 {
		t.Fatalf("first browser left running after a second launch: %v", left)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if left := procgroup.Members(again.PID); len(left) > 0 {
		t.Fatalf("browser processes left after hub shutdown: %v", left)
	}
	if profiles, _ := os.ReadDir(filepath.Join(dataDir, "browser")); len(profiles) != 0 {
		t.Fatalf("profiles left after hub shutdown: %v", profiles)
	}
}

func TestWebviewWaitReportsProgressAndStopsOnCancel(t *testing.T) {
	testutil.RequireBrowser(t, webview.FindBrowser)
	s, _ := newBrowserService(t)
	var mu sync.Mutex
	var msgs []string
	ct, st := sdk.NewInMemoryTransports()
	ss, err := s.Server().Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	client := sdk.NewClient(&sdk.Implementation{Name: "progress-client", Version: "1"}, &sdk.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
			mu.Lock()
			msgs = append(msgs, req.Params.Message)
			mu.Unlock()
		},
	})
	cs, err := client.Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); ss.Close() })
	mustCall(t, cs, "webview_launch", map[string]any{}, nil)
	// A 5 s wait for an element that never comes reports progress about every 2 s.
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "webview_wait", Arguments: map[string]any{"selector": "#never", "timeout": 5}, Meta: sdk.Meta{"progressToken": "w1"}})
	if err != nil || !res.IsError {
		t.Fatalf("wait: %v %+v", err, res)
	}
	mu.Lock()
	got := append([]string(nil), msgs...)
	mu.Unlock()
	if len(got) < 2 || !strings.Contains(got[0], `waiting for "#never"`) {
		t.Fatalf("progress messages: %q", got)
	}
	// Cancelling the request ends the wait promptly, and the browser keeps serving.
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, _ = cs.CallTool(ctx, &sdk.CallToolParams{Name: "webview_wait", Arguments: map[string]any{"selector": "#never", "timeout": 60}})
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("cancelled wait took %s", d)
	}
	var ev tools.WebviewEvalOutput
	mustCall(t, cs, "webview_eval", map[string]any{"script": "40+2"}, &ev)
	if ev.Result != float64(42) {
		t.Fatalf("after a cancelled wait: %+v", ev)
	}
}

func TestWebviewLaunchErrors(t *testing.T) {
	testutil.RequireBrowser(t, webview.FindBrowser)
	t.Setenv("DISPLAY", "")
	t.Setenv("WAYLAND_DISPLAY", "")
	s, _ := newBrowserService(t)
	cs := connect(t, s)
	if e := call(t, cs, "webview_launch", map[string]any{"headless": false}, nil); !strings.HasPrefix(e, "headless: false needs a display") {
		t.Fatalf("headful without a display: %q", e)
	}
	if e := call(t, cs, "webview_launch", map[string]any{"timeout": 0.5}, nil); !strings.HasPrefix(e, "timeout: want a whole number") {
		t.Fatalf("fractional timeout: %q", e)
	}
	if e := call(t, cs, "webview_launch", map[string]any{"timeout": 601}, nil); !strings.HasPrefix(e, "timeout: 601 is out of range") {
		t.Fatalf("timeout too large: %q", e)
	}
	// A configured browser path that does not exist: the error names the setting to fix.
	w := webview.New(webview.Options{BrowserPath: "/nonexistent/chromium", DataDir: t.TempDir()})
	s2 := newTestService(t, WithBrowser(w))
	if e := call(t, connect(t, s2), "webview_launch", map[string]any{}, nil); !strings.Contains(e, "[browser] path") {
		t.Fatalf("missing browser: %q", e)
	}
}

func TestWebviewBrowserCrashIsReported(t *testing.T) {
	testutil.RequireBrowser(t, webview.FindBrowser)
	s, _ := newBrowserService(t)
	cs := connect(t, s)
	var launch tools.WebviewLaunchOutput
	mustCall(t, cs, "webview_launch", map[string]any{}, &launch)
	if err := procgroup.Signal(launch.PID, syscall.SIGKILL); err != nil { // the browser dies under us
		t.Fatal(err)
	}
	var e string
	testutil.Poll(testutil.Patience, func() bool {
		e = call(t, cs, "webview_eval", map[string]any{"script": "1"}, nil)
		return strings.Contains(e, "connection was lost") || strings.Contains(e, "not connected")
	})
	if !strings.Contains(e, "connection was lost") && !strings.Contains(e, "not connected") {
		t.Fatalf("after the browser died: %q", e)
	}
	// The hub recovers: a new launch works.
	mustCall(t, cs, "webview_launch", map[string]any{}, &launch)
	var ev tools.WebviewEvalOutput
	mustCall(t, cs, "webview_eval", map[string]any{"script": "1+1"}, &ev)
	if ev.Result != float64(2) {
		t.Fatalf("after relaunch: %+v", ev)
	}
}

// TestWebviewFeedLatestFrameForALateViewer: the Browser view opened after the agent's last
// action (nobody subscribed while it happened, so no screenshot was taken) gets the latest frame
// at once: its snapshot asks for one, which follows as an event without any new action.
func TestWebviewFeedLatestFrameForALateViewer(t *testing.T) {
	testutil.RequireBrowser(t, webview.FindBrowser)
	h := wshub.New(wshub.Options{})
	s, _ := newBrowserService(t, WithWSHub(h))
	cs := connect(t, s)
	srv := webviewServer(t)
	mustCall(t, cs, "webview_launch", map[string]any{"url": srv.URL}, nil)
	mustCall(t, cs, "webview_wait", map[string]any{"selector": "#send"}, nil)
	mustCall(t, cs, "webview_screenshot", map[string]any{}, nil)

	conn := subscribeBrowser(t, h)
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		var m struct {
			Type string      `json:"type"`
			Data BrowserFeed `json:"data"`
		}
		_ = conn.SetReadDeadline(deadline)
		if err := conn.ReadJSON(&m); err != nil {
			t.Fatalf("no frame for a viewer who came after the last action: %v", err)
		}
		if m.Data.State.Connected && m.Data.Screenshot != "" {
			return
		}
	}
	t.Fatal("no frame for a viewer who came after the last action")
}

// subscribeBrowser starts h on loopback and subscribes a dashboard's WebSocket to the "browser"
// channel, closed when the test ends.
func subscribeBrowser(t *testing.T, h *wshub.Hub) *websocket.Conn {
	t.Helper()
	addr, _, err := h.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	conn, _, err := (&websocket.Dialer{HandshakeTimeout: 5 * time.Second}).Dial("ws://"+addr+"/ws", http.Header{"Authorization": {"Bearer " + h.Token()}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if err := conn.WriteMessage(websocket.TextMessage, []byte(`{"type":"subscribe","channel":"browser"}`)); err != nil {
		t.Fatal(err)
	}
	return conn
}

func TestBrowserFeedShortensConsoleText(t *testing.T) {
	long := strings.Repeat("é", 2000) // 4000 bytes of two-byte runes
	out := feedConsole([]webview.ConsoleMessage{{Type: "log", Text: long}, {Type: "log", Text: "short"}})
	if len(out) != 2 || out[1].Text != "short" || len(out[0].Text) > browserConsoleText+len("…") || !strings.HasSuffix(out[0].Text, "…") {
		t.Fatalf("feedConsole: %d messages, first %d bytes", len(out), len(out[0].Text))
	}
	if !utf8.ValidString(out[0].Text) {
		t.Fatal("cut inside a rune")
	}
	if b, _ := json.Marshal(feedConsole(nil)); string(b) != "[]" {
		t.Fatalf("no messages encode as %s", b)
	}
}

// A DevTools endpoint that sends Page.frameNavigated with "frame": null (chromedp v0.23.0
// dereferences it on its own goroutine) costs that one connection, not the hub: webview_connect
// fails with the reason, the other tools say why there is no connection, and the hub keeps
// serving (a panic would have ended this test binary).
func TestWebviewConnectHostileEndpoint(t *testing.T) {
	srv, err := fakecdp.Start(fakecdp.Options{Inject: []fakecdp.Inject{{After: "Page.enable",
		Message: `{"method":"Page.frameNavigated","sessionId":"{session}","params":{"frame":null,"type":"Navigation"}}`}}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	s, _ := newBrowserService(t)
	cs := connect(t, s)
	e := call(t, cs, "webview_connect", map[string]any{"debug_url": srv.URL, "timeout": 5}, nil)
	if !strings.HasPrefix(e, "debug_url: ") || !strings.Contains(e, "malformed Page.frameNavigated (params.frame is null but required)") {
		t.Fatalf("webview_connect to a hostile endpoint: %q", e)
	}
	if e := call(t, cs, "webview_eval", map[string]any{"script": "1"}, nil); !strings.Contains(e, "not connected") {
		t.Fatalf("after the refused connection: %q", e)
	}
	// The hub still answers.
	var st tools.WebviewStatusOutput
	mustCall(t, cs, "webview_disconnect", map[string]any{}, &st)
	if !st.Success {
		t.Fatalf("disconnect: %+v", st)
	}
}

// webview_connect only talks to DevTools endpoints, and says nothing about what else listens:
// every address that is not one gets the same error (no status line, no body, no header), a
// redirect is not followed, and the websocket URL an endpoint reports cannot send the dial to
// another host or port.
func TestWebviewConnectIsNoPortOracle(t *testing.T) {
	fake, err := fakecdp.Start(fakecdp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer fake.Close()
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/redirect/json/version":
			http.Redirect(w, r, fake.URL+"/json/version", http.StatusFound)
		case "/json/version": // a "browser" that points the dial at the fake one
			fmt.Fprintf(w, `{"webSocketDebuggerUrl":"ws://%s/devtools/browser/fake"}`, strings.TrimPrefix(fake.URL, "http://"))
		default:
			w.Header().Set("Server", "InternalSecretService/4.2")
			w.WriteHeader(http.StatusTeapot)
			fmt.Fprint(w, "internal banner: secret-token-123")
		}
	}))
	defer other.Close()
	banner := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Server", "InternalSecretService/4.2")
		w.WriteHeader(http.StatusInternalServerError)
		fmt.Fprint(w, "internal banner: secret-token-123")
	}))
	defer banner.Close()
	redirect := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, fake.URL+"/json/version", http.StatusFound)
	}))
	defer redirect.Close()

	s, _ := newBrowserService(t)
	cs := connect(t, s)
	for _, u := range []string{
		banner.URL,       // an HTTP service with an error status and a banner
		redirect.URL,     // redirects to a real (fake) endpoint: not followed
		other.URL,        // reports a websocket URL on another port: the dial stays on this one
		closedPortURL(t), // nothing listens
		"ws://" + strings.TrimPrefix(banner.URL, "http://") + "/devtools/browser/x", // not a websocket
	} {
		want := "debug_url: no Chrome DevTools endpoint at " + u + "; start Chrome with --remote-debugging-port=9222, or call webview_launch to start the hub's own Chromium"
		if e := call(t, cs, "webview_connect", map[string]any{"debug_url": u, "timeout": 5}, nil); e != want {
			t.Errorf("webview_connect %s:\n got %q\nwant %q", u, e, want)
		}
	}
	if n := fake.Hits(); n != 0 {
		t.Fatalf("the endpoint behind a redirect or a reported websocket URL was contacted %d times", n)
	}
	// The fake endpoint itself is a DevTools endpoint: connecting works.
	var st tools.WebviewStatusOutput
	mustCall(t, cs, "webview_connect", map[string]any{"debug_url": fake.URL, "timeout": 5}, &st)
	mustCall(t, cs, "webview_disconnect", map[string]any{}, &st)
}

// fileGuardFixture is a workspace page that reaches for files outside the workspace by every
// route a page has, and the files it reaches for. Outside content is marked: the text
// TOPSECRET and the colour pure red; the workspace's own image is pure blue.
type fileGuardFixture struct {
	ws, outside string
}

const (
	redSVG  = `<svg xmlns="http://www.w3.org/2000/svg" width="300" height="300"><rect width="300" height="300" fill="#ff0000"/></svg>`
	blueSVG = `<svg xmlns="http://www.w3.org/2000/svg" width="100" height="100"><rect width="100" height="100" fill="#0000ff"/></svg>`
)

func newFileGuardFixture(t *testing.T, ws string) fileGuardFixture {
	t.Helper()
	outside := t.TempDir()
	files := map[string]string{
		filepath.Join(outside, "secret.html"): `<title>TOPSECRET-TITLE</title><body style="margin:0;background:#ff0000"><p>TOPSECRET-BODY</p>`,
		filepath.Join(outside, "red.svg"):     redSVG,
		filepath.Join(outside, "s.js"):        `window.LEAK = 'TOPSECRET-JS';`,
		filepath.Join(outside, "s.css"):       `body { background: #ff0000 !important; }`,
		filepath.Join(ws, "blue.svg"):         blueSVG,
		filepath.Join(ws, "routes.html"): `<!doctype html><title>Routes</title><body style="margin:0;background:#fff">
<img id="ok" src="blue.svg" width="100" height="100">
<img id="img" src="file://` + outside + `/red.svg" width="300" height="300">
<img id="linkimg" src="link.svg" width="300" height="300">
<iframe id="frame" src="file://` + outside + `/secret.html" style="width:300px;height:300px;border:0"></iframe>
<iframe id="linkframe" src="link.html" style="width:300px;height:300px;border:0"></iframe>
<link rel="stylesheet" href="file://` + outside + `/s.css">
<script src="file://` + outside + `/s.js"></script>
<p><a id="pop" target="_blank" href="file://` + outside + `/secret.html">popup link</a>
<button id="open" onclick="window.open('file://` + outside + `/secret.html?window-open')">window.open</button></p>
</body>`,
	}
	for p, c := range files {
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Symlinks inside the workspace that lead out of it.
	for link, target := range map[string]string{"link.svg": "red.svg", "link.html": "secret.html"} {
		if err := os.Symlink(filepath.Join(outside, target), filepath.Join(ws, link)); err != nil {
			t.Fatal(err)
		}
	}
	return fileGuardFixture{ws: ws, outside: outside}
}

// screenshotColours counts the pure red and pure blue pixels of the active tab's viewport.
func screenshotColours(t *testing.T, cs *sdk.ClientSession) (red, blue int) {
	t.Helper()
	var shot tools.WebviewScreenshotOutput
	mustCall(t, cs, "webview_screenshot", map[string]any{"format": "png"}, &shot)
	data, err := base64.StdEncoding.DecodeString(shot.Data)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			switch {
			case r>>8 > 240 && g>>8 < 16 && bl>>8 < 16:
				red++
			case r>>8 < 16 && g>>8 < 16 && bl>>8 > 240:
				blue++
			}
		}
	}
	return red, blue
}

// The browser shows nothing from outside the workspace by any route a workspace page has:
// subresources (images, scripts, styles), iframes, symlinks that lead out, popups from a link
// or window.open. The popups cannot be selected, and the tab list hides what they show.
func TestWebviewFileGuardCoversEveryRoute(t *testing.T) {
	testutil.RequireBrowser(t, webview.FindBrowser)
	s, _ := newBrowserService(t)
	cs := connect(t, s)
	fx := newFileGuardFixture(t, s.Workspace().Dir())
	mustCall(t, cs, "webview_launch", map[string]any{"url": "file://" + filepath.Join(fx.ws, "routes.html")}, nil)
	mustCall(t, cs, "webview_wait", map[string]any{"selector": "#open"}, nil)

	// The workspace image is served; every outside load failed.
	var ev tools.WebviewEvalOutput
	probe := `new Promise(r => { const done = () => r({
		ok: document.getElementById('ok').naturalWidth,
		img: document.getElementById('img').naturalWidth,
		linkimg: document.getElementById('linkimg').naturalWidth,
		leak: window.LEAK || null,
		bg: getComputedStyle(document.body).backgroundColor,
	}); document.readyState === 'complete' ? done() : addEventListener('load', done); })`
	mustCall(t, cs, "webview_eval", map[string]any{"script": probe}, &ev)
	got, _ := json.Marshal(ev.Result)
	if string(got) != `{"bg":"rgb(255, 255, 255)","img":0,"leak":null,"linkimg":0,"ok":100}` {
		t.Fatalf("loads from the workspace page: %s", got)
	}
	// Nothing outside is rendered: no red in the viewport (the two images, the two frames and
	// the stylesheet would all paint it), the workspace's blue is.
	if red, blue := screenshotColours(t, cs); red > 0 || blue == 0 {
		t.Fatalf("screenshot: %d red pixels from outside the workspace, %d blue from inside", red, blue)
	}
	var snap tools.WebviewSnapshotOutput
	mustCall(t, cs, "webview_snapshot", map[string]any{}, &snap)
	if strings.Contains(snap.Snapshot, "TOPSECRET") {
		t.Fatalf("snapshot shows outside content:\n%s", snap.Snapshot)
	}

	// Popups: a target=_blank link and window.open, both with a real click.
	mustCall(t, cs, "webview_click", map[string]any{"selector": "#pop"}, nil)
	mustCall(t, cs, "webview_click", map[string]any{"selector": "#open"}, nil)
	var tabs tools.WebviewTabsOutput
	testutil.Poll(15*time.Second, func() bool {
		tabs = tools.WebviewTabsOutput{}
		mustCall(t, cs, "webview_tabs", map[string]any{"action": "list"}, &tabs)
		// both popups have committed (to the error page of the refused load)
		return len(tabs.Tabs) == 3 && tabs.Tabs[0].URL != "" && tabs.Tabs[1].URL != "" && tabs.Tabs[2].URL != ""
	})
	if len(tabs.Tabs) != 3 {
		t.Fatalf("popups did not open: %+v", tabs)
	}
	if b, _ := json.Marshal(tabs); strings.Contains(string(b), "TOPSECRET") || strings.Contains(string(b), fx.outside) {
		t.Fatalf("the tab list shows outside content or paths: %s", b)
	}
	for _, tb := range tabs.Tabs {
		if tb.Active {
			continue
		}
		if tb.URL != "file:///(outside the workspace)" || tb.Title != "" {
			t.Errorf("popup listed as %+v", tb)
		}
		e := call(t, cs, "webview_tabs", map[string]any{"action": "select", "id": tb.ID}, nil)
		if !strings.HasPrefix(e, "id: tab "+tb.ID+" cannot be selected: it shows a local file outside the workspace;") {
			t.Errorf("selecting popup %s: %q", tb.ID, e)
		}
	}
	// The tools still act on the workspace page.
	mustCall(t, cs, "webview_eval", map[string]any{"script": "document.title"}, &ev)
	if ev.Result != "Routes" {
		t.Fatalf("active tab after refused selects: %+v", ev)
	}
	var con tools.WebviewConsoleOutput
	mustCall(t, cs, "webview_console", map[string]any{}, &con)
	blocked := map[string]bool{}
	for _, m := range con.Messages {
		for _, name := range []string{"red.svg", "s.js", "s.css", "secret.html", "link.svg", "link.html"} {
			if strings.Contains(m.Text, name+" blocked by the hub") || strings.Contains(m.Text, name+"?window-open blocked by the hub") {
				blocked[name] = true
			}
		}
	}
	if len(blocked) != 6 {
		t.Fatalf("console reports blocked loads of %v; messages: %+v", blocked, con.Messages)
	}
}

// A workspace directory is listed (the hub serves file:// loads, so it renders the listing), and
// the listing's links stay in the workspace.
func TestWebviewFileGuardServesWorkspaceDirectories(t *testing.T) {
	testutil.RequireBrowser(t, webview.FindBrowser)
	s, _ := newBrowserService(t)
	cs := connect(t, s)
	ws := s.Workspace().Dir()
	if err := os.Mkdir(filepath.Join(ws, "sub dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "sub dir", "a&b.html"), []byte("<title>AB</title><p id=x>in sub</p>"), 0o644); err != nil {
		t.Fatal(err)
	}
	mustCall(t, cs, "webview_launch", map[string]any{"url": "file://" + ws + "/sub%20dir/"}, nil)
	mustCall(t, cs, "webview_wait", map[string]any{"selector": "a"}, nil)
	var ev tools.WebviewEvalOutput
	mustCall(t, cs, "webview_eval", map[string]any{"script": "[...document.querySelectorAll('li a')].map(a => a.textContent + ' ' + a.href).join('|')"}, &ev)
	want := ".. file://" + ws + "/|a&b.html file://" + ws + "/sub%20dir/a&b.html"
	if ev.Result != want {
		t.Fatalf("listing: %q, want %q", ev.Result, want)
	}
	mustCall(t, cs, "webview_click", map[string]any{"selector": "li:nth-child(2) a"}, nil)
	mustCall(t, cs, "webview_wait", map[string]any{"selector": "#x"}, nil)
	mustCall(t, cs, "webview_eval", map[string]any{"script": "document.getElementById('x').textContent"}, &ev)
	if ev.Result != "in sub" {
		t.Fatalf("page from the listing: %+v", ev)
	}
}

// Downloads are denied: a page's download link or a download response writes nothing (a
// launched Chromium would otherwise save into $HOME/Downloads), and pages cannot read the
// browser's own DevTools endpoint (its /json/list shows every tab).
func TestWebviewDownloadsAndDevToolsEndpointAreDenied(t *testing.T) {
	testutil.RequireBrowser(t, webview.FindBrowser)
	home := t.TempDir()
	t.Setenv("HOME", home) // the launched browser's default download directory is $HOME/Downloads
	name := fmt.Sprintf("switchboard-download-%d.txt", time.Now().UnixNano())
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/dl" {
			w.Header().Set("Content-Disposition", "attachment; filename="+name)
			fmt.Fprint(w, "downloaded")
			return
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<a id="attach" href="/dl">attachment</a> <a id="data" download="%s" href="data:text/plain,hello">data</a>`, name)
	}))
	defer srv.Close()
	s, w := newBrowserService(t)
	cs := connect(t, s)
	mustCall(t, cs, "webview_launch", map[string]any{"url": srv.URL + "/"}, nil)
	mustCall(t, cs, "webview_wait", map[string]any{"selector": "#data"}, nil)
	mustCall(t, cs, "webview_click", map[string]any{"selector": "#attach"}, nil)
	mustCall(t, cs, "webview_click", map[string]any{"selector": "#data"}, nil)
	_ = call(t, cs, "webview_navigate", map[string]any{"url": srv.URL + "/dl"}, nil) // a download, not a document
	// A refused download leaves no trace to wait for, so this waits on purpose: 2 s is long
	// enough for Chrome to have saved the few bytes had it been allowed to.
	time.Sleep(2 * time.Second)
	cwd, _ := os.Getwd()
	for _, dir := range []string{home, s.Workspace().Dir(), cwd} {
		_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err == nil && strings.HasPrefix(d.Name(), strings.TrimSuffix(name, ".txt")) {
				t.Errorf("downloaded: %s", p)
			}
			return nil
		})
	}

	endpoint := w.State().Endpoint
	port := endpoint[strings.LastIndexByte(endpoint[:strings.Index(endpoint, "/devtools/")], ':')+1 : strings.Index(endpoint, "/devtools/")]
	for _, u := range []string{"http://127.0.0.1:" + port + "/json/list", "http://localhost:" + port + "/json/version"} {
		_ = call(t, cs, "webview_navigate", map[string]any{"url": u}, nil)
		var ev tools.WebviewEvalOutput
		mustCall(t, cs, "webview_eval", map[string]any{"script": "document.documentElement.innerText"}, &ev)
		if text, _ := ev.Result.(string); strings.Contains(text, "webSocketDebuggerUrl") || strings.Contains(text, "devtools") {
			t.Fatalf("a page read the DevTools endpoint %s: %q", u, text)
		}
	}
}

// In a browser the hub only connects to, tabs that were open before it came cannot be vouched
// for: one on a file outside the workspace is listed without its title or path and refused, and
// one on a workspace file is refused too (what it loaded was not served by the hub).
func TestWebviewConnectedBrowserKeepsItsOwnFileTabs(t *testing.T) {
	testutil.RequireBrowser(t, webview.FindBrowser)
	s, _ := newBrowserService(t)
	fx := newFileGuardFixture(t, s.Workspace().Dir())
	// The user's browser, started with a tab on a file outside the workspace and one inside it.
	host, pid := startUserChromium(t, "file://"+filepath.Join(fx.outside, "secret.html"), "file://"+filepath.Join(fx.ws, "blue.svg"))

	cs := connect(t, s)
	mustCall(t, cs, "webview_connect", map[string]any{"debug_url": "http://" + host, "timeout": 10}, nil)
	var tabs tools.WebviewTabsOutput
	mustCall(t, cs, "webview_tabs", map[string]any{"action": "list"}, &tabs)
	if b, _ := json.Marshal(tabs); len(tabs.Tabs) != 3 || strings.Contains(string(b), "TOPSECRET") || strings.Contains(string(b), fx.outside) {
		t.Fatalf("tabs: %s", b)
	}
	refusals := map[string]string{}
	for _, tb := range tabs.Tabs {
		if !tb.Active {
			refusals[tb.URL] = call(t, cs, "webview_tabs", map[string]any{"action": "select", "id": tb.ID}, nil)
		}
	}
	if e := refusals["file:///(outside the workspace)"]; !strings.Contains(e, "cannot be selected: it shows a local file outside the workspace;") {
		t.Errorf("the user's tab outside the workspace: %q (%v)", e, refusals)
	}
	if e := refusals["file://"+filepath.Join(fx.ws, "blue.svg")]; !strings.Contains(e, "cannot be selected: it was open before the hub connected") {
		t.Errorf("the user's tab on a workspace file: %q (%v)", e, refusals)
	}
	// The hub's own tab is fine, and a workspace file opened through it is served.
	var nav tools.WebviewNavigateOutput
	mustCall(t, cs, "webview_navigate", map[string]any{"url": "file://" + filepath.Join(fx.ws, "routes.html")}, &nav)
	mustCall(t, cs, "webview_wait", map[string]any{"selector": "#open"}, nil)
	if red, blue := screenshotColours(t, cs); red > 0 || blue == 0 {
		t.Fatalf("screenshot in the connected browser: %d red, %d blue pixels", red, blue)
	}
	mustCall(t, cs, "webview_disconnect", map[string]any{}, nil)
	if len(procgroup.Members(pid)) == 0 {
		t.Fatal("disconnect stopped the user's browser")
	}
}

// startUserChromium starts Chromium the way a user would for webview_connect (its own DevTools
// port, no hub involved), with a tab for each of urls, and returns its DevTools host:port and
// process group. It is killed when the test ends.
func startUserChromium(t *testing.T, urls ...string) (string, int) {
	t.Helper()
	path, err := webview.FindBrowser(os.Getenv("SWITCHBOARD_BROWSER"))
	if err != nil {
		t.Fatal(err)
	}
	dataDir := t.TempDir()
	args := []string{"--headless", "--disable-gpu", "--no-first-run", "--disable-background-networking", "--disable-component-update",
		"--disable-sync", "--remote-debugging-port=0", "--user-data-dir=" + dataDir}
	if os.Geteuid() == 0 {
		args = append(args, "--no-sandbox")
	}
	cmd := exec.Command(path, append(args, urls[0])...) // headless Chromium takes one start URL
	cmd.SysProcAttr = procgroup.GroupAttr()
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	t.Cleanup(func() {
		_ = procgroup.Signal(pid, syscall.SIGKILL)
		_ = cmd.Wait()
		// A killed Chromium leaves the directory of its singleton socket (/tmp/org.chromium.Chromium.*),
		// which the profile links to.
		if target, err := os.Readlink(filepath.Join(dataDir, "SingletonSocket")); err == nil && strings.Contains(target, "org.chromium.Chromium.") {
			_ = os.RemoveAll(filepath.Dir(target))
		}
	})
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if i := strings.Index(sc.Text(), "DevTools listening on ws://"); i >= 0 {
				found <- strings.Split(strings.TrimPrefix(sc.Text()[i:], "DevTools listening on ws://"), "/")[0]
				break
			}
		}
		_, _ = io.Copy(io.Discard, stderr)
	}()
	select {
	case host := <-found:
		for _, u := range urls[1:] { // the others as a user's tool would open them
			req, _ := http.NewRequest(http.MethodPut, "http://"+host+"/json/new?"+u, nil)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
		}
		// Wait until every tab has loaded its document (the user's browser tells us nothing: ask
		// its /json/list again and again).
		if !testutil.Poll(20*time.Second, func() bool {
			resp, err := http.Get("http://" + host + "/json/list")
			if err != nil {
				return false
			}
			var list []struct{ Type, Title, URL string }
			_ = json.NewDecoder(resp.Body).Decode(&list)
			resp.Body.Close()
			loaded := 0
			for _, tb := range list {
				if tb.Type == "page" && tb.URL != "" && tb.Title != "" && tb.Title != tb.URL {
					loaded++
				}
			}
			return loaded >= len(urls)
		}) {
			t.Fatal("the user's browser did not load its tabs")
		}
		return host, pid
	case <-time.After(30 * time.Second):
		t.Fatal("the user's browser did not open its DevTools port")
	}
	return "", 0
}

package webview

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/remote"

	"github.com/switchboard-hub/switchboard/internal/testutil"
	"github.com/switchboard-hub/switchboard/internal/webview/fakecdp"
)

// nullFrame is the message that crashes chromedp v0.23.0: Target.pageEvent reads e.Frame.ID.
const nullFrame = `{"method":"Page.frameNavigated","sessionId":"{session}","params":{"frame":null,"type":"Navigation"}}`

func fakeServer(t *testing.T, o fakecdp.Options) *fakecdp.Server {
	t.Helper()
	srv, err := fakecdp.Start(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	return srv
}

// A DevTools endpoint that sends what chromedp would dereference as nil ends its own connection
// with an error naming the message; the hub's process lives on (a panic on chromedp's goroutines
// would end this test binary).
func TestHostileEndpointIsDisconnected(t *testing.T) {
	for _, c := range []struct {
		name string
		opts fakecdp.Options
		want string
	}{
		{"null frame event", fakecdp.Options{Inject: []fakecdp.Inject{{After: "Page.enable", Message: nullFrame}}},
			"malformed Page.frameNavigated (params.frame is null but required)"},
		{"null execution context", fakecdp.Options{Inject: []fakecdp.Inject{{After: "Runtime.enable",
			Message: `{"method":"Runtime.executionContextCreated","sessionId":"{session}","params":{"context":null}}`}}},
			"malformed Runtime.executionContextCreated (params.context is null but required)"},
		{"null frame tree reply", fakecdp.Options{Results: map[string]string{"Page.getFrameTree": `{"frameTree":null}`}},
			"malformed Page.getFrameTree reply (result.frameTree is null but required)"},
		{"null node in a list", fakecdp.Options{Inject: []fakecdp.Inject{{After: "DOM.getDocument",
			Message: `{"method":"DOM.setChildNodes","sessionId":"{session}","params":{"parentId":1,"nodes":[null]}}`}}},
			"malformed DOM.setChildNodes (params.nodes[0] is null)"},
		{"null target info", fakecdp.Options{Inject: []fakecdp.Inject{{After: "Target.setDiscoverTargets",
			Message: `{"method":"Target.targetCreated","params":{"targetInfo":null}}`}}},
			"malformed Target.targetCreated (params.targetInfo is null but required)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := fakeServer(t, c.opts)
			w := New(Options{})
			defer w.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			_, err := w.Connect(ctx, ConnectOptions{DebugURL: srv.URL, Timeout: 5 * time.Second})
			if err == nil {
				// The message came after the last reply Connect waits for: the connection
				// ends just after, and the next call says why.
				awaitDisconnected(w)
				_, err = w.Eval(ctx, "1")
			} else if !strings.HasPrefix(err.Error(), "debug_url: ") {
				t.Fatalf("connect: %v; want a debug_url: error", err)
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v; want an error with %q", err, c.want)
			}
			if w.Connected() {
				t.Fatal("still connected to an endpoint that broke the protocol")
			}
		})
	}
}

// The same endpoint after the connection is up: the call under way fails, and the next one says
// why the connection is gone.
func TestHostileEventAfterConnect(t *testing.T) {
	srv := fakeServer(t, fakecdp.Options{Inject: []fakecdp.Inject{{After: "DOM.querySelector", Message: nullFrame}}})
	w := New(Options{})
	defer w.Close()
	ctx := context.Background()
	if _, err := w.Connect(ctx, ConnectOptions{DebugURL: srv.URL, Timeout: 5 * time.Second}); err != nil {
		t.Fatal(err)
	}
	// The hostile event follows the answer to a query.
	_, _, _ = w.Query(ctx, "a", false)
	awaitDisconnected(w)
	_, err := w.Eval(ctx, "1")
	if err == nil || !strings.Contains(err.Error(), "malformed Page.frameNavigated") {
		t.Fatalf("after the hostile event: %v", err)
	}
}

// A DOM event before the page's frame is known is dropped (chromedp would dereference a nil
// frame); the connection stays up, as it would with a real browser that raced.
func TestDOMEventBeforeFrameIsDropped(t *testing.T) {
	srv := fakeServer(t, fakecdp.Options{Inject: []fakecdp.Inject{{After: "DOM.enable",
		Message: `{"method":"DOM.attributeModified","sessionId":"{session}","params":{"nodeId":1,"name":"a","value":"b"}}`}}})
	w := New(Options{})
	defer w.Close()
	if _, err := w.Connect(context.Background(), ConnectOptions{DebugURL: srv.URL, Timeout: 5 * time.Second}); err != nil {
		t.Fatal(err)
	}
	if !w.Connected() {
		t.Fatal("not connected")
	}
}

// TestUpstreamChromedpPanicsOnNullFrame documents the upstream bug the checking transport works
// around: plain chromedp (remote.NewAllocator) connected to the fake endpoint dies with a nil
// pointer dereference in Target.pageEvent. It runs chromedp in a child process, since the panic
// cannot be recovered. If this starts failing, chromedp has fixed it; keep the transport check
// (other fields) and update the note in transport.go.
func TestUpstreamChromedpPanicsOnNullFrame(t *testing.T) {
	if u := os.Getenv("FAKECDP_UPSTREAM_URL"); u != "" {
		allocCtx, cancel := remote.NewAllocator(context.Background(), u)
		defer cancel()
		ctx, cancel2 := chromedp.NewContext(allocCtx)
		defer cancel2()
		_ = chromedp.Do(ctx)
		// The panic comes on chromedp's goroutine and ends the process; only its absence lasts,
		// so this waits on purpose: 2 s without it means chromedp handled the frame.
		time.Sleep(2 * time.Second)
		os.Exit(0)
	}
	srv := fakeServer(t, fakecdp.Options{Inject: []fakecdp.Inject{{After: "Page.enable", Message: nullFrame}}})
	cmd := exec.Command(os.Args[0], "-test.run=^TestUpstreamChromedpPanicsOnNullFrame$", "-test.count=1")
	cmd.Env = append(os.Environ(), "FAKECDP_UPSTREAM_URL="+srv.URL)
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "nil pointer dereference") || !strings.Contains(string(out), "chromedp.(*Target).pageEvent") {
		t.Fatalf("plain chromedp did not crash as documented (err %v):\n%s", err, out)
	}
	t.Logf("plain chromedp against the fake endpoint:\n%s", firstLines(string(out), 12))
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, "\n")
}

// The DevTools HTTP client never uses a proxy from the environment (a loopback address could
// otherwise be fetched by a proxy elsewhere) and never follows a redirect.
func TestDevtoolsClientIsConfined(t *testing.T) {
	tr, ok := devtoolsClient.Transport.(*http.Transport)
	if !ok || tr.Proxy != nil {
		t.Fatalf("transport %T with a proxy func", devtoolsClient.Transport)
	}
	req, _ := http.NewRequest(http.MethodGet, "http://127.0.0.1/", nil)
	if devtoolsClient.CheckRedirect == nil || !errors.Is(devtoolsClient.CheckRedirect(req, nil), http.ErrUseLastResponse) {
		t.Fatal("redirects are followed")
	}
	if devtoolsClient.Timeout <= 0 || devtoolsClient.Timeout > 30*time.Second {
		t.Fatalf("timeout %s", devtoolsClient.Timeout)
	}
}

// BenchmarkCheckReply measures what the protocol check adds per message: the second decode of
// a screenshot reply (2 MiB of PNG, base64) and of a 5000-node accessibility tree.
func BenchmarkCheckReply(b *testing.B) {
	png := strings.Repeat("AAAA", 2<<20/3) // base64 of 2 MiB
	var ax strings.Builder
	ax.WriteString(`{"nodes":[`)
	for i := 0; i < 5000; i++ {
		if i > 0 {
			ax.WriteByte(',')
		}
		fmt.Fprintf(&ax, `{"nodeId":"%d","ignored":false,"role":{"type":"role","value":"button"},"name":{"type":"computedString","value":"Button %d"},"childIds":["%d"],"backendDOMNodeId":%d}`, i, i, i+1, i+1)
	}
	ax.WriteString(`]}`)
	for _, c := range []struct {
		name, method, result string
	}{
		{"screenshot", "Page.captureScreenshot", `{"data":"` + png + `"}`},
		{"axtree", "Accessibility.getFullAXTree", ax.String()},
	} {
		// The decode chromedp does anyway, for the ratio.
		b.Run(c.name+"/chromedp-decode", func(b *testing.B) {
			b.SetBytes(int64(len(c.result)))
			for b.Loop() {
				if _, err := cdproto.UnmarshalMessage(&cdproto.Message{Method: cdproto.MethodType(c.method), Result: jsonv2.Value(c.result)}, chromedp.DefaultUnmarshalOptions); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(c.name+"/check", func(b *testing.B) {
			c0 := newCheckedConn(nil)
			b.SetBytes(int64(len(c.result)))
			for b.Loop() {
				c0.pending[1] = c.method
				if _, err := c0.check(&cdproto.Message{ID: 1, Result: jsonv2.Value(c.result)}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// awaitDisconnected waits (on the state events a lost connection sends) until w has dropped its
// connection, or Patience passes; the caller's next call then says why, or that it did not.
func awaitDisconnected(w *Webview) {
	changed := make(chan struct{}, 1)
	defer w.Subscribe(func(ev Event) {
		if ev.Kind == "state" {
			select {
			case changed <- struct{}{}:
			default:
			}
		}
	})()
	timeout := time.After(testutil.Patience)
	for w.Connected() {
		select {
		case <-changed:
		case <-timeout:
			return
		}
	}
}

package testutil

import (
	"context"
	"os"
	"testing"

	"github.com/chromedp/chromedp"
)

// HeadlessChromium starts the browser at path (RequireBrowser's answer) headless, with a fresh
// profile and the flags a closed network needs (no background networking, component updates or
// sync), and returns a context for chromedp actions in its first tab. The browser is stopped when
// the test ends.
func HeadlessChromium(t testing.TB, path string) context.Context {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path), chromedp.Headless, chromedp.DisableGPU, chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.UserDataDir(t.TempDir()),
	}
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox)
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancelAlloc)
	bctx, cancelBrowser := chromedp.NewContext(actx)
	t.Cleanup(cancelBrowser)
	if err := chromedp.Do(bctx); err != nil { // start the browser now, before a test step needs it
		t.Fatal(err)
	}
	return bctx
}

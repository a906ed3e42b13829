package webview

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
)

// The file guard. Checking the URL of a tab's main frame (webview_navigate, the bounce in
// tabEvent) leaves every other way for a page to show a local file open: popups (target=_blank,
// window.open), iframes, images, scripts, styles. So the hub intercepts file:// at the network
// level, for the whole browser, before any tab of ours is attached:
//
//   - Fetch.enable on the browser target with the pattern file://* pauses every file:// request
//     of every target of every browser context (tabs, popups, frames, workers). Measured with
//     Debian's Chromium 156: documents, iframes, images and scripts of file pages, and popups, all
//     arrive as Fetch.requestPaused on the browser session; http pages cannot load file:// at all
//     (Chrome refuses those loads and redirects to file: before any request).
//   - The hub answers each from the allowed roots (FileRoot.FS, confined by os.Root): the bytes
//     are read by the hub through the confined view, so Chromium never reads a local file itself
//     and a symlink swapped in between a check and the read cannot lead out. Anything else
//     fails with AccessDenied, and the console says why.
//   - Downloads are denied (Browser.setDownloadBehavior), so nothing a page offers is written.
//   - The browser's own DevTools HTTP endpoint is refused to pages: /json/list would show the
//     titles and URLs of every tab.

// guardBrowser installs the file guard on a fresh connection and records the targets that
// existed before it (their content was loaded unguarded).
func (w *Webview) guardBrowser(ctx context.Context, st *session) error {
	patterns := []*fetch.RequestPattern{{URLPattern: "file://*"}}
	for _, p := range endpointPatterns(st.endpoint) {
		patterns = append(patterns, &fetch.RequestPattern{URLPattern: p})
	}
	if _, err := cdp.Call(ctx, st.browser, fetch.Enable, fetch.EnableParams{Patterns: patterns}); err != nil {
		return fmt.Errorf("the browser does not support request interception on the browser target (Fetch.enable: %w); the hub needs it to keep local files outside the workspace out of the browser; use a current Chrome or Chromium", err)
	}
	if _, err := cdp.Call(ctx, st.browser, browser.SetDownloadBehavior, browser.SetDownloadBehaviorParams{Behavior: browser.SetDownloadBehaviorBehaviorDeny}); err != nil {
		return fmt.Errorf("the browser refused to deny downloads (Browser.setDownloadBehavior: %w); use a current Chrome or Chromium", err)
	}
	res, err := cdp.Call(ctx, st.browser, target.GetTargets, target.GetTargetsParams{})
	if err != nil {
		return err
	}
	st.mu.Lock()
	for _, t := range res.TargetInfos {
		st.preexisting[t.TargetID] = true
	}
	st.mu.Unlock()
	return nil
}

// unguardBrowser gives a browser we only connected to its own download behaviour back. The
// interception ends with our connection by itself.
func (st *session) unguardBrowser(ctx context.Context) {
	_, _ = cdp.Call(ctx, st.browser, browser.SetDownloadBehavior, browser.SetDownloadBehaviorParams{Behavior: browser.SetDownloadBehaviorBehaviorDefault})
}

// endpointPatterns are Fetch patterns for the browser's DevTools HTTP endpoint at wsURL, under
// the names a page can reach it by when it is on loopback.
func endpointPatterns(wsURL string) []string {
	u, err := url.Parse(wsURL)
	if err != nil || u.Port() == "" {
		return nil
	}
	host, port := u.Hostname(), u.Port()
	hosts := []string{host}
	if ip := net.ParseIP(host); host == "localhost" || (ip != nil && (ip.IsLoopback() || ip.IsUnspecified())) {
		hosts = []string{"127.*", "localhost", "[::1]", "0.0.0.0"}
	} else if strings.Contains(host, ":") {
		hosts = []string{"[" + host + "]"}
	}
	var out []string
	for _, h := range hosts {
		for _, scheme := range []string{"http", "https"} {
			out = append(out, scheme+"://"+h+":"+port+"/*")
		}
	}
	return out
}

// maxGuardWorkers bounds the paused requests answered at once; more wait their turn (the page
// waits, nothing is dropped).
const maxGuardWorkers = 8

// paused hands a paused request to a worker of the session. It runs on chromedp's reader
// goroutine, so it must not block or call the browser.
func (w *Webview) paused(st *session, ev *fetch.EventRequestPaused) {
	st.guardMu.Lock()
	defer st.guardMu.Unlock()
	if st.guardClosed {
		return // the connection is closing, and its paused requests go with it
	}
	st.guardWG.Go(func() {
		select {
		case st.guardSem <- struct{}{}:
		case <-st.rootCtx.Done():
			return // the connection is gone, and with it the paused request
		}
		defer func() { <-st.guardSem }()
		w.answer(st, ev)
	})
}

// answer serves, fails or continues one paused request.
func (w *Webview) answer(st *session, ev *fetch.EventRequestPaused) {
	ctx, cancel := context.WithTimeout(st.rootCtx, 30*time.Second)
	defer cancel()
	raw := ev.Request.URL
	deny := func(why error) {
		_, _ = cdp.Call(ctx, st.browser, fetch.FailRequest, fetch.FailRequestParams{RequestID: ev.RequestID, ErrorReason: network.ErrorReasonAccessDenied})
		w.addConsole(ConsoleMessage{Type: "error", Text: fmt.Sprintf("%s blocked by the hub: %v", raw, why), Timestamp: stamp(0), URL: raw})
	}
	if !strings.HasPrefix(strings.ToLower(raw), "file:") {
		// Only the DevTools endpoint patterns match other URLs.
		deny(errors.New("the browser's DevTools endpoint is not for pages"))
		return
	}
	body, ctype, err := w.readLocal(raw)
	if err != nil {
		if errors.Is(err, ErrFileOutside) {
			err = fmt.Errorf("the file is %w (local files are served from the workspace only)", ErrFileOutside)
		}
		deny(err)
		return
	}
	_, err = cdp.Call(ctx, st.browser, fetch.FulfillRequest, fetch.FulfillRequestParams{
		RequestID:       ev.RequestID,
		ResponseCode:    200,
		ResponseHeaders: []*fetch.HeaderEntry{{Name: "Content-Type", Value: ctype}},
		Body:            body,
	})
	if err != nil && ctx.Err() == nil {
		// Chrome may have cancelled the request (the page went away); nothing was served.
		_, _ = cdp.Call(ctx, st.browser, fetch.FailRequest, fetch.FailRequestParams{RequestID: ev.RequestID, ErrorReason: network.ErrorReasonFailed})
	}
}

// tabAllowed applies the policy to a tab's URL before any tool acts on it: http(s), about:blank
// (and a tab not yet navigated), and file:// inside the allowed roots. It never names the path of
// a refused file.
func (w *Webview) tabAllowed(raw string) error {
	if raw == "" || raw == "about:blank" || strings.HasPrefix(raw, "about:blank#") || strings.HasPrefix(raw, "about:blank?") {
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil {
		return errors.New("its URL cannot be parsed")
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
		return nil
	case "file":
		if err := w.fileAllowed(raw); err != nil {
			return errors.New("it shows a local file outside the workspace")
		}
		return nil
	}
	return fmt.Errorf("it shows a %s: page", strings.ToLower(u.Scheme))
}

// checkFrames refuses a tab one of whose frames shows a local file the hub did not serve: a
// file outside the allowed roots, or any file in a tab that was open before the guard was
// installed (what it loaded then was not checked).
func (w *Webview) checkFrames(ctx context.Context, st *session, tb *tab) error {
	st.mu.Lock()
	old := st.preexisting[tb.id]
	st.mu.Unlock()
	var bad error
	err := w.runOn(ctx, st, tb, 0, func(ctx context.Context, t *chromedp.Target) error {
		tree, err := cdp.Call(ctx, t, page.GetFrameTree, cdp.Empty{})
		if err != nil {
			return err
		}
		var walk func(ft *page.FrameTree)
		walk = func(ft *page.FrameTree) {
			if ft == nil || bad != nil {
				return
			}
			if ft.Frame != nil {
				for _, u := range []string{ft.Frame.URL, ft.Frame.UnreachableURL} {
					if !strings.HasPrefix(strings.ToLower(u), "file:") {
						continue
					}
					switch {
					case old:
						bad = errors.New("it was open before the hub connected and shows local files the hub did not check; open the page again with webview_tabs {\"action\":\"new\"}")
					case w.fileAllowed(u) != nil:
						bad = errors.New("one of its frames shows a local file outside the workspace")
					}
				}
			}
			for _, c := range ft.ChildFrames {
				walk(c)
			}
		}
		walk(tree.FrameTree)
		return nil
	})
	if err != nil {
		return err
	}
	return bad
}

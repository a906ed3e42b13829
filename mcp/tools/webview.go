package tools

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/internal/webview"
	"github.com/switchboard-hub/switchboard/mcp/tool"
)

// Browser tools (docs/tools.md): the ten core webview_* tools plus webview_launch, webview_snapshot and
// webview_tabs. Every client shares the one webview.Webview (one browser connection).

// WebviewConnectInput is webview_connect's arguments: the DevTools address of a browser that is
// already running.
type WebviewConnectInput struct {
	DebugURL string `json:"debug_url" jsonschema:"Chrome DevTools URL, e.g. http://localhost:9222 (Chrome started with --remote-debugging-port=9222), or a ws://.../devtools/browser/<id> URL"`
	Timeout  int    `json:"timeout,omitempty" jsonschema:"default operation timeout in seconds, 1 to 600; default 30"`
}

// WebviewStatusOutput is the result of webview_connect, webview_disconnect and webview_wait.
type WebviewStatusOutput struct {
	Success bool   `json:"success" jsonschema:"whether the operation succeeded"`
	Message string `json:"message" jsonschema:"status message"`
}

// WebviewLaunchInput is webview_launch's arguments: the page to open in a browser the hub starts
// and connects to.
type WebviewLaunchInput struct {
	tool.InWorkspace `json:"-"`
	URL              string `json:"url,omitempty" jsonschema:"page to open once started: http(s), about:blank or a file:// URL inside the workspace; default about:blank"`
	Headless         *bool  `json:"headless,omitempty" jsonschema:"run without a window; default true (the [browser] headless setting); false needs a display"`
	Timeout          int    `json:"timeout,omitempty" jsonschema:"default operation timeout in seconds, 1 to 600; default 30"`
}

// WebviewLaunchOutput is webview_launch's result: which browser was started and what it shows.
type WebviewLaunchOutput struct {
	Success  bool   `json:"success" jsonschema:"whether the browser was started and connected"`
	Message  string `json:"message" jsonschema:"status message"`
	Browser  string `json:"browser" jsonschema:"the browser executable that was started"`
	PID      int    `json:"pid" jsonschema:"the browser's process id (its process group is killed on disconnect)"`
	Headless bool   `json:"headless" jsonschema:"whether it runs headless"`
	URL      string `json:"url" jsonschema:"the page it shows"`
}

// WebviewNoInput is the arguments of webview_disconnect: none.
type WebviewNoInput struct{}

// WebviewNavigateInput is webview_navigate's arguments.
type WebviewNavigateInput struct {
	tool.InWorkspace `json:"-"`
	URL              string `json:"url" jsonschema:"fully qualified URL: http(s), about:blank, or a file:// URL inside the workspace"`
}

// WebviewNavigateOutput is webview_navigate's result.
type WebviewNavigateOutput struct {
	Success bool   `json:"success" jsonschema:"whether navigation was initiated"`
	URL     string `json:"url" jsonschema:"echoed URL (file:// URLs as resolved inside the workspace)"`
}

// WebviewClickInput is webview_click's arguments: the element, by CSS selector or by a ref from
// webview_snapshot.
type WebviewClickInput struct {
	Selector string `json:"selector,omitempty" jsonschema:"CSS selector of the element; the first match is clicked. Give selector or ref"`
	Ref      string `json:"ref,omitempty" jsonschema:"element ref from webview_snapshot (e.g. e12), instead of selector"`
}

// WebviewSuccessOutput is the result of webview_click and webview_type.
type WebviewSuccessOutput struct {
	Success bool `json:"success" jsonschema:"whether the action was performed"`
}

// WebviewTypeInput is webview_type's arguments: the element, by CSS selector or snapshot ref, and
// the text to type into it.
type WebviewTypeInput struct {
	Selector string `json:"selector,omitempty" jsonschema:"CSS selector of the element to type into. Give selector or ref"`
	Ref      string `json:"ref,omitempty" jsonschema:"element ref from webview_snapshot (e.g. e12), instead of selector"`
	Text     string `json:"text" jsonschema:"text to type; appended to the element's current content (\\n presses Enter)"`
}

// WebviewQueryInput is webview_query's arguments.
type WebviewQueryInput struct {
	Selector string `json:"selector" jsonschema:"CSS selector"`
	All      bool   `json:"all,omitempty" jsonschema:"return all matching elements (up to 500); default returns the first match only"`
}

// WebviewElementInfo is one element in webview_query's result.
type WebviewElementInfo struct {
	NodeID      int                  `json:"nodeId" jsonschema:"CDP node identifier"`
	TagName     string               `json:"tagName" jsonschema:"HTML tag name, lower case"`
	Attributes  map[string]string    `json:"attributes" jsonschema:"element attributes by name"`
	BoundingBox *webview.BoundingBox `json:"boundingBox,omitempty" jsonschema:"element position and size; absent when it is not rendered"`
}

// WebviewQueryOutput is webview_query's result.
type WebviewQueryOutput struct {
	Found    bool                 `json:"found" jsonschema:"whether any elements matched"`
	Count    int                  `json:"count" jsonschema:"number of elements matched"`
	Elements []WebviewElementInfo `json:"elements" jsonschema:"element details"`
}

// WebviewConsoleInput is webview_console's arguments.
type WebviewConsoleInput struct {
	Clear bool `json:"clear,omitempty" jsonschema:"clear the console buffer after reading; default false"`
}

// WebviewConsoleOutput is webview_console's result: the console messages captured so far (the
// newest, up to the buffer's limit), and emptied afterwards when clear was set.
type WebviewConsoleOutput struct {
	Messages []webview.ConsoleMessage `json:"messages" jsonschema:"captured console messages, oldest first: console calls (log, warn, error, ...), uncaught exceptions (type exception) and browser log entries"`
	Count    int                      `json:"count" jsonschema:"number of messages"`
}

// WebviewEvalInput is webview_eval's arguments: JavaScript to run in the current page.
type WebviewEvalInput struct {
	Script string `json:"script" jsonschema:"JavaScript expression or statements to evaluate in the page; a returned promise is awaited"`
}

// WebviewEvalOutput is webview_eval's result: the script's value, or the error it threw.
type WebviewEvalOutput struct {
	Success bool   `json:"success" jsonschema:"whether evaluation succeeded"`
	Result  any    `json:"result" jsonschema:"return value of the expression (JSON-serialisable)"`
	Error   string `json:"error,omitempty" jsonschema:"the JavaScript error if evaluation failed"`
}

// WebviewScreenshotInput is webview_screenshot's arguments.
type WebviewScreenshotInput struct {
	Format   string `json:"format,omitempty" jsonschema:"image format: png or jpeg; default png"`
	FullPage bool   `json:"full_page,omitempty" jsonschema:"capture the whole scrollable page instead of the viewport; default false"`
}

// WebviewScreenshotOutput is webview_screenshot's result: the image, base64-encoded.
type WebviewScreenshotOutput struct {
	Success bool   `json:"success" jsonschema:"whether the screenshot was captured"`
	Data    string `json:"data" jsonschema:"standard base64-encoded image data"`
	Format  string `json:"format" jsonschema:"format used"`
}

// WebviewWaitInput is webview_wait's arguments: a selector to wait for until it matches or the
// timeout passes.
type WebviewWaitInput struct {
	Selector string `json:"selector" jsonschema:"CSS selector to wait for"`
	Timeout  int    `json:"timeout,omitempty" jsonschema:"maximum wait in seconds, 1 to 600; default the connection timeout"`
}

// WebviewSnapshotInput is webview_snapshot's arguments.
type WebviewSnapshotInput struct {
	MaxChars int `json:"max_chars,omitempty" jsonschema:"size limit of the snapshot text in characters, up to 400000; default 40000"`
}

// WebviewSnapshotOutput is webview_snapshot's result: the page's accessibility tree as text, whose
// refs webview_click and webview_type accept instead of selectors.
type WebviewSnapshotOutput struct {
	URL       string `json:"url" jsonschema:"the page's URL"`
	Title     string `json:"title" jsonschema:"the page's title"`
	Snapshot  string `json:"snapshot" jsonschema:"accessibility tree, one node a line: - role \"name\" [ref=eN] value=... states; pass a ref to webview_click or webview_type"`
	Refs      int    `json:"refs" jsonschema:"number of elements with a ref"`
	Truncated bool   `json:"truncated" jsonschema:"whether the snapshot was cut at max_chars"`
}

// WebviewTabsInput is webview_tabs' arguments: list the tabs, or open, select or close one.
type WebviewTabsInput struct {
	tool.InWorkspace `json:"-"`
	Action           string `json:"action" jsonschema:"list, new, select or close"`
	URL              string `json:"url,omitempty" jsonschema:"for new: the page to open (same rules as webview_navigate); default about:blank"`
	ID               string `json:"id,omitempty" jsonschema:"for select and close: the tab id from list"`
}

// WebviewTabsOutput is webview_tabs' result.
type WebviewTabsOutput struct {
	Tabs []webview.TabInfo `json:"tabs" jsonschema:"the browser's tabs after the action"`
}

// maxEvalResultBytes bounds webview_eval's result (the reply carries it twice: as structured
// content and as text).
const maxEvalResultBytes = 1 << 20

// WebviewTools are the webview_* browser tools (WithWebview).
type WebviewTools struct {
	Workspaces
	browser *webview.Webview
}

// NewWebviewTools is the browser tools' dependencies: the one shared browser connection.
func NewWebviewTools(w Workspaces, b *webview.Webview) *WebviewTools {
	return &WebviewTools{Workspaces: w, browser: b}
}

// WebviewGroup declares the group's tools (toolset browser) as values that need no hub;
// NewWebviewTools builds the dependencies they are bound to.
func WebviewGroup() tool.Group {
	return tool.NewGroup("browser",
		tool.Func(sdk.Tool{Name: "webview_connect", Annotations: tool.OpenWorld(tool.Write("Connect to browser", false, false)),
			Description: "Connect to a running Chrome/Chromium over the Chrome DevTools Protocol (start it with --remote-debugging-port=9222). " +
				"Closes any existing connection first. All clients share this one connection. To start a private browser instead, use webview_launch."}, (*WebviewTools).webviewConnect),
		tool.Func(sdk.Tool{Name: "webview_disconnect", Annotations: tool.OpenWorld(tool.Write("Disconnect browser", false, true)),
			Description: "Disconnect from the browser. A browser started by webview_launch is closed and its profile removed; tabs opened through the connection are closed. Safe to call when not connected."}, (*WebviewTools).webviewDisconnect),
		tool.Func(sdk.Tool{Name: "webview_launch", Annotations: tool.OpenWorld(tool.Write("Launch browser", false, false)),
			Description: "Start a private Chromium/Chrome (found on PATH or configured) with a fresh profile, connect to it and open url. Closes any existing connection first. " +
				"webview_disconnect (or hub shutdown) closes it."}, (*WebviewTools).webviewLaunch),
		tool.Func(sdk.Tool{Name: "webview_navigate", Annotations: tool.OpenWorld(tool.Write("Navigate", false, false)),
			Description: "Navigate the active tab to a URL (http, https, about:blank, or file:// inside the workspace). Returns once the new document is committed, before it has finished loading; use webview_wait to synchronise on an element. Snapshot refs expire."}, (*WebviewTools).webviewNavigate),
		tool.Func(sdk.Tool{Name: "webview_click", Annotations: tool.OpenWorld(tool.Write("Click", false, false)),
			Description: "Click an element, given by CSS selector (first match) or by ref from webview_snapshot: it is scrolled into view and clicked at its centre with real mouse events."}, (*WebviewTools).webviewClick),
		tool.Func(sdk.Tool{Name: "webview_type", Annotations: tool.OpenWorld(tool.Write("Type text", false, false)),
			Description: "Type text into an element (CSS selector or snapshot ref) with key events. Appends to existing content; clear the field first (e.g. with webview_eval) for a fresh value."}, (*WebviewTools).webviewType),
		tool.Func(sdk.Tool{Name: "webview_query", Annotations: tool.OpenWorld(tool.ReadOnly("Query elements")),
			Description: "Query DOM elements by CSS selector: tag, attributes and bounding box. all=false (default) returns at most the first match; all=true returns every match (up to 500)."}, (*WebviewTools).webviewQuery),
		tool.Func(sdk.Tool{Name: "webview_console", Annotations: tool.OpenWorld(tool.ReadOnly("Browser console")),
			Description: "Browser console messages captured since connecting (or since the last clear): console calls, uncaught exceptions with URL and line, and browser log entries. clear=true empties the buffer after reading."}, (*WebviewTools).webviewConsole),
		tool.Func(sdk.Tool{Name: "webview_eval", Annotations: tool.OpenWorld(tool.Write("Evaluate JavaScript", true, false)),
			Description: "Evaluate JavaScript in the active tab and return the value as JSON (promises are awaited). A JavaScript error returns success=false with error, not a tool error."}, (*WebviewTools).webviewEval),
		tool.Func(sdk.Tool{Name: "webview_screenshot", Annotations: tool.OpenWorld(tool.ReadOnly("Screenshot")),
			Description: "Capture the active tab's viewport (or the whole page with full_page) as png or jpeg: standard base64 in data, and as image content."}, (*WebviewTools).webviewScreenshot),
		tool.Func(sdk.Tool{Name: "webview_wait", Annotations: tool.OpenWorld(tool.ReadOnly("Wait for element")),
			Description: "Wait until an element matching a CSS selector is in the DOM. Errors when it does not appear within timeout (default the connection timeout)."}, (*WebviewTools).webviewWait),
		tool.Func(sdk.Tool{Name: "webview_snapshot", Annotations: tool.OpenWorld(tool.ReadOnly("Page snapshot")),
			Description: "The active tab's accessibility tree as compact text (role, name, value, state), with [ref=eN] on every interactive element. Pass a ref to webview_click or webview_type; refs stay valid until the page navigates. Prefer this to screenshots for finding elements."}, (*WebviewTools).webviewSnapshot),
		tool.Func(sdk.Tool{Name: "webview_tabs", Annotations: tool.OpenWorld(tool.Write("Browser tabs", false, false)),
			Description: "List the browser's tabs, open a new one (url), make one active (select, id) or close one (close, id). The other browser tools act on the active tab. " +
				"A tab that shows a local file outside the workspace (or any page but http(s), about:blank and workspace files) cannot be selected, and is listed without its title and path."}, (*WebviewTools).webviewTabs),
	)
}

func webviewSeconds(field string, v int, def time.Duration) (time.Duration, error) {
	if v == 0 {
		return def, nil
	}
	if v < 1 || v > maxToolSeconds {
		return 0, fmt.Errorf("%s: %d is out of range; give 1 to %d seconds", field, v, maxToolSeconds)
	}
	return time.Duration(v) * time.Second, nil
}

// checkURL applies the navigation policy with the caller's workspace.
func (g *WebviewTools) checkURL(ctx context.Context, req *sdk.CallToolRequest, field, raw string) (string, error) {
	ws, err := g.WorkspaceFor(ctx, req)
	if err != nil {
		return "", err
	}
	u, err := webview.CheckURL(field, raw, ws.Resolve)
	if err == nil && strings.HasPrefix(u, "file:") {
		// A client with roots opens a file of its own root: the browser (shared by all
		// clients) may then load that root's files too, as it does the hub's workspace.
		g.browser.AllowFiles(ws)
	}
	return u, err
}

func (g *WebviewTools) webviewConnect(ctx context.Context, _ *sdk.CallToolRequest, in WebviewConnectInput) (*sdk.CallToolResult, WebviewStatusOutput, error) {
	timeout, err := webviewSeconds("timeout", in.Timeout, webview.DefaultTimeout)
	if err != nil {
		return nil, WebviewStatusOutput{}, err
	}
	msg, err := g.browser.Connect(ctx, webview.ConnectOptions{DebugURL: in.DebugURL, Timeout: timeout})
	if err != nil {
		return nil, WebviewStatusOutput{}, err
	}
	return nil, WebviewStatusOutput{Success: true, Message: msg}, nil
}

func (g *WebviewTools) webviewDisconnect(_ context.Context, _ *sdk.CallToolRequest, _ WebviewNoInput) (*sdk.CallToolResult, WebviewStatusOutput, error) {
	if !g.browser.Disconnect() {
		return nil, WebviewStatusOutput{Success: true, Message: "No active connection"}, nil
	}
	return nil, WebviewStatusOutput{Success: true, Message: "Disconnected"}, nil
}

func (g *WebviewTools) webviewLaunch(ctx context.Context, req *sdk.CallToolRequest, in WebviewLaunchInput) (*sdk.CallToolResult, WebviewLaunchOutput, error) {
	timeout, err := webviewSeconds("timeout", in.Timeout, webview.DefaultTimeout)
	if err != nil {
		return nil, WebviewLaunchOutput{}, err
	}
	target := "about:blank"
	if in.URL != "" {
		if target, err = g.checkURL(ctx, req, "url", in.URL); err != nil {
			return nil, WebviewLaunchOutput{}, err
		}
	}
	info, err := g.browser.Launch(ctx, webview.LaunchOptions{Headless: in.Headless, Timeout: timeout})
	if err != nil {
		return nil, WebviewLaunchOutput{}, err
	}
	out := WebviewLaunchOutput{Success: true, Browser: info.Path, PID: info.PID, Headless: info.Headless, URL: target}
	if target != "about:blank" {
		if err := g.browser.Navigate(ctx, target); err != nil {
			out.Message = fmt.Sprintf("Launched %s (pid %d), but navigation failed: %v", info.Path, info.PID, err)
			return nil, out, nil
		}
	}
	out.Message = fmt.Sprintf("Launched %s (pid %d, headless %t) with a fresh profile; showing %s", info.Path, info.PID, info.Headless, target)
	return nil, out, nil
}

func (g *WebviewTools) webviewNavigate(ctx context.Context, req *sdk.CallToolRequest, in WebviewNavigateInput) (*sdk.CallToolResult, WebviewNavigateOutput, error) {
	if !g.browser.Connected() {
		return nil, WebviewNavigateOutput{}, webview.ErrNotConnected
	}
	u, err := g.checkURL(ctx, req, "url", in.URL)
	if err != nil {
		return nil, WebviewNavigateOutput{}, err
	}
	if err := g.browser.Navigate(ctx, u); err != nil {
		return nil, WebviewNavigateOutput{}, err
	}
	return nil, WebviewNavigateOutput{Success: true, URL: u}, nil
}

func (g *WebviewTools) webviewClick(ctx context.Context, _ *sdk.CallToolRequest, in WebviewClickInput) (*sdk.CallToolResult, WebviewSuccessOutput, error) {
	if err := g.browser.Click(ctx, webview.Target{Selector: in.Selector, Ref: in.Ref}); err != nil {
		return nil, WebviewSuccessOutput{}, err
	}
	return nil, WebviewSuccessOutput{Success: true}, nil
}

func (g *WebviewTools) webviewType(ctx context.Context, _ *sdk.CallToolRequest, in WebviewTypeInput) (*sdk.CallToolResult, WebviewSuccessOutput, error) {
	if err := g.browser.Type(ctx, webview.Target{Selector: in.Selector, Ref: in.Ref}, in.Text); err != nil {
		return nil, WebviewSuccessOutput{}, err
	}
	return nil, WebviewSuccessOutput{Success: true}, nil
}

func (g *WebviewTools) webviewQuery(ctx context.Context, _ *sdk.CallToolRequest, in WebviewQueryInput) (*sdk.CallToolResult, WebviewQueryOutput, error) {
	els, total, err := g.browser.Query(ctx, in.Selector, in.All)
	if err != nil {
		return nil, WebviewQueryOutput{}, err
	}
	out := WebviewQueryOutput{Found: len(els) > 0, Count: total, Elements: make([]WebviewElementInfo, 0, len(els))}
	for _, e := range els {
		out.Elements = append(out.Elements, WebviewElementInfo{NodeID: e.NodeID, TagName: e.TagName, Attributes: e.Attributes, BoundingBox: e.BoundingBox})
	}
	return nil, out, nil
}

func (g *WebviewTools) webviewConsole(_ context.Context, _ *sdk.CallToolRequest, in WebviewConsoleInput) (*sdk.CallToolResult, WebviewConsoleOutput, error) {
	msgs, err := g.browser.Console(in.Clear)
	if err != nil {
		return nil, WebviewConsoleOutput{}, err
	}
	return nil, WebviewConsoleOutput{Messages: msgs, Count: len(msgs)}, nil
}

func (g *WebviewTools) webviewEval(ctx context.Context, _ *sdk.CallToolRequest, in WebviewEvalInput) (*sdk.CallToolResult, WebviewEvalOutput, error) {
	r, err := g.browser.Eval(ctx, in.Script)
	if err != nil {
		return nil, WebviewEvalOutput{}, err
	}
	if r.Error != "" {
		return nil, WebviewEvalOutput{Success: false, Error: r.Error}, nil
	}
	if b, err := json.Marshal(r.Result); err == nil && len(b) > maxEvalResultBytes {
		return nil, WebviewEvalOutput{Success: false, Error: fmt.Sprintf("the result is %d KiB of JSON, over the %d KiB limit; return less (e.g. .slice(0, 1000) or a summary)", len(b)>>10, maxEvalResultBytes>>10)}, nil
	}
	return nil, WebviewEvalOutput{Success: true, Result: r.Result}, nil
}

func (g *WebviewTools) webviewScreenshot(ctx context.Context, _ *sdk.CallToolRequest, in WebviewScreenshotInput) (*sdk.CallToolResult, WebviewScreenshotOutput, error) {
	format := strings.ToLower(in.Format)
	if format == "" {
		format = "png"
	}
	if format == "jpg" {
		format = "jpeg"
	}
	data, err := g.browser.Screenshot(ctx, format, in.FullPage)
	if err != nil {
		return nil, WebviewScreenshotOutput{}, err
	}
	out := WebviewScreenshotOutput{Success: true, Data: base64.StdEncoding.EncodeToString(data), Format: format}
	// The text block stays small (the image is already in structuredContent and the image block).
	res := &sdk.CallToolResult{Content: []sdk.Content{
		&sdk.TextContent{Text: fmt.Sprintf(`{"success":true,"format":%q,"bytes":%d}`, format, len(data))},
		&sdk.ImageContent{Data: data, MIMEType: "image/" + format},
	}}
	return res, out, nil
}

func (g *WebviewTools) webviewWait(ctx context.Context, req *sdk.CallToolRequest, in WebviewWaitInput) (*sdk.CallToolResult, WebviewStatusOutput, error) {
	timeout, err := webviewSeconds("timeout", in.Timeout, 0)
	if err != nil {
		return nil, WebviewStatusOutput{}, err
	}
	var progress func(waited, limit time.Duration)
	if tok := req.Params.GetProgressToken(); tok != nil && req.Session != nil {
		progress = func(waited, limit time.Duration) {
			_ = req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: tok, Progress: waited.Seconds(), Total: limit.Seconds(),
				Message: fmt.Sprintf("waiting for %q: %s of %s", in.Selector, waited.Round(time.Second), limit)})
		}
	}
	took, err := g.browser.Wait(ctx, in.Selector, timeout, progress)
	if err != nil {
		return nil, WebviewStatusOutput{}, err
	}
	return nil, WebviewStatusOutput{Success: true, Message: fmt.Sprintf("Element %q found after %s", in.Selector, took.Round(time.Millisecond))}, nil
}

func (g *WebviewTools) webviewSnapshot(ctx context.Context, _ *sdk.CallToolRequest, in WebviewSnapshotInput) (*sdk.CallToolResult, WebviewSnapshotOutput, error) {
	if in.MaxChars < 0 || in.MaxChars > webview.MaxSnapshotChars {
		return nil, WebviewSnapshotOutput{}, fmt.Errorf("max_chars: %d is out of range; give 1 to %d", in.MaxChars, webview.MaxSnapshotChars)
	}
	snap, err := g.browser.Snapshot(ctx, in.MaxChars)
	if err != nil {
		return nil, WebviewSnapshotOutput{}, err
	}
	return nil, WebviewSnapshotOutput{URL: snap.URL, Title: snap.Title, Snapshot: snap.Text, Refs: snap.Refs, Truncated: snap.Truncated}, nil
}

func (g *WebviewTools) webviewTabs(ctx context.Context, req *sdk.CallToolRequest, in WebviewTabsInput) (*sdk.CallToolResult, WebviewTabsOutput, error) {
	var err error
	switch in.Action {
	case "list":
	case "new":
		u := "about:blank"
		if in.URL != "" {
			if u, err = g.checkURL(ctx, req, "url", in.URL); err != nil {
				return nil, WebviewTabsOutput{}, err
			}
		}
		err = g.browser.NewTab(ctx, u)
	case "select":
		err = g.browser.SelectTab(ctx, in.ID)
	case "close":
		err = g.browser.CloseTab(ctx, in.ID)
	case "":
		err = errors.New("action: required; one of list, new, select, close")
	default:
		err = fmt.Errorf("action: %q is not one of list, new, select, close", in.Action)
	}
	if err != nil {
		return nil, WebviewTabsOutput{}, err
	}
	tabs, err := g.browser.Tabs(ctx)
	if err != nil {
		return nil, WebviewTabsOutput{}, err
	}
	return nil, WebviewTabsOutput{Tabs: tabs}, nil
}

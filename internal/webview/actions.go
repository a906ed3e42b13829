package webview

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/chromedp/cdproto"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

func ptr[T any](v T) *T { return &v }

// Navigate sends the active tab to rawURL (already checked with CheckURL) and returns once the
// new document has been committed (not loaded: use Wait for an element). Refs from earlier
// snapshots expire.
func (w *Webview) Navigate(ctx context.Context, rawURL string) error {
	err := w.run(ctx, 0, func(ctx context.Context, t *chromedp.Target) error {
		lctx, cancel := context.WithCancel(ctx)
		defer cancel()
		committed := cdp.Events(lctx, t, page.FrameNavigated)
		res, err := cdp.Call(ctx, t, page.Navigate, page.NavigateParams{URL: rawURL})
		if err != nil {
			return err
		}
		if res.ErrorText != "" {
			return fmt.Errorf("url: navigation to %s failed: %s", rawURL, res.ErrorText)
		}
		if res.LoaderID == "" || res.IsDownload { // same-document navigation or a download
			return nil
		}
		for ev, err := range committed {
			if err != nil {
				return err
			}
			if ev.Frame != nil && ev.Frame.ParentID == "" && ev.Frame.LoaderID == res.LoaderID {
				return nil
			}
		}
		return nil
	})
	w.emit(Event{Kind: "state"})
	return err
}

// Target names an element: a CSS selector or a ref from the last Snapshot.
type Target struct {
	Selector string
	Ref      string
}

func (tg Target) field() string {
	if tg.Ref != "" {
		return "ref"
	}
	return "selector"
}

// String names the target for messages: ref e12, or selector "#id" (quoted).
func (tg Target) String() string {
	if tg.Ref != "" {
		return "ref " + tg.Ref
	}
	return fmt.Sprintf("selector %q", tg.Selector)
}

// element resolves tg to a JavaScript object id in the tab.
func (w *Webview) element(ctx context.Context, tb *tab, t *chromedp.Target, tg Target) (runtime.RemoteObjectID, error) {
	switch {
	case tg.Ref != "" && tg.Selector != "":
		return "", errors.New("selector: give either selector or ref, not both")
	case tg.Ref != "":
		tb.mu.Lock()
		id, ok := tb.refs[tg.Ref]
		tb.mu.Unlock()
		if !ok {
			return "", fmt.Errorf("ref: %q is not a ref of the current page; refs come from webview_snapshot and expire when the page navigates; take a new snapshot", tg.Ref)
		}
		res, err := cdp.Call(ctx, t, dom.ResolveNode, dom.ResolveNodeParams{BackendNodeID: id})
		if err != nil || res.Object == nil || res.Object.ObjectID == "" {
			return "", fmt.Errorf("ref: element %s is no longer in the page; take a new webview_snapshot", tg.Ref)
		}
		return res.Object.ObjectID, nil
	case strings.TrimSpace(tg.Selector) == "":
		return "", errors.New("selector: required; give a CSS selector (e.g. \"#submit\") or a ref from webview_snapshot")
	}
	sel, _ := json.Marshal(tg.Selector)
	res, err := cdp.Call(ctx, t, runtime.Evaluate, runtime.EvaluateParams{Expression: "document.querySelector(" + string(sel) + ")"})
	if err != nil {
		return "", err
	}
	if res.ExceptionDetails != nil {
		return "", fmt.Errorf("selector: %q is not a valid CSS selector (%s)", tg.Selector, exceptionText(res.ExceptionDetails))
	}
	if res.Result == nil || res.Result.ObjectID == "" {
		return "", fmt.Errorf("selector: no element matches %q; check it with webview_query or wait for it with webview_wait", tg.Selector)
	}
	return res.Result.ObjectID, nil
}

// Click scrolls the element into view and clicks its centre with real mouse events.
func (w *Webview) Click(ctx context.Context, tg Target) error {
	st, tb, err := w.activeTab()
	if err != nil {
		return err
	}
	err = w.runOn(ctx, st, tb, 0, func(ctx context.Context, t *chromedp.Target) error {
		obj, err := w.element(ctx, tb, t, tg)
		if err != nil {
			return err
		}
		x, y, err := center(ctx, t, obj, tg)
		if err != nil {
			return err
		}
		if err := notCovered(ctx, t, obj, tg, x, y); err != nil {
			return err
		}
		for _, ev := range []input.DispatchMouseEventParams{
			{Type: input.DispatchMouseEventTypeMouseMoved, X: x, Y: y},
			{Type: input.DispatchMouseEventTypeMousePressed, X: x, Y: y, Button: input.MouseButtonLeft, Buttons: 1, ClickCount: 1},
			{Type: input.DispatchMouseEventTypeMouseReleased, X: x, Y: y, Button: input.MouseButtonLeft, ClickCount: 1},
		} {
			if _, err := cdp.Call(ctx, t, input.DispatchMouseEvent, ev); err != nil {
				return err
			}
		}
		return nil
	})
	w.emit(Event{Kind: "state"})
	return err
}

// center scrolls obj into view and returns the centre of its first visible box.
func center(ctx context.Context, t *chromedp.Target, obj runtime.RemoteObjectID, tg Target) (float64, float64, error) {
	if _, err := cdp.Call(ctx, t, dom.ScrollIntoViewIfNeeded, dom.ScrollIntoViewIfNeededParams{ObjectID: obj}); err != nil {
		return 0, 0, fmt.Errorf("%s: %s cannot be scrolled into view (%v)", tg.field(), tg, err)
	}
	q, err := cdp.Call(ctx, t, dom.GetContentQuads, dom.GetContentQuadsParams{ObjectID: obj})
	if err != nil {
		return 0, 0, fmt.Errorf("%s: %s is not visible (it has no layout box)", tg.field(), tg)
	}
	for _, quad := range q.Quads {
		if len(quad) != 8 {
			continue
		}
		area := math.Abs((quad[0]*quad[3]-quad[1]*quad[2])+(quad[2]*quad[5]-quad[3]*quad[4])+(quad[4]*quad[7]-quad[5]*quad[6])+(quad[6]*quad[1]-quad[7]*quad[0])) / 2
		if area < 1 {
			continue
		}
		return (quad[0] + quad[2] + quad[4] + quad[6]) / 4, (quad[1] + quad[3] + quad[5] + quad[7]) / 4, nil
	}
	return 0, 0, fmt.Errorf("%s: %s is not visible (zero size or hidden)", tg.field(), tg)
}

// hitTest names the element that would receive a click at (x, y) when it is not the target or
// part of it ("" when the click lands on the target). Elements inside a shadow root or another
// frame are not checked.
const hitTest = `function(x, y) {
	if (this.getRootNode() !== document) return '';
	const e = document.elementFromPoint(x, y);
	if (!e || e === this || this.contains(e) || e.contains(this)) return '';
	if (e.tagName === 'LABEL' && e.control === this) return '';
	return e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') + (e.classList.length ? '.' + [...e.classList].join('.') : '');
}`

// notCovered refuses a click that another element (an overlay, a cookie banner) would receive.
func notCovered(ctx context.Context, t *chromedp.Target, obj runtime.RemoteObjectID, tg Target, x, y float64) error {
	xs, _ := json.Marshal(x)
	ys, _ := json.Marshal(y)
	res, err := cdp.Call(ctx, t, runtime.CallFunctionOn, runtime.CallFunctionOnParams{FunctionDeclaration: hitTest, ObjectID: obj,
		Arguments: []*runtime.CallArgument{{Value: xs}, {Value: ys}}, ReturnByValue: ptr(true)})
	if err != nil || res.ExceptionDetails != nil || res.Result == nil {
		return nil // the check is a courtesy; the click itself reports real failures
	}
	var other string
	if json.Unmarshal(res.Result.Value, &other) == nil && other != "" {
		return fmt.Errorf("%s: %s is covered by another element (%s) that would receive the click; close or scroll past it first", tg.field(), tg, other)
	}
	return nil
}

// focusEnd focuses the element and puts the caret at the end of its content, so that typing
// appends. It returns false when the element cannot take keyboard focus.
const focusEnd = `function() {
	this.focus();
	if (typeof this.value === 'string' && typeof this.setSelectionRange === 'function') {
		try { const n = this.value.length; this.setSelectionRange(n, n); } catch (e) {}
	} else if (this.isContentEditable) {
		const r = document.createRange(); r.selectNodeContents(this); r.collapse(false);
		const s = window.getSelection(); s.removeAllRanges(); s.addRange(r);
	}
	const a = document.activeElement;
	return a === this || this.contains(a);
}`

// Type focuses the element and types text at the end of its content with key events.
func (w *Webview) Type(ctx context.Context, tg Target, text string) error {
	st, tb, err := w.activeTab()
	if err != nil {
		return err
	}
	err = w.runOn(ctx, st, tb, 0, func(ctx context.Context, t *chromedp.Target) error {
		obj, err := w.element(ctx, tb, t, tg)
		if err != nil {
			return err
		}
		res, err := cdp.Call(ctx, t, runtime.CallFunctionOn, runtime.CallFunctionOnParams{FunctionDeclaration: focusEnd, ObjectID: obj, ReturnByValue: ptr(true)})
		if err != nil {
			return err
		}
		if res.ExceptionDetails != nil {
			return fmt.Errorf("%s: could not focus %s: %s", tg.field(), tg, exceptionText(res.ExceptionDetails))
		}
		if res.Result == nil || string(res.Result.Value) != "true" {
			return fmt.Errorf("%s: %s cannot take keyboard focus (not an input, textarea or editable element?)", tg.field(), tg)
		}
		for _, r := range text {
			for _, k := range kb.Encode(r) {
				if _, err := cdp.Call(ctx, t, input.DispatchKeyEvent, *k); err != nil {
					return err
				}
			}
		}
		return nil
	})
	w.emit(Event{Kind: "state"})
	return err
}

// BoundingBox is an element's border box in CSS pixels, relative to the viewport.
type BoundingBox struct {
	X      float64 `json:"x" jsonschema:"left edge in CSS pixels, relative to the viewport"`
	Y      float64 `json:"y" jsonschema:"top edge in CSS pixels, relative to the viewport"`
	Width  float64 `json:"width" jsonschema:"width in CSS pixels"`
	Height float64 `json:"height" jsonschema:"height in CSS pixels"`
}

// Element describes one matched element.
type Element struct {
	NodeID      int
	TagName     string
	Attributes  map[string]string
	BoundingBox *BoundingBox
}

// maxQueryElements bounds webview_query all=true.
const maxQueryElements = 500

// Query returns the elements matching selector: at most one unless all is set.
func (w *Webview) Query(ctx context.Context, selector string, all bool) ([]Element, int, error) {
	if strings.TrimSpace(selector) == "" {
		return nil, 0, errors.New("selector: required; give a CSS selector, e.g. \"a[href]\"")
	}
	var out []Element
	total := 0
	err := w.run(ctx, 0, func(ctx context.Context, t *chromedp.Target) error {
		doc, err := cdp.Call(ctx, t, dom.GetDocument, dom.GetDocumentParams{Depth: ptr(int64(0))})
		if err != nil {
			return err
		}
		var ids []cdp.NodeID
		if all {
			res, err := cdp.Call(ctx, t, dom.QuerySelectorAll, dom.QuerySelectorAllParams{NodeID: doc.Root.NodeID, Selector: selector})
			if err != nil {
				return selectorErr(selector, err)
			}
			ids = res.NodeIDs
		} else {
			res, err := cdp.Call(ctx, t, dom.QuerySelector, dom.QuerySelectorParams{NodeID: doc.Root.NodeID, Selector: selector})
			if err != nil {
				return selectorErr(selector, err)
			}
			if res.NodeID != 0 {
				ids = []cdp.NodeID{res.NodeID}
			}
		}
		total = len(ids)
		if len(ids) > maxQueryElements {
			ids = ids[:maxQueryElements]
		}
		for _, id := range ids {
			d, err := cdp.Call(ctx, t, dom.DescribeNode, dom.DescribeNodeParams{NodeID: id})
			if err != nil || d.Node == nil {
				continue
			}
			el := Element{NodeID: int(id), TagName: strings.ToLower(d.Node.NodeName), Attributes: map[string]string{}}
			for i := 0; i+1 < len(d.Node.Attributes); i += 2 {
				el.Attributes[d.Node.Attributes[i]] = d.Node.Attributes[i+1]
			}
			if bm, err := cdp.Call(ctx, t, dom.GetBoxModel, dom.GetBoxModelParams{NodeID: id}); err == nil && bm.Model != nil && len(bm.Model.Border) == 8 {
				b := bm.Model.Border
				minX, minY := math.Min(math.Min(b[0], b[2]), math.Min(b[4], b[6])), math.Min(math.Min(b[1], b[3]), math.Min(b[5], b[7]))
				maxX, maxY := math.Max(math.Max(b[0], b[2]), math.Max(b[4], b[6])), math.Max(math.Max(b[1], b[3]), math.Max(b[5], b[7]))
				el.BoundingBox = &BoundingBox{X: minX, Y: minY, Width: maxX - minX, Height: maxY - minY}
			}
			out = append(out, el)
		}
		return nil
	})
	return out, total, err
}

func selectorErr(selector string, err error) error {
	var ce *cdproto.Error
	if errors.As(err, &ce) {
		return fmt.Errorf("selector: %q is not a valid CSS selector (%s)", selector, ce.Message)
	}
	return err
}

// EvalResult is the outcome of Eval: a JSON value, or the JavaScript error.
type EvalResult struct {
	Result any
	Error  string
}

// Eval evaluates script in the page (promises are awaited). A JavaScript exception is not an
// error of Eval: it comes back in EvalResult.Error.
func (w *Webview) Eval(ctx context.Context, script string) (EvalResult, error) {
	if strings.TrimSpace(script) == "" {
		return EvalResult{}, errors.New("script: required; give a JavaScript expression, e.g. \"document.title\"")
	}
	var out EvalResult
	err := w.run(ctx, 0, func(ctx context.Context, t *chromedp.Target) error {
		res, err := cdp.Call(ctx, t, runtime.Evaluate, runtime.EvaluateParams{Expression: script, ReturnByValue: ptr(true),
			AwaitPromise: ptr(true), UserGesture: ptr(true)})
		if err != nil {
			var ce *cdproto.Error
			if errors.As(err, &ce) {
				out.Error = ce.Message
				return nil
			}
			return err
		}
		if res.ExceptionDetails != nil {
			out.Error = exceptionText(res.ExceptionDetails)
			return nil
		}
		out.Result = remoteValue(res.Result)
		return nil
	})
	w.emit(Event{Kind: "state"})
	return out, err
}

func remoteValue(o *runtime.RemoteObject) any {
	if o == nil {
		return nil
	}
	if o.UnserializableValue != "" {
		return string(o.UnserializableValue)
	}
	if len(o.Value) == 0 {
		if o.Type == "undefined" {
			return nil
		}
		if o.Description != "" {
			return o.Description
		}
		return nil
	}
	var v any
	if err := json.Unmarshal(o.Value, &v); err != nil {
		return string(o.Value)
	}
	return v
}

func exceptionText(d *runtime.ExceptionDetails) string {
	if d.Exception != nil && d.Exception.Description != "" {
		return d.Exception.Description
	}
	if d.Exception != nil && len(d.Exception.Value) > 0 {
		return strings.TrimSpace(d.Text + " " + remoteText(d.Exception))
	}
	return d.Text
}

// Screenshot captures the viewport (or the whole page) as png or jpeg.
func (w *Webview) Screenshot(ctx context.Context, format string, fullPage bool) ([]byte, error) {
	var f page.CaptureScreenshotFormat
	switch format {
	case "", "png":
		f = page.CaptureScreenshotFormatPng
	case "jpeg", "jpg":
		f = page.CaptureScreenshotFormatJpeg
	default:
		return nil, fmt.Errorf("format: %q is not supported; use \"png\" or \"jpeg\"", format)
	}
	var data []byte
	err := w.run(ctx, 0, func(ctx context.Context, t *chromedp.Target) error {
		p := page.CaptureScreenshotParams{Format: f}
		if f == page.CaptureScreenshotFormatJpeg {
			p.Quality = ptr(int64(85))
		}
		if fullPage {
			m, err := cdp.Call(ctx, t, page.GetLayoutMetrics, cdp.Empty{})
			if err != nil {
				return err
			}
			if m.CSSContentSize != nil {
				p.Clip = &page.Viewport{Width: math.Ceil(m.CSSContentSize.Width), Height: math.Ceil(math.Min(m.CSSContentSize.Height, 16384)), Scale: 1}
				p.CaptureBeyondViewport = ptr(true)
			}
		}
		res, err := cdp.Call(ctx, t, page.CaptureScreenshot, p)
		if err != nil {
			return err
		}
		data = res.Data
		return nil
	})
	if err == nil && len(data) > MaxScreenshotBytes {
		return nil, fmt.Errorf("format: the screenshot is %.1f MiB, over the %d MiB limit; use format \"jpeg\" or leave full_page off", float64(len(data))/(1<<20), MaxScreenshotBytes>>20)
	}
	return data, err
}

// MaxScreenshotBytes bounds a screenshot: it travels twice (base64 in data and as image content)
// in a reply that must stay under the hub's 10 MiB message cap.
const MaxScreenshotBytes = 3 << 20

// LiveShot is a small JPEG of the active tab's viewport for the dashboard, at most maxWidth
// CSS pixels wide.
func (w *Webview) LiveShot(ctx context.Context, maxWidth float64) ([]byte, error) {
	var data []byte
	err := w.run(ctx, 5*time.Second, func(ctx context.Context, t *chromedp.Target) error {
		m, err := cdp.Call(ctx, t, page.GetLayoutMetrics, cdp.Empty{})
		if err != nil {
			return err
		}
		p := page.CaptureScreenshotParams{Format: page.CaptureScreenshotFormatJpeg, Quality: ptr(int64(55)), OptimizeForSpeed: ptr(true)}
		if v := m.CSSVisualViewport; v != nil && v.ClientWidth > 0 {
			scale := math.Min(1, maxWidth/v.ClientWidth)
			p.Clip = &page.Viewport{X: v.PageX, Y: v.PageY, Width: v.ClientWidth, Height: v.ClientHeight, Scale: scale}
		}
		res, err := cdp.Call(ctx, t, page.CaptureScreenshot, p)
		if err != nil {
			return err
		}
		data = res.Data
		return nil
	})
	return data, err
}

// Wait polls until an element matches selector, for at most timeout (the connection's timeout
// when 0). progress, when not nil, is called about every 2 s with the time waited so far.
func (w *Webview) Wait(ctx context.Context, selector string, timeout time.Duration, progress func(waited, timeout time.Duration)) (time.Duration, error) {
	if strings.TrimSpace(selector) == "" {
		return 0, errors.New("selector: required; give the CSS selector to wait for")
	}
	st, tb, err := w.activeTab()
	if err != nil {
		return 0, err
	}
	if timeout <= 0 {
		timeout = st.timeout
	}
	sel, _ := json.Marshal(selector)
	expr := "document.querySelector(" + string(sel) + ") !== null"
	start := time.Now()
	err = w.runOn(ctx, st, tb, timeout+time.Second, func(ctx context.Context, t *chromedp.Target) error {
		deadline := start.Add(timeout)
		nextTick := start.Add(2 * time.Second)
		for {
			res, err := cdp.Call(ctx, t, runtime.Evaluate, runtime.EvaluateParams{Expression: expr, ReturnByValue: ptr(true)})
			if err != nil {
				return err
			}
			if res.ExceptionDetails != nil {
				return fmt.Errorf("selector: %q is not a valid CSS selector (%s)", selector, exceptionText(res.ExceptionDetails))
			}
			if res.Result != nil && string(res.Result.Value) == "true" {
				return nil
			}
			if progress != nil && time.Now().After(nextTick) {
				progress(time.Since(start), timeout)
				nextTick = nextTick.Add(2 * time.Second)
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("timeout: no element matched %q within %s; raise timeout or check the selector with webview_query", selector, timeout)
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(50 * time.Millisecond):
			}
		}
	})
	return time.Since(start), err
}

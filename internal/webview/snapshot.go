package webview

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/chromedp/cdproto/accessibility"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// Snapshot limits.
const (
	DefaultSnapshotChars = 40000
	MaxSnapshotChars     = 400000
	maxNameLen           = 200
)

// interactiveRoles get a ref even when the element is not focusable (e.g. a disabled button).
var interactiveRoles = map[string]bool{
	"button": true, "link": true, "textbox": true, "searchbox": true, "checkbox": true, "radio": true,
	"combobox": true, "listbox": true, "option": true, "menuitem": true, "menuitemcheckbox": true,
	"menuitemradio": true, "tab": true, "switch": true, "slider": true, "spinbutton": true,
	"treeitem": true, "textarea": true, "scrollbar": false,
}

// skipRoles are structure without meaning of their own: their children are shown in their place.
var skipRoles = map[string]bool{"generic": true, "none": true, "presentation": true, "InlineTextBox": true, "LineBreak": true}

// states shown after an element (boolean AX properties that are true).
var states = []string{"checked", "disabled", "expanded", "selected", "focused", "required", "pressed", "readonly", "invalid", "modal"}

// SnapshotResult is an accessibility snapshot of the active tab.
type SnapshotResult struct {
	URL       string
	Title     string
	Text      string
	Refs      int  // interactive elements with a ref
	Truncated bool // Text was cut at the size limit
}

// Snapshot returns the page's accessibility tree as indented text, one node a line:
//
//   - button "Save" [ref=e3] disabled
//
// Every interactive element gets a ref that Click and Type accept. A node keeps its ref across
// snapshots of the same document; navigation clears them.
func (w *Webview) Snapshot(ctx context.Context, maxChars int) (SnapshotResult, error) {
	if maxChars <= 0 {
		maxChars = DefaultSnapshotChars
	}
	if maxChars > MaxSnapshotChars {
		maxChars = MaxSnapshotChars
	}
	st, tb, err := w.activeTab()
	if err != nil {
		return SnapshotResult{}, err
	}
	var out SnapshotResult
	err = w.runOn(ctx, st, tb, 0, func(ctx context.Context, t *chromedp.Target) error {
		waitParsed(ctx, t)
		res, err := cdp.Call(ctx, t, accessibility.GetFullAXTree, accessibility.GetFullAXTreeParams{})
		if err != nil {
			return err
		}
		out = render(tb, res.Nodes, maxChars)
		return nil
	})
	title := out.Title
	out.URL, out.Title = tb.info()
	if title != "" {
		out.Title = title
	}
	return out, err
}

// parsedJS resolves once the document has been parsed (DOMContentLoaded), at once if it has.
const parsedJS = `document.readyState !== 'loading' || new Promise(r => document.addEventListener('DOMContentLoaded', () => r(true), {once: true}))`

// waitParsed waits until the current document is parsed, so that a snapshot right after
// webview_navigate (which returns at commit) shows the page rather than an empty body. A
// navigation that replaces the document meanwhile ends the wait; the snapshot then shows
// whatever is there.
func waitParsed(ctx context.Context, t *chromedp.Target) {
	_, _ = cdp.Call(ctx, t, runtime.Evaluate, runtime.EvaluateParams{Expression: parsedJS, AwaitPromise: ptr(true)})
}

func axString(v *accessibility.Value) string {
	if v == nil || len(v.Value) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(v.Value, &s) == nil {
		return s
	}
	return string(v.Value)
}

func axTrue(v *accessibility.Value) bool {
	if v == nil {
		return false
	}
	s := string(v.Value)
	return s == "true" || s == `"true"` || s == `"mixed"`
}

type renderer struct {
	tb      *tab
	nodes   map[accessibility.NodeID]*accessibility.Node
	b       strings.Builder
	max     int
	dropped int
	refs    int
}

func render(tb *tab, nodes []*accessibility.Node, maxChars int) SnapshotResult {
	r := &renderer{tb: tb, nodes: make(map[accessibility.NodeID]*accessibility.Node, len(nodes)), max: maxChars}
	for _, n := range nodes {
		r.nodes[n.NodeID] = n
	}
	if len(nodes) > 0 {
		// The first node is the document's root (RootWebArea); its title is reported apart.
		root := nodes[0]
		for _, id := range root.ChildIDs {
			r.walk(r.nodes[id], 0, axString(root.Name))
		}
	}
	text := r.b.String()
	if r.dropped > 0 {
		text += fmt.Sprintf("… %d more lines not shown (snapshot limit %d characters; raise max_chars, or query a part with webview_query)\n", r.dropped, r.max)
	}
	if text == "" {
		text = "(empty page)\n"
	}
	title := ""
	if len(nodes) > 0 {
		title = axString(nodes[0].Name)
	}
	return SnapshotResult{Title: title, Text: text, Refs: r.refs, Truncated: r.dropped > 0}
}

func (r *renderer) walk(n *accessibility.Node, depth int, parentName string) {
	if n == nil {
		return
	}
	role := axString(n.Role)
	name := strings.Join(strings.Fields(axString(n.Name)), " ")
	if n.Ignored || skipRoles[role] || (role == "StaticText" && (name == "" || name == parentName)) {
		for _, id := range n.ChildIDs {
			r.walk(r.nodes[id], depth, parentName)
		}
		return
	}
	var line strings.Builder
	line.WriteString(strings.Repeat("  ", depth))
	if role == "StaticText" {
		line.WriteString("- text ")
		line.WriteString(strconv.Quote(short(name)))
	} else {
		line.WriteString("- ")
		line.WriteString(role)
		if name != "" {
			line.WriteByte(' ')
			line.WriteString(strconv.Quote(short(name)))
		}
	}
	focusable := false
	props := map[string]*accessibility.Value{}
	for _, p := range n.Properties {
		if p != nil {
			props[string(p.Name)] = p.Value
			if p.Name == "focusable" && axTrue(p.Value) {
				focusable = true
			}
		}
	}
	if n.BackendDOMNodeID != 0 && role != "RootWebArea" && (interactiveRoles[role] || focusable) {
		line.WriteString(" [ref=")
		line.WriteString(r.ref(n.BackendDOMNodeID))
		line.WriteByte(']')
		r.refs++
	}
	if v := axString(n.Value); v != "" {
		line.WriteString(" value=")
		line.WriteString(strconv.Quote(short(v)))
	}
	if lv := props["level"]; lv != nil && len(lv.Value) > 0 {
		line.WriteString(" level=")
		line.WriteString(string(lv.Value))
	}
	for _, s := range states {
		if v, ok := props[s]; ok && axTrue(v) {
			line.WriteByte(' ')
			line.WriteString(s)
		}
	}
	line.WriteByte('\n')
	if r.b.Len()+line.Len() > r.max || r.dropped > 0 {
		r.dropped++
	} else {
		r.b.WriteString(line.String())
	}
	for _, id := range n.ChildIDs {
		r.walk(r.nodes[id], depth+1, name)
	}
}

// ref returns the stable ref of a DOM node in this document, assigning the next one if new.
func (r *renderer) ref(id cdp.BackendNodeID) string {
	r.tb.mu.Lock()
	defer r.tb.mu.Unlock()
	if ref, ok := r.tb.byID[id]; ok {
		return ref
	}
	r.tb.next++
	ref := "e" + strconv.Itoa(r.tb.next)
	r.tb.byID[id] = ref
	r.tb.refs[ref] = id
	return ref
}

func short(s string) string {
	if len(s) <= maxNameLen {
		return s
	}
	cut := maxNameLen
	for cut > 0 && !utf8Start(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

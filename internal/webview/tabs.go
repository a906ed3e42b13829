package webview

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/target"
)

// TabInfo describes one page tab of the browser.
type TabInfo struct {
	ID     string `json:"id" jsonschema:"tab id, for select and close"`
	URL    string `json:"url" jsonschema:"the tab's URL; file:///(outside the workspace) for a local file outside the workspace"`
	Title  string `json:"title" jsonschema:"the tab's title; empty for a local file outside the workspace"`
	Active bool   `json:"active" jsonschema:"whether the browser tools act on this tab"`
}

// Tabs lists the browser's page tabs.
func (w *Webview) Tabs(ctx context.Context) ([]TabInfo, error) {
	st, err := w.sess()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, st.timeout)
	defer cancel()
	res, err := cdp.Call(ctx, st.browser, target.GetTargets, target.GetTargetsParams{})
	if err != nil {
		return nil, err
	}
	st.mu.Lock()
	active := st.active
	st.mu.Unlock()
	out := []TabInfo{}
	for _, t := range res.TargetInfos {
		if t.Type != "page" {
			continue
		}
		info := TabInfo{ID: string(t.TargetID), URL: t.URL, Title: t.Title, Active: t.TargetID == active}
		if strings.HasPrefix(strings.ToLower(t.URL), "file:") && w.fileAllowed(t.URL) != nil {
			// A tab on a file outside the workspace (a blocked popup, or the user's own tab in
			// a browser we connected to): its title can be the file's content, its path says
			// what exists outside; neither is the agent's to read.
			info.URL, info.Title = hiddenFileURL, ""
		}
		out = append(out, info)
	}
	return out, nil
}

// hiddenFileURL stands in for the URL of a tab on a local file outside the workspace.
const hiddenFileURL = "file:///(outside the workspace)"

// NewTab opens a tab at rawURL (already checked; "" = about:blank) and makes it active.
func (w *Webview) NewTab(ctx context.Context, rawURL string) error {
	st, err := w.sess()
	if err != nil {
		return err
	}
	if rawURL == "" {
		rawURL = "about:blank"
	}
	ctx, cancel := context.WithTimeout(ctx, st.timeout)
	defer cancel()
	res, err := cdp.Call(ctx, st.browser, target.CreateTarget, target.CreateTargetParams{URL: rawURL})
	if err != nil {
		return fmt.Errorf("url: could not open a tab: %w", err)
	}
	if _, err := w.attach(ctx, st, res.TargetID, true); err != nil {
		return err
	}
	st.mu.Lock()
	st.active = res.TargetID
	st.mu.Unlock()
	w.emit(Event{Kind: "state"})
	return nil
}

// SelectTab makes the tab id active (attaching to it if it was opened elsewhere).
func (w *Webview) SelectTab(ctx context.Context, id string) error {
	st, err := w.sess()
	if err != nil {
		return err
	}
	if id == "" {
		return errors.New("id: required for select; take it from webview_tabs {\"action\":\"list\"}")
	}
	ctx, cancel := context.WithTimeout(ctx, st.timeout)
	defer cancel()
	info, err := w.checkPage(ctx, st, id)
	if err != nil {
		return err
	}
	// Refused before anything attaches to the tab: no tool may read it.
	if err := w.tabAllowed(info.URL); err != nil {
		return fmt.Errorf("id: tab %s cannot be selected: %v; the browser tools act only on http(s) pages, about:blank and files inside the workspace", id, err)
	}
	tid := target.ID(id)
	st.mu.Lock()
	_, known := st.tabs[tid]
	st.mu.Unlock()
	if !known {
		tb, err := w.attach(ctx, st, tid, st.proc != nil)
		if err != nil {
			return err
		}
		// A tab we have not watched (a popup, the user's own tab) may hold frames the URL does
		// not show; look at them before a tool can.
		if err := w.checkFrames(ctx, st, tb); err != nil {
			st.mu.Lock()
			delete(st.tabs, tid)
			st.mu.Unlock()
			tb.cancel() // detaches (closes it in a browser we launched)
			return fmt.Errorf("id: tab %s cannot be selected: %v; the browser tools act only on http(s) pages, about:blank and files inside the workspace", id, err)
		}
	}
	_, _ = cdp.Call(ctx, st.browser, target.ActivateTarget, target.ActivateTargetParams{TargetID: tid})
	st.mu.Lock()
	st.active = tid
	st.mu.Unlock()
	w.emit(Event{Kind: "state"})
	return nil
}

// CloseTab closes the tab id. The last tab cannot be closed (disconnect instead).
func (w *Webview) CloseTab(ctx context.Context, id string) error {
	st, err := w.sess()
	if err != nil {
		return err
	}
	if id == "" {
		return errors.New("id: required for close; take it from webview_tabs {\"action\":\"list\"}")
	}
	ctx, cancel := context.WithTimeout(ctx, st.timeout)
	defer cancel()
	tabs, err := w.Tabs(ctx)
	if err != nil {
		return err
	}
	found := false
	for _, t := range tabs {
		found = found || t.ID == id
	}
	if !found {
		return fmt.Errorf("id: no tab %q; list them with webview_tabs {\"action\":\"list\"}", id)
	}
	if len(tabs) == 1 {
		return errors.New("id: this is the last tab; open another with webview_tabs {\"action\":\"new\"} first, or call webview_disconnect")
	}
	tid := target.ID(id)
	if _, err := cdp.Call(ctx, st.browser, target.CloseTarget, target.CloseTargetParams{TargetID: tid}); err != nil {
		return fmt.Errorf("id: could not close tab %s: %w", id, err)
	}
	st.mu.Lock()
	t := st.tabs[tid]
	delete(st.tabs, tid)
	if st.active == tid {
		st.active = ""
	}
	st.mu.Unlock()
	if t != nil {
		t.cancel()
	}
	// Make another tab active if the closed one was.
	st.mu.Lock()
	needActive := st.active == ""
	st.mu.Unlock()
	if needActive {
		// The first tab the policy lets the tools act on; none (only refused tabs are left)
		// leaves no active tab, and the tools say to open one.
		for _, other := range tabs {
			if other.ID != id && w.SelectTab(ctx, other.ID) == nil {
				break
			}
		}
	}
	w.emit(Event{Kind: "state"})
	return nil
}

func (w *Webview) checkPage(ctx context.Context, st *session, id string) (*target.Info, error) {
	res, err := cdp.Call(ctx, st.browser, target.GetTargets, target.GetTargetsParams{})
	if err != nil {
		return nil, err
	}
	for _, t := range res.TargetInfos {
		if string(t.TargetID) == id {
			if t.Type != "page" {
				return nil, fmt.Errorf("id: %s is a %s, not a page tab", id, t.Type)
			}
			return t, nil
		}
	}
	return nil, fmt.Errorf("id: no tab %q; list them with webview_tabs {\"action\":\"list\"}", id)
}

// State is what the dashboard shows about the browser.
type State struct {
	Connected bool      `json:"connected"`
	Launched  bool      `json:"launched"`
	Endpoint  string    `json:"endpoint,omitempty"`
	URL       string    `json:"url"`
	Title     string    `json:"title"`
	Tabs      []TabInfo `json:"tabs"`
}

// State returns the connection state from what is known locally (no browser round trip).
func (w *Webview) State() State {
	st, err := w.sess()
	if err != nil {
		return State{Tabs: []TabInfo{}}
	}
	s := State{Connected: true, Launched: st.proc != nil, Endpoint: st.endpoint, Tabs: []TabInfo{}}
	st.mu.Lock()
	defer st.mu.Unlock()
	for id, t := range st.tabs {
		u, title := t.info()
		s.Tabs = append(s.Tabs, TabInfo{ID: string(id), URL: u, Title: title, Active: id == st.active})
		if id == st.active {
			s.URL, s.Title = u, title
		}
	}
	sort.Slice(s.Tabs, func(i, j int) bool { return s.Tabs[i].ID < s.Tabs[j].ID })
	return s
}

// Refresh reads every tab's current URL and title from the browser in one round trip (Chrome
// does not announce title changes), so that State is current.
func (w *Webview) Refresh(ctx context.Context) {
	st, err := w.sess()
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	res, err := cdp.Call(ctx, st.browser, target.GetTargets, target.GetTargetsParams{})
	if err != nil {
		return
	}
	for _, info := range res.TargetInfos {
		st.mu.Lock()
		tb := st.tabs[info.TargetID]
		st.mu.Unlock()
		if tb != nil {
			tb.setInfo(info.URL, info.Title)
		}
	}
}

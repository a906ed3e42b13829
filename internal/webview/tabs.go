package webview

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/target"
)

// TabInfo describes one page tab of the browser.
type TabInfo struct {
	ID     string `json:"id" jsonschema:"tab id, for select and close"`
	URL    string `json:"url" jsonschema:"the tab's URL"`
	Title  string `json:"title" jsonschema:"the tab's title"`
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
		out = append(out, TabInfo{ID: string(t.TargetID), URL: t.URL, Title: t.Title, Active: t.TargetID == active})
	}
	return out, nil
}

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
	if err := w.checkPage(ctx, st, id); err != nil {
		return err
	}
	tid := target.ID(id)
	st.mu.Lock()
	_, known := st.tabs[tid]
	st.mu.Unlock()
	if !known {
		if _, err := w.attach(ctx, st, tid, st.proc != nil); err != nil {
			return err
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
		for _, other := range tabs {
			if other.ID != id {
				if err := w.SelectTab(ctx, other.ID); err != nil {
					return err
				}
				break
			}
		}
	}
	w.emit(Event{Kind: "state"})
	return nil
}

func (w *Webview) checkPage(ctx context.Context, st *session, id string) error {
	res, err := cdp.Call(ctx, st.browser, target.GetTargets, target.GetTargetsParams{})
	if err != nil {
		return err
	}
	for _, t := range res.TargetInfos {
		if string(t.TargetID) == id {
			if t.Type != "page" {
				return fmt.Errorf("id: %s is a %s, not a page tab", id, t.Type)
			}
			return nil
		}
	}
	return fmt.Errorf("id: no tab %q; list them with webview_tabs {\"action\":\"list\"}", id)
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

// Refresh reads the active tab's current URL and title from the browser (Chrome does not
// announce title changes), so that State is current.
func (w *Webview) Refresh(ctx context.Context) {
	st, tb, err := w.activeTab()
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if info, err := cdp.Call(ctx, st.browser, target.GetTargetInfo, target.GetTargetInfoParams{TargetID: tb.id}); err == nil && info.TargetInfo != nil {
		tb.setInfo(info.TargetInfo.URL, info.TargetInfo.Title)
	}
}

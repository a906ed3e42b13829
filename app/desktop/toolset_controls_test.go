package desktop

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/app"
	"github.com/switchboard-hub/switchboard/app/apptest"
	"github.com/switchboard-hub/switchboard/app/dashboard"
	"github.com/switchboard-hub/switchboard/mcp"
)

// TestToolsetControls: the dashboard's controls (bindings and the headless HTTP API) switch a
// toolset for a real stack; a connected MCP client gets tools/list_changed and the new list;
// an unknown name is refused with the valid ones.
func TestToolsetControls(t *testing.T) {
	st := apptest.Stack(t, "")
	a := newApp(app.NewController(st, "test"), nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	changed := make(chan struct{}, 4)
	ct, srvT := sdk.NewInMemoryTransports()
	ss, err := st.Service.Server().Connect(ctx, srvT, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "c", Version: "1"}, &sdk.ClientOptions{
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) { changed <- struct{}{} },
	}).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	served := func() map[string]bool {
		res, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]bool{}
		for _, tl := range res.Tools {
			m[tl.Name] = true
		}
		return m
	}
	if got := served(); !got["exec"] || got["ide_session_list"] {
		t.Fatalf("default toolsets without a configured IDE backend: %v", got)
	}
	list, err := a.Toolsets()
	if err != nil {
		t.Fatal(err)
	}
	idx := slices.IndexFunc(list.Toolsets, func(ts mcp.ToolsetStatus) bool { return ts.Name == "ide" })
	if idx < 0 || list.Toolsets[idx].Enabled || len(list.Toolsets[idx].Tools) == 0 {
		t.Fatalf("ide toolset: %+v", list.Toolsets)
	}
	if _, err := a.SetToolset("process", false); err != nil {
		t.Fatal(err)
	}
	select {
	case <-changed:
	case <-time.After(5 * time.Second):
		t.Fatal("no tools/list_changed after switching process off from the dashboard")
	}
	if got := served(); got["exec"] {
		t.Fatalf("process off but exec still served: %v", got)
	}

	// The headless dashboard's HTTP API does the same.
	srv := httptest.NewServer(dashboard.NewServer(app.NewController(st, "test"), "dash-tok").Handler())
	defer srv.Close()
	post := func(name, body string) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/api/toolsets/"+name, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer dash-tok")
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	if code, body := post("ide", `{"enabled":true}`); code != 200 || !strings.Contains(body, `"name":"ide"`) {
		t.Fatalf("POST /api/toolsets/ide: %d %s", code, body)
	}
	select {
	case <-changed:
	case <-time.After(5 * time.Second):
		t.Fatal("no tools/list_changed after switching ide on over the API")
	}
	if got := served(); !got["ide_session_list"] {
		t.Fatalf("ide on but not served: %v", got)
	}
	if code, body := post("nope", `{"enabled":true}`); code != 400 || !strings.Contains(body, "valid: files, process") {
		t.Errorf("unknown toolset: %d %s", code, body)
	}
}

package dashboard

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/app"
	"github.com/switchboard-hub/switchboard/app/apptest"
	"github.com/switchboard-hub/switchboard/internal/config"
	"github.com/switchboard-hub/switchboard/internal/ml/mltest"
	"github.com/switchboard-hub/switchboard/mcp/channel"
	"github.com/switchboard-hub/switchboard/mcp/tools"
)

// TestSettingsMLLive: the Settings view's ML section saved over the dashboard API is in force in
// the running hub at once. A generation already streaming from the old backend finishes there;
// the dashboard's "ml" channel publishes the new backend list without being asked; an MCP
// client's ml_backends lists the new backend as the default and its next ml_generate runs on it;
// nothing is pending.
func TestSettingsMLLive(t *testing.T) {
	home := realTempDir(t)
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	for _, k := range []string{"OLLAMA_HOST", "OPENAI_BASE_URL", "OPENAI_API_KEY", "SWITCHBOARD_WORKSPACE", "SWITCHBOARD_TOOLSETS", "MCP_ADDR"} {
		t.Setenv(k, "")
	}
	old, gpu := mltest.NewOllama("old-model"), mltest.NewOllama("gpu-model")
	defer old.Close()
	defer gpu.Close()
	old.TokenDelay = 100 * time.Millisecond // a generation that is still streaming when the save lands
	cfgPath := filepath.Join(home, ".config", "switchboard", "config.toml")
	os.MkdirAll(filepath.Dir(cfgPath), 0o700)
	start := fmt.Sprintf("# mine\n[ml]\ndefault_backend = \"old\"\n\n[[ml.backends]]\nname = \"old\"\nkind = \"ollama\"\nurl = %q\n", old.URL)
	if err := os.WriteFile(cfgPath, []byte(start), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	st := apptest.Stack(t, "", func(c *config.Config) { c.Path = cfgPath; c.ML = cfg.ML })
	srv := httptest.NewServer(NewServer(app.NewController(st, "test"), "dash-token").Handler())
	defer srv.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs := apptest.InMemoryClient(t, st, "ml-settings-test")
	call := func(name string, args map[string]any, out any) {
		t.Helper()
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
		if err != nil || res.IsError {
			t.Fatalf("%s: %v %+v", name, err, res)
		}
		raw, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatal(err)
		}
	}

	// The dashboard watches channel "ml".
	conn, _, err := websocket.DefaultDialer.Dial(st.WSHub.URL(), http.Header{"Authorization": {"Bearer " + st.WSHub.Token()}})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.WriteJSON(map[string]string{"type": "subscribe", "channel": channel.ML}); err != nil {
		t.Fatal(err)
	}
	// readML returns the next frame of the channel whose list has (or lacks) the gpu backend.
	readML := func(wantGPU bool) tools.MLBackendsOutput {
		t.Helper()
		for {
			var frame struct {
				Type    string                 `json:"type"`
				Channel string                 `json:"channel"`
				Data    tools.MLBackendsOutput `json:"data"`
			}
			conn.SetReadDeadline(time.Now().Add(8 * time.Second)) // under the feed's 10s re-check
			if err := conn.ReadJSON(&frame); err != nil {
				t.Fatalf("waiting for an ml frame with gpu=%v: %v", wantGPU, err)
			}
			if frame.Channel != channel.ML || (frame.Type != "snapshot" && frame.Type != "event") {
				continue
			}
			if hasBackend(frame.Data, "gpu") == wantGPU {
				return frame.Data
			}
		}
	}
	if snap := readML(false); snap.Default != "old" || !hasBackend(snap, "old") {
		t.Fatalf("snapshot before the save: %+v", snap)
	}

	// A generation streams from the old backend while the save lands.
	type genResult struct {
		out tools.MLGenerateOutput
		err error
	}
	inFlight := make(chan genResult, 1)
	go func() {
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "ml_generate", Arguments: map[string]any{"prompt": "one two three four five six"}})
		var r genResult
		if err == nil && res.IsError {
			err = fmt.Errorf("%v", res.Content)
		}
		if r.err = err; err == nil {
			raw, _ := json.Marshal(res.StructuredContent)
			r.err = json.Unmarshal(raw, &r.out)
		}
		inFlight <- r
	}()
	select {
	case <-old.Started():
	case <-ctx.Done():
		t.Fatal("the generation on the old backend never started")
	}

	body := map[string]any{"defaultBackend": "gpu", "backends": []any{map[string]any{"name": "gpu", "kind": "ollama", "url": gpu.URL}}}
	code, out := apptest.DashAPI(t, srv.URL, "dash-token", http.MethodPost, "/api/settings/ml", body)
	if code != http.StatusOK || out["applies"] != "now" {
		t.Fatalf("POST /api/settings/ml: %d %v", code, out)
	}
	s := out["settings"].(map[string]any)
	if pend := fmt.Sprint(s["pending"]); strings.Contains(pend, "ml") {
		t.Fatalf("pending after a live ML save = %s", pend)
	}
	// (ollama is the built-in one, from OLLAMA_HOST or its default address)
	if running := fmt.Sprint(s["ml"].(map[string]any)["running"]); running != "[ollama gpu]" {
		t.Fatalf("running backends = %s, want [ollama gpu]", running)
	}

	// The feed publishes the new list by itself (before any ml_backends call).
	if ev := readML(true); ev.Default != "gpu" || hasBackend(ev, "old") {
		t.Fatalf("ml channel after the save: %+v", ev)
	}

	r := <-inFlight
	if r.err != nil || r.out.Backend != "old" || r.out.Response != "echo: one two three four five six" {
		t.Fatalf("the generation in flight: %+v %v; want it finished on old", r.out, r.err)
	}

	var list tools.MLBackendsOutput
	call("ml_backends", map[string]any{}, &list)
	if list.Default != "gpu" || len(list.Backends) != 2 || list.Backends[1].Name != "gpu" || !list.Backends[1].Available {
		t.Fatalf("ml_backends after the save: %+v", list)
	}
	var gen tools.MLGenerateOutput
	call("ml_generate", map[string]any{"prompt": "hello"}, &gen)
	if gen.Backend != "gpu" || gen.Model != "gpu-model" || len(gpu.Requests()) != 1 {
		t.Fatalf("ml_generate after the save: %+v, gpu saw %d requests", gen, len(gpu.Requests()))
	}

	// Refused: nothing saved and the running backends stay.
	code, out = apptest.DashAPI(t, srv.URL, "dash-token", http.MethodPost, "/api/settings/ml", map[string]any{"judgeBackend": "nope", "backends": body["backends"]})
	if code != http.StatusBadRequest || !strings.Contains(fmt.Sprint(out["error"]), "judge_backend") {
		t.Fatalf("bad judge: %d %v", code, out)
	}
	call("ml_backends", map[string]any{}, &list)
	if list.Default != "gpu" {
		t.Fatalf("after a refused save: %+v", list)
	}
}

func hasBackend(out tools.MLBackendsOutput, name string) bool {
	for _, b := range out.Backends {
		if b.Name == name {
			return true
		}
	}
	return false
}

// TestHandEditedMLIsLive: the config file is the source of truth; an [ml] section edited by hand
// (an editor, a script) is put in force by the file watcher like a save from the Settings view.
func TestHandEditedMLIsLive(t *testing.T) {
	home := realTempDir(t)
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	for _, k := range []string{"OLLAMA_HOST", "OPENAI_BASE_URL", "OPENAI_API_KEY", "SWITCHBOARD_WORKSPACE", "SWITCHBOARD_TOOLSETS", "MCP_ADDR"} {
		t.Setenv(k, "")
	}
	gpu := mltest.NewOllama("gpu-model")
	defer gpu.Close()
	cfgPath := filepath.Join(home, ".config", "switchboard", "config.toml")
	os.MkdirAll(filepath.Dir(cfgPath), 0o700)
	if err := os.WriteFile(cfgPath, []byte("# mine\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	st := apptest.Stack(t, "", func(c *config.Config) { c.Path = cfgPath })
	edited := fmt.Sprintf("# mine\n[ml]\ndefault_backend = \"gpu\"\n\n[[ml.backends]]\nname = \"gpu\"\nkind = \"ollama\"\nurl = %q\n", gpu.URL)
	if err := os.WriteFile(cfgPath, []byte(edited), 0o600); err != nil {
		t.Fatal(err)
	}
	// The watcher may be set up after the first write: write again until the hub has it.
	deadline := time.Now().Add(15 * time.Second)
	for st.RunningML().DefaultBackend != "gpu" {
		if time.Now().After(deadline) {
			t.Fatalf("the hand-edited [ml] was not put in force: %+v", st.RunningML())
		}
		time.Sleep(100 * time.Millisecond) // polls the stack's state; the watcher has no signal to offer
		_ = os.WriteFile(cfgPath, []byte(edited), 0o600)
	}
	if got := settingsPending(t, app.NewController(st, "test")); strings.Contains(strings.Join(got, ","), "ml") {
		t.Errorf("pending = %v after the hand edit was applied", got)
	}
}

// TestHandEditedWorkspaceIsLive: a hand edit of the workspace key moves the running hub there,
// as a Settings save does; one the hub cannot use (not a directory) leaves it where it is and
// shows the section as not in force.
func TestHandEditedWorkspaceIsLive(t *testing.T) {
	home := realTempDir(t)
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	for _, k := range []string{"SWITCHBOARD_WORKSPACE", "SWITCHBOARD_TOOLSETS", "MCP_ADDR"} {
		t.Setenv(k, "")
	}
	cfgPath := filepath.Join(home, ".config", "switchboard", "config.toml")
	os.MkdirAll(filepath.Dir(cfgPath), 0o700)
	first, next := filepath.Join(home, "first"), filepath.Join(home, "next")
	for _, d := range []string{first, next} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(cfgPath, fmt.Appendf(nil, "# mine\nworkspace = %q\n", first), 0o600); err != nil {
		t.Fatal(err)
	}
	st := apptest.Stack(t, "", func(c *config.Config) { c.Path = cfgPath; c.Workspace = first })
	handEdit := func(dir string, done func() bool) {
		t.Helper()
		edited := fmt.Appendf(nil, "# mine\nworkspace = %q\n", dir)
		// The watcher may be set up after the first write: write again until the hub has it.
		deadline := time.Now().Add(15 * time.Second)
		for _ = os.WriteFile(cfgPath, edited, 0o600); !done(); _ = os.WriteFile(cfgPath, edited, 0o600) {
			if time.Now().After(deadline) {
				t.Fatalf("hand edit to %s: the hub works in %s", dir, st.Service.WorkspaceDir())
			}
			time.Sleep(100 * time.Millisecond) // polls the stack's state; the watcher has no signal to offer
		}
	}
	handEdit(next, func() bool { return st.Service.WorkspaceDir() == next })
	if p := st.Project(); p.Source != app.ProjectFromConfig || p.Dir != next {
		t.Errorf("project after the hand edit: %+v", p)
	}
	ctl := app.NewController(st, "test")
	if got := settingsPending(t, ctl); slices.Contains(got, "workspace") {
		t.Errorf("pending = %v after the hand edit was applied", got)
	}
	// A workspace that is not a directory is refused: the hub stays in next.
	notDir := filepath.Join(home, "file")
	os.WriteFile(notDir, nil, 0o600)
	handEdit(notDir, func() bool { return slices.Contains(settingsPending(t, ctl), "workspace") })
	if got := st.Service.WorkspaceDir(); got != next {
		t.Errorf("after a refused hand edit the hub works in %s, want %s", got, next)
	}
}

package mcp

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/mcp/tool"

	"github.com/switchboard-hub/switchboard/internal/policy"
	"github.com/switchboard-hub/switchboard/internal/rag"
	"github.com/switchboard-hub/switchboard/mcp/tools"
)

// TestHubStateOffLimits: a hub whose workspace contains its own state (started in the home
// directory) keeps every tool away from it — the policy file, the token and the audit log can't
// be read, written, edited, renamed, deleted, patched, listed, grepped, globbed or ingested, by
// any spelling of the path, a symlink included.
func TestHubStateOffLimits(t *testing.T) {
	ws := t.TempDir()
	cfgDir := filepath.Join(ws, ".config", "switchboard")
	dataDir := filepath.Join(ws, ".local", "share", "switchboard")
	writeTree(t, ws, map[string]string{
		".config/switchboard/config.toml":         "[policy]\ndefault = \"deny\"\nSECRET-POLICY\n",
		".config/switchboard/token":               "SECRET-TOKEN\n",
		".local/share/switchboard/logs/audit.log": "SECRET-AUDIT\n",
		".config/other/settings":                  "not the hub's\n",
		"notes.txt":                               "ordinary file\n",
	})
	if err := os.Symlink(cfgDir, filepath.Join(ws, "cfglink")); err != nil {
		t.Fatal(err)
	}
	store, err := rag.OpenEmbedded(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s := newTestService(t, WithWorkspaceRoot(ws), WithHubState(cfgDir, dataDir), WithSearch(), WithPatch(),
		WithRAG(rag.Hold(rag.NewEngine(store, rag.Offline{}))))
	cs := connect(t, s)

	spellings := []string{
		".config/switchboard/config.toml",
		"./.config/switchboard/config.toml",
		"x/../.config/switchboard/config.toml",
		filepath.Join(ws, ".config/switchboard/config.toml"),
		"cfglink/config.toml",
		".config/switchboard/token",
		".local/share/switchboard/logs/audit.log",
	}
	for _, p := range spellings {
		for _, c := range []struct {
			tool string
			args map[string]any
		}{
			{"file_read", map[string]any{"path": p}},
			{"file_write", map[string]any{"path": p, "content": "[policy]\ndefault = \"allow\"\n"}},
			{"file_edit", map[string]any{"path": p, "old_string": "deny", "new_string": "allow"}},
			{"file_delete", map[string]any{"path": p}},
			{"file_rename", map[string]any{"oldPath": p, "newPath": "stolen.txt"}},
			{"file_rename", map[string]any{"oldPath": "notes.txt", "newPath": p}},
			{"file_exists", map[string]any{"path": p}},
			{"file_grep", map[string]any{"pattern": "SECRET", "path": p}},
			{"rag_ingest", map[string]any{"path": p}},
		} {
			if msg := call(t, cs, c.tool, c.args, nil); !strings.Contains(msg, "Switchboard's own state") {
				t.Errorf("%s %v: %q, want a refusal naming the hub's own state", c.tool, c.args, msg)
			}
		}
	}
	for _, dir := range []string{".config/switchboard", ".local/share/switchboard/logs", "cfglink"} {
		if msg := call(t, cs, "dir_list", map[string]any{"path": dir}, nil); !strings.Contains(msg, "Switchboard's own state") {
			t.Errorf("dir_list %s: %q", dir, msg)
		}
	}
	// Listings and walks leave it out, even with include_ignored.
	var list tools.ListDirectoryOutput
	mustCall(t, cs, "dir_list", map[string]any{"path": ".config"}, &list)
	for _, e := range list.Entries {
		if e.Name == "switchboard" {
			t.Errorf("dir_list .config shows the hub's config directory: %+v", list.Entries)
		}
	}
	var grep tools.GrepOutput
	mustCall(t, cs, "file_grep", map[string]any{"pattern": "SECRET", "include_ignored": true}, &grep)
	if len(grep.Matches) != 0 {
		t.Errorf("file_grep over the workspace found the hub's secrets: %+v", grep.Matches)
	}
	var glob tools.GlobOutput
	mustCall(t, cs, "file_glob", map[string]any{"pattern": "**", "include_ignored": true}, &glob)
	for _, p := range glob.Paths {
		if strings.Contains(p, "switchboard") {
			t.Errorf("file_glob lists %s", p)
		}
	}
	if !strings.Contains(strings.Join(glob.Paths, " "), ".config/other/settings") {
		t.Errorf("file_glob lost files that are not the hub's: %v", glob.Paths)
	}
	mustCall(t, cs, "rag_ingest", map[string]any{"path": "."}, nil)
	var q tools.RAGQueryOutput
	mustCall(t, cs, "rag_query", map[string]any{"question": "SECRET-TOKEN SECRET-POLICY SECRET-AUDIT"}, &q)
	for _, r := range q.Results {
		if strings.Contains(r.Source, "switchboard") || strings.Contains(r.Content, "SECRET") {
			t.Errorf("rag_ingest indexed the hub's state: %+v", r)
		}
	}
	// A patch that touches the policy file is refused too.
	patch := "--- a/.config/switchboard/config.toml\n+++ b/.config/switchboard/config.toml\n@@ -1,2 +1,2 @@\n [policy]\n-default = \"deny\"\n+default = \"allow\"\n"
	if msg := call(t, cs, "file_patch", map[string]any{"patch": patch}, nil); !strings.Contains(msg, "Switchboard's own state") {
		t.Errorf("file_patch of the policy file: %q", msg)
	}
	if b, _ := os.ReadFile(filepath.Join(cfgDir, "config.toml")); !strings.Contains(string(b), `default = "deny"`) {
		t.Fatalf("the policy file changed: %s", b)
	}
	if _, err := os.Stat(filepath.Join(dataDir, "logs", "audit.log")); err != nil {
		t.Fatalf("the audit log is gone: %v", err)
	}
	mustCall(t, cs, "file_read", map[string]any{"path": "notes.txt"}, nil)
}

// TestPolicyPathRulesSeeCanonicalPaths: a path rule matches the workspace-relative, cleaned,
// symlink-resolved path whatever spelling the agent uses, and also limits the tools that reach
// those files by walking (file_grep, file_glob over ".").
func TestPolicyPathRulesSeeCanonicalPaths(t *testing.T) {
	p, err := policy.Compile(policy.Config{Rules: []policy.RuleSpec{{Tool: "file_*", Args: map[string]string{"path": "src/*"}, Action: "deny"}}}, policy.RootsConfig{})
	if err != nil {
		t.Fatal(err)
	}
	s := newTestService(t, WithPolicy(policy.NewStore("", p), policy.NewBroker()), WithSearch())
	ws := s.Workspace().Dir()
	writeTree(t, ws, map[string]string{"src/keep.txt": "TOPSECRET\n", "docs/readme.txt": "public\n"})
	if err := os.Symlink(filepath.Join(ws, "src"), filepath.Join(ws, "alias")); err != nil {
		t.Fatal(err)
	}
	cs := connect(t, s)
	for _, spelling := range []string{"src/keep.txt", "./src/keep.txt", "x/../src/keep.txt", filepath.Join(ws, "src/keep.txt"), "alias/keep.txt", "src//keep.txt"} {
		if msg := call(t, cs, "file_read", map[string]any{"path": spelling}, nil); !strings.Contains(msg, "denied by rule 1") {
			t.Errorf("file_read %s: %q, want the rule's denial", spelling, msg)
		}
	}
	var grep tools.GrepOutput
	mustCall(t, cs, "file_grep", map[string]any{"pattern": "TOPSECRET|public", "path": "."}, &grep)
	if len(grep.Matches) != 1 || grep.Matches[0].Path != "docs/readme.txt" {
		t.Errorf("file_grep over . returned %+v; want only docs/readme.txt", grep.Matches)
	}
	var glob tools.GlobOutput
	mustCall(t, cs, "file_glob", map[string]any{"pattern": "**/*.txt"}, &glob)
	if strings.Join(glob.Paths, " ") != "docs/readme.txt" {
		t.Errorf("file_glob returned %v", glob.Paths)
	}
	mustCall(t, cs, "file_read", map[string]any{"path": "./docs/../docs/readme.txt"}, nil)
}

// panicSubsystem adds a tool whose handler panics, standing in for a bug in a tool or in a
// library it calls (the Qdrant client, a parser).
type panicSubsystem struct{}

func (panicSubsystem) Name() string { return "test-panic" }

func (panicSubsystem) Tools() tool.Group {
	return tool.NewGroup("", tool.New(sdk.Tool{Name: "test_panic", Description: "panics", Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, struct{}, error) {
			panic("a handler bug") // what a nil map or pointer in a library would raise
		}))
}

// TestPanicInAToolEndsOnlyThatCall: a panic while handling a call becomes that call's error; the
// session and every other client keep being served.
func TestPanicInAToolEndsOnlyThatCall(t *testing.T) {
	s := newTestService(t, WithSubsystem(panicSubsystem{}))
	cs, other := connect(t, s), connect(t, s)
	if msg := call(t, cs, "test_panic", map[string]any{}, nil); !strings.Contains(msg, "internal error") || !strings.Contains(msg, "still running") {
		t.Errorf("panicking tool: %q", msg)
	}
	mustCall(t, cs, "lang_list", map[string]any{}, nil)
	mustCall(t, other, "lang_list", map[string]any{}, nil)
}

// TestPolicyPathRulesLimitGit: git tools over a directory honour a path rule as file tools do:
// git_status and git_diff leave the denied files out, git_add of "." does not stage them, and
// naming one is refused.
func TestPolicyPathRulesLimitGit(t *testing.T) {
	p, err := policy.Compile(policy.Config{Rules: []policy.RuleSpec{
		{Tool: "file_*", Args: map[string]string{"path": "secrets/*"}, Action: "deny"},
	}}, policy.RootsConfig{})
	if err != nil {
		t.Fatal(err)
	}
	s := newTestService(t, WithPolicy(policy.NewStore("", p), policy.NewBroker()), WithGit())
	ws := s.Workspace().Dir()
	gitInit(t, ws)
	writeTree(t, ws, map[string]string{"secrets/key.txt": "TOPSECRET v1\n", "app.txt": "v1\n"})
	cs := connect(t, s)
	mustCall(t, cs, "git_add", map[string]any{"paths": []string{"app.txt"}}, nil)
	mustCall(t, cs, "git_commit", map[string]any{"message": "app"}, nil)

	var st tools.GitStatusOutput
	mustCall(t, cs, "git_status", map[string]any{}, &st)
	for _, f := range st.Files {
		if strings.HasPrefix(f.Path, "secrets/") {
			t.Errorf("git_status shows %s", f.Path)
		}
	}
	var add tools.GitAddOutput
	mustCall(t, cs, "git_add", map[string]any{"paths": []string{"."}}, &add)
	for _, f := range add.Staged {
		if strings.HasPrefix(f.Path, "secrets/") {
			t.Errorf("git_add . staged %s", f.Path)
		}
	}
	if msg := call(t, cs, "git_add", map[string]any{"paths": []string{"secrets/key.txt"}}, nil); !strings.Contains(msg, "does not allow git_add") {
		t.Errorf("git_add of a denied file: %q", msg)
	}
	// A denied file the user committed: its changes are not shown by git_diff or git_show.
	cmd := exec.Command("git", "add", "-A")
	cmd.Dir = ws
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	cmd = exec.Command("git", "commit", "-qm", "user commits the secret")
	cmd.Dir = ws
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	writeTree(t, ws, map[string]string{"secrets/key.txt": "TOPSECRET v2\n", "app.txt": "v2\n"})
	var d tools.GitDiffOutput
	mustCall(t, cs, "git_diff", map[string]any{}, &d)
	if strings.Contains(d.Diff, "TOPSECRET") || !strings.Contains(d.Diff, "+v2") || len(d.Files) != 1 {
		t.Errorf("git_diff:\n%s\nfiles %+v", d.Diff, d.Files)
	}
	var show tools.GitShowOutput
	mustCall(t, cs, "git_show", map[string]any{"ref": "HEAD"}, &show)
	if strings.Contains(show.Diff, "TOPSECRET") {
		t.Errorf("git_show prints the denied file:\n%s", show.Diff)
	}
}

package mcp

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/internal/policy"
	"github.com/switchboard-hub/switchboard/mcp/tool"
	"github.com/switchboard-hub/switchboard/mcp/tools"
)

// fakeGroup is a tool group as a new contributor would write it (mcp/groups.go): its own type
// with only what it uses, its toolset, and its tools: one argument declared a workspace path
// under a name and description that say nothing about paths, and one argument whose
// description talks about paths but is plain text.
type fakeGroup struct{ tools.Workspaces }

func newFakeGroup(s *Service) any { return &fakeGroup{Workspaces: s.trust} }

type fakeCopyInput struct {
	Target string `json:"target" workspace:"path" jsonschema:"where the copy goes"`
}

type fakeNoteInput struct {
	Note string `json:"note" jsonschema:"free text; may mention a path or a directory, which is never opened"`
}

type fakeOutput struct {
	Where string `json:"where"`
}

func fakeGroupDecl() tool.Group {
	return tool.NewGroup("memory",
		tool.Func(sdk.Tool{Name: "fake_copy", Annotations: tool.Write("Copy", false, true)}, (*fakeGroup).copy),
		tool.New(sdk.Tool{Name: "fake_note", Annotations: tool.ReadOnly("Note")},
			func(context.Context, *sdk.CallToolRequest, fakeNoteInput) (*sdk.CallToolResult, fakeOutput, error) {
				return nil, fakeOutput{}, nil
			}))
}

func (g *fakeGroup) copy(ctx context.Context, req *sdk.CallToolRequest, in fakeCopyInput) (*sdk.CallToolResult, fakeOutput, error) {
	ws, err := g.WorkspaceFor(ctx, req)
	if err != nil {
		return nil, fakeOutput{}, err
	}
	return nil, fakeOutput{Where: ws.Dir()}, nil
}

// TestToolDeclarationsDecidePathHandling: whether a tool needs a roots client's consent, and
// which arguments policy path rules see in canonical form, follow the tool's declaration
// (workspace:"path"), not the words in its argument names or descriptions.
func TestToolDeclarationsDecidePathHandling(t *testing.T) {
	p, err := policy.Compile(policy.Config{Rules: []policy.RuleSpec{
		{Tool: "fake_copy", Args: map[string]string{"target": "secret/*"}, Action: "deny"},
		{Tool: "fake_note", Args: map[string]string{"note": "secret/*"}, Action: "deny"},
	}}, policy.RootsConfig{})
	if err != nil {
		t.Fatal(err)
	}
	s := newTestService(t, WithPolicy(policy.NewStore("", p), policy.NewBroker()), withToolGroups(groupDecl{fakeGroupDecl, newFakeGroup}))
	if !s.trust.PathTool("fake_copy") || s.trust.PathTool("fake_note") || strings.Join(s.trust.PathArgs("fake_copy"), ",") != "target" {
		t.Fatalf("declarations read as fake_copy %v %v, fake_note %v", s.trust.PathTool("fake_copy"), s.trust.PathArgs("fake_copy"), s.trust.PathTool("fake_note"))
	}
	if s.trust.PathTool("lang_detect") {
		t.Error("lang_detect only inspects a name; it is not a workspace tool")
	}

	// Consent: a roots client whose root needs it is asked for fake_copy, never for fake_note.
	root := t.TempDir() // outside the home: needs consent
	var asked atomic.Int32
	cs := connectWith(t, s, "decl-client", &sdk.ClientOptions{ElicitationHandler: func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
		asked.Add(1)
		return &sdk.ElicitResult{Action: "accept"}, nil
	}}, &sdk.Root{URI: fileURI(root)})
	mustCall(t, cs, "fake_note", map[string]any{"note": "see the path /etc"}, nil)
	if n := asked.Load(); n != 0 {
		t.Fatalf("asked %d times for a tool that declares no workspace use", n)
	}
	var out fakeOutput
	mustCall(t, cs, "fake_copy", map[string]any{"target": "a.txt"}, &out)
	if n := asked.Load(); n != 1 || out.Where != root {
		t.Fatalf("fake_copy: asked %d times, worked in %q; want asked once, in the root %s", n, out.Where, root)
	}

	// Path rules: the declared argument is matched canonically, the undeclared one as written.
	if err := os.MkdirAll(filepath.Join(root, "secret"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, spelling := range []string{"secret/x", "./secret/x", "y/../secret/x", filepath.Join(root, "secret/x")} {
		if msg := call(t, cs, "fake_copy", map[string]any{"target": spelling}, nil); !strings.Contains(msg, "denied by rule 1") {
			t.Errorf("fake_copy target=%s: %q, want the rule's denial", spelling, msg)
		}
	}
	if msg := call(t, cs, "fake_note", map[string]any{"note": "./secret/x"}, nil); msg != "" {
		t.Errorf("fake_note's text was treated as a path: %q", msg)
	}
	if msg := call(t, cs, "fake_note", map[string]any{"note": "secret/x"}, nil); !strings.Contains(msg, "denied by rule 2") {
		t.Errorf("fake_note's rule on its text as written: %q", msg)
	}

	// Toolsets: the group's declared toolset travels with its tools and switches them.
	served := func(name string) bool {
		return slices.ContainsFunc(s.ActiveTools(), func(t *sdk.Tool) bool { return t.Name == name })
	}
	for _, tl := range s.ActiveTools() {
		if strings.HasPrefix(tl.Name, "fake_") && ToolsetOf(tl) != "memory" {
			t.Errorf("%s: toolset %q, want the group's memory", tl.Name, ToolsetOf(tl))
		}
	}
	if _, err := s.SetToolset("memory", false); err != nil {
		t.Fatal(err)
	}
	if served("fake_copy") || served("fake_note") || !served("file_read") {
		t.Errorf("memory off: fake_copy served %v, fake_note %v, file_read %v", served("fake_copy"), served("fake_note"), served("file_read"))
	}
	if _, err := s.SetToolset("memory", true); err != nil {
		t.Fatal(err)
	}
	if !served("fake_copy") {
		t.Error("memory on again: fake_copy not served")
	}
}

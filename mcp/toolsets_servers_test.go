package mcp

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/switchboard-hub/switchboard/internal/testutil"
	"github.com/switchboard-hub/switchboard/internal/upstream"
)

// fixtureHub is a hub with opts serving test/node's upstream-fixture.mjs as the approved
// upstream server "fixture" (tools fixture__greet, fixture__write-note, …).
func fixtureHub(t *testing.T, opts ...Option) *Service {
	t.Helper()
	return fixtureHubWith(t, nil, opts...)
}

// fixtureHubWith is fixtureHub with the fixture's environment (FIXTURE_MODE, …).
func fixtureHubWith(t *testing.T, env map[string]string, opts ...Option) *Service {
	t.Helper()
	sdkDir := testutil.NodeModule(t, "@modelcontextprotocol/sdk")
	script := filepath.Join(filepath.Dir(filepath.Dir(filepath.Dir(sdkDir))), "upstream-fixture.mjs")
	m, err := upstream.New(upstream.Options{ApprovalsFile: filepath.Join(t.TempDir(), "a.json"), Workspace: t.TempDir(), Reserved: ToolsetNames()})
	if err != nil {
		t.Fatal(err)
	}
	s := newTestService(t, append(opts, WithUpstreams(m))...)
	if err := approveSync(m, []upstream.Spec{{Name: "fixture", Command: "node", Args: []string{script}, Env: env}}); err != nil {
		t.Fatal(err)
	}
	waitUpstream(t, m, "fixture", func(st upstream.Status) bool { return st.State == upstream.StateRunning })
	if _, err := m.Approve(t.Context(), "fixture"); err != nil {
		t.Fatal(err)
	}
	// The server's tools are registered once approved; wait until the hub has them.
	waitUpstream(t, m, "fixture", func(upstream.Status) bool { return hasTool(s, "fixture__greet") })
	return s
}

func hasTool(s *Service, name string) bool {
	for _, tl := range s.Tools() {
		if tl.Name == name {
			return true
		}
	}
	return false
}

// TestToolsetsNameServers: an upstream server is a toolset of its own name for --toolsets and the
// toolsets key. "files" alone offers no server tool (and its switch shows off); "files" and the
// server's name offer its tools; "all" and the default (WithDefaultToolsets, or no toolsets
// chosen) offer every server's; and the server's switch still turns it on under "files".
func TestToolsetsNameServers(t *testing.T) {
	fixtureOn := func(t *testing.T, s *Service) bool {
		t.Helper()
		for _, ts := range s.Toolsets() {
			if ts.Name == "fixture" {
				if !ts.Upstream || len(ts.Tools) == 0 {
					t.Fatalf("fixture toolset: %+v", ts)
				}
				return ts.Enabled
			}
		}
		t.Fatalf("no fixture toolset in %+v", s.Toolsets())
		return false
	}
	for _, c := range []struct {
		name      string
		opts      []Option
		served    bool
		fileTools bool
	}{
		{"files", []Option{WithToolsets("files")}, false, true},
		{"files and the server", []Option{WithToolsets("files", "fixture")}, true, true},
		{"the server alone", []Option{WithToolsets("fixture")}, true, false},
		{"comma-separated", []Option{WithToolsets("files,fixture")}, true, true},
		{"all", []Option{WithToolsets("all")}, true, true},
		{"default", []Option{WithDefaultToolsets(false)}, true, true},
		{"none chosen", nil, true, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := fixtureHub(t, c.opts...)
			names := toolNames(t, connect(t, s))
			if got := slices.Contains(names, "fixture__greet"); got != c.served {
				t.Errorf("fixture__greet listed = %v, want %v: %v", got, c.served, names)
			}
			if got := slices.Contains(names, "file_read"); got != c.fileTools {
				t.Errorf("file_read listed = %v, want %v", got, c.fileTools)
			}
			if got := fixtureOn(t, s); got != c.served {
				t.Errorf("fixture toolset enabled = %v, want %v", got, c.served)
			}
			if slices.Contains(s.ActiveToolsets(), "fixture") != c.served {
				t.Errorf("active toolsets %v", s.ActiveToolsets())
			}
			if !c.served {
				if _, err := s.SetToolset("fixture", true); err != nil {
					t.Fatal(err)
				}
				if names := toolNames(t, connect(t, s)); !slices.Contains(names, "fixture__greet") {
					t.Errorf("switched on: %v", names)
				}
			}
		})
	}
}

// TestParseToolsetsTakesServerNames: the names of configured servers are toolsets; "all" covers
// them; an unknown name is refused naming the hub's sets and the servers; without upstream
// servers the hub still refuses a name it does not know.
func TestParseToolsetsTakesServerNames(t *testing.T) {
	got, err := ParseToolsets([]string{"files", "github"}, "github", "linear")
	if err != nil || !slices.Equal(got, []string{"files", "github"}) {
		t.Errorf("files,github: %v %v", got, err)
	}
	if got, err := ParseToolsets([]string{"all"}, "github"); err != nil || !slices.Contains(got, "github") || !slices.Contains(got, "ide") {
		t.Errorf("all: %v %v", got, err)
	}
	if _, err := ParseToolsets([]string{"FILES", "Github"}, "github"); err == nil || !strings.Contains(err.Error(), `"Github"`) {
		t.Errorf("a server's name is case-sensitive, the hub's sets are not: %v", err)
	}
	_, err = ParseToolsets([]string{"files", "gitlab"}, "github", "linear")
	if err == nil || !strings.Contains(err.Error(), `toolsets: unknown toolset "gitlab"; valid: all, files,`) || !strings.Contains(err.Error(), "or a configured server: github, linear") {
		t.Errorf("gitlab: %v", err)
	}
	if _, err := ParseToolsets([]string{"github"}); err == nil || !strings.Contains(err.Error(), "none is configured") {
		t.Errorf("no servers: %v", err)
	}
	if _, err := New(WithWorkspaceRoot(t.TempDir()), WithToolsets("files", "github")); err == nil || !strings.Contains(err.Error(), `unknown toolset "github"`) {
		t.Errorf("a hub without upstream servers took a server's name: %v", err)
	}
}

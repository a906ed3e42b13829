package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/internal/audit"
	"github.com/switchboard-hub/switchboard/internal/code"
	"github.com/switchboard-hub/switchboard/internal/policy"
	"github.com/switchboard-hub/switchboard/internal/process"
	"github.com/switchboard-hub/switchboard/internal/testutil"
	"github.com/switchboard-hub/switchboard/mcp/tools"
)

// The code toolset through a real MCP client against the whole hub (policy, workspaces, audit),
// with a real gopls: the pool is the app's (one per hub), the workspace a small Go module.

// requireGopls skips the test when gopls is not installed, or fails it under CI=true, where a
// missing server is a broken setup (make lsp-deps installs the pinned one).
func requireGopls(t *testing.T) {
	t.Helper()
	if _, err := code.Locate("go", nil, nil); err != nil {
		msg := err.Error() + " (make lsp-deps installs the pinned test servers)"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
}

// codeModule is a Go module whose util.Double is used from five files, util.Triple from a file
// in the hub's own state directory (hubdata/), and a test that fails.
var codeModule = map[string]string{
	"go.mod": "module example.com/cfx\n\ngo 1.22\n",
	"util/util.go": `package util

// Double returns twice x.
func Double(x int) int { return x * 2 }

// Triple returns three times x.
func Triple(x int) int { return x * 3 }
`,
	"a/a.go": "package a\n\nimport \"example.com/cfx/util\"\n\n// A doubles one.\nfunc A() int { return util.Double(1) }\n",
	"b/b.go": "package b\n\nimport \"example.com/cfx/util\"\n\n// B doubles two.\nfunc B() int { return util.Double(2) }\n",
	"c/c.go": "package c\n\nimport \"example.com/cfx/util\"\n\n// C doubles three.\nfunc C() int { return util.Double(3) }\n",
	"main.go": `package main

import (
	"fmt"

	"example.com/cfx/a"
	"example.com/cfx/b"
	"example.com/cfx/c"
	"example.com/cfx/util"
)

func main() {
	fmt.Println(a.A(), b.B(), c.C(), util.Double(4))
}
`,
	"hubdata/h.go": "package hubdata\n\nimport \"example.com/cfx/util\"\n\n// H triples one.\nfunc H() int { return util.Triple(1) }\n",
	"notes.txt":    "plain text\n",
}

// codeHub is a hub with the code toolset on a fresh copy of codeModule (its real path), its
// hubdata/ directory the hub's own state, and the pool it uses.
func codeHub(t *testing.T, files map[string]string, opts ...Option) (*Service, string, *code.Pool) {
	t.Helper()
	requireGopls(t)
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	writeTree(t, ws, files)
	pool := code.NewPool(code.Options{StateDir: t.TempDir(), Idle: -1})
	t.Cleanup(func() { pool.Close() })
	s := newTestService(t, append([]Option{WithWorkspaceRoot(ws), WithHubState(filepath.Join(ws, "hubdata")), WithPatch(),
		WithProcessService(process.New(process.Options{})), WithCode(pool)}, opts...)...)
	return s, ws, pool
}

// lineOf is the 1-based line and byte column of needle's first occurrence in a workspace file.
func lineOf(t testing.TB, ws, path, needle string) (int, int) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(ws, path))
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range strings.Split(string(b), "\n") {
		if c := strings.Index(l, needle); c >= 0 {
			return i + 1, c + 1
		}
	}
	t.Fatalf("%s: no %q", path, needle)
	return 0, 0
}

// TestCodeDefinitionAcrossPackages: a call in main.go leads to its declaration in util/, by
// position and by symbol name; references count the five uses.
func TestCodeDefinitionAcrossPackages(t *testing.T) {
	s, ws, _ := codeHub(t, codeModule)
	cs := connect(t, s)
	line, col := lineOf(t, ws, "main.go", "Double(4)")
	var def tools.CodeLocationsOutput
	mustCall(t, cs, "code_definition", map[string]any{"path": "main.go", "line": line, "column": col}, &def)
	wantLine, _ := lineOf(t, ws, "util/util.go", "func Double")
	if len(def.Locations) != 1 || def.Locations[0].Path != "util/util.go" || def.Locations[0].Line != wantLine ||
		!strings.Contains(def.Locations[0].Preview, "func Double") {
		t.Fatalf("code_definition = %+v, want util/util.go:%d", def.Locations, wantLine)
	}
	var bySymbol tools.CodeLocationsOutput
	mustCall(t, cs, "code_definition", map[string]any{"symbol": "util.Double"}, &bySymbol)
	if len(bySymbol.Locations) != 1 || bySymbol.Locations[0].Path != "util/util.go" || bySymbol.Locations[0].Line != wantLine {
		t.Errorf("code_definition by symbol = %+v", bySymbol.Locations)
	}
	var refs tools.CodeReferencesOutput
	mustCall(t, cs, "code_references", map[string]any{"symbol": "util.Double"}, &refs)
	if refs.Count != 4 || len(refs.Locations) != 4 {
		t.Errorf("code_references = %d %+v, want the 4 calls", refs.Count, refs.Locations)
	}
	var withDecl tools.CodeReferencesOutput
	mustCall(t, cs, "code_references", map[string]any{"symbol": "util.Double", "includeDeclaration": true}, &withDecl)
	if withDecl.Count != 5 {
		t.Errorf("code_references with the declaration = %d, want 5", withDecl.Count)
	}
	// The text a model reads is a listing of the same locations, as a compiler prints them.
	want := []string{"5 references"}
	for _, l := range withDecl.Locations {
		want = append(want, fmt.Sprintf("%s:%d:%d: %s", l.Path, l.Line, l.Column, l.Preview))
	}
	wantListing(t, cs, "code_references", map[string]any{"symbol": "util.Double", "includeDeclaration": true}, want)
	var hover tools.CodeHoverOutput
	mustCall(t, cs, "code_hover", map[string]any{"path": "main.go", "line": line, "column": col}, &hover)
	if !strings.Contains(hover.Contents, "Double(x int) int") {
		t.Errorf("code_hover = %q", hover.Contents)
	}
	var calls tools.CodeCallsOutput
	mustCall(t, cs, "code_calls", map[string]any{"symbol": "util.Double", "direction": "incoming"}, &calls)
	if len(calls.Calls) != 4 {
		t.Errorf("code_calls incoming = %+v, want A, B, C and main", calls.Calls)
	}
	want = []string{"4 incoming calls"}
	for _, c := range calls.Calls {
		want = append(want, fmt.Sprintf("%s:%d:%d: %s", c.Path, c.Line, c.Column, c.Name))
	}
	wantListing(t, cs, "code_calls", map[string]any{"symbol": "util.Double", "direction": "incoming"}, want)
	var syms tools.CodeSymbolsOutput
	mustCall(t, cs, "code_symbols", map[string]any{"path": "util/util.go"}, &syms)
	if len(syms.Symbols) != 2 || syms.Symbols[0].Name != "Double" || syms.Symbols[1].Name != "Triple" {
		t.Fatalf("code_symbols outline = %+v", syms.Symbols)
	}
	dl, dc := lineOf(t, ws, "util/util.go", "Double(x")
	text := wantListing(t, cs, "code_symbols", map[string]any{"path": "util/util.go"}, nil)
	if !strings.HasPrefix(text, "2 symbols\n"+fmt.Sprintf("util/util.go:%d:%d: function Double", dl, dc)) {
		t.Errorf("code_symbols text:\n%s", text)
	}
}

// wantListing calls tool and checks its text: the lines of want when given; it returns the text.
func wantListing(t *testing.T, cs *sdk.ClientSession, name string, args map[string]any, want []string) string {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil || res.IsError || len(res.Content) != 1 {
		t.Fatalf("%s: %v %+v", name, err, res)
	}
	text := res.Content[0].(*sdk.TextContent).Text
	if want != nil && text != strings.Join(want, "\n") {
		t.Errorf("%s text:\n%s\nwant:\n%s", name, text, strings.Join(want, "\n"))
	}
	return text
}

// TestCodeSymbolInAFile: path with symbol (no line or column) finds the symbol declared in that
// file from its outline: a function, a method qualified by its type, and the refusals for a
// name the file does not declare and for one it declares twice.
func TestCodeSymbolInAFile(t *testing.T) {
	s, ws, _ := codeHub(t, map[string]string{
		"go.mod":         "module example.com/sym\n\ngo 1.22\n",
		"count/count.go": "package count\n\n// Counter counts.\ntype Counter struct{ n int }\n\n// Add adds one.\nfunc (c *Counter) Add() { c.n++ }\n\n// Gauge measures.\ntype Gauge struct{ n int }\n\n// Add adds one.\nfunc (g *Gauge) Add() { g.n++ }\n\n// New makes a counter.\nfunc New() *Counter { return &Counter{} }\n",
		"main.go":        "package main\n\nimport \"example.com/sym/count\"\n\nfunc main() { c := count.New(); c.Add() }\n",
	})
	cs := connect(t, s)
	for _, c := range []struct{ symbol, needle string }{
		{"New", "func New"},
		{"count.New", "func New"},
		{"Gauge.Add", "func (g *Gauge) Add"},
		{"Counter.Add", "func (c *Counter) Add"},
	} {
		var def tools.CodeLocationsOutput
		mustCall(t, cs, "code_definition", map[string]any{"path": "count/count.go", "symbol": c.symbol}, &def)
		want, _ := lineOf(t, ws, "count/count.go", c.needle)
		if len(def.Locations) != 1 || def.Locations[0].Path != "count/count.go" || def.Locations[0].Line != want {
			t.Errorf("%s in count/count.go = %+v, want line %d", c.symbol, def.Locations, want)
		}
	}
	var refs tools.CodeReferencesOutput
	mustCall(t, cs, "code_references", map[string]any{"path": "count/count.go", "symbol": "Counter.Add"}, &refs)
	if refs.Count != 1 || len(refs.Locations) != 1 || refs.Locations[0].Path != "main.go" {
		t.Errorf("references of Counter.Add = %+v, want the call in main.go", refs)
	}
	for args, want := range map[string]string{
		"Add":      "ambiguous in count/count.go, 2 candidates",
		"Subtract": "not declared in count/count.go",
	} {
		if msg := call(t, cs, "code_definition", map[string]any{"path": "count/count.go", "symbol": args}, nil); !strings.Contains(msg, want) {
			t.Errorf("%s: %q, want %q", args, msg, want)
		}
	}
}

// TestCodeRenameFiveFiles: a dry run reports the five files and the diff and writes nothing;
// the rename then changes all five.
func TestCodeRenameFiveFiles(t *testing.T) {
	s, ws, _ := codeHub(t, codeModule)
	cs := connect(t, s)
	files := []string{"a/a.go", "b/b.go", "c/c.go", "main.go", "util/util.go"}
	var dry tools.CodeRenameOutput
	mustCall(t, cs, "code_rename", map[string]any{"symbol": "util.Double", "newName": "Twice", "dryRun": true}, &dry)
	if dry.Applied || strings.Join(dry.Files, ",") != strings.Join(files, ",") || !strings.Contains(dry.Diff, "+func Twice(x int) int") {
		t.Fatalf("dry run = %+v", dry)
	}
	for _, f := range files {
		if b, _ := os.ReadFile(filepath.Join(ws, f)); strings.Contains(string(b), "Twice") {
			t.Fatalf("the dry run wrote %s", f)
		}
	}
	line, col := lineOf(t, ws, "util/util.go", "Double(x")
	var done tools.CodeRenameOutput
	mustCall(t, cs, "code_rename", map[string]any{"path": "util/util.go", "line": line, "column": col, "newName": "Twice"}, &done)
	if !done.Applied || strings.Join(done.Files, ",") != strings.Join(files, ",") {
		t.Fatalf("rename = %+v", done)
	}
	for _, f := range files {
		b, _ := os.ReadFile(filepath.Join(ws, f))
		if !strings.Contains(string(b), "Twice(") || strings.Contains(string(b), "Double(") {
			t.Errorf("%s after the rename:\n%s", f, b)
		}
	}
	if len(done.Diagnostics) != 0 {
		t.Errorf("a clean rename reported diagnostics: %+v", done.Diagnostics)
	}
}

// TestCodeFileEditReportsTypeError: with gopls running for the workspace, a file_edit that
// introduces a type error lists it in its result; file_patch that fixes it lists none; a write
// to a file no server handles does not ask.
func TestCodeFileEditReportsTypeError(t *testing.T) {
	s, ws, _ := codeHub(t, codeModule)
	cs := connect(t, s)
	// No server yet: the edit does not start one and says nothing.
	var before tools.EditFileOutput
	mustCall(t, cs, "file_edit", map[string]any{"path": "b/b.go", "old_string": "doubles two", "new_string": "doubles 2"}, &before)
	if len(before.Diagnostics) != 0 {
		t.Fatalf("file_edit without a running server = %+v", before)
	}
	var diags tools.CodeDiagnosticsOutput
	mustCall(t, cs, "code_diagnostics", map[string]any{"path": "a/a.go"}, &diags)
	if len(diags.Diagnostics) != 0 {
		t.Fatalf("clean module has diagnostics: %+v", diags.Diagnostics)
	}
	var edit tools.EditFileOutput
	mustCall(t, cs, "file_edit", map[string]any{"path": "a/a.go", "old_string": "return util.Double(1)", "new_string": "var s string = util.Double(1)\n\treturn len(s)"}, &edit)
	if len(edit.Diagnostics) == 0 {
		t.Fatalf("file_edit introducing a type error reported no diagnostics: %+v", edit)
	}
	d := edit.Diagnostics[0]
	wantLine, _ := lineOf(t, ws, "a/a.go", "var s string")
	if d.Path != "a/a.go" || d.Line != wantLine || d.Severity != "error" || !strings.Contains(d.Message, "cannot use") {
		t.Errorf("diagnostic = %+v, want an error at a/a.go:%d", d, wantLine)
	}
	if text := wantListing(t, cs, "code_diagnostics", map[string]any{"path": "a/a.go"}, nil); !strings.Contains(text, fmt.Sprintf("\na/a.go:%d:%d: error: cannot use", d.Line, d.Column)) {
		t.Errorf("code_diagnostics text:\n%s", text)
	}
	// The dashboard's feed shows it on the file.
	if files := s.CodeFeed().Files; len(files) != 1 || files[0].Path != "a/a.go" || len(files[0].Diagnostics) == 0 {
		t.Errorf("the feed's files = %+v", files)
	}
	patch := "--- a/a/a.go\n+++ b/a/a.go\n@@ -6,2 +6,2 @@\n-func A() int { var s string = util.Double(1)\n-\treturn len(s) }\n+func A() int { var s int = util.Double(1)\n+\treturn s }\n"
	var fixed tools.PatchOutput
	mustCall(t, cs, "file_patch", map[string]any{"patch": patch}, &fixed)
	if !fixed.Applied || len(fixed.Diagnostics) != 0 {
		t.Errorf("file_patch fixing it = %+v", fixed)
	}
	var txt tools.WriteFileOutput
	mustCall(t, cs, "file_write", map[string]any{"path": "notes.txt", "content": "still text\n"}, &txt)
	if len(txt.Diagnostics) != 0 {
		t.Errorf("file_write of a text file = %+v", txt)
	}
}

// TestCodeProjectRunGoTest: project_detect finds go test from go.mod; project_run test runs it
// as a process every client sees and parses the failing test into failures.
func TestCodeProjectRunGoTest(t *testing.T) {
	files := map[string]string{
		"go.mod":            "module example.com/runfx\n\ngo 1.22\n",
		"calc/calc.go":      "package calc\n\n// Add adds.\nfunc Add(a, b int) int { return a - b }\n",
		"calc/calc_test.go": "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif got := Add(2, 2); got != 4 {\n\t\tt.Errorf(\"Add(2, 2) = %d, want 4\", got)\n\t}\n}\n",
	}
	s, ws, _ := codeHub(t, files)
	cs := connect(t, s)
	var det tools.ProjectDetectOutput
	mustCall(t, cs, "project_detect", map[string]any{}, &det)
	if len(det.Languages) == 0 || det.Languages[0] != "go" || len(det.Commands.Test) == 0 ||
		det.Commands.Test[0].Command != "go test ./..." || det.Commands.Test[0].Source != "go.mod" {
		t.Fatalf("project_detect = %+v", det)
	}
	var run tools.ProjectRunOutput
	mustCall(t, cs, "project_run", map[string]any{"action": "test"}, &run)
	if run.Success || run.ExitCode == 0 || run.Source != "go.mod" || !strings.Contains(run.Output, "FAIL") {
		t.Fatalf("project_run = %+v", run)
	}
	wantLine, _ := lineOf(t, ws, "calc/calc_test.go", "t.Errorf")
	if len(run.Failures) != 1 || run.Failures[0].Path != "calc/calc_test.go" || run.Failures[0].Line != wantLine ||
		run.Failures[0].Test != "TestAdd" || !strings.Contains(run.Failures[0].Message, "Add(2, 2) = 0, want 4") {
		t.Errorf("failures = %+v, want TestAdd at calc/calc_test.go:%d", run.Failures, wantLine)
	}
	var list tools.ProcessListOutput
	mustCall(t, cs, "process_list", map[string]any{}, &list)
	if len(list.Processes) != 1 || list.Processes[0].ID != run.Process || list.Processes[0].Command != "sh" {
		t.Errorf("process_list = %+v, want project_run's process %s", list.Processes, run.Process)
	}
	// A command given runs instead; the dashboard keeps the runs.
	var given tools.ProjectRunOutput
	mustCall(t, cs, "project_run", map[string]any{"action": "build", "command": "go vet ./..."}, &given)
	if !given.Success || given.Source != "command" {
		t.Errorf("project_run with a command = %+v", given)
	}
	if runs := s.CodeFeed().Runs; len(runs) != 2 || runs[0].Command != "go vet ./..." || len(runs[1].Failures) != 1 {
		t.Errorf("the feed's runs = %+v", runs)
	}
	// Out of time: the command and what it started are killed, and the result says so.
	var slow tools.ProjectRunOutput
	mustCall(t, cs, "project_run", map[string]any{"action": "build", "command": "sleep 30", "timeout": 1}, &slow)
	if slow.Success || !slow.TimedOut || slow.ExitCode != 128+9 {
		t.Errorf("project_run past its timeout = %+v", slow)
	}
	if msg := call(t, cs, "project_run", map[string]any{"action": "deploy"}, nil); !strings.Contains(msg, "action:") {
		t.Errorf("unknown action: %q", msg)
	}
}

// TestCodeHostileInput: what leaves the workspace, touches the hub's own files or names no
// real place is refused with an error naming the field.
func TestCodeHostileInput(t *testing.T) {
	s, ws, _ := codeHub(t, codeModule)
	outside := t.TempDir()
	writeTree(t, outside, map[string]string{"secret.go": "package secret\n\nfunc Secret() {}\n"})
	if err := os.Symlink(filepath.Join(outside, "secret.go"), filepath.Join(ws, "link.go")); err != nil {
		t.Fatal(err)
	}
	cs := connect(t, s)
	for _, c := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"code_definition", map[string]any{"path": "../x/secret.go", "line": 1, "column": 1}, "path"},
		{"code_definition", map[string]any{"path": filepath.Join(outside, "secret.go"), "line": 3, "column": 6}, "path"},
		{"code_hover", map[string]any{"path": "link.go", "line": 3, "column": 6}, "path"},
		{"code_symbols", map[string]any{"path": "link.go"}, "path"},
		{"code_diagnostics", map[string]any{"path": "link.go"}, "path"},
		{"code_definition", map[string]any{"path": "main.go", "line": 999, "column": 1}, "line: 999 is past the end"},
		{"code_definition", map[string]any{"path": "main.go", "line": 1, "column": 99}, "column: 99 is past the end"},
		{"code_definition", map[string]any{"path": "main.go"}, "line and column: required"},
		{"code_definition", map[string]any{}, "path: required"},
		{"code_definition", map[string]any{"path": "main.go", "line": 1, "column": 1, "symbol": "util.Double"}, "symbol: give either"},
		{"code_symbols", map[string]any{"path": "main.go", "query": "Double"}, "query: give either"},
		{"code_symbols", map[string]any{"query": "Double", "language": "cobol"}, "cobol"},
		{"code_definition", map[string]any{"symbol": "Double", "language": "cobol"}, "cobol"},
		{"code_definition", map[string]any{"path": "notes.txt", "line": 1, "column": 1}, "no language server for .txt"},
		{"code_calls", map[string]any{"symbol": "util.Double", "direction": "sideways"}, "direction:"},
		{"code_rename", map[string]any{"symbol": "util.Double"}, "newName: required"},
		{"code_rename", map[string]any{"symbol": "util.Triple", "newName": "Thrice"}, "hubdata/h.go"},
		{"code_rename", map[string]any{"symbol": "util.Triple", "newName": "Thrice", "dryRun": true}, "hubdata/h.go"},
		{"project_map", map[string]any{"maxDepth": 50}, "maxDepth:"},
	} {
		msg := call(t, cs, c.tool, c.args, nil)
		t.Logf("%s %v: %s", c.tool, c.args, msg)
		if msg == "" || !strings.Contains(msg, c.want) {
			t.Errorf("%s %v = %q, want a refusal containing %q", c.tool, c.args, msg, c.want)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "util/util.go")); !strings.Contains(string(b), "func Triple") {
		t.Errorf("a refused rename changed util/util.go:\n%s", b)
	}
	// Answers leave out the hub's own files: Triple's one use is in hubdata/.
	var refs tools.CodeReferencesOutput
	mustCall(t, cs, "code_references", map[string]any{"symbol": "util.Triple", "includeDeclaration": true}, &refs)
	if refs.Count != 1 || len(refs.Locations) != 1 || refs.Locations[0].Path != "util/util.go" {
		t.Errorf("references of Triple = %+v, want only its declaration", refs)
	}
	var calls tools.CodeCallsOutput
	mustCall(t, cs, "code_calls", map[string]any{"symbol": "util.Triple"}, &calls)
	if len(calls.Calls) != 0 {
		t.Errorf("callers of Triple = %+v, want none shown", calls.Calls)
	}
	var syms tools.CodeSymbolsOutput
	mustCall(t, cs, "code_symbols", map[string]any{"query": "H", "language": "go"}, &syms)
	for _, sym := range syms.Symbols {
		if strings.HasPrefix(sym.Path, "hubdata/") {
			t.Errorf("code_symbols shows the hub's files: %+v", sym)
		}
	}
}

// TestCodeTwoClientsShareOneGopls: two clients in one workspace are answered by one gopls.
func TestCodeTwoClientsShareOneGopls(t *testing.T) {
	s, ws, pool := codeHub(t, codeModule)
	line, col := lineOf(t, ws, "main.go", "Double(4)")
	args := map[string]any{"path": "main.go", "line": line, "column": col}
	var pids []int
	for range 2 {
		cs := connect(t, s)
		var def tools.CodeLocationsOutput
		mustCall(t, cs, "code_definition", args, &def)
		if len(def.Locations) != 1 {
			t.Fatalf("code_definition = %+v", def)
		}
		st := pool.Status()
		if len(st) != 1 || st[0].Language != "go" || st[0].PID == 0 {
			t.Fatalf("pool status = %+v, want one gopls", st)
		}
		pids = append(pids, st[0].PID)
	}
	if pids[0] != pids[1] {
		t.Errorf("the second client got another gopls: pids %v", pids)
	}
	// The dashboard's feed shows it.
	feed := s.CodeFeed()
	if len(feed.Servers) != 1 || feed.Servers[0].State != "ready" && feed.Servers[0].State != "busy" {
		t.Errorf("feed servers = %+v", feed.Servers)
	}
	var m tools.ProjectMapOutput
	mustCall(t, connect(t, s), "project_map", map[string]any{"maxDepth": 2}, &m)
	if !strings.Contains(m.Tree, "util/") || strings.Contains(m.Tree, "hubdata") {
		t.Errorf("project_map tree:\n%s", m.Tree)
	}
}

// TestCodePolicyRules: code_rename is held to file_write's path rules for every file it would
// change, and project_run to exec's rules for the command it would run.
func TestCodePolicyRules(t *testing.T) {
	p, err := policy.Compile(policy.Config{Rules: []policy.RuleSpec{
		{Tool: "file_write", Args: map[string]string{"path": "b/*"}, Action: "deny"},
		{Tool: "exec", Args: map[string]string{"command": "go"}, Action: "deny"},
	}}, policy.RootsConfig{})
	if err != nil {
		t.Fatal(err)
	}
	s, ws, _ := codeHub(t, codeModule, WithPolicy(policy.NewStore("", p), policy.NewBroker()))
	cs := connect(t, s)
	for _, dry := range []bool{true, false} {
		msg := call(t, cs, "code_rename", map[string]any{"symbol": "util.Double", "newName": "Twice", "dryRun": dry}, nil)
		if !strings.Contains(msg, "b/b.go") || !strings.Contains(msg, "file_write") {
			t.Errorf("rename through a denied file (dryRun %v) = %q", dry, msg)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "a/a.go")); strings.Contains(string(b), "Twice") {
		t.Errorf("a refused rename changed a/a.go")
	}
	// Outside the rule, a rename goes through.
	var ok tools.CodeRenameOutput
	mustCall(t, cs, "code_rename", map[string]any{"symbol": "a.A", "newName": "AA", "dryRun": true}, &ok)
	if strings.Join(ok.Files, ",") != "a/a.go,main.go" {
		t.Errorf("rename of a.A = %+v", ok)
	}
	if msg := call(t, cs, "project_run", map[string]any{"action": "test"}, nil); !strings.Contains(msg, "exec") || !strings.Contains(msg, "go test") {
		t.Errorf("project_run of a command exec may not run = %q", msg)
	}
	var echo tools.ProjectRunOutput
	mustCall(t, cs, "project_run", map[string]any{"action": "lint", "command": "echo lint ok"}, &echo)
	if !echo.Success || !strings.Contains(echo.Output, "lint ok") {
		t.Errorf("project_run echo = %+v", echo)
	}
}

// TestCodeProjectRunCancelled: a project_run whose call is cancelled (notifications/cancelled)
// kills its process group; the process shows as killed to every client.
func TestCodeProjectRunCancelled(t *testing.T) {
	s, _, _ := codeHub(t, map[string]string{"go.mod": "module example.com/cancel\n\ngo 1.22\n"})
	cs, other := connect(t, s), connect(t, s)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "project_run", Arguments: map[string]any{"action": "build", "command": "sleep 60"}})
		done <- err
	}()
	var id string
	testutil.Eventually(t, "project_run's process running", func() bool {
		var list tools.ProcessListOutput
		mustCall(t, other, "process_list", map[string]any{"running_only": true}, &list)
		if len(list.Processes) == 1 {
			id = list.Processes[0].ID
		}
		return id != ""
	})
	cancel()
	testutil.Receive(t, done, "the cancelled call's return")
	testutil.Eventually(t, "the process killed", func() bool {
		var list tools.ProcessListOutput
		mustCall(t, other, "process_list", map[string]any{}, &list)
		return len(list.Processes) == 1 && list.Processes[0].ID == id && list.Processes[0].Status == "killed"
	})
}

// askRunHub is a code hub whose policy asks before exec runs go (and denies exec of rm), on a
// Unix socket, with the audit lines it writes.
func askRunHub(t *testing.T) (*Service, string, string, func() []audit.Entry) {
	t.Helper()
	p, err := policy.Compile(policy.Config{AskTimeout: "20s", Rules: []policy.RuleSpec{
		{Tool: "exec", Args: map[string]string{"command": "go"}, Action: "ask"},
		{Tool: "exec", Args: map[string]string{"command": "rm"}, Action: "deny"},
	}}, policy.RootsConfig{})
	if err != nil {
		t.Fatal(err)
	}
	al := audit.Discard()
	var mu sync.Mutex
	var entries []audit.Entry
	al.OnRecord(func(e audit.Entry) { mu.Lock(); entries = append(entries, e); mu.Unlock() })
	s, ws, _ := codeHub(t, map[string]string{
		"go.mod":            "module example.com/askrun\n\ngo 1.22\n",
		"calc/calc.go":      "package calc\n\n// Add adds.\nfunc Add(a, b int) int { return a - b }\n",
		"calc/calc_test.go": "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif got := Add(2, 2); got != 4 {\n\t\tt.Errorf(\"Add(2, 2) = %d, want 4\", got)\n\t}\n}\n",
	}, WithAudit(al), WithPolicy(policy.NewStore("", p), policy.NewBroker()))
	sock := filepath.Join(shortTempDir(t), "c.sock")
	listen(t, s, TransportUnix, TransportConfig{UnixPath: sock})
	return s, ws, sock, func() []audit.Entry { mu.Lock(); defer mu.Unlock(); return slices.Clone(entries) }
}

// checkAskedRun: run is go test's failing TestAdd, run as the process exec was asked about,
// which every client sees, and the audit shows that exec call under project_run's.
func checkAskedRun(t *testing.T, cs *sdk.ClientSession, ws string, run tools.ProjectRunOutput, audited func() []audit.Entry, by string) {
	t.Helper()
	wantLine, _ := lineOf(t, ws, "calc/calc_test.go", "t.Errorf")
	if run.Success || run.ExitCode == 0 || run.Process == "" || run.Duration <= 0 || !strings.Contains(run.Output, "FAIL") ||
		len(run.Failures) != 1 || run.Failures[0].Test != "TestAdd" || run.Failures[0].Path != "calc/calc_test.go" || run.Failures[0].Line != wantLine {
		t.Fatalf("project_run after the approval = %+v", run)
	}
	var list tools.ProcessListOutput
	mustCall(t, cs, "process_list", map[string]any{}, &list)
	found := false
	for _, p := range list.Processes {
		if p.ID == run.Process {
			found = p.Command == "go" && strings.Join(p.Args, " ") == "test -json ./..."
		}
	}
	if !found {
		t.Errorf("process_list = %+v, want project_run's process %s running go test -json ./...", list.Processes, run.Process)
	}
	var outer, inner audit.Entry
	for _, e := range audited() {
		if e.Tool == "project_run" && e.Outcome != "" {
			outer = e
		}
	}
	for _, e := range audited() {
		if e.Tool == "exec" && e.Parent != "" && e.Parent == outer.CallID && e.Outcome != "" {
			inner = e
		}
	}
	if outer.CallID == "" || inner.Decision != "ask" || inner.Approval != "approved" || inner.By != by || !strings.Contains(inner.Rule, "rule 1") {
		t.Errorf("audit: project_run %+v, its exec %+v (want asked, approved by %s)", outer, inner, by)
	}
}

// TestCodeProjectRunAskedAsExec: under an exec rule that asks, project_run asks the user the
// question exec would (an elicitation for a client that answers them) and, approved, runs the
// command as a listed process and parses its failures; declined, it is refused naming the rule.
// A rule that denies still refuses, and an asked command with shell syntax is refused (project_run
// could not ask about the call that would run).
//
// Both eras: a 2025-11-25 client is sent elicitation/create while project_run waits; a 2026-07-28
// client takes questions only as input_required, so its project_run is held (mcp/trust/held.go):
// the call answers input_required with exec's question, and the client's retry brings the answer
// to the exec call that waits for it. The dashboard is not asked in either.
func TestCodeProjectRunAskedAsExec(t *testing.T) {
	for _, proto := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(proto, func(t *testing.T) { projectRunAskedAsExec(t, proto) })
	}
}

func projectRunAskedAsExec(t *testing.T, proto string) {
	s, ws, sock, audited := askRunHub(t)
	var mu sync.Mutex
	answer := "accept"
	var asked []string
	opts := &sdk.ClientOptions{ElicitationHandler: func(_ context.Context, r *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
		mu.Lock()
		defer mu.Unlock()
		asked = append(asked, r.Params.Message)
		if answer == "accept" {
			return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"decision": "allow"}}, nil
		}
		return &sdk.ElicitResult{Action: answer}, nil
	}}
	cs := dialModeProto(t, sock, "", opts, proto)

	var run tools.ProjectRunOutput
	mustCall(t, cs, "project_run", map[string]any{"action": "test"}, &run)
	if p := s.Approvals().Pending(); len(p) != 0 {
		t.Errorf("the question also went to the dashboard: %+v", p)
	}
	var outers int
	for _, e := range audited() {
		if e.Tool == "project_run" && e.Outcome != "" {
			outers++
		}
	}
	if outers != 1 {
		t.Errorf("project_run audited %d times, want once (a held call's retry is not a new call)", outers)
	}
	mu.Lock()
	if len(asked) != 1 || !strings.Contains(asked[0], "exec") || !strings.Contains(asked[0], "go") || !strings.Contains(asked[0], `"test","-json","./..."`) {
		t.Errorf("asked %q, want one question about exec go test -json ./...", asked)
	}
	answer = "decline"
	mu.Unlock()
	checkAskedRun(t, cs, ws, run, audited, "client")

	msg := call(t, cs, "project_run", map[string]any{"action": "test"}, nil)
	if !strings.Contains(msg, "rule 1") || !strings.Contains(msg, "declined") || !strings.Contains(msg, `"go test -json ./..."`) {
		t.Errorf("declined project_run = %q", msg)
	}
	mu.Lock()
	n := len(asked)
	mu.Unlock()
	for _, c := range []struct{ command, want string }{
		{"rm -rf calc", "rule 2"},
		{"go test ./... | cat", "shell syntax"},
		{"go test -run 'TestAdd' ./...", "shell syntax"},
	} {
		if msg := call(t, cs, "project_run", map[string]any{"action": "test", "command": c.command}, nil); !strings.Contains(msg, c.want) || !strings.Contains(msg, "exec") {
			t.Errorf("project_run %q = %q, want a refusal naming %q", c.command, msg, c.want)
		}
	}
	mu.Lock()
	if len(asked) != n {
		t.Errorf("refused commands were asked about: %q", asked[n:])
	}
	mu.Unlock()
	if _, err := os.Stat(filepath.Join(ws, "calc")); err != nil {
		t.Errorf("a denied rm ran: %v", err)
	}
}

// TestCodeProjectRunAskedOnTheDashboard: a client that answers no elicitations gets the question
// on the dashboard, as for exec; approved there, the command runs and its failures come back;
// declined, project_run is refused naming the rule.
func TestCodeProjectRunAskedOnTheDashboard(t *testing.T) {
	s, ws, sock, audited := askRunHub(t)
	cs := dialMode(t, sock, "", bare())
	type result struct {
		run tools.ProjectRunOutput
		msg string
	}
	runIt := func() <-chan result {
		done := make(chan result, 1)
		go func() {
			res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "project_run", Arguments: map[string]any{"action": "test"}})
			var r result
			switch {
			case err != nil:
				r.msg = err.Error()
			case res.IsError:
				r.msg = toolText(res)
			default:
				b, _ := json.Marshal(res.StructuredContent)
				_ = json.Unmarshal(b, &r.run)
			}
			done <- r
		}()
		return done
	}
	done := runIt()
	a := waitPending(t, s)
	if a.Tool != "exec" || !strings.Contains(a.Arguments, "go") || !strings.Contains(a.Rule, "rule 1") {
		t.Errorf("pending approval: %+v", a)
	}
	if err := s.DecideApproval(a.ID, "allow", policy.ByDashboard); err != nil {
		t.Fatal(err)
	}
	r := testutil.Receive(t, done, "project_run approved on the dashboard")
	if r.msg != "" {
		t.Fatalf("approved project_run failed: %s", r.msg)
	}
	checkAskedRun(t, cs, ws, r.run, audited, "dashboard")

	done = runIt()
	a = waitPending(t, s)
	if err := s.DecideApproval(a.ID, "deny", policy.ByDashboard); err != nil {
		t.Fatal(err)
	}
	if r := testutil.Receive(t, done, "project_run declined on the dashboard"); !strings.Contains(r.msg, "rule 1") || !strings.Contains(r.msg, "declined") {
		t.Errorf("declined project_run = %q", r.msg)
	}
}

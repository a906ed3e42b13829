package mcp

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/internal/audit"
	"github.com/switchboard-hub/switchboard/mcp/tools"
)

func TestFileToolsRoundTrip(t *testing.T) {
	s := newTestService(t)
	cs := connect(t, s)

	var w tools.WriteFileOutput
	mustCall(t, cs, "file_write", map[string]any{"path": "src/app/main.go", "content": "package main\n\nfunc main() {}\n"}, &w)
	if !w.Success || w.Path != "src/app/main.go" {
		t.Fatalf("file_write = %+v", w)
	}
	var r tools.ReadFileOutput
	mustCall(t, cs, "file_read", map[string]any{"path": "src/app/main.go"}, &r)
	if r.Content != "package main\n\nfunc main() {}\n" || r.Language != "go" || r.Path != "src/app/main.go" {
		t.Fatalf("file_read = %+v", r)
	}
	mustCall(t, cs, "file_read", map[string]any{"path": "src/app/main.go", "offset": 2, "limit": 1}, &r)
	if r.Content != "func main() {}\n" || r.TotalLines != 3 {
		t.Fatalf("windowed file_read = %+v", r)
	}
	var e tools.EditFileOutput
	mustCall(t, cs, "file_write", map[string]any{"path": "n.txt", "content": "a-a-a"}, nil)
	mustCall(t, cs, "file_edit", map[string]any{"path": "n.txt", "old_string": "a", "new_string": "b"}, &e)
	if e.Replacements != 1 || !e.Success {
		t.Fatalf("file_edit first = %+v", e)
	}
	mustCall(t, cs, "file_edit", map[string]any{"path": "n.txt", "old_string": "a", "new_string": "", "replace_all": true}, &e)
	if e.Replacements != 2 {
		t.Fatalf("file_edit all = %+v", e)
	}
	if got, _ := os.ReadFile(filepath.Join(s.Workspace().Dir(), "n.txt")); string(got) != "b--" {
		t.Fatalf("after edits file = %q", got)
	}
	var ex tools.FileExistsOutput
	mustCall(t, cs, "file_exists", map[string]any{"path": "src"}, &ex)
	if !ex.Exists || !ex.IsDir {
		t.Fatalf("file_exists(src) = %+v", ex)
	}
	mustCall(t, cs, "file_exists", map[string]any{"path": "nope"}, &ex)
	if ex.Exists {
		t.Fatalf("file_exists(nope) = %+v", ex)
	}
	var rn tools.RenameFileOutput
	mustCall(t, cs, "file_rename", map[string]any{"oldPath": "n.txt", "newPath": "moved/n.txt"}, &rn)
	if !rn.Success || rn.OldPath != "n.txt" || rn.NewPath != "moved/n.txt" {
		t.Fatalf("file_rename = %+v", rn)
	}
	var mk tools.CreateDirectoryOutput
	mustCall(t, cs, "dir_create", map[string]any{"path": "a/b/c"}, &mk)
	mustCall(t, cs, "dir_create", map[string]any{"path": "a/b/c"}, &mk)
	if !mk.Success {
		t.Fatalf("dir_create = %+v", mk)
	}
	var ls tools.ListDirectoryOutput
	mustCall(t, cs, "dir_list", map[string]any{"path": "moved"}, &ls)
	if len(ls.Entries) != 1 || ls.Entries[0].Name != "n.txt" || ls.Entries[0].Path != "moved/n.txt" || ls.Entries[0].Size != 3 || ls.Entries[0].IsDir {
		t.Fatalf("dir_list = %+v", ls)
	}
	var del tools.DeleteFileOutput
	mustCall(t, cs, "file_delete", map[string]any{"path": "moved/n.txt"}, &del)
	mustCall(t, cs, "file_delete", map[string]any{"path": "moved"}, &del)
	if !del.Success {
		t.Fatalf("file_delete = %+v", del)
	}
	var ld tools.DetectLanguageOutput
	mustCall(t, cs, "lang_detect", map[string]any{"path": "Dockerfile"}, &ld)
	if ld.Language != "dockerfile" {
		t.Fatalf("lang_detect = %+v", ld)
	}
	var ll tools.GetSupportedLanguagesOutput
	mustCall(t, cs, "lang_list", map[string]any{}, &ll)
	if len(ll.Languages) != 15 || ll.Languages[2].ID != "go" {
		t.Fatalf("lang_list = %+v", ll)
	}
}

func TestFileToolErrorsNameFieldAndFix(t *testing.T) {
	s := newTestService(t)
	cs := connect(t, s)
	mustCall(t, cs, "file_write", map[string]any{"path": "f.txt", "content": "hello"}, nil)
	cases := []struct {
		tool string
		args map[string]any
		want []string
	}{
		{"file_read", map[string]any{"path": ""}, []string{"path", "required"}},
		{"file_read", map[string]any{}, []string{"path"}},
		{"file_read", map[string]any{"path": "missing.txt"}, []string{"missing.txt", "dir_list"}},
		{"file_read", map[string]any{"path": "../etc/passwd"}, []string{"outside the workspace"}},
		{"file_read", map[string]any{"path": "/etc/passwd"}, []string{"outside the workspace", "relative"}},
		{"file_write", map[string]any{"path": "../x", "content": "x"}, []string{"outside the workspace"}},
		{"file_edit", map[string]any{"path": "f.txt", "old_string": "", "new_string": "x"}, []string{"old_string", "empty"}},
		{"file_edit", map[string]any{"path": "f.txt", "old_string": "absent text", "new_string": "x"}, []string{`"absent text"`, "not found"}},
		{"file_rename", map[string]any{"oldPath": "f.txt", "newPath": ""}, []string{"newPath"}},
		{"file_rename", map[string]any{"oldPath": "f.txt", "newPath": "../../x"}, []string{"newPath", "outside"}},
		{"file_delete", map[string]any{"path": "."}, []string{"root"}},
		{"file_exists", map[string]any{"path": "/etc/passwd"}, []string{"outside the workspace"}},
		{"dir_list", map[string]any{"path": "f.txt"}, []string{"not a directory"}},
		{"file_read", map[string]any{"path": "f.txt", "offset": -1}, []string{"offset"}},
		{"file_read", map[string]any{"path": 5}, []string{"path: want a string, got a JSON number"}},
		{"file_read", map[string]any{"path": "f.txt", "limit": "ten"}, []string{"limit: want a whole number"}},
	}
	for _, c := range cases {
		got := call(t, cs, c.tool, c.args, nil)
		if got == "" {
			t.Errorf("%s(%v): succeeded, want error", c.tool, c.args)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s(%v): error %q lacks %q", c.tool, c.args, got, w)
			}
		}
	}
	// The session keeps serving after errors.
	mustCall(t, cs, "file_read", map[string]any{"path": "f.txt"}, nil)
}

func TestReadOnlyAndDisabledTools(t *testing.T) {
	s := newTestService(t, WithReadOnly(true))
	names := map[string]bool{}
	for _, tool := range s.Tools() {
		names[tool.Name] = true
		if tool.Annotations == nil || !tool.Annotations.ReadOnlyHint {
			t.Errorf("read-only mode registered %s, which is not read-only", tool.Name)
		}
	}
	for _, want := range []string{"file_read", "dir_list", "file_exists", "lang_list"} {
		if !names[want] {
			t.Errorf("read-only mode lacks %s", want)
		}
	}
	cs := connect(t, s)
	if _, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "file_write", Arguments: map[string]any{"path": "x", "content": "y"}}); err == nil || !strings.Contains(err.Error(), "file_write") {
		t.Errorf("file_write in read-only mode: err = %v, want unknown tool", err)
	}

	s2 := newTestService(t, WithDisabledTools("file_delete"))
	for _, tool := range s2.Tools() {
		if tool.Name == "file_delete" {
			t.Error("disabled tool still registered")
		}
	}
	if _, err := New(WithWorkspaceRoot(t.TempDir()), WithDisabledTools("file_delte")); err == nil || !strings.Contains(err.Error(), "file_delte") {
		t.Errorf("unknown disabled tool: err = %v", err)
	}
}

func TestEveryToolAnnotatedAndDescribed(t *testing.T) {
	s := newTestService(t)
	for _, tool := range s.Tools() {
		if tool.Annotations == nil || tool.Annotations.OpenWorldHint == nil {
			t.Errorf("%s: missing annotations (open-world hint)", tool.Name)
		}
		// tools_call's result is the called tool's: it has no schema of its own (a client holds
		// a result to the schema of the tool it called by name, and requires structured content
		// when there is one, which a text-only tool's result lacks).
		// script_run's result is whatever the script returns; without a schema a large one
		// becomes a handle in search and script mode like any other result.
		if tool.Description == "" || (tool.OutputSchema == nil && tool.Name != tools.ToolToolsCall && tool.Name != tools.ToolScriptRun) {
			t.Errorf("%s: missing description or output schema", tool.Name)
		}
	}
}

func TestAuditRecordsCalls(t *testing.T) {
	file := filepath.Join(t.TempDir(), "audit.log")
	al, err := audit.New(audit.Options{File: file})
	if err != nil {
		t.Fatal(err)
	}
	s := newTestService(t, WithAudit(al))
	cs := connect(t, s)
	mustCall(t, cs, "file_write", map[string]any{"path": "secret.txt", "content": "hunter2"}, nil)
	call(t, cs, "file_read", map[string]any{"path": "nope.txt"}, nil)
	al.Close()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	log := string(b)
	if strings.Contains(log, "hunter2") {
		t.Fatal("file contents reached the audit log")
	}
	lines := strings.Split(strings.TrimSpace(log), "\n")
	// The mutating call: a "started" line before it ran, then its outcome, paired by call ID.
	// The read-only call: its outcome only.
	if len(lines) != 3 {
		t.Fatalf("audit log has %d lines, want 3:\n%s", len(lines), log)
	}
	for i, want := range []string{`"outcome":"started"`, `"outcome":"ok"`} {
		if !strings.Contains(lines[i], `"level":"SECURITY"`) || !strings.Contains(lines[i], `"tool":"file_write"`) || !strings.Contains(lines[i], `"call":"c1"`) || !strings.Contains(lines[i], want) {
			t.Errorf("write line %d: %s", i, lines[i])
		}
	}
	if !strings.Contains(lines[2], `"level":"INFO"`) || !strings.Contains(lines[2], `"outcome":"error"`) || strings.Contains(lines[2], `"call"`) {
		t.Errorf("failed read line: %s", lines[2])
	}
	if act := s.Activity(); len(act) != 2 || act[1].Tool != "file_read" || act[1].Outcome != "error" {
		t.Errorf("activity = %+v", act)
	}
}

// Bugs found by trying the tools: a 5 MB single-line file, an offset past the end, deleting a
// link whose target is outside, a rename that would carry a link outside, over-long paths.
func TestFileToolsEdgeCases(t *testing.T) {
	s := newTestService(t)
	cs := connect(t, s)
	ws := s.Workspace().Dir()
	line := strings.Repeat("é", 5<<20/2) // 5 MiB of two-byte characters, no newline
	if err := os.WriteFile(filepath.Join(ws, "big.min.js"), []byte(line), 0o644); err != nil {
		t.Fatal(err)
	}
	// Whole read: refused, naming both kinds of window.
	if e := call(t, cs, "file_read", map[string]any{"path": "big.min.js"}, nil); !strings.Contains(e, "byte_offset") || !strings.Contains(e, "offset and limit") {
		t.Fatalf("whole read of 5 MB: %q", e)
	}
	// A line window cannot hold the line: an error that says why, not empty content.
	if e := call(t, cs, "file_read", map[string]any{"path": "big.min.js", "limit": 1}, nil); !strings.Contains(e, "longer than") || !strings.Contains(e, "byte_offset") {
		t.Fatalf("line window of one 5 MB line: %q", e)
	}
	// Byte windows read the whole file, never splitting a character.
	var got strings.Builder
	var off int64
	for i := 0; ; i++ {
		var out tools.ReadFileOutput
		mustCall(t, cs, "file_read", map[string]any{"path": "big.min.js", "byte_offset": off, "max_bytes": 1<<20 + 1}, &out)
		if out.TotalBytes != int64(len(line)) || !utf8.ValidString(out.Content) || out.Content == "" {
			t.Fatalf("window %d: total %d, valid %v, len %d", i, out.TotalBytes, utf8.ValidString(out.Content), len(out.Content))
		}
		got.WriteString(out.Content)
		off = out.NextByteOffset
		if !out.Truncated {
			break
		}
	}
	if got.String() != line {
		t.Fatalf("byte windows reassembled %d bytes, want %d", got.Len(), len(line))
	}
	for _, c := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"path": "big.min.js", "byte_offset": len(line)}, "byte_offset: "},
		{map[string]any{"path": "big.min.js", "max_bytes": 5 << 20}, "max_bytes"},
		{map[string]any{"path": "big.min.js", "byte_offset": 1, "limit": 2}, "pass one pair"},
		{map[string]any{"path": "big.min.js", "max_bytes": 1}, "max_bytes: 1 is smaller than the UTF-8 character"},
	} {
		if e := call(t, cs, "file_read", c.args, nil); !strings.Contains(e, c.want) {
			t.Errorf("file_read(%v) = %q, want %q", c.args, e, c.want)
		}
	}
	// Offset past the end: said so.
	mustCall(t, cs, "file_write", map[string]any{"path": "three.txt", "content": "a\nb\nc\n"}, nil)
	if e := call(t, cs, "file_read", map[string]any{"path": "three.txt", "offset": 3}, nil); !strings.HasPrefix(e, "offset: ") || !strings.Contains(e, "3 lines") {
		t.Fatalf("offset past the end: %q", e)
	}

	// file_delete removes a link whose target is outside; the target survives.
	outside := t.TempDir()
	target := filepath.Join(outside, "keep.txt")
	if err := os.WriteFile(target, []byte("precious"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, filepath.Join(ws, "out-link")); err != nil {
		t.Fatal(err)
	}
	mustCall(t, cs, "file_delete", map[string]any{"path": "out-link"}, nil)
	if b, err := os.ReadFile(target); err != nil || string(b) != "precious" {
		t.Fatalf("target after deleting the link: %q, %v", b, err)
	}
	if _, err := os.Lstat(filepath.Join(ws, "out-link")); err == nil {
		t.Fatal("the link is still there")
	}

	// file_rename refuses to move a relative link to where it points outside.
	if err := os.MkdirAll(filepath.Join(ws, "a", "b"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../../three.txt", filepath.Join(ws, "a", "b", "l")); err != nil {
		t.Fatal(err)
	}
	if e := call(t, cs, "file_rename", map[string]any{"oldPath": "a/b/l", "newPath": "l"}, nil); !strings.HasPrefix(e, "newPath: ") || !strings.Contains(e, "outside") {
		t.Fatalf("rename carrying a link outside: %q", e)
	}

	// Path limits, for a path-taking tool of each kind.
	deep := strings.Repeat("a/", 20000)
	long := strings.Repeat("n", 256)
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"dir_create", map[string]any{"path": deep}},
		{"file_write", map[string]any{"path": long, "content": "x"}},
		{"file_read", map[string]any{"path": deep}},
		{"file_exists", map[string]any{"path": long}},
		{"dir_list", map[string]any{"path": deep}},
		{"file_rename", map[string]any{"oldPath": "three.txt", "newPath": long}},
		{"file_delete", map[string]any{"path": long}},
		{"file_edit", map[string]any{"path": deep, "old_string": "a", "new_string": "b"}},
	} {
		if e := call(t, cs, c.tool, c.args, nil); !strings.Contains(e, "PATH_MAX") && !strings.Contains(e, "NAME_MAX") {
			t.Errorf("%s with an over-long path: %q", c.tool, e)
		}
	}
}

// TestUnknownArgumentIgnoredWithWarning: an argument a tool does not take (Gemini CLI adds
// wait_for_previous to every call) no longer fails the call: it runs, the result carries a warning
// naming the argument and the tool's real ones, and the audit line records it.
func TestUnknownArgumentIgnoredWithWarning(t *testing.T) {
	s := newTestService(t)
	cs := connect(t, s)
	mustCall(t, cs, "file_write", map[string]any{"path": "g.txt", "content": "hello", "wait_for_previous": true}, nil)
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "file_read", Arguments: map[string]any{"path": "g.txt", "bogus": 1, "wait_for_previous": false}})
	if err != nil || res.IsError {
		t.Fatalf("file_read with extra arguments: %v %+v", err, res)
	}
	var warn string
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok && strings.HasPrefix(tc.Text, "warning:") {
			warn = tc.Text
		}
	}
	for _, w := range []string{"bogus", "wait_for_previous", "byte_offset, limit, max_bytes, offset, path"} {
		if !strings.Contains(warn, w) {
			t.Errorf("warning %q lacks %q", warn, w)
		}
	}
	if !strings.Contains(fmt.Sprint(res.StructuredContent), "hello") {
		t.Errorf("file_read ignored more than the unknown arguments: %v", res.StructuredContent)
	}
	found := false
	for _, e := range s.Activity() {
		if e.Tool == "file_read" && e.Ignored == "bogus, wait_for_previous" {
			found = true
		}
	}
	if !found {
		t.Errorf("audit lacks the ignored arguments: %+v", s.Activity())
	}
	// Wrong types and missing required keys still fail, naming the field.
	if got := call(t, cs, "file_read", map[string]any{"wait_for_previous": true}, nil); !strings.Contains(got, "path: required") {
		t.Errorf("missing path with an extra argument: %q", got)
	}
}

package mcp

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-hub/switchboard/mcp/tools"
)

func TestFilePatch(t *testing.T) {
	s := newTestService(t, WithPatch())
	ws := s.Workspace().Dir()
	writeTree(t, ws, map[string]string{"src/a.go": "package a\n\nfunc A() int {\n\treturn 1\n}\n", "old.txt": "x\n"})
	cs := connect(t, s)
	p := `diff --git a/src/a.go b/src/a.go
index 1111111..2222222 100644
--- a/src/a.go
+++ b/src/a.go
@@ -3,3 +3,3 @@ package a
 func A() int {
-	return 1
+	return 2
 }
diff --git a/src/new.go b/src/new.go
new file mode 100644
--- /dev/null
+++ b/src/new.go
@@ -0,0 +1,2 @@
+package a
+// new
diff --git a/old.txt b/old.txt
deleted file mode 100644
--- a/old.txt
+++ /dev/null
@@ -1 +0,0 @@
-x
`
	var out tools.PatchOutput
	mustCall(t, cs, "file_patch", map[string]any{"patch": p, "dry_run": true}, &out)
	if out.Applied || !out.DryRun || len(out.Files) != 3 || out.Risk.Level != "high" {
		t.Fatalf("dry run = %+v", out)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "src/a.go")); !strings.Contains(string(b), "return 1") {
		t.Fatal("dry run wrote")
	}
	mustCall(t, cs, "file_patch", map[string]any{"patch": p}, &out)
	if !out.Applied || out.Files[0].Added != 1 || out.Files[0].Removed != 1 || out.Files[1].Action != "create" || out.Files[2].Action != "delete" {
		t.Fatalf("apply = %+v", out)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "src/a.go")); !strings.Contains(string(b), "return 2") {
		t.Errorf("a.go = %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "src/new.go")); string(b) != "package a\n// new\n" {
		t.Errorf("new.go = %q", b)
	}
	if _, err := os.Stat(filepath.Join(ws, "old.txt")); !os.IsNotExist(err) {
		t.Error("old.txt not deleted")
	}
	// Applying it again fails on the first hunk and changes nothing.
	e := call(t, cs, "file_patch", map[string]any{"patch": p}, nil)
	if !strings.HasPrefix(e, "patch: hunk 1 of src/a.go") || !strings.Contains(e, "no file was changed") {
		t.Errorf("re-apply error = %q", e)
	}

	outside := t.TempDir()
	writeTree(t, outside, map[string]string{"victim.txt": "safe\n"})
	if err := os.Symlink(outside, filepath.Join(ws, "escape")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ patch, want string }{
		{"hello", "patch: does not parse at line 1: no file diffs found"},
		{"--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n-a\n", "patch: does not parse at line 3: hunk 1 of x"},
		{"--- a/escape/victim.txt\n+++ b/escape/victim.txt\n@@ -1 +1 @@\n-safe\n+owned\n", "escape/victim.txt"},
		{"--- /dev/null\n+++ b/escape/planted.txt\n@@ -0,0 +1 @@\n+x\n", "escape/planted.txt"},
		{"--- a/../../etc/passwd\n+++ b/../../etc/passwd\n@@ -1 +1 @@\n-a\n+b\n", "climbs out of the workspace"},
	} {
		if e := call(t, cs, "file_patch", map[string]any{"patch": tc.patch}, nil); !strings.Contains(e, tc.want) {
			t.Errorf("patch %q: error %q, want %q", tc.patch, e, tc.want)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(outside, "victim.txt")); string(b) != "safe\n" {
		t.Errorf("patched through a symlink out of the workspace: %q", b)
	}
	if _, err := os.Stat(filepath.Join(outside, "planted.txt")); err == nil {
		t.Error("created a file through a symlink out of the workspace")
	}
}

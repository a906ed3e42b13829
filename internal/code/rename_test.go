package code

import (
	"os"
	"strings"
	"testing"

	"github.com/switchboard-hub/switchboard/internal/lsp"
	"github.com/switchboard-hub/switchboard/internal/patch"
)

// TestEditsAndDiff: LSP edits (UTF-16 positions) apply at the right bytes, and the diff made
// of them goes through internal/patch, a file without a final newline included.
func TestEditsAndDiff(t *testing.T) {
	old := "a := \"😀\"; foo(1)\nfoo(2)\nlast foo" // no final newline
	edits := []lsp.TextEdit{
		{Range: lsp.Range{Start: lsp.Position{Line: 0, Character: 11}, End: lsp.Position{Line: 0, Character: 14}}, NewText: "bar"},
		{Range: lsp.Range{Start: lsp.Position{Line: 2, Character: 5}, End: lsp.Position{Line: 2, Character: 8}}, NewText: "bar"},
		{Range: lsp.Range{Start: lsp.Position{Line: 1, Character: 0}, End: lsp.Position{Line: 1, Character: 3}}, NewText: "bar"},
	}
	nu, err := applyEdits(old, edits)
	if err != nil {
		t.Fatal(err)
	}
	want := "a := \"😀\"; bar(1)\nbar(2)\nlast bar"
	if nu != want {
		t.Fatalf("applyEdits = %q, want %q", nu, want)
	}
	diff := unifiedDiff("x.go", old, nu)
	if !strings.Contains(diff, "\\ No newline at end of file") {
		t.Errorf("diff:\n%s", diff)
	}
	dir := t.TempDir()
	if err := os.WriteFile(dir+"/x.go", []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	files, err := patch.Parse(diff)
	if err != nil {
		t.Fatal(err)
	}
	r, _ := os.OpenRoot(dir)
	defer r.Close()
	if _, err := patch.Apply(r, files, false); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(dir + "/x.go"); string(b) != want {
		t.Errorf("patched = %q", b)
	}
	if _, err := applyEdits(old, []lsp.TextEdit{edits[0], edits[0]}); err == nil {
		t.Error("overlapping edits applied")
	}
}

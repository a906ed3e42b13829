package failures

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestFailuresGoTestJSON: a real `go test -json` run with a failing test, a failing subtest and
// a package that does not build.
func TestFailuresGoTestJSON(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{
		"go.mod":       "module example.com/ft\n\ngo 1.22\n",
		"calc/calc.go": "package calc\n\nfunc Add(a, b int) int { return a - b }\n",
		"calc/calc_test.go": "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif got := Add(1, 2); got != 3 {\n\t\tt.Errorf(\"Add(1, 2) = %d, want 3\", got)\n\t}\n}\n\n" +
			"func TestTable(t *testing.T) {\n\tt.Run(\"two\", func(t *testing.T) {\n\t\tt.Fatal(\"two broke\")\n\t})\n}\n\nfunc TestOK(t *testing.T) {}\n",
		"broken/broken.go": "package broken\n\nfunc F() int { return undefinedName }\n",
	}
	for name, body := range files {
		p := filepath.Join(root, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("go", "test", "-json", "./...")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOFLAGS=", "GOWORK=off")
	out, _ := cmd.Output()
	res := Parse(string(out), root)
	if res.Format != "go-test-json" {
		t.Fatalf("format %s", res.Format)
	}
	want := []Failure{
		{Path: "calc/calc_test.go", Line: 7, Test: "TestAdd", Message: "Add(1, 2) = -1, want 3"},
		{Path: "calc/calc_test.go", Line: 13, Test: "TestTable/two", Message: "two broke"},
		{Path: "broken/broken.go", Line: 3, Message: "undefined: undefinedName"},
	}
	for _, w := range want {
		found := false
		for _, f := range res.Failures {
			if f.Path == w.Path && f.Line == w.Line && f.Test == w.Test && strings.Contains(f.Message, w.Message) {
				found = true
			}
		}
		if !found {
			t.Errorf("missing %+v in %+v", w, res.Failures)
		}
	}
	for _, f := range res.Failures {
		if f.Test == "TestTable" || f.Test == "TestOK" {
			t.Errorf("reported %+v: a parent without its own message, or a passing test", f)
		}
	}
}

// TestFailuresCompilerLines: real gcc and tsc errors (file:line:col: message), relative paths
// kept and absolute ones inside the workspace made relative.
func TestFailuresCompilerLines(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "bad.c"), []byte("int main(void) {\n\treturn missing;\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cc := exec.Command("cc", "-c", filepath.Join(root, "bad.c"), "-o", os.DevNull)
	cc.Dir = root
	out, err := cc.CombinedOutput()
	if err == nil {
		t.Fatal("cc compiled a broken file")
	}
	res := Parse(string(out), root)
	if res.Format != "compiler" || len(res.Failures) == 0 || res.Failures[0].Path != "bad.c" || res.Failures[0].Line != 2 || !strings.Contains(res.Failures[0].Message, "missing") {
		t.Fatalf("gcc output %q → %+v", out, res)
	}
	tsc := filepath.Join("..", "..", "test", "lsp", "node_modules", ".bin", "tsc")
	if _, err := os.Stat(tsc); err != nil {
		msg := "tsc is not installed in test/lsp: run `make lsp-deps`"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	tsc, _ = filepath.Abs(tsc)
	if err := os.WriteFile(filepath.Join(root, "a.ts"), []byte("const x: number = \"one\";\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(tsc, "--noEmit", "--pretty", "false", "a.ts")
	cmd.Dir = root
	out, _ = cmd.CombinedOutput()
	// tsc writes "a.ts(1,7): error TS2322: ..."; with --pretty false that form, not file:line:col.
	res = Parse(string(out), root)
	if len(res.Failures) != 1 || res.Failures[0].Path != "a.ts" || res.Failures[0].Line != 1 || !strings.Contains(res.Failures[0].Message, "TS2322") {
		t.Fatalf("tsc output %q → %+v", out, res)
	}
}

// TestFailuresReports: pytest's JUnit XML and vitest's JSON report (recorded in testdata in
// their tools' formats).
func TestFailuresReports(t *testing.T) {
	b, _ := os.ReadFile("testdata/pytest-junit.xml")
	res := Parse(string(b), "")
	if res.Format != "junit-xml" || len(res.Failures) != 1 {
		t.Fatalf("junit: %+v", res)
	}
	if f := res.Failures[0]; f.Path != "tests/test_calc.py" || f.Line != 6 || f.Test != "tests.test_calc.test_total" || !strings.Contains(f.Message, "assert 3.0 == 4.0") {
		t.Errorf("junit failure %+v", f)
	}
	b, _ = os.ReadFile("testdata/vitest.json")
	res = Parse(string(b), "/work/proj")
	if res.Format != "jest-json" || len(res.Failures) != 1 {
		t.Fatalf("vitest: %+v", res)
	}
	if f := res.Failures[0]; f.Path != "src/calc.test.ts" || f.Line != 6 || f.Test != "total adds areas" || !strings.Contains(f.Message, "expected 3 to be 4") {
		t.Errorf("vitest failure %+v", f)
	}
	if res := Parse("all good\nok  \texample.com/x\t0.1s\n", ""); len(res.Failures) != 0 {
		t.Errorf("clean output: %+v", res)
	}
}

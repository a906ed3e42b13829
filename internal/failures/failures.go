// Package failures reads the output of a build, test or lint run (project_run's) and lists
// what failed, with file and line: `go test -json`, vitest's and jest's JSON reports, JUnit XML
// (pytest), and compiler and linter file:line[:col] messages.
package failures

import (
	"bufio"
	"encoding/json"
	"encoding/xml"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// Failure is one failing test or one compiler or linter error found in a command's output.
type Failure struct {
	// Path is the file (relative to the workspace when it lies inside), "" when unknown.
	Path string `json:"path"`
	// Line is 1-based, 0 when unknown.
	Line int `json:"line"`
	// Test is the failing test's name ("" for build and lint errors).
	Test    string `json:"test"`
	Message string `json:"message"`
}

// Result is what Parse found and which format it read (go-test-json, jest-json, junit-xml or
// compiler).
type Result struct {
	Format   string    `json:"format"`
	Failures []Failure `json:"failures"`
}

// maxFailures bounds one answer.
const maxFailures = 500

// Parse reads the output of a build, test or lint run (project_run's output) and lists
// its failures: `go test -json`, vitest's and jest's JSON reports, pytest's JUnit XML, and any
// tool's file:line[:col]: message lines (compilers, linters, go vet, tsc, eslint's unix format,
// pytest's tracebacks). root, the workspace, turns absolute paths inside it relative and finds
// go.mod's module path so Go packages map to directories; "" leaves paths as printed.
func Parse(output, root string) Result {
	trimmed := strings.TrimSpace(output)
	var res Result
	switch {
	case strings.HasPrefix(trimmed, "{") && strings.Contains(trimmed, `"Action"`):
		res = Result{Format: "go-test-json", Failures: goTestFailures(trimmed, root)}
	case strings.HasPrefix(trimmed, "{") && strings.Contains(trimmed, `"testResults"`):
		res = Result{Format: "jest-json", Failures: jestFailures(trimmed, root)}
	case strings.HasPrefix(trimmed, "<?xml") || strings.HasPrefix(trimmed, "<testsuite"):
		res = Result{Format: "junit-xml", Failures: junitFailures(trimmed, root)}
	default:
		res = Result{Format: "compiler", Failures: lineFailures(output, root, "")}
	}
	if res.Failures == nil {
		res.Failures = []Failure{}
	}
	if len(res.Failures) > maxFailures {
		res.Failures = res.Failures[:maxFailures]
	}
	return res
}

// fileLine matches "path:line:col: message" and "path:line: message" (a Windows drive letter
// is not expected here); the path must look like a file (an extension).
var fileLine = regexp.MustCompile(`^\s*([^\s:"'<>|]+\.[A-Za-z0-9]+):(\d+)(?::(\d+))?:?\s+(.*)$`)

// fileParen matches "path(line,col): message" (tsc, MSBuild).
var fileParen = regexp.MustCompile(`^\s*([^\s:"'<>|()]+\.[A-Za-z0-9]+)\((\d+),(\d+)\):\s+(.*)$`)

// lineFailures finds file:line messages in text. test labels them; dir is the directory the
// paths are relative to (a Go package's), "" for the workspace.
func lineFailures(text, root, test string) []Failure {
	var out []Failure
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	for sc.Scan() {
		m := fileLine.FindStringSubmatch(sc.Text())
		if m == nil {
			m = fileParen.FindStringSubmatch(sc.Text())
		}
		if m == nil || strings.Contains(m[1], "://") {
			continue
		}
		n, _ := strconv.Atoi(m[2])
		msg := strings.TrimSpace(m[4])
		if msg == "" {
			continue
		}
		out = append(out, Failure{Path: relPath(root, m[1]), Line: n, Test: test, Message: msg})
	}
	return out
}

// relPath is p relative to root when it is absolute and inside it.
func relPath(root, p string) string {
	if root != "" && filepath.IsAbs(p) {
		if r, err := filepath.Rel(root, p); err == nil && filepath.IsLocal(r) {
			return filepath.ToSlash(r)
		}
	}
	return p
}

// goTestFailures reads `go test -json` events: each failing test with the file:line its output
// names, and build failures of packages.
func goTestFailures(text, root string) []Failure {
	module := ""
	if root != "" {
		if b, err := os.ReadFile(filepath.Join(root, "go.mod")); err == nil {
			for l := range strings.SplitSeq(string(b), "\n") {
				if rest, ok := strings.CutPrefix(strings.TrimSpace(l), "module "); ok {
					module = strings.Trim(strings.TrimSpace(rest), `"`)
					break
				}
			}
		}
	}
	pkgDir := func(pkg string) string {
		if module != "" && (pkg == module || strings.HasPrefix(pkg, module+"/")) {
			return strings.TrimPrefix(strings.TrimPrefix(pkg, module), "/")
		}
		return ""
	}
	output := map[goTestKey]*strings.Builder{}
	var order []goTestKey
	var out []Failure
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		var ev struct {
			Action, Package, Test, Output string
			ImportPath                    string
		}
		if json.Unmarshal(sc.Bytes(), &ev) != nil {
			continue
		}
		if ev.Package == "" {
			ev.Package = ev.ImportPath
		}
		k := goTestKey{ev.Package, ev.Test}
		switch ev.Action {
		case "output", "build-output":
			b := output[k]
			if b == nil {
				b = &strings.Builder{}
				output[k] = b
			}
			b.WriteString(ev.Output)
		case "fail", "build-fail":
			order = append(order, k)
		}
	}
	for _, k := range order {
		text := ""
		if b := output[k]; b != nil {
			text = b.String()
		}
		dir := pkgDir(k.pkg)
		found := lineFailures(text, "", k.test)
		for i := range found {
			p := found[i].Path
			if !strings.Contains(p, "/") && dir != "" {
				p = path.Join(dir, p)
			}
			found[i].Path = relPath(root, p)
		}
		if k.test == "" {
			// A package that failed as a whole: its build errors (its tests' failures are listed
			// by test already).
			if len(found) > 0 {
				out = append(out, found...)
			} else if strings.Contains(text, "build failed") || strings.Contains(text, "setup failed") {
				out = append(out, Failure{Path: dir, Message: strings.TrimSpace(text)})
			}
			continue
		}
		if len(found) == 0 {
			// A failed subtest fails its parent too: a parent without a message of its own
			// is left out.
			msg := testMessage(text)
			if msg == "" && hasFailedChild(order, k.pkg, k.test) {
				continue
			}
			if msg == "" {
				msg = "failed"
			}
			out = append(out, Failure{Path: dir, Test: k.test, Message: firstLines(msg, 5)})
			continue
		}
		msgs := make([]string, len(found))
		for i, f := range found {
			msgs[i] = f.Message
		}
		out = append(out, Failure{Path: found[0].Path, Line: found[0].Line, Test: k.test, Message: strings.Join(msgs, "\n")})
	}
	return out
}

// testMessage is a test's output without go test's own lines (=== RUN, --- FAIL, PASS...).
func testMessage(text string) string {
	var keep []string
	for l := range strings.SplitSeq(text, "\n") {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "=== ") || strings.HasPrefix(t, "--- ") || t == "FAIL" || t == "PASS" {
			continue
		}
		keep = append(keep, t)
	}
	return strings.Join(keep, "\n")
}

type goTestKey struct{ pkg, test string }

func hasFailedChild(order []goTestKey, pkg, test string) bool {
	for _, v := range order {
		if v.pkg == pkg && strings.HasPrefix(v.test, test+"/") {
			return true
		}
	}
	return false
}

func firstLines(s string, n int) string {
	ls := strings.Split(s, "\n")
	if len(ls) > n {
		ls = append(ls[:n], "…")
	}
	return strings.Join(ls, "\n")
}

// jestFailures reads vitest's and jest's JSON report (--reporter=json, --json).
func jestFailures(text, root string) []Failure {
	var rep struct {
		TestResults []struct {
			Name             string `json:"name"`
			Message          string `json:"message"`
			Status           string `json:"status"`
			AssertionResults []struct {
				FullName        string   `json:"fullName"`
				Title           string   `json:"title"`
				Status          string   `json:"status"`
				FailureMessages []string `json:"failureMessages"`
				Location        *struct {
					Line   int `json:"line"`
					Column int `json:"column"`
				} `json:"location"`
			} `json:"assertionResults"`
		} `json:"testResults"`
	}
	if json.Unmarshal([]byte(text), &rep) != nil {
		return nil
	}
	var out []Failure
	for _, f := range rep.TestResults {
		file := relPath(root, f.Name)
		failedTests := 0
		for _, a := range f.AssertionResults {
			if a.Status != "failed" {
				continue
			}
			failedTests++
			name := a.FullName
			if name == "" {
				name = a.Title
			}
			msg := strings.Join(a.FailureMessages, "\n")
			line := stackLine(msg, f.Name)
			if a.Location != nil {
				line = a.Location.Line
			}
			out = append(out, Failure{Path: file, Line: line, Test: name, Message: firstLines(stripANSI(msg), 8)})
		}
		if failedTests == 0 && f.Status == "failed" && f.Message != "" {
			out = append(out, Failure{Path: file, Line: stackLine(f.Message, f.Name), Message: firstLines(stripANSI(f.Message), 8)})
		}
	}
	return out
}

var stackRef = regexp.MustCompile(`([^\s()]+):(\d+):(\d+)`)

// stackLine is the line of the first stack frame in file.
func stackLine(msg, file string) int {
	for _, m := range stackRef.FindAllStringSubmatch(msg, -1) {
		if m[1] == file || strings.HasSuffix(m[1], "/"+filepath.Base(file)) {
			n, _ := strconv.Atoi(m[2])
			return n
		}
	}
	return 0
}

var ansi = regexp.MustCompile("\x1b\\[[0-9;]*m")

func stripANSI(s string) string { return ansi.ReplaceAllString(s, "") }

// junitFailures reads JUnit XML (pytest --junitxml, and most test runners' JUnit reporters).
func junitFailures(text, root string) []Failure {
	type result struct {
		Message string `xml:"message,attr"`
		Text    string `xml:",chardata"`
	}
	type testcase struct {
		Classname string   `xml:"classname,attr"`
		Name      string   `xml:"name,attr"`
		File      string   `xml:"file,attr"`
		Line      string   `xml:"line,attr"`
		Failure   []result `xml:"failure"`
		Error     []result `xml:"error"`
	}
	type suite struct {
		Cases  []testcase `xml:"testcase"`
		Suites []suite    `xml:"testsuite"`
	}
	var doc struct {
		suite
		XMLName xml.Name
	}
	if xml.Unmarshal([]byte(text), &doc) != nil {
		return nil
	}
	var out []Failure
	var walk func(s suite)
	walk = func(s suite) {
		for _, c := range s.Cases {
			for _, r := range append(c.Failure, c.Error...) {
				name := c.Name
				if c.Classname != "" {
					name = c.Classname + "." + c.Name
				}
				file := c.File
				if file == "" && c.Classname != "" {
					file = strings.ReplaceAll(c.Classname, ".", "/") + ".py"
				}
				line, _ := strconv.Atoi(c.Line)
				if line > 0 {
					line++ // pytest writes the 0-based line of the test function
				}
				// The traceback's "file:line: Error" names where it failed.
				for _, f := range lineFailures(r.Text, "", "") {
					if file == "" || f.Path == file || strings.HasSuffix(file, f.Path) || strings.HasSuffix(f.Path, file) {
						file, line = f.Path, f.Line
					}
				}
				msg := r.Message
				if msg == "" {
					msg = firstLines(strings.TrimSpace(r.Text), 8)
				}
				out = append(out, Failure{Path: relPath(root, file), Line: line, Test: name, Message: msg})
			}
		}
		for _, sub := range s.Suites {
			walk(sub)
		}
	}
	walk(doc.suite)
	return out
}

package search

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// The line DFA must agree with Go's regexp on whether a line matches, for every construct:
// classes, repetition, alternation, anchors, word boundaries, case folding, Unicode.
func TestLineDFAAgreesWithRegexp(t *testing.T) {
	patterns := []string{
		`foo`, `[a-z][0-9][A-Z][a-z]{3}`, `^return`, `foo$`, `^$`, `\bbar\b`, `\Bar`, `x\B`, `\Afunc`, `nil\z`,
		`(?i)todo|fixme`, `caf\w( |$)`, `[\w]+é`, `\S+é`, `\d+\.\d+`, `a*`, `(a|b)*c`, `[^a-z]+error`, `(?i)ünïcode`,
		`z\s+x`, `^\s*$`, `(?i:ret)urn nil`, `.`, `.+\(`, `x{2,3}y?`, `\p{Lu}\p{Ll}+`, `(?s).`, `[[:upper:]][[:digit:]]`,
	}
	r := rand.New(rand.NewPCG(1, 2))
	var lines []string
	for range 3000 {
		var b strings.Builder
		for k := range r.IntN(10) {
			if k > 0 {
				b.WriteString([]string{" ", "", "\t", "(", "."}[r.IntN(5)])
			}
			b.WriteString(words[r.IntN(len(words))])
		}
		lines = append(lines, b.String())
	}
	lines = append(lines, "", " ", "\xff\xfe bad utf8 foo", "aab", "xxy", "return nil", "café")
	for _, p := range patterns {
		m, err := compileMatcher(p, false, false)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		d := m.newDFA()
		if d == nil {
			t.Fatalf("%s: no DFA", p)
		}
		for _, l := range lines {
			got, ok := d.match([]byte(l))
			if !ok {
				continue // state budget: regexp decides
			}
			if want := m.re.Match([]byte(l)); got != want {
				t.Errorf("pattern %q line %q: DFA %v, regexp %v", p, l, got, want)
			}
		}
	}
}

// FuzzLineDFA: for any pattern and line, the DFA agrees with regexp (or gives up).
func FuzzLineDFA(f *testing.F) {
	f.Add(`\bfoo\B`, "a foo bar")
	f.Add(`^(a|ab)*c$`, "ababc")
	f.Add(`(?i)straße`, "STRASSE")
	f.Add(`[^\n]+x\z`, "abcx")
	f.Add(`\w+é`, "café")
	f.Fuzz(func(t *testing.T, pattern, line string) {
		if len(pattern) > 64 || len(line) > 256 || strings.Contains(line, "\n") {
			return // the DFA sees single lines only
		}
		m, err := compileMatcher(pattern, false, false)
		if err != nil || m.re == nil {
			return
		}
		d := m.newDFA()
		if d == nil {
			return
		}
		got, ok := d.match([]byte(line))
		if !ok {
			return
		}
		if want := m.re.Match([]byte(line)); got != want {
			t.Fatalf("pattern %q line %q: DFA %v, regexp %v", pattern, line, got, want)
		}
	})
}

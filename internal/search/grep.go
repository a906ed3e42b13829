package search

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"regexp"
	"regexp/syntax"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/switchboard-hub/switchboard/internal/workspace"
)

// Defaults for Grep.
const (
	DefaultMaxResults   = 200
	MaxMaxResults       = 10000
	DefaultMaxLineBytes = 500
	MaxContext          = 10
	// MaxFileBytes: larger files are skipped (a generated bundle or a data dump is not what a
	// code search is for, and one would hold the whole result up).
	MaxFileBytes = 64 << 20
)

// GrepOptions describe one search.
type GrepOptions struct {
	Pattern    string
	Literal    bool // Pattern is a plain string, not a regular expression
	IgnoreCase bool
	Context    int    // lines of context before and after each match (0..MaxContext)
	MaxResults int    // matches returned at most (default DefaultMaxResults)
	Glob       string // only files whose path (pattern with "/") or name (without) matches
	// File searches this one file (relative to the root) instead of walking; ignore rules and
	// hidden names do not apply to a file named explicitly (as with rg).
	File           string
	IncludeIgnored bool
	Base           []string // see WalkOptions
	Parents        []IgnoreFile
	MaxLineBytes   int // longer lines are cut to a window around the match
	Workers        int // default GOMAXPROCS
	// Searched, when set, counts files searched as the search goes (for progress reports).
	Searched *atomic.Int64
	Skip     func(rel string, isDir bool) bool // see WalkOptions
}

// Match is one matching line.
type Match struct {
	Path   string   `json:"path"`
	Line   int      `json:"line"`   // 1-based
	Column int      `json:"column"` // 1-based byte offset of the first match in the line
	Text   string   `json:"text"`
	Before []string `json:"before,omitempty"`
	After  []string `json:"after,omitempty"`
}

// GrepResult is what Grep found.
type GrepResult struct {
	Matches       []Match
	FilesSearched int
	Truncated     bool
}

// FieldError is an error about one input field; Field is the JSON key.
type FieldError struct {
	Field string
	Msg   string
}

// Error reports the field by its JSON key, so the agent knows which argument to fix.
func (e *FieldError) Error() string { return e.Field + ": " + e.Msg }

// matcher finds matching lines in a buffer.
type matcher struct {
	lit  []byte         // literal fast path: bytes.Index
	re   *regexp.Regexp // otherwise
	req  []byte         // a literal every match contains (prefilter), may be nil
	fold *foldFinder    // with req: the literal matches ASCII case-insensitively
	// foldRisk: the folded literal has k or s, which also fold to the non-ASCII K (Kelvin
	// sign) and ſ (long s); files containing those take the regex path.
	foldRisk bool
	// before/after: with an exact req taken from the top-level concatenation, the bytes that
	// may stand right before / after it in a match (nil = any): a cheap test that spares the
	// regex most candidate lines when the literal is common.
	before, after *[256]bool
	syn           *syntax.Regexp // the parsed regex, for each worker's line DFA
}

// CompileMatcher validates the pattern. Errors name the field.
func compileMatcher(pattern string, literal, ignoreCase bool) (*matcher, error) {
	if pattern == "" {
		return nil, &FieldError{"pattern", "empty; give a string or regular expression to search for"}
	}
	if strings.ContainsAny(pattern, "\n") {
		return nil, &FieldError{"pattern", "contains a newline; matches are single lines, search for one line at a time"}
	}
	if literal && !ignoreCase {
		return &matcher{lit: []byte(pattern)}, nil
	}
	var expr string
	if literal {
		expr = regexp.QuoteMeta(pattern)
	} else {
		expr = unicodeClasses(pattern)
	}
	flags := syntax.Perl &^ syntax.OneLine // as compiled below with (?m)
	if ignoreCase {
		flags |= syntax.FoldCase
	}
	if _, err := syntax.Parse(pattern, flags); err != nil && !literal {
		expr = pattern // report the error against what the caller wrote
	}
	parsed, err := syntax.Parse(expr, flags)
	if err != nil {
		var se *syntax.Error
		if errors.As(err, &se) {
			return nil, &FieldError{"pattern", fmt.Sprintf("invalid regex: %s in %q; escape special characters with \\ or set literal: true", se.Code, se.Expr)}
		}
		return nil, &FieldError{"pattern", "invalid regex: " + err.Error()}
	}
	prefix := "(?m)"
	if ignoreCase {
		prefix = "(?mi)"
	}
	re, err := regexp.Compile(prefix + expr)
	if err != nil {
		return nil, &FieldError{"pattern", "invalid regex: " + err.Error() + "; escape special characters with \\ or set literal: true"}
	}
	m := &matcher{re: re, syn: parsed.Simplify()}
	simp := parsed.Simplify()
	if lit, fold := requiredLiteral(simp); len(lit) >= 2 {
		m.req = []byte(lit)
		if fold {
			m.req = []byte(strings.ToLower(lit))
			m.fold = newFoldFinder(m.req)
			m.foldRisk = strings.ContainsAny(string(m.req), "ks")
		} else {
			m.before, m.after = literalNeighbors(simp, lit)
		}
	}
	return m, nil
}

// literalNeighbors finds lit as a run of literal parts of the top-level concatenation and
// returns the byte sets its neighbours must fall in: a part that is a character class, x+ or
// x{n,} (n >= 1) of one, must match the character touching the literal. Non-ASCII bytes always
// pass (a multi-byte character is not judged by one byte).
func literalNeighbors(re *syntax.Regexp, lit string) (before, after *[256]bool) {
	for re.Op == syntax.OpCapture {
		re = re.Sub[0]
	}
	if re.Op != syntax.OpConcat {
		return nil, nil
	}
	subs := re.Sub
	for a := 0; a < len(subs); a++ {
		if subs[a].Op != syntax.OpLiteral || subs[a].Flags&syntax.FoldCase != 0 {
			continue
		}
		run, b := "", a
		for b < len(subs) && subs[b].Op == syntax.OpLiteral && subs[b].Flags&syntax.FoldCase == 0 {
			run += string(subs[b].Rune)
			b++
		}
		if run == lit {
			if a > 0 {
				before = classBytes(subs[a-1])
			}
			if b < len(subs) {
				after = classBytes(subs[b])
			}
			return before, after
		}
		a = b - 1
	}
	return nil, nil
}

// classBytes returns the bytes one character matched by re can start or end with, or nil
// when re is not a single mandatory character class.
func classBytes(re *syntax.Regexp) *[256]bool {
	switch re.Op {
	case syntax.OpPlus:
		re = re.Sub[0]
	case syntax.OpRepeat:
		if re.Min < 1 {
			return nil
		}
		re = re.Sub[0]
	}
	if re.Op != syntax.OpCharClass {
		return nil
	}
	var set [256]bool
	for c := 0x80; c < 256; c++ {
		set[c] = true
	}
	for i := 0; i+1 < len(re.Rune); i += 2 {
		lo, hi := re.Rune[i], re.Rune[i+1]
		for c := lo; c <= hi && c < 0x80; c++ {
			set[c] = true
		}
	}
	return &set
}

// neighboursOK applies before/after to the literal found at i.
func (m *matcher) neighboursOK(buf []byte, i int) bool {
	if m.before != nil && (i == 0 || !m.before[buf[i-1]]) {
		return false
	}
	if j := i + len(m.req); m.after != nil && (j >= len(buf) || !m.after[buf[j]]) {
		return false
	}
	return true
}

// Unicode versions of Perl classes, as ripgrep (Rust's regex) reads \w, \d and \s; Go's
// RE2 reads them as ASCII.
const (
	uWord  = `\p{L}\p{M}\p{Nd}\p{Pc}`
	uDigit = `\p{Nd}`
	uSpace = `\t-\r\x{85}\p{Z}`
)

// unicodeClasses rewrites \w \d \s (and, outside brackets, \W \D \S) to their Unicode
// meaning. Inside a bracket expression the negated forms keep RE2's ASCII meaning (a class
// cannot hold a complement), and \b stays ASCII (RE2 has no Unicode word boundary).
func unicodeClasses(p string) string {
	var b strings.Builder
	inClass := false
	for i := 0; i < len(p); i++ {
		c := p[i]
		if c == '\\' && i+1 < len(p) {
			n := p[i+1]
			if n == 'Q' { // \Q...\E is literal text
				end := strings.Index(p[i+2:], `\E`)
				if end < 0 {
					b.WriteString(p[i:])
					return b.String()
				}
				b.WriteString(p[i : i+2+end+2])
				i += 2 + end + 1
				continue
			}
			var rep string
			switch {
			case n == 'w' && inClass:
				rep = uWord
			case n == 'd' && inClass:
				rep = uDigit
			case n == 's' && inClass:
				rep = uSpace
			case n == 'w':
				rep = "[" + uWord + "]"
			case n == 'W' && !inClass:
				rep = "[^" + uWord + "]"
			case n == 'd':
				rep = uDigit
			case n == 'D' && !inClass:
				rep = `\P{Nd}`
			case n == 's':
				rep = "[" + uSpace + "]"
			case n == 'S' && !inClass:
				rep = "[^" + uSpace + "]"
			}
			if rep != "" {
				b.WriteString(rep)
			} else {
				b.WriteByte(c)
				b.WriteByte(n)
			}
			i++
			continue
		}
		switch {
		case c == '[' && !inClass:
			inClass = true
			b.WriteByte(c)
			// A ] right after [ or [^ is a literal.
			if i+1 < len(p) && p[i+1] == '^' {
				b.WriteByte('^')
				i++
			}
			if i+1 < len(p) && p[i+1] == ']' {
				b.WriteByte(']')
				i++
			}
			continue
		case c == '[' && inClass && strings.HasPrefix(p[i:], "[:"):
			end := strings.Index(p[i:], ":]")
			if end > 0 {
				b.WriteString(p[i : i+end+2])
				i += end + 1
				continue
			}
		case c == ']' && inClass:
			inClass = false
		}
		b.WriteByte(c)
	}
	return b.String()
}

// requiredLiteral returns the longest literal that every match of re contains ("" when there
// is none) and whether it is case-folded: the prefilter for regexes. Concatenations join
// adjacent literal parts of the same case mode; captures, x+ and x{n,} with n >= 1 pass
// through; alternations and optional parts give nothing. Case-folded literals count only when
// they are ASCII (the prefilter compares ASCII case-insensitively).
func requiredLiteral(re *syntax.Regexp) (string, bool) {
	switch re.Op {
	case syntax.OpLiteral:
		fold := re.Flags&syntax.FoldCase != 0
		s := string(re.Rune)
		if fold && !isASCII(s) {
			return "", false
		}
		return s, fold
	case syntax.OpCapture, syntax.OpPlus:
		return requiredLiteral(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return requiredLiteral(re.Sub[0])
		}
	case syntax.OpConcat:
		best, bestFold := "", false
		run, runFold := "", false
		better := func(l string, f bool) {
			// Longer wins; at equal length an exact literal beats a folded one.
			if len(l) > len(best) || (len(l) == len(best) && bestFold && !f) {
				best, bestFold = l, f
			}
		}
		for _, s := range re.Sub {
			if s.Op == syntax.OpLiteral {
				l, f := requiredLiteral(s)
				if l == "" {
					run = ""
					continue
				}
				if run != "" && f != runFold {
					run = ""
				}
				run, runFold = run+l, f
				better(run, runFold)
				continue
			}
			run = ""
			if l, f := requiredLiteral(s); l != "" {
				better(l, f)
			}
		}
		return best, bestFold
	}
	return "", false
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// foldFinder finds an ASCII needle case-insensitively: it scans for one anchor byte of the
// needle (a case-less byte if there is one, else its rarest letter, in both cases) with
// IndexByte, which is vectorised, and compares the window around each hit.
type foldFinder struct {
	needle []byte // lower case
	k      int    // anchor index
	lo, up byte
}

// letterRank orders letters from rare to common in source code and prose.
const letterRank = "qjzxkvbwygfpmhucdlsnrtoiae"

func newFoldFinder(lower []byte) *foldFinder {
	f := &foldFinder{needle: lower, k: -1}
	best := len(letterRank) + 1
	for i, c := range lower {
		if c < 'a' || c > 'z' {
			f.k = i // a byte without case: one scan finds every candidate
			break
		}
		if r := strings.IndexByte(letterRank, c); r < best {
			best, f.k = r, i
		}
	}
	f.lo = lower[f.k]
	f.up = f.lo
	if f.lo >= 'a' && f.lo <= 'z' {
		f.up = f.lo - 'a' + 'A'
	}
	return f
}

func (f *foldFinder) equalAt(buf []byte, s int) bool {
	if s < 0 || s+len(f.needle) > len(buf) {
		return false
	}
	for i, n := range f.needle {
		c := buf[s+i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != n {
			return false
		}
	}
	return true
}

// index returns the first position >= from where the needle occurs, or -1.
func (f *foldFinder) index(buf []byte, from int) int {
	next := func(b byte, pos int) int {
		i := bytes.IndexByte(buf[pos:], b)
		if i < 0 {
			return -1
		}
		return pos + i
	}
	pos := from + f.k
	if pos >= len(buf) {
		return -1
	}
	nl := next(f.lo, pos)
	nu := -1
	if f.up != f.lo {
		nu = next(f.up, pos)
	}
	for {
		c := nl
		if c < 0 || (nu >= 0 && nu < c) {
			c = nu
		}
		if c < 0 {
			return -1
		}
		if f.equalAt(buf, c-f.k) {
			return c - f.k
		}
		pos = c + 1
		if pos >= len(buf) {
			return -1
		}
		if nl >= 0 && nl < pos {
			nl = next(f.lo, pos)
		}
		if nu >= 0 && nu < pos {
			nu = next(f.up, pos)
		}
	}
}

// lineBounds returns the start and end (exclusive, before '\n') of the line holding buf[i].
func lineBounds(buf []byte, i int) (int, int) {
	s := bytes.LastIndexByte(buf[:i], '\n') + 1
	e := bytes.IndexByte(buf[i:], '\n')
	if e < 0 {
		return s, len(buf)
	}
	return s, i + e
}

// scan calls emit for every matching line of buf with the line's bounds and the match column
// (0-based). emit returns false to stop.
func (m *matcher) scan(buf []byte, d *lineDFA, emit func(ls, le, col int) bool) {
	switch {
	case m.lit != nil:
		pos := 0
		for pos <= len(buf) {
			i := bytes.Index(buf[pos:], m.lit)
			if i < 0 {
				return
			}
			i += pos
			ls, le := lineBounds(buf, i)
			if !emit(ls, le, i-ls) {
				return
			}
			pos = le + 1
		}
	case m.req != nil && !(m.foldRisk && (bytes.Contains(buf, kelvin) || bytes.Contains(buf, longS))):
		// Only lines containing the required literal can match.
		pos := 0
		for pos <= len(buf) {
			var i int
			if m.fold != nil {
				if i = m.fold.index(buf, pos); i < 0 {
					return
				}
			} else {
				if i = bytes.Index(buf[pos:], m.req); i < 0 {
					return
				}
				i += pos
				if !m.neighboursOK(buf, i) {
					pos = i + 1 // another occurrence on the line may still do
					continue
				}
			}
			ls, le := lineBounds(buf, i)
			if loc := m.findInLine(d, buf[ls:le]); loc != nil {
				if !emit(ls, le, loc[0]) {
					return
				}
			}
			pos = le + 1
		}
	default:
		// Line by line: Go's regexp backtracks fast on short inputs but falls back to its NFA
		// on whole files (measured: 17 % more CPU on GOROOT/src), and a line-oriented grep
		// must not let [^x] or \s match across a line end anyway.
		m.scanLines(buf, d, 0, len(buf), emit)
	}
}

var kelvin, longS = []byte("\u212a"), []byte("\u017f")

// findInLine returns the first match in line: the DFA (when there is one) rules out lines
// without a match, regexp finds the column on the others.
func (m *matcher) findInLine(d *lineDFA, line []byte) []int {
	if d != nil {
		if matched, ok := d.match(line); ok && !matched {
			return nil
		}
	}
	return m.re.FindIndex(line)
}

// newDFA returns a line DFA for one worker (nil for literal searches).
func (m *matcher) newDFA() *lineDFA {
	if m.re == nil || m.syn == nil || disableDFA {
		return nil
	}
	return newLineDFA(m.syn)
}

// disableDFA turns the line DFA off (tests compare both ways).
var disableDFA bool

// scanLines runs the regex on each line in buf[from:to], ending at a line end.
func (m *matcher) scanLines(buf []byte, d *lineDFA, from, to int, emit func(ls, le, col int) bool) bool {
	for ls := from; ls <= to && ls < len(buf); {
		le := bytes.IndexByte(buf[ls:], '\n')
		if le < 0 {
			le = len(buf)
		} else {
			le += ls
		}
		if loc := m.findInLine(d, buf[ls:le]); loc != nil {
			if !emit(ls, le, loc[0]) {
				return false
			}
		}
		ls = le + 1
	}
	return true
}

// capLine returns the line as valid UTF-8, cut to max bytes around col when longer.
func capLine(line []byte, col, limit int) string {
	if len(line) > 0 && line[len(line)-1] == '\r' {
		line = line[:len(line)-1]
	}
	if len(line) <= limit {
		return strings.ToValidUTF8(string(line), "\uFFFD")
	}
	start := max(0, col-limit/4)
	for start > 0 && !utf8.RuneStart(line[start]) {
		start--
	}
	end := min(len(line), start+limit)
	for end < len(line) && !utf8.RuneStart(line[end]) {
		end--
	}
	var b strings.Builder
	if start > 0 {
		fmt.Fprintf(&b, "[…%d bytes] ", start)
	}
	b.WriteString(strings.ToValidUTF8(string(line[start:end]), "\uFFFD"))
	if end < len(line) {
		fmt.Fprintf(&b, " […%d bytes]", len(line)-end)
	}
	return b.String()
}

// contextLines returns up to n lines before ls and after le.
func contextLines(buf []byte, ls, le, n, maxLine int) (before, after []string) {
	if n <= 0 {
		return nil, nil
	}
	s := ls
	for i := 0; i < n && s > 0; i++ {
		ps := bytes.LastIndexByte(buf[:s-1], '\n') + 1
		before = append(before, capLine(buf[ps:s-1], 0, maxLine))
		s = ps
	}
	for i, j := 0, len(before)-1; i < j; i, j = i+1, j-1 {
		before[i], before[j] = before[j], before[i]
	}
	e := le
	for i := 0; i < n && e < len(buf)-1; i++ {
		ns := e + 1
		ne := bytes.IndexByte(buf[ns:], '\n')
		if ne < 0 {
			ne = len(buf)
		} else {
			ne += ns
		}
		after = append(after, capLine(buf[ns:ne], 0, maxLine))
		e = ne
	}
	return before, after
}

// globFilter matches a file's path or name against a doublestar pattern.
type globFilter struct {
	pattern string
	byName  bool
}

func newGlobFilter(field, pattern string) (*globFilter, error) {
	if pattern == "" {
		return nil, nil
	}
	if !doublestar.ValidatePattern(pattern) {
		return nil, &FieldError{field, fmt.Sprintf("invalid glob %q (unbalanced [ ] or { }); use * ? [abc] {a,b} and ** for any directories", pattern)}
	}
	return &globFilter{pattern: pattern, byName: !strings.Contains(pattern, "/")}, nil
}

func (g *globFilter) match(rel string) bool {
	if g == nil {
		return true
	}
	if g.byName {
		rel = rel[strings.LastIndexByte(rel, '/')+1:]
	}
	ok, _ := doublestar.Match(g.pattern, rel)
	return ok
}

type grepJob struct {
	seq int
	rel string
	f   *os.File
}

type grepDone struct {
	seq     int
	matches []Match
}

// Grep searches root as opts say. Results are in walk order (sorted paths, then lines) and the
// same for the same tree whatever the parallelism.
func Grep(ctx context.Context, root *os.Root, opts GrepOptions) (GrepResult, error) {
	m, err := compileMatcher(opts.Pattern, opts.Literal, opts.IgnoreCase)
	if err != nil {
		return GrepResult{}, err
	}
	if opts.Context < 0 || opts.Context > MaxContext {
		return GrepResult{}, &FieldError{"context", fmt.Sprintf("%d is out of range; use 0 to %d lines", opts.Context, MaxContext)}
	}
	if opts.MaxResults < 0 || opts.MaxResults > MaxMaxResults {
		return GrepResult{}, &FieldError{"max_results", fmt.Sprintf("%d is out of range; use 1 to %d (narrow the search with path or glob)", opts.MaxResults, MaxMaxResults)}
	}
	if opts.MaxResults == 0 {
		opts.MaxResults = DefaultMaxResults
	}
	if opts.MaxLineBytes <= 0 {
		opts.MaxLineBytes = DefaultMaxLineBytes
	}
	gf, err := newGlobFilter("glob", opts.Glob)
	if err != nil {
		return GrepResult{}, err
	}
	workers := opts.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	limit := opts.MaxResults + 1 // one more than returned tells "truncated"

	// A file named by the caller is opened here, before any worker starts, so that a special
	// file is refused with an error (a walk skips them silently) and a failure to open it is
	// reported rather than counted as a file without matches.
	var named *os.File
	if opts.File != "" {
		f, st, err := workspace.OpenInRoot(root, opts.File)
		if err != nil {
			return GrepResult{}, fmt.Errorf("path: %w", err)
		}
		if st.IsDir() {
			f.Close()
			return GrepResult{}, &FieldError{"path", fmt.Sprintf("%q is a directory; name a file or search the directory without File", opts.File)}
		}
		named = f
	}

	var fast *fastOpener
	if !portableOnly {
		fast = newFastOpener(root)
	}
	if fast != nil {
		defer fast.close()
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	jobs := make(chan grepJob, 256)
	done := make(chan grepDone, 256)

	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			bp := bufPool.Get().(*[]byte)
			buf := (*bp)[:0]
			defer func() {
				if cap(buf) <= 4<<20 { // do not keep a huge file's buffer around
					*bp = buf[:0]
					bufPool.Put(bp)
				}
			}()
			dfa := m.newDFA()
			for j := range jobs {
				var ms []Match
				if ctx.Err() == nil {
					var ok bool
					if j.f != nil {
						buf, ok = readAll(j.f, buf)
					} else {
						buf, ok = fast.readFile(j.rel, buf)
					}
					if ok {
						ms = searchBuf(j.rel, buf, m, dfa, opts, limit)
					}
				}
				if j.f != nil {
					j.f.Close()
				}
				if opts.Searched != nil {
					opts.Searched.Add(1)
				}
				done <- grepDone{j.seq, ms}
			}
		}()
	}
	walkErr := make(chan error, 1)
	go func() {
		defer close(jobs)
		seq := 0
		send := func(rel string, dir *os.Root, name string) error {
			var f *os.File
			if fast == nil {
				// Non-blocking and checked on the opened handle: a file swapped for a FIFO
				// after the walk listed it is skipped, not waited on.
				var st fs.FileInfo
				var err error
				if f, st, err = workspace.OpenInRoot(dir, name); err != nil {
					return nil
				}
				if !st.Mode().IsRegular() {
					f.Close()
					return nil
				}
			}
			select {
			case jobs <- grepJob{seq, rel, f}:
				seq++
				return nil
			case <-ctx.Done():
				if f != nil {
					f.Close()
				}
				return ErrStop
			}
		}
		if named != nil {
			select {
			case jobs <- grepJob{0, opts.File, named}:
			case <-ctx.Done():
				named.Close()
			}
			walkErr <- nil
			return
		}
		walkErr <- walk(ctx, root, WalkOptions{IncludeIgnored: opts.IncludeIgnored, Base: opts.Base, Parents: opts.Parents, Skip: opts.Skip}, fast,
			func(rel string, dir *os.Root, name string, isDir bool) error {
				if isDir || !gf.match(rel) {
					return nil
				}
				return send(rel, dir, name)
			})
	}()
	go func() { wg.Wait(); close(done) }()

	// Collect in sequence order; stop once the files searched so far in order hold more than
	// MaxResults matches, so the answer does not depend on which worker was faster.
	pending := map[int][]Match{}
	next := 0
	var res GrepResult
	for d := range done {
		pending[d.seq] = d.matches
		for {
			ms, ok := pending[next]
			if !ok || res.Truncated {
				break
			}
			delete(pending, next)
			next++
			res.FilesSearched++
			res.Matches = append(res.Matches, ms...)
			if len(res.Matches) > opts.MaxResults {
				res.Matches = res.Matches[:opts.MaxResults]
				res.Truncated = true
				cancel()
			}
		}
	}
	if err := <-walkErr; err != nil && !errors.Is(err, ErrStop) && !errors.Is(err, context.Canceled) {
		return res, err
	}
	if err := context.Cause(ctx); err != nil && !res.Truncated {
		// The caller's context ended (cancel above only runs once truncated).
		return res, err
	}
	return res, nil
}

// bufPool keeps read buffers across searches (they grow to the largest file a worker read).
var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 256<<10); return &b }}

// portableOnly turns the Linux openat2 path off (tests run both paths).
var portableOnly bool

// readAll reads f into buf (reused); ok is false when it cannot be read or is over
// MaxFileBytes.
func readAll(f *os.File, buf []byte) ([]byte, bool) {
	buf = buf[:0]
	for {
		if len(buf) == cap(buf) {
			if len(buf) >= MaxFileBytes {
				return buf[:0], false
			}
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := f.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err != nil {
			return buf, err == io.EOF
		}
	}
}

// searchBuf returns the matches in one file's content, at most limit; binary files (a NUL
// byte anywhere) have none.
func searchBuf(rel string, buf []byte, m *matcher, d *lineDFA, opts GrepOptions, limit int) []Match {
	if bytes.IndexByte(buf, 0) >= 0 {
		return nil
	}
	var out []Match
	line, lastPos := 1, 0
	m.scan(buf, d, func(ls, le, col int) bool {
		line += bytes.Count(buf[lastPos:ls], []byte{'\n'})
		lastPos = ls
		mt := Match{Path: rel, Line: line, Column: col + 1, Text: capLine(buf[ls:le], col, opts.MaxLineBytes)}
		mt.Before, mt.After = contextLines(buf, ls, le, opts.Context, opts.MaxLineBytes)
		out = append(out, mt)
		return len(out) < limit
	})
	return out
}

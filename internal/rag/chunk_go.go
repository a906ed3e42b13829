package rag

import (
	"strings"
	"sync"
)

// Go sources are chunked by top-level declarations found by a lexical scan (comments, strings,
// raw strings, runes and bracket depth), not by go/parser: parsing whole function bodies was a
// fifth of ingest's CPU. The scan finds the same declarations, doc comments and section names as
// the parser for gofmt-formatted code (TestGoScanMatchesParser compares them on GOROOT).

// goLine is the lexical state at the start of one line.
type goLine struct {
	start    int
	depth    int  // open (, [ and { at the line start
	inBlock  bool // inside a /* */ comment
	inRaw    bool // inside a `raw string`
	lastCode int  // end of the last code byte before the line
}

// Byte classes for scanGoLines' normal state: plain code, blanks, and the bytes it must look at.
const (
	gbCode = iota
	gbSpace
	gbSpecial // newline, comment start, quotes, brackets
)

var goByteClass = func() (t [256]uint8) {
	for _, c := range []byte(" \t\r") {
		t[c] = gbSpace
	}
	for _, c := range []byte("\n/\"`'{([})]") {
		t[c] = gbSpecial
	}
	return t
}()

// scanGoLines appends the lines of s to dst and returns them with the end of the last code byte.
func scanGoLines(dst []goLine, s string) ([]goLine, int) {
	lines := dst
	const (
		normal = iota
		lineComment
		blockComment
		str
		raw
		runeLit
	)
	depth, state, lastCode := 0, normal, 0
	lineStart := true
	for i := 0; i < len(s); i++ {
		if lineStart {
			lines = append(lines, goLine{start: i, depth: depth, inBlock: state == blockComment, inRaw: state == raw, lastCode: lastCode})
			lineStart = false
		}
		c := s[i]
		switch state {
		case normal:
			switch goByteClass[c] { // most bytes: one table load
			case gbCode:
				lastCode = i + 1
				continue
			case gbSpace:
				continue
			}
			switch c {
			case '/':
				if i+1 < len(s) && s[i+1] == '/' {
					state = lineComment
					i++
					continue
				}
				if i+1 < len(s) && s[i+1] == '*' {
					state = blockComment
					i++
					continue
				}
			case '"':
				state = str
			case '`':
				state = raw
			case '\'':
				state = runeLit
			case '{', '(', '[':
				depth++
			case '}', ')', ']':
				if depth > 0 {
					depth--
				}
			}
			if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
				lastCode = i + 1
			}
		case lineComment: // jump to the end of the line (comments are a good part of Go source)
			if c != '\n' {
				j := strings.IndexByte(s[i:], '\n')
				if j < 0 {
					i = len(s)
					continue
				}
				i += j
				c = '\n'
			}
			state = normal
		case blockComment:
			if c == '*' && i+1 < len(s) && s[i+1] == '/' {
				state = normal
				i++
				continue
			}
		case str, runeLit:
			quote := byte('"')
			if state == runeLit {
				quote = '\''
			}
			switch {
			case c == '\\' && i+1 < len(s) && s[i+1] != '\n':
				i++
			case c == quote:
				state = normal
				lastCode = i + 1
			case c == '\n': // unterminated: give up on the literal
				state = normal
			}
		case raw:
			if c == '`' {
				state = normal
				lastCode = i + 1
			}
		}
		if c == '\n' {
			lineStart = true
		}
	}
	return lines, lastCode
}

// goLinePool recycles scanGoDecls' line tables: one per Go file, dropped once its declarations
// are found (an ingest of GOROOT/src allocated ~50 MB of them).
var goLinePool = sync.Pool{New: func() any { return new([]goLine) }}

type goDecl struct {
	start, end int // doc comment start, end of the last code byte
	section    string
}

// scanGoDecls returns the package name and the top-level declarations; ok is false when there
// is no package clause.
func scanGoDecls(s string) (pkg string, decls []goDecl, ok bool) {
	buf := goLinePool.Get().(*[]goLine)
	lines, final := scanGoLines((*buf)[:0], s)
	defer func() { *buf = lines[:0]; goLinePool.Put(buf) }()
	text := func(k int) string {
		end := len(s)
		if k+1 < len(lines) {
			end = lines[k+1].start
		}
		return strings.TrimRight(s[lines[k].start:end], "\r\n")
	}
	top := func(k int) bool { l := lines[k]; return l.depth == 0 && !l.inBlock && !l.inRaw }
	comment := func(k int) bool {
		if lines[k].inBlock && lines[k].depth == 0 {
			return true
		}
		if !top(k) {
			return false
		}
		t := strings.TrimLeft(text(k), " \t")
		return strings.HasPrefix(t, "//") || strings.HasPrefix(t, "/*")
	}
	var keyLines []int
	for k := range lines {
		if !top(k) {
			continue
		}
		t := text(k)
		if pkg == "" && !ok && strings.HasPrefix(t, "package ") {
			pkg, _ = leadingIdent(strings.TrimLeft(t[len("package "):], " \t"))
			ok = pkg != ""
			continue
		}
		if declKeyword(t) != "" {
			keyLines = append(keyLines, k)
		}
	}
	if !ok {
		return "", nil, false
	}
	starts := make([]int, len(keyLines)) // line index where each decl (with its doc) starts
	for i, k := range keyLines {
		j := k
		for j > 0 && comment(j-1) && (i == 0 || j-1 > keyLines[i-1]) {
			j--
		}
		starts[i] = j
	}
	for i, k := range keyLines {
		end := final
		if i+1 < len(keyLines) {
			end = lines[starts[i+1]].lastCode
		}
		start := lines[starts[i]].start
		if end < start {
			end = start
		}
		decls = append(decls, goDecl{start: start, end: end, section: goSection(s, lines, k, text)})
	}
	return pkg, decls, true
}

func declKeyword(line string) string {
	for _, kw := range [...]string{"func", "type", "var", "const", "import"} {
		if strings.HasPrefix(line, kw) && len(line) > len(kw) && (line[len(kw)] == ' ' || line[len(kw)] == '(' || line[len(kw)] == '\t') {
			return kw
		}
	}
	return ""
}

func leadingIdent(s string) (string, string) {
	n := 0
	for n < len(s) && (isWordRune(rune(s[n])) || s[n] >= 0x80) {
		n++
	}
	return s[:n], s[n:]
}

// goSection names a declaration as the parser-based chunker did: "func Name", "func (*Recv) Name",
// "type A, B", "var x", "const A, B, C, …", "import".
func goSection(s string, lines []goLine, k int, text func(int) string) string {
	line := text(k)
	kw := declKeyword(line)
	rest := strings.TrimLeft(line[len(kw):], " \t")
	if kw == "import" {
		return "import"
	}
	if kw == "func" {
		recv := ""
		if strings.HasPrefix(rest, "(") {
			end := strings.IndexByte(rest, ')')
			if end < 0 {
				return "func ?"
			}
			r := rest[1:end]
			if b := strings.IndexByte(r, '['); b >= 0 {
				r = r[:b]
			}
			f := strings.Fields(r)
			if len(f) == 0 {
				return "func ?"
			}
			recv = "(" + f[len(f)-1] + ") "
			rest = strings.TrimLeft(rest[end+1:], " \t")
		}
		name, _ := leadingIdent(rest)
		return "func " + recv + name
	}
	var names []string
	specNames := func(t string) {
		for {
			name, r := leadingIdent(strings.TrimLeft(t, " \t"))
			if name == "" {
				return
			}
			names = append(names, name)
			r = strings.TrimLeft(r, " \t")
			if kw == "type" || !strings.HasPrefix(r, ",") {
				return
			}
			t = r[1:]
		}
	}
	if strings.HasPrefix(rest, "(") {
		if in := strings.TrimSpace(rest[1:]); in != "" && !strings.HasPrefix(in, "//") && !strings.HasPrefix(in, ")") {
			specNames(in)
		}
		for j := k + 1; j < len(lines) && lines[j].depth > 0; j++ {
			if lines[j].depth != 1 || lines[j].inBlock || lines[j].inRaw {
				continue
			}
			t := strings.TrimLeft(text(j), " \t")
			if t == "" || strings.HasPrefix(t, "//") || strings.HasPrefix(t, "/*") || strings.HasPrefix(t, ")") {
				continue
			}
			specNames(t)
		}
	} else {
		specNames(rest)
	}
	if len(names) > 3 {
		names = append(names[:3], "…")
	}
	return kw + " " + strings.Join(names, ", ")
}

// chunkGoScan is chunkGo on scanned declarations.
func chunkGoScan(content string) ([]Chunk, bool) {
	pkg, decls, ok := scanGoDecls(content)
	if !ok {
		return nil, false
	}
	chunks := make([]Chunk, 0, len(decls)+len(decls)/4+1) // most declarations are one chunk
	prev := 0
	pkgSection := "package " + pkg
	for i, d := range decls {
		start := d.start
		if i == 0 && start > 0 {
			chunks = appendBlocks(chunks, content[:start], pkgSection, "go")
		} else if start > prev && strings.TrimSpace(content[prev:start]) != "" && i > 0 {
			chunks = appendBlocks(chunks, content[prev:start], pkgSection, "go")
		}
		chunks = appendBlocks(chunks, content[start:d.end], d.section, "go")
		prev = d.end
	}
	if len(decls) == 0 {
		return chunkBlocks(content, pkgSection, "go"), true
	}
	if prev < len(content) && strings.TrimSpace(content[prev:]) != "" {
		chunks = appendBlocks(chunks, content[prev:], pkgSection, "go")
	}
	return chunks, true
}

// Package tomledit edits Switchboard's TOML config file as text, so a change made by a program
// (the dashboard's Settings and Servers views, `switchboard servers`) keeps the user's comments,
// order, blank lines and spelling. No Go library does that: BurntSushi/toml and pelletier/go-toml
// re-encode the whole document. So a small scanner splits the file into statements (blank lines,
// comments, table headers, key/value pairs — multi-line strings, arrays and inline tables
// included), an edit rewrites, inserts or removes whole statements (or just one value), and
// BurntSushi/toml decodes the result: an edit is refused unless the file decodes exactly as
// before apart from the intended change. Everything else stays byte for byte.
//
// internal/upstream edits [[servers]] entries with the scanner; Set, Delete and ReplaceTables
// (edit.go) are the general edits internal/config builds the settings on. The package sits below
// both (internal/config imports internal/upstream), so neither needs the other.
package tomledit

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
)

// Kind is what a statement is.
type Kind int

// Statement kinds.
const (
	Blank Kind = iota
	Comment
	Header
	KeyValue
)

// Stmt is one statement of a TOML file: whole lines, from the start of its first line to after
// the newline ending its last (a multi-line array or string spans several).
type Stmt struct {
	Kind       Kind
	Start, End int
	Line       int      // 1-based line of Start
	Key        []string // a header's or a key/value's key, parts unquoted
	Array      bool     // [[header]]
	// ValStart and ValEnd delimit a key/value's value (without a comment after it).
	ValStart, ValEnd int
}

// ParseError names the line of a TOML syntax error and the fix.
func ParseError(err error) error {
	var pe toml.ParseError
	if errors.As(err, &pe) {
		return fmt.Errorf("does not parse: line %d: %s; fix the file and run this again", pe.Position.Line, pe.Message)
	}
	return fmt.Errorf("does not parse: %v; fix the file and run this again", err)
}

// Newline is the file's line ending ("\r\n" when its first line ends so, else "\n").
func Newline(data []byte) string {
	if i := bytes.IndexByte(data, '\n'); i > 0 && data[i-1] == '\r' {
		return "\r\n"
	}
	return "\n"
}

// Scan splits a file (one BurntSushi/toml has accepted) into statements. It knows just enough
// TOML to find where each statement ends: strings (basic, literal, multi-line), arrays and
// inline tables over several lines, comments.
func Scan(data []byte) ([]Stmt, error) {
	sc := scanner{data: data}
	if bytes.HasPrefix(data, []byte("\xef\xbb\xbf")) {
		sc.pos = 3
	}
	var out []Stmt
	line := 1
	for sc.pos < len(data) {
		s := Stmt{Start: sc.pos, Line: line}
		if len(out) == 0 {
			s.Start = 0 // a byte order mark belongs to the first statement
		}
		sc.spaces()
		switch c := sc.peek(); {
		case c == '\n' || c == '\r' || c == 0 && sc.pos >= len(data):
			s.Kind = Blank
		case c == '#':
			s.Kind = Comment
		case c == '[':
			s.Kind = Header
			sc.pos++
			if sc.peek() == '[' {
				s.Array = true
				sc.pos++
			}
			key, err := sc.key()
			if err != nil {
				return nil, sc.fail(s.Line, err)
			}
			s.Key = key
			close := "]"
			if s.Array {
				close = "]]"
			}
			if !bytes.HasPrefix(data[sc.pos:], []byte(close)) {
				return nil, sc.fail(s.Line, errors.New("unclosed table header"))
			}
			sc.pos += len(close)
		default:
			s.Kind = KeyValue
			key, err := sc.key()
			if err != nil {
				return nil, sc.fail(s.Line, err)
			}
			s.Key = key
			if sc.peek() != '=' {
				return nil, sc.fail(s.Line, errors.New("no '=' after the key"))
			}
			sc.pos++
			sc.spaces()
			s.ValStart = sc.pos
			if err := sc.value(); err != nil {
				return nil, sc.fail(s.Line, err)
			}
			s.ValEnd = sc.pos
		}
		// the rest of the line: spaces, a comment, the newline
		for sc.pos < len(data) && data[sc.pos] != '\n' {
			sc.pos++
		}
		if sc.pos < len(data) {
			sc.pos++
		}
		s.End = sc.pos
		line += bytes.Count(data[s.Start:s.End], []byte("\n"))
		out = append(out, s)
	}
	return out, nil
}

type scanner struct {
	data []byte
	pos  int
}

func (sc *scanner) fail(line int, err error) error {
	return fmt.Errorf("internal error: switchboard cannot read line %d of this file for editing (%v); edit it by hand", line, err)
}

func (sc *scanner) peek() byte {
	if sc.pos < len(sc.data) {
		return sc.data[sc.pos]
	}
	return 0
}

func (sc *scanner) spaces() {
	for sc.pos < len(sc.data) && (sc.data[sc.pos] == ' ' || sc.data[sc.pos] == '\t') {
		sc.pos++
	}
}

// key reads a dotted key (bare, "basic" or 'literal' parts) and the spaces after it.
func (sc *scanner) key() ([]string, error) {
	var parts []string
	for {
		sc.spaces()
		switch c := sc.peek(); c {
		case '"':
			start := sc.pos
			if err := sc.str(); err != nil {
				return nil, err
			}
			raw := string(sc.data[start:sc.pos])
			if u, err := strconv.Unquote(raw); err == nil {
				parts = append(parts, u)
			} else {
				parts = append(parts, raw[1:len(raw)-1]) // a TOML-only escape: compare it as written
			}
		case '\'':
			start := sc.pos
			if err := sc.str(); err != nil {
				return nil, err
			}
			parts = append(parts, string(sc.data[start+1:sc.pos-1]))
		default:
			start := sc.pos
			for sc.pos < len(sc.data) && isBare(sc.data[sc.pos]) {
				sc.pos++
			}
			if sc.pos == start {
				return nil, fmt.Errorf("unexpected %q in a key", c)
			}
			parts = append(parts, string(sc.data[start:sc.pos]))
		}
		sc.spaces()
		if sc.peek() != '.' {
			return parts, nil
		}
		sc.pos++
	}
}

func isBare(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// value reads a value; pos ends after it (before spaces and a comment on its last line).
func (sc *scanner) value() error {
	switch sc.peek() {
	case '"', '\'':
		return sc.str()
	case '[', '{':
		return sc.bracketed()
	}
	// a scalar: number, bool, date-time (which may hold a space): up to a comment or the line's end
	start := sc.pos
	for sc.pos < len(sc.data) && sc.data[sc.pos] != '#' && sc.data[sc.pos] != '\n' {
		sc.pos++
	}
	for sc.pos > start && strings.IndexByte(" \t\r", sc.data[sc.pos-1]) >= 0 {
		sc.pos--
	}
	return nil
}

// bracketed reads an array or inline table, nested ones, strings and comments inside included.
func (sc *scanner) bracketed() error {
	depth := 0
	for sc.pos < len(sc.data) {
		switch c := sc.data[sc.pos]; c {
		case '"', '\'':
			if err := sc.str(); err != nil {
				return err
			}
			continue
		case '[', '{':
			depth++
		case ']', '}':
			depth--
			if depth == 0 {
				sc.pos++
				return nil
			}
		case '#':
			for sc.pos < len(sc.data) && sc.data[sc.pos] != '\n' {
				sc.pos++
			}
			continue
		}
		sc.pos++
	}
	return errors.New("unclosed array or inline table")
}

// str reads a basic, literal or multi-line string.
func (sc *scanner) str() error {
	d := sc.data
	q := d[sc.pos]
	triple := bytes.Repeat([]byte{q}, 3)
	if bytes.HasPrefix(d[sc.pos:], triple) {
		i := sc.pos + 3
		for i < len(d) {
			if q == '"' && d[i] == '\\' {
				i += 2
				continue
			}
			if bytes.HasPrefix(d[i:], triple) {
				// up to two quotes right before the closing delimiter belong to the string
				n := 3
				for n < 5 && i+n < len(d) && d[i+n] == q {
					n++
				}
				sc.pos = i + n
				return nil
			}
			i++
		}
		return errors.New("unclosed multi-line string")
	}
	i := sc.pos + 1
	for i < len(d) && d[i] != '\n' {
		if q == '"' && d[i] == '\\' {
			i += 2
			continue
		}
		if d[i] == q {
			sc.pos = i + 1
			return nil
		}
		i++
	}
	return errors.New("unclosed string")
}

// ---- writing values ----

// Quote is s as a TOML basic string.
func Quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"', '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case '\t':
			b.WriteString(`\t`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		default:
			if r < 0x20 || r == 0x7f {
				fmt.Fprintf(&b, `\u%04X`, r)
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}

var bareKeyRE = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// Key is k as a TOML key: bare when it can be, else quoted.
func Key(k string) string {
	if bareKeyRE.MatchString(k) {
		return k
	}
	return Quote(k)
}

// LeadingSpace is the indentation at the start of b.
func LeadingSpace(b []byte) string {
	i := 0
	for i < len(b) && (b[i] == ' ' || b[i] == '\t') {
		i++
	}
	return string(b[:i])
}

// EndsWithBlankLine reports whether b ends with an empty line (or is empty).
func EndsWithBlankLine(b []byte) bool {
	t := bytes.TrimRight(b, " \t\r")
	if !bytes.HasSuffix(t, []byte("\n")) {
		return false
	}
	t = bytes.TrimRight(t[:len(t)-1], " \t\r")
	return len(t) == 0 || bytes.HasSuffix(t, []byte("\n"))
}

// StartsWithBlankLine reports whether b starts with an empty line (or is empty).
func StartsWithBlankLine(b []byte) bool {
	t := bytes.TrimLeft(b, " \t\r")
	return len(t) == 0 || t[0] == '\n'
}

package policy

import (
	"errors"
	"fmt"
	"unicode/utf8"
)

// glob is a compiled shell-style pattern over a whole string:
//
//   - any run of characters, "/" and spaces included (path.Match stops at "/", which would
//     let `rm -rf /` slip past a rule written as "rm *")
//     ?       exactly one character
//     [abc]   one of the listed characters; [a-z] ranges; [!abc] or [^abc] negates
//     \x      the character x literally
//
// Matching is linear in practice (the classic two-pointer wildcard algorithm: one backtrack
// point, the last star), so a hostile argument cannot make a rule slow.
type glob struct {
	src   string
	items []gitem
}

type gkind uint8

const (
	gLit   gkind = iota
	gAny         // ?
	gStar        // *
	gClass       // [...]
)

type gitem struct {
	kind   gkind
	r      rune
	ranges []runeRange
	negate bool
}

type runeRange struct{ lo, hi rune }

func compileGlob(src string) (glob, error) {
	if !utf8.ValidString(src) {
		return glob{}, errors.New("pattern is not valid UTF-8")
	}
	g := glob{src: src}
	rs := []rune(src)
	for i := 0; i < len(rs); i++ {
		switch c := rs[i]; c {
		case '*':
			if n := len(g.items); n > 0 && g.items[n-1].kind == gStar {
				continue // ** is *
			}
			g.items = append(g.items, gitem{kind: gStar})
		case '?':
			g.items = append(g.items, gitem{kind: gAny})
		case '\\':
			if i+1 >= len(rs) {
				return glob{}, fmt.Errorf("pattern %q ends with a lone \\; write \\\\ for a backslash", src)
			}
			i++
			g.items = append(g.items, gitem{kind: gLit, r: rs[i]})
		case '[':
			it := gitem{kind: gClass}
			j := i + 1
			if j < len(rs) && (rs[j] == '!' || rs[j] == '^') {
				it.negate = true
				j++
			}
			first := true
			closed := false
			for j < len(rs) {
				if rs[j] == ']' && !first {
					closed = true
					break
				}
				first = false
				lo := rs[j]
				if lo == '\\' && j+1 < len(rs) {
					j++
					lo = rs[j]
				}
				hi := lo
				if j+2 < len(rs) && rs[j+1] == '-' && rs[j+2] != ']' {
					hi = rs[j+2]
					if hi == '\\' && j+3 < len(rs) {
						j++
						hi = rs[j+2]
					}
					j += 2
					if hi < lo {
						return glob{}, fmt.Errorf("pattern %q: range %c-%c is backwards; write %c-%c", src, lo, hi, hi, lo)
					}
				}
				it.ranges = append(it.ranges, runeRange{lo, hi})
				j++
			}
			if !closed {
				return glob{}, fmt.Errorf("pattern %q: [ without a closing ]; write \\[ for a literal bracket", src)
			}
			g.items = append(g.items, it)
			i = j
		default:
			g.items = append(g.items, gitem{kind: gLit, r: c})
		}
	}
	return g, nil
}

func (it *gitem) matchRune(c rune) bool {
	switch it.kind {
	case gLit:
		return it.r == c
	case gAny:
		return true
	case gClass:
		in := false
		for _, rg := range it.ranges {
			if c >= rg.lo && c <= rg.hi {
				in = true
				break
			}
		}
		return in != it.negate
	}
	return false
}

// literal returns the one string g matches when it has no wildcard, star or class.
func (g glob) literal() (string, bool) {
	rs := make([]rune, 0, len(g.items))
	for _, it := range g.items {
		if it.kind != gLit {
			return "", false
		}
		rs = append(rs, it.r)
	}
	return string(rs), true
}

// match reports whether the whole of s matches.
func (g glob) match(s string) bool {
	items := g.items
	pi, si := 0, 0
	starPi, starSi := -1, 0
	for si < len(s) {
		c, w := utf8.DecodeRuneInString(s[si:])
		if pi < len(items) {
			it := &items[pi]
			if it.kind == gStar {
				starPi, starSi = pi, si
				pi++
				continue
			}
			if it.matchRune(c) {
				pi++
				si += w
				continue
			}
		}
		if starPi < 0 {
			return false
		}
		// Backtrack: the last star swallows one more character.
		_, w0 := utf8.DecodeRuneInString(s[starSi:])
		starSi += w0
		si = starSi
		pi = starPi + 1
	}
	for pi < len(items) && items[pi].kind == gStar {
		pi++
	}
	return pi == len(items)
}

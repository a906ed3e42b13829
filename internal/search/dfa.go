package search

import (
	"regexp/syntax"
	"unicode/utf8"
)

// lineDFA answers one question fast: does this line contain a match? It is a lazily built
// DFA over the program regexp/syntax compiles (the same program Go's regexp runs), unanchored,
// with the empty-width assertions (^ $ \b \B \A \z) resolved from the previous and next
// character as Go's own matcher does. Only lines it accepts go to regexp for the column. Go's
// regexp has no DFA; on a regex without a required literal it backtracks on every line, which
// measured 7-8x ripgrep's CPU on GOROOT/src.
type lineDFA struct {
	prog   *syntax.Prog
	states map[string]*dstate
	start  [3]*dstate // by previous-character kind, for the start of a line
	// scratch
	mark  []uint32
	gen   uint32
	stack []uint32
	ok    bool // false once the state budget ran out: callers use regexp only
}

// Kinds of previous character, all the assertions need to know about it.
const (
	prevStart   = 0 // beginning of the line
	prevWord    = 1
	prevNonWord = 2
)

const maxDFAStates = 4096

type dstate struct {
	pcs   []uint32 // kernel: instructions reached after consuming the previous character
	prev  uint8
	ascii [128]*dstate
	// accepts[k]: a match is complete before the next character of kind k
	// (0: end of line, 1: word char, 2: other); -1 unknown.
	accepts [3]int8
}

func newLineDFA(re *syntax.Regexp) *lineDFA {
	prog, err := syntax.Compile(re)
	if err != nil {
		return nil
	}
	d := &lineDFA{prog: prog, states: map[string]*dstate{}, mark: make([]uint32, len(prog.Inst)), ok: true}
	for k := range d.start {
		d.start[k] = d.state(nil, uint8(k))
	}
	return d
}

func kindOf(r rune) uint8 {
	if r < 0 {
		return prevStart
	}
	if syntax.IsWordChar(r) {
		return prevWord
	}
	return prevNonWord
}

func (d *lineDFA) state(pcs []uint32, prev uint8) *dstate {
	key := make([]byte, 0, 1+4*len(pcs))
	key = append(key, prev)
	for _, pc := range pcs {
		key = append(key, byte(pc), byte(pc>>8), byte(pc>>16), byte(pc>>24))
	}
	if s, ok := d.states[string(key)]; ok {
		return s
	}
	if len(d.states) >= maxDFAStates {
		d.ok = false
		return nil
	}
	s := &dstate{pcs: pcs, prev: prev, accepts: [3]int8{-1, -1, -1}}
	d.states[string(key)] = s
	return s
}

// context of the assertions between the previous character (kind prev) and r (-1 = end).
func emptyContext(prev uint8, r rune) syntax.EmptyOp {
	var r1 rune
	switch prev {
	case prevStart:
		r1 = -1
	case prevWord:
		r1 = 'a'
	default:
		r1 = ' '
	}
	return syntax.EmptyOpContext(r1, r)
}

// closure follows empty transitions from s's kernel (plus the start, for an unanchored search)
// under ctx; it calls visit for every rune instruction and reports whether Match was reached.
func (d *lineDFA) closure(s *dstate, ctx syntax.EmptyOp, visit func(pc uint32)) bool {
	d.gen++
	if d.gen == 0 {
		clear(d.mark)
		d.gen = 1
	}
	matched := false
	d.stack = d.stack[:0]
	d.stack = append(d.stack, uint32(d.prog.Start))
	d.stack = append(d.stack, s.pcs...)
	for len(d.stack) > 0 {
		pc := d.stack[len(d.stack)-1]
		d.stack = d.stack[:len(d.stack)-1]
		if d.mark[pc] == d.gen {
			continue
		}
		d.mark[pc] = d.gen
		in := &d.prog.Inst[pc]
		switch in.Op {
		case syntax.InstAlt, syntax.InstAltMatch:
			d.stack = append(d.stack, in.Arg, in.Out)
		case syntax.InstCapture, syntax.InstNop:
			d.stack = append(d.stack, in.Out)
		case syntax.InstEmptyWidth:
			if syntax.EmptyOp(in.Arg)&^ctx == 0 {
				d.stack = append(d.stack, in.Out)
			}
		case syntax.InstMatch:
			matched = true
		case syntax.InstFail:
		default: // rune instructions
			visit(pc)
		}
	}
	return matched
}

func matchRune(in *syntax.Inst, r rune) bool {
	switch in.Op {
	case syntax.InstRune1:
		return in.Rune[0] == r
	case syntax.InstRuneAny:
		return true
	case syntax.InstRuneAnyNotNL:
		return r != '\n'
	case syntax.InstRune:
		return in.MatchRune(r)
	}
	return false
}

// step returns the state after s consumes r, or (nil, true) when a match completed before r.
func (d *lineDFA) step(s *dstate, r rune) (*dstate, bool) {
	var next []uint32
	matched := d.closure(s, emptyContext(s.prev, r), func(pc uint32) {
		if matchRune(&d.prog.Inst[pc], r) {
			next = append(next, d.prog.Inst[pc].Out)
		}
	})
	if matched {
		return nil, true
	}
	sortUniq(&next)
	return d.state(next, kindOf(r)), false
}

func sortUniq(p *[]uint32) {
	s := *p
	for i := 1; i < len(s); i++ { // insertion sort: kernels are small
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	*p = out
}

// acceptsAtEnd reports whether a match completes at the end of the line in state s.
func (d *lineDFA) acceptsAtEnd(s *dstate) bool {
	if s.accepts[0] < 0 {
		m := d.closure(s, emptyContext(s.prev, -1), func(uint32) {})
		s.accepts[0] = 0
		if m {
			s.accepts[0] = 1
		}
	}
	return s.accepts[0] == 1
}

// match reports whether line contains a match; ok is false when the DFA gave up (state budget)
// and the caller must ask regexp.
func (d *lineDFA) match(line []byte) (matched, ok bool) {
	if !d.ok {
		return false, false
	}
	s := d.start[prevStart]
	for i := 0; i < len(line); {
		c := line[i]
		var next *dstate
		if c < utf8.RuneSelf {
			next = s.ascii[c]
			if next == nil {
				var m bool
				next, m = d.step(s, rune(c))
				if m {
					return true, true
				}
				if next == nil {
					return false, false
				}
				s.ascii[c] = next
			}
			i++
		} else {
			r, size := utf8.DecodeRune(line[i:])
			var m bool
			next, m = d.step(s, r)
			if m {
				return true, true
			}
			if next == nil {
				return false, false
			}
			i += size
		}
		s = next
	}
	return d.acceptsAtEnd(s), true
}

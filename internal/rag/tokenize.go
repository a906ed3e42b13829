package rag

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Tokens are what both rankings see: BM25 counts them, the offline embedder hashes them.
// Code-aware: an identifier is kept whole (lower-cased) and also split at camelCase humps,
// digits and underscores, so "ReadFileContext", "read_file" and "read the file" share terms.
// Every term is lightly stemmed; English stop words are dropped.

// tokenize appends the terms of s to dst.
func tokenize(dst []string, s string) []string {
	i := 0
	for i < len(s) {
		// skip separators
		r, size := rune(s[i]), 1
		if r >= utf8.RuneSelf {
			r, size = utf8.DecodeRuneInString(s[i:])
		}
		if !isWordRune(r) {
			i += size
			continue
		}
		j := i
		for j < len(s) {
			r, size = rune(s[j]), 1
			if r >= utf8.RuneSelf {
				r, size = utf8.DecodeRuneInString(s[j:])
			}
			if !isWordRune(r) {
				break
			}
			j += size
		}
		dst = addWord(dst, s[i:j])
		i = j
	}
	return dst
}

func isWordRune(r rune) bool {
	if r < utf8.RuneSelf {
		return r == '_' || ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z') || ('0' <= r && r <= '9')
	}
	return unicode.IsLetter(r) || unicode.IsDigit(r)
}

// addWord adds a word's whole form and, for compound identifiers, its parts.
func addWord(dst []string, w string) []string {
	if len(w) > 64 { // hashes, base64 blobs: not words
		return dst
	}
	if simpleLower(w) { // the common case: a plain lower-case word, no allocation
		if t := term(w); t != "" {
			dst = append(dst, t)
		}
		return dst
	}
	var buf [16]string // parts stay on the stack for all but very long identifiers
	parts := splitIdentInto(buf[:0], w)
	whole := strings.ToLower(strings.Trim(w, "_"))
	if len(parts) <= 1 {
		if t := term(whole); t != "" {
			dst = append(dst, t)
		}
		return dst
	}
	if t := term(whole); t != "" {
		dst = append(dst, strings.ReplaceAll(t, "_", ""))
	}
	for _, p := range parts {
		if t := term(strings.ToLower(p)); t != "" {
			dst = append(dst, t)
		}
	}
	return dst
}

// simpleLower: only ASCII lower-case letters (and digits after the first letter, not before).
func simpleLower(w string) bool {
	for i := 0; i < len(w); i++ {
		c := w[i]
		if c < 'a' || c > 'z' {
			return false
		}
	}
	return true
}

// splitIdentInto is splitIdent appending to parts (no closure, so a caller's stack buffer
// does not escape).
func splitIdentInto(parts []string, w string) []string {
	for i := 0; i < len(w); i++ {
		if w[i] >= utf8.RuneSelf {
			return append(parts, splitIdentRunes(w)...)
		}
	}
	start := 0
	for k := 0; k < len(w); k++ {
		c := w[k]
		if c == '_' {
			if k > start {
				parts = append(parts, w[start:k])
			}
			start = k + 1
			continue
		}
		if k == start {
			continue
		}
		prev := w[k-1]
		cut := false
		switch {
		case isUpByte(c) && isLowByte(prev):
			cut = true
		case isUpByte(c) && isUpByte(prev) && k+1 < len(w) && isLowByte(w[k+1]):
			cut = true
		case isDigByte(c) != isDigByte(prev) && prev != '_':
			cut = true
		}
		if cut {
			parts = append(parts, w[start:k])
			start = k
		}
	}
	if len(w) > start {
		parts = append(parts, w[start:])
	}
	return parts
}

func isUpByte(c byte) bool  { return 'A' <= c && c <= 'Z' }
func isLowByte(c byte) bool { return 'a' <= c && c <= 'z' }
func isDigByte(c byte) bool { return '0' <= c && c <= '9' }

func splitIdentRunes(w string) []string {
	var parts []string
	start := 0
	rs := []rune(w)
	flush := func(end int) {
		if end > start {
			parts = append(parts, string(rs[start:end]))
		}
		start = end
	}
	for k := 0; k < len(rs); k++ {
		r := rs[k]
		if r == '_' {
			flush(k)
			start = k + 1
			continue
		}
		if k == start {
			continue
		}
		prev := rs[k-1]
		switch {
		case unicode.IsUpper(r) && unicode.IsLower(prev):
			flush(k)
		case unicode.IsUpper(r) && unicode.IsUpper(prev) && k+1 < len(rs) && unicode.IsLower(rs[k+1]):
			flush(k)
		case unicode.IsDigit(r) != unicode.IsDigit(prev) && prev != '_':
			flush(k)
		}
	}
	flush(len(rs))
	return parts
}

// term stems a lower-case word and drops stop words and one-letter noise.
func term(w string) string {
	if len(w) < 2 || (len(w) <= maxStopWord && stopWords[w]) {
		return ""
	}
	return stem(w)
}

// stem is a light suffix stripper (a subset of Porter step 1): plurals, -ing, -ed, -ly, -ion
// variants, enough for "compress/compressed/compressing/compression" to meet.
func stem(w string) string {
	n := len(w)
	if n <= 3 {
		return w
	}
	switch {
	case strings.HasSuffix(w, "ational") && n > 9:
		w = w[:n-7]
	case strings.HasSuffix(w, "ization") && n > 9:
		w = w[:n-7] + "ize"
	case strings.HasSuffix(w, "ations") && n > 8:
		w = w[:n-6]
	case strings.HasSuffix(w, "ation") && n > 7:
		w = w[:n-5]
	case strings.HasSuffix(w, "sses"):
		w = w[:n-2]
	case strings.HasSuffix(w, "ies") && n > 4:
		w = w[:n-3] + "y"
	case strings.HasSuffix(w, "ions") && n > 6:
		w = w[:n-4]
	case strings.HasSuffix(w, "ion") && n > 5:
		w = w[:n-3]
	case strings.HasSuffix(w, "ing") && n > 5:
		w = w[:n-3]
	case strings.HasSuffix(w, "edly") && n > 6:
		w = w[:n-4]
	case strings.HasSuffix(w, "ed") && n > 4:
		w = w[:n-2]
	case strings.HasSuffix(w, "ly") && n > 5:
		w = w[:n-2]
	case strings.HasSuffix(w, "ers") && n > 5:
		w = w[:n-3]
	case strings.HasSuffix(w, "er") && n > 5:
		w = w[:n-2]
	case strings.HasSuffix(w, "es") && n > 4 && (w[n-3] == 's' || w[n-3] == 'x' || w[n-3] == 'z' || strings.HasSuffix(w[:n-2], "ch") || strings.HasSuffix(w[:n-2], "sh")):
		w = w[:n-2]
	case w[n-1] == 's' && w[n-2] != 's' && w[n-2] != 'u' && w[n-2] != 'i':
		w = w[:n-1]
	}
	// "compress"/"compressed" → "compress"; doubled final consonant after -ing/-ed (running → runn → run)
	if m := len(w); m > 3 && w[m-1] == w[m-2] && w[m-1] != 's' && w[m-1] != 'l' && w[m-1] != 'z' && !isVowel(w[m-1]) {
		w = w[:m-1]
	}
	// drop a final e so "encode"/"encoding"/"encoder" meet at "encod"
	if m := len(w); m > 3 && w[m-1] == 'e' {
		w = w[:m-1]
	}
	return w
}

func isVowel(b byte) bool { return b == 'a' || b == 'e' || b == 'i' || b == 'o' || b == 'u' }

// maxStopWord is the longest stop word's length: longer words skip the map lookup.
const maxStopWord = 6

var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a an and are as at be by can could do does did for from has have
		how i if in into is it its me my of on or our should so than that the their them then there these
		they this to too was we what when where which while who why will with would you your want need
		way get got some any use using used just like go`) {
		if len(w) > maxStopWord {
			panic("rag: stop word longer than maxStopWord: " + w)
		}
		m[w] = true
	}
	return m
}()

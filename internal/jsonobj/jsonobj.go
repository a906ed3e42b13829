// Package jsonobj walks the top-level members of a small JSON object without decoding it into a
// map. Tool arguments pass through it on every call (the argument checks of mcp/tool and the
// audit summary): unmarshaling them into a map[string]json.RawMessage cost about a dozen
// allocations per call. Anything it does not handle simply (escaped or non-ASCII keys,
// duplicate keys, invalid JSON) is reported as not simple, and callers fall back to
// encoding/json, so their behaviour and error messages do not change.
package jsonobj

import (
	"encoding/json"
	"unicode/utf8"
)

// Members calls fn for each member of the JSON object in data, in order, with the key (the
// bytes between its quotes) and the value's raw bytes. It returns false, possibly after calling
// fn for some members, when data is not a JSON object it handles: not an object, invalid JSON,
// a key with an escape or a non-ASCII byte, a key that appears twice, or more than 32 members.
//
// Its frame is kept small (keys remembered as offsets): it runs deep in the handler goroutine
// of a tool call, which go-sdk starts afresh for every call, and a large frame there made the
// runtime grow that goroutine's stack once more per call.
func Members(data []byte, fn func(key, value []byte)) bool {
	var seen [32]uint64 // start<<32 | end of each key seen
	n := 0
	i, more, ok := open(data, '{', '}')
	for more {
		if i >= len(data) || data[i] != '"' {
			return false
		}
		ks := i + 1
		ke := ks
		for ke < len(data) && data[ke] != '"' {
			if c := data[ke]; c == '\\' || c < 0x20 || c >= 0x80 {
				return false
			}
			ke++
		}
		if ke >= len(data) || n == len(seen) {
			return false
		}
		key := data[ks:ke]
		for _, k := range seen[:n] {
			if string(data[k>>32:uint32(k)]) == string(key) {
				return false
			}
		}
		seen[n] = uint64(ks)<<32 | uint64(ke)
		n++
		i = skipSpace(data, ke+1)
		if i >= len(data) || data[i] != ':' {
			return false
		}
		vs := skipSpace(data, i+1)
		ve, valid := valueEnd(data, vs)
		if !valid || !json.Valid(data[vs:ve]) {
			return false
		}
		fn(key, data[vs:ve])
		i, more, ok = next(data, ve, '}')
	}
	return ok
}

// open starts a container: it checks that data begins with the opening bracket and says where
// its first value starts (more), or, for an empty container, whether the closing bracket ends
// data (ok).
func open(data []byte, opener, closer byte) (i int, more, ok bool) {
	i = skipSpace(data, 0)
	if i >= len(data) || data[i] != opener {
		return i, false, false
	}
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == closer {
		return i, false, skipSpace(data, i+1) == len(data)
	}
	return i, true, true
}

// next moves past a container's value that ends at ve: to the next value after a comma (more),
// or past the closing bracket, which must end data (ok). Anything else is not valid.
func next(data []byte, ve int, closer byte) (i int, more, ok bool) {
	i = skipSpace(data, ve)
	if i >= len(data) {
		return i, false, false
	}
	switch data[i] {
	case ',':
		return skipSpace(data, i+1), true, true
	case closer:
		return i, false, skipSpace(data, i+1) == len(data)
	}
	return i, false, false
}

func skipSpace(data []byte, i int) int {
	for i < len(data) {
		switch data[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// valueEnd finds the end of the JSON value starting at i (its syntax is checked by json.Valid
// afterwards): a string up to its closing quote, an object or array up to its matching bracket
// (brackets inside strings do not count), anything else up to the next delimiter.
func valueEnd(data []byte, i int) (int, bool) {
	if i >= len(data) {
		return i, false
	}
	switch data[i] {
	case '"':
		return stringEnd(data, i)
	case '{', '[':
		depth := 0
		for i < len(data) {
			switch data[i] {
			case '"':
				e, ok := stringEnd(data, i)
				if !ok {
					return i, false
				}
				i = e
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1, true
				}
			}
			i++
		}
		return i, false
	}
	for i < len(data) {
		switch data[i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return i, true
		}
		i++
	}
	return i, true
}

// stringEnd returns the index just past the string starting at data[i] == '"'.
func stringEnd(data []byte, i int) (int, bool) {
	for i++; i < len(data); i++ {
		switch data[i] {
		case '\\':
			i++
		case '"':
			return i + 1, true
		}
	}
	return i, false
}

// Elements calls fn for each element of the JSON array in data, in order, with the element's
// raw bytes. Like Members it returns false, possibly after calling fn for some elements, when
// data is not a JSON array (or not valid JSON); callers then fall back to encoding/json.
func Elements(data []byte, fn func(value []byte)) bool {
	i, more, ok := open(data, '[', ']')
	for more {
		ve, valid := valueEnd(data, i)
		if !valid || !json.Valid(data[i:ve]) {
			return false
		}
		fn(data[i:ve])
		i, more, ok = next(data, ve, ']')
	}
	return ok
}

// PlainString returns the value of a JSON string of valid UTF-8 without escapes or control
// characters (the bytes between its quotes); ok is false for anything else, which callers decode
// with encoding/json.
func PlainString(v []byte) (s string, ok bool) {
	b, ok := PlainBytes(v)
	return string(b), ok
}

// PlainBytes is PlainString without the copy: the bytes between the quotes, a subslice of v.
func PlainBytes(v []byte) (b []byte, ok bool) {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return nil, false
	}
	inner := v[1 : len(v)-1]
	for _, c := range inner {
		if c == '\\' || c == '"' || c < 0x20 {
			return nil, false
		}
	}
	if !utf8.Valid(inner) {
		return nil, false
	}
	return inner, true
}

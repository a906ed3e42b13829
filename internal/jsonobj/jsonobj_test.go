package jsonobj

import (
	"bytes"
	"encoding/json"
	"testing"
)

var cases = []string{
	`{}`, ` { } `, `{"path":"small.txt"}`, `{"a":1,"b":[1,{"c":"]}"}],"d":{"e":null}}`,
	"{\n \"a\" : \"x\\\"y\" ,\t\"b\":true }", `{"a":1,"a":2}`, `{"a\u0062":1}`, `{"é":1}`,
	`[]`, `"x"`, `null`, `{"a":}`, `{"a":tru}`, `{"a":1,}`, `{"a":1} x`, `{"a" 1}`, `{"a":"unterminated}`,
	`{"a":{"b":1}`, `{"a":[1,2}`, `{"a":01}`, `{a:1}`, `{"a":1 "b":2}`, ``, `{`, `{"a":"\x01"}`,
	`{"n":-1.5e3,"s":"\\","t":"\u00e9"}`,
}

// Members must accept only what encoding/json accepts, and then report the same members.
func check(t *testing.T, in string) {
	var got map[string]json.RawMessage
	var order []string
	ok := Members([]byte(in), func(k, v []byte) {
		if got == nil {
			got = map[string]json.RawMessage{}
		}
		got[string(k)] = bytes.Clone(v)
		order = append(order, string(k))
	})
	var want map[string]json.RawMessage
	err := json.Unmarshal([]byte(in), &want)
	if !ok {
		return // callers fall back to encoding/json: always correct
	}
	if err != nil || want == nil {
		t.Fatalf("%q: Members accepted what encoding/json refuses (%v)", in, err)
	}
	if len(got) != len(want) || len(order) != len(want) {
		t.Fatalf("%q: members %v, encoding/json %v", in, got, want)
	}
	for k, v := range want {
		if !bytes.Equal(got[k], v) {
			t.Fatalf("%q: %s = %s, encoding/json %s", in, k, got[k], v)
		}
	}
}

func TestMembersAgreesWithEncodingJSON(t *testing.T) {
	for _, in := range cases {
		check(t, in)
	}
	simple := []string{`{}`, `{"path":"small.txt"}`, `{"a":1,"b":[1,{"c":"]}"}],"d":{"e":null}}`}
	for _, in := range simple {
		if !Members([]byte(in), func(_, _ []byte) {}) {
			t.Errorf("%q: not handled; a simple object must be", in)
		}
	}
	for _, in := range []string{`{"a":1,"a":2}`, `{"a\u0062":1}`, `{"a":tru}`, `{"a":1,}`, `[]`, `{"a":1} x`} {
		if Members([]byte(in), func(_, _ []byte) {}) {
			t.Errorf("%q: handled; it must be left to encoding/json", in)
		}
	}
}

func FuzzMembers(f *testing.F) {
	for _, in := range cases {
		f.Add(in)
	}
	f.Fuzz(check)
}

func BenchmarkMembers(b *testing.B) {
	data := []byte(`{"path":"src/main.go","offset":10,"limit":200}`)
	b.ReportAllocs()
	for b.Loop() {
		Members(data, func(_, _ []byte) {})
	}
}

var arrayCases = []string{
	`[]`, ` [ ] `, `[1]`, `[{"a":"]"},"x",[1,[2]],null,true,-1.5e3]`, `[1,]`, `[1 2]`, `[`, `[1] x`,
	`{}`, `"x"`, `[{"a":}]`, `["\u00e9","\\"]`, `[01]`,
}

// Elements must accept only what encoding/json accepts, and then report the same elements.
func checkElements(t *testing.T, in string) {
	var got []json.RawMessage
	ok := Elements([]byte(in), func(v []byte) { got = append(got, bytes.Clone(v)) })
	var want []json.RawMessage
	err := json.Unmarshal([]byte(in), &want)
	if !ok {
		return
	}
	if err != nil || want == nil {
		t.Fatalf("%q: Elements accepted what encoding/json refuses (%v)", in, err)
	}
	if len(got) != len(want) {
		t.Fatalf("%q: elements %q, encoding/json %q", in, got, want)
	}
	for i := range want {
		if !bytes.Equal(got[i], want[i]) {
			t.Fatalf("%q: element %d = %s, encoding/json %s", in, i, got[i], want[i])
		}
	}
}

func TestElementsAgreesWithEncodingJSON(t *testing.T) {
	for _, in := range arrayCases {
		checkElements(t, in)
	}
	for _, in := range []string{`[]`, `[1]`, `[{"a":"]"},"x",[1,[2]],null,true,-1.5e3]`} {
		if !Elements([]byte(in), func([]byte) {}) {
			t.Errorf("%q: not handled; a plain array must be", in)
		}
	}
	for _, in := range []string{`[1,]`, `[1 2]`, `{}`, `[1] x`, `[01]`} {
		if Elements([]byte(in), func([]byte) {}) {
			t.Errorf("%q: handled; it must be left to encoding/json", in)
		}
	}
}

func FuzzElements(f *testing.F) {
	for _, in := range arrayCases {
		f.Add(in)
	}
	f.Fuzz(checkElements)
}

func FuzzPlainString(f *testing.F) {
	for _, in := range []string{`"x"`, `""`, `"a\"b"`, `"é"`, "\"\x01\"", `x`, `"`, `"ab`} {
		f.Add(in)
	}
	f.Fuzz(func(t *testing.T, in string) {
		s, ok := PlainString([]byte(in))
		if !ok {
			return
		}
		var want string
		if err := json.Unmarshal([]byte(in), &want); err != nil {
			t.Fatalf("%q: PlainString accepted what encoding/json refuses (%v)", in, err)
		}
		if s != want {
			t.Fatalf("%q: %q, encoding/json %q", in, s, want)
		}
	})
}

package lsp

import (
	"encoding/json"
	"testing"
)

// TestUTF16: byte columns and UTF-16 offsets convert both ways across ASCII, 2-, 3- and 4-byte
// characters (the last take two UTF-16 units).
func TestUTF16(t *testing.T) {
	line := "aé€😀b" // bytes: a 1, é 2, € 3, 😀 4, b 1
	cases := []struct{ byteCol, u16 int }{{0, 0}, {1, 1}, {3, 2}, {6, 3}, {10, 5}, {11, 6}}
	for _, c := range cases {
		if got := UTF16Offset(line, c.byteCol); got != c.u16 {
			t.Errorf("UTF16Offset(%d) = %d, want %d", c.byteCol, got, c.u16)
		}
		if got := ByteOffset(line, c.u16); got != c.byteCol {
			t.Errorf("ByteOffset(%d) = %d, want %d", c.u16, got, c.byteCol)
		}
	}
	if got := UTF16Offset(line, 99); got != 6 {
		t.Errorf("past the end: %d", got)
	}
	if got := ByteOffset(line, 99); got != len(line) {
		t.Errorf("past the end: %d", got)
	}
	text := "x\r\naé😀b\n"
	off, err := Offset(text, Position{Line: 1, Character: 4}, "utf-16")
	if err != nil || text[off:off+1] != "b" {
		t.Errorf("Offset = %d, %v", off, err)
	}
	if _, err := Offset(text, Position{Line: 5}, "utf-16"); err == nil {
		t.Error("a line past the end is not an error")
	}
}

func TestURI(t *testing.T) {
	p := "/tmp/a b/ü#1.go"
	u := URI(p)
	if u != "file:///tmp/a%20b/%C3%BC%231.go" {
		t.Errorf("URI = %s", u)
	}
	if Path(u) != p {
		t.Errorf("Path(URI) = %s", Path(u))
	}
	if Path("untitled:x") != "" {
		t.Error("a non-file URI has a path")
	}
}

// TestDecode: the answer shapes servers choose between.
func TestDecode(t *testing.T) {
	one := `{"uri":"file:///a.go","range":{"start":{"line":1,"character":2},"end":{"line":1,"character":3}}}`
	link := `[{"targetUri":"file:///b.go","targetRange":{"start":{"line":0,"character":0},"end":{"line":9,"character":0}},"targetSelectionRange":{"start":{"line":4,"character":5},"end":{"line":4,"character":8}}}]`
	for raw, want := range map[string]Location{
		one:             {URI: "file:///a.go", Range: Range{Start: Position{1, 2}, End: Position{1, 3}}},
		"[" + one + "]": {URI: "file:///a.go", Range: Range{Start: Position{1, 2}, End: Position{1, 3}}},
		link:            {URI: "file:///b.go", Range: Range{Start: Position{4, 5}, End: Position{4, 8}}},
	} {
		ls, err := decodeLocations(json.RawMessage(raw))
		if err != nil || len(ls) != 1 || ls[0] != want {
			t.Errorf("%s → %+v, %v", raw, ls, err)
		}
	}
	if ls, err := decodeLocations(json.RawMessage("null")); err != nil || ls != nil {
		t.Errorf("null → %v, %v", ls, err)
	}
	for raw, want := range map[string]string{
		`{"kind":"markdown","value":"**x**"}`:  "**x**",
		`"plain"`:                              "plain",
		`{"language":"go","value":"func F()"}`: "```go\nfunc F()\n```",
		`["a",{"language":"go","value":"b"}]`:  "a\n\n```go\nb\n```",
	} {
		if got := decodeHoverContents(json.RawMessage(raw)); got != want {
			t.Errorf("hover %s → %q, want %q", raw, got, want)
		}
	}
}

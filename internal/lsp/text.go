package lsp

import (
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// Positions: the hub's users give columns in UTF-8 bytes (what editors' byte offsets, grep and
// compilers print); LSP counts UTF-16 code units unless the server agreed to UTF-8 at
// initialize. These convert within one line's text (without its line ending).

// UTF16Offset is the UTF-16 offset of byte offset col (0-based) in line. A col inside a
// multi-byte character counts from that character's start; one past the end is clamped.
func UTF16Offset(line string, col int) int {
	if col > len(line) {
		col = len(line)
	}
	n := 0
	for i, r := range line {
		if i >= col {
			break
		}
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
	}
	return n
}

// ByteOffset is the byte offset in line of UTF-16 offset u (0-based), clamped to the line.
func ByteOffset(line string, u int) int {
	n := 0
	for i, r := range line {
		if n >= u {
			return i
		}
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
	}
	return len(line)
}

// Lines splits text into lines without their endings (\n, \r\n).
func Lines(text string) []string {
	ls := strings.Split(text, "\n")
	for i, l := range ls {
		ls[i] = strings.TrimSuffix(l, "\r")
	}
	return ls
}

// Offset is the byte offset in text of p, with p's character in the given encoding
// ("utf-16" or "utf-8"); a line past the end is an error, a character past the line's end is
// clamped to it.
func Offset(text string, p Position, encoding string) (int, error) {
	off := 0
	for line := 0; line < p.Line; line++ {
		i := strings.IndexByte(text[off:], '\n')
		if i < 0 {
			return 0, fmt.Errorf("line %d is past the end of the text (%d lines)", p.Line+1, line+1)
		}
		off += i + 1
	}
	end := strings.IndexByte(text[off:], '\n')
	if end < 0 {
		end = len(text) - off
	}
	l := strings.TrimSuffix(text[off:off+end], "\r")
	if encoding == "utf-8" {
		return off + min(p.Character, len(l)), nil
	}
	return off + ByteOffset(l, p.Character), nil
}

// ValidUTF8 reports whether text can be sent to a server as a document (JSON strings are UTF-8).
func ValidUTF8(text string) bool { return utf8.ValidString(text) }

// URI is the file:// URI of an absolute path.
func URI(path string) string {
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(path)}
	return u.String()
}

// Path is the file path of a file:// URI ("" for other schemes).
func Path(uri string) string {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "file" {
		return ""
	}
	return filepath.FromSlash(u.Path)
}

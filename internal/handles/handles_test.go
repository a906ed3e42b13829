package handles

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
)

func numbered(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "line %d of the result\n", i)
	}
	return b.String()
}

func TestPutReadWindows(t *testing.T) {
	s := New(1 << 20)
	info, err := s.Put("s1", "file_read", numbered(500))
	if err != nil {
		t.Fatal(err)
	}
	if info.Lines != 500 || !strings.HasPrefix(info.Head, "line 1 of") || strings.Count(info.Head, "\n") != HeadLines {
		t.Fatalf("info = %+v", info)
	}
	w, err := s.Read("s1", info.Handle, 100, 3)
	if err != nil {
		t.Fatal(err)
	}
	if w.Text != "line 100 of the result\nline 101 of the result\nline 102 of the result\n" || w.NextOffset != 103 || w.TotalLines != 500 {
		t.Fatalf("window = %+v", w)
	}
	w, err = s.Read("s1", info.Handle, 499, 0)
	if err != nil || w.Lines != 2 || w.NextOffset != 0 {
		t.Fatalf("last window = %+v, %v", w, err)
	}
	if _, err := s.Read("s1", info.Handle, 501, 1); err == nil || !strings.Contains(err.Error(), "500 lines") {
		t.Fatalf("past the end: %v", err)
	}
	if _, err := s.Read("s1", info.Handle, 1, MaxLimit+1); err == nil || !strings.Contains(err.Error(), "limit") {
		t.Fatalf("limit: %v", err)
	}
}

func TestReadCutsHugeLines(t *testing.T) {
	s := New(1 << 20)
	long := strings.Repeat("é", MaxWindowBytes) // one line of 2×MaxWindowBytes bytes
	info, _ := s.Put("s", "t", long+"\nshort\n")
	w, err := s.Read("s", info.Handle, 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	if !w.Truncated || len(w.Text) > MaxWindowBytes || !strings.HasPrefix(w.Text, "é") || w.NextOffset != 2 {
		t.Fatalf("window: truncated=%v len=%d next=%d", w.Truncated, len(w.Text), w.NextOffset)
	}
	if strings.ContainsRune(w.Text, '\uFFFD') {
		t.Fatal("window cut a character in two")
	}
}

func TestOwnershipAndEviction(t *testing.T) {
	s := New(3000)
	a, _ := s.Put("s1", "t", strings.Repeat("a\n", 500)) // 1000 bytes
	if _, err := s.Read("s2", a.Handle, 1, 1); !errors.Is(err, ErrForeign) {
		t.Fatalf("another session read the handle: %v", err)
	}
	b, _ := s.Put("s1", "t", strings.Repeat("b\n", 500))
	if _, err := s.Read("s1", a.Handle, 1, 1); err != nil { // a is now the most recently used
		t.Fatal(err)
	}
	if _, err := s.Put("s2", "t", strings.Repeat("c\n", 600)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Read("s1", b.Handle, 1, 1); !errors.Is(err, ErrUnknown) {
		t.Fatalf("least recently used handle survived: %v", err)
	}
	if _, err := s.Read("s1", a.Handle, 1, 1); err != nil {
		t.Fatalf("recently used handle evicted: %v", err)
	}
	if s.Used() > 3000 {
		t.Fatalf("store holds %d bytes, bound 3000", s.Used())
	}
	s.DropOwner("s1")
	if _, err := s.Read("s1", a.Handle, 1, 1); !errors.Is(err, ErrUnknown) {
		t.Fatalf("handle outlived its session: %v", err)
	}
	if _, err := s.Put("s1", "t", strings.Repeat("x", 3001)); err == nil {
		t.Fatal("a result larger than the store was kept")
	}
}

func TestSearchFindsLines(t *testing.T) {
	s := New(0)
	text := numbered(300) + "func ParseConfig(path string) error {\n" + numbered(50)
	info, _ := s.Put("s", "t", text)
	got, lexical, err := s.Search(context.Background(), "s", info.Handle, "ParseConfig", 5)
	if err != nil {
		t.Fatal(err)
	}
	if lexical != 1 || len(got) == 0 || got[0].Line != 301 || !strings.Contains(got[0].Text, "ParseConfig") {
		t.Fatalf("search = %+v (lexical %d)", got, lexical)
	}
	if _, _, err := s.Search(context.Background(), "s", info.Handle, " ", 5); err == nil {
		t.Fatal("empty query accepted")
	}
}

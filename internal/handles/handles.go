// Package handles keeps large tool results out of a model's context: the hub stores a result's
// text under a short handle and the model reads windows of it (Read) or finds lines in it
// (Search) instead of receiving it whole. Handles belong to the session that made them, live in
// a store bounded in bytes and are evicted least recently used first.
package handles

import (
	"container/list"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"unicode"

	"github.com/switchboard-hub/switchboard/internal/rag"
)

// Defaults: what a hub keeps in all and how much one window may carry.
const (
	DefaultMaxBytes = 64 << 20
	DefaultLimit    = 200      // lines per Read
	MaxLimit        = 2000     // lines per Read, at most
	MaxWindowBytes  = 32 << 10 // a window longer than this is cut (Window.Truncated)
	HeadLines       = 12
	HeadBytes       = 1024
)

// ErrUnknown is the error for no such handle, or it was evicted (the store is bounded) or its session ended.
var ErrUnknown = errors.New("unknown or expired handle")

// ErrForeign is the error for a handle that belongs to another session.
var ErrForeign = errors.New("the handle belongs to another session")

// Store holds results by handle. Safe for concurrent use.
type Store struct {
	max int

	mu   sync.Mutex
	used int
	lru  *list.List               // front: most recently used; values *entry
	byID map[string]*list.Element // handle → element
}

type entry struct {
	id, owner, tool string
	text            string
	starts          []int // byte offset of each line's start
}

// New is a store keeping at most maxBytes of results (0: DefaultMaxBytes).
func New(maxBytes int) *Store {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxBytes
	}
	return &Store{max: maxBytes, lru: list.New(), byID: map[string]*list.Element{}}
}

// Info describes a stored result: its handle, size in bytes and lines, and its first lines.
type Info struct {
	Handle string `json:"handle"`
	Tool   string `json:"tool"`
	Bytes  int    `json:"bytes"`
	Lines  int    `json:"lines"`
	Head   string `json:"head"`
}

// Put stores text, made by tool for owner (a session id), evicting the least recently used
// results while the store would exceed its bound. A text larger than the whole store is
// refused.
func (s *Store) Put(owner, tool, text string) (Info, error) {
	if len(text) > s.max {
		return Info{}, fmt.Errorf("result of %d bytes is larger than the result store (%d bytes)", len(text), s.max)
	}
	e := &entry{id: newID(), owner: owner, tool: tool, text: text, starts: lineStarts(text)}
	s.mu.Lock()
	for s.used+len(text) > s.max && s.lru.Len() > 0 {
		s.removeLocked(s.lru.Back())
	}
	s.byID[e.id] = s.lru.PushFront(e)
	s.used += len(text)
	s.mu.Unlock()
	return Info{Handle: e.id, Tool: tool, Bytes: len(text), Lines: len(e.starts), Head: head(text)}, nil
}

func (s *Store) removeLocked(el *list.Element) {
	e := s.lru.Remove(el).(*entry)
	delete(s.byID, e.id)
	s.used -= len(e.text)
}

// Used is the bytes held now.
func (s *Store) Used() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.used
}

// DropOwner forgets every result of owner (its session ended).
func (s *Store) DropOwner(owner string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for el := s.lru.Front(); el != nil; {
		next := el.Next()
		if el.Value.(*entry).owner == owner {
			s.removeLocked(el)
		}
		el = next
	}
}

// get returns owner's entry id, marking it used.
func (s *Store) get(owner, id string) (*entry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	el, ok := s.byID[strings.TrimSpace(id)]
	if !ok {
		return nil, fmt.Errorf("handle %q: %w", id, ErrUnknown)
	}
	e := el.Value.(*entry)
	if e.owner != owner {
		return nil, fmt.Errorf("handle %q: %w", id, ErrForeign)
	}
	s.lru.MoveToFront(el)
	return e, nil
}

// Window is a run of lines of a stored result.
type Window struct {
	Handle string `json:"handle"`
	// Offset is the first line's number (1-based); NextOffset the line after the window (0 at
	// the end).
	Offset     int    `json:"offset"`
	Lines      int    `json:"lines"`
	TotalLines int    `json:"total_lines"`
	Text       string `json:"text"`
	NextOffset int    `json:"next_offset"`
	// Truncated: the window stopped early because it reached MaxWindowBytes.
	Truncated bool `json:"truncated"`
}

// Read returns limit lines from line offset (1-based; 0 means 1; limit 0 means DefaultLimit).
func (s *Store) Read(owner, id string, offset, limit int) (Window, error) {
	switch {
	case offset < 0:
		return Window{}, fmt.Errorf("offset: %d is negative; lines are numbered from 1", offset)
	case limit < 0 || limit > MaxLimit:
		return Window{}, fmt.Errorf("limit: %d is out of range; use 1 to %d lines", limit, MaxLimit)
	}
	if offset == 0 {
		offset = 1
	}
	if limit == 0 {
		limit = DefaultLimit
	}
	e, err := s.get(owner, id)
	if err != nil {
		return Window{}, err
	}
	total := len(e.starts)
	w := Window{Handle: e.id, Offset: offset, TotalLines: total}
	if offset > total {
		return w, fmt.Errorf("offset: line %d is past the end; the result has %d lines", offset, total)
	}
	end := min(offset-1+limit, total) // 0-based index of the line after the window
	from := e.starts[offset-1]
	to := len(e.text)
	if end < total {
		to = e.starts[end]
	}
	if to-from > MaxWindowBytes {
		// Whole lines while they fit, and at least part of the first.
		cut := from + MaxWindowBytes
		end = offset - 1
		for end < total && e.lineEnd(end) <= cut {
			end++
		}
		if end == offset-1 {
			to = cut
			for to > from && !utf8Start(e.text[to]) {
				to--
			}
			end = offset
		} else {
			to = e.lineEnd(end - 1)
		}
		w.Truncated = true
	}
	w.Text = e.text[from:to]
	w.Lines = end - (offset - 1)
	if end < total {
		w.NextOffset = end + 1
	}
	return w, nil
}

// lineEnd is the byte offset just past line i (0-based), its newline included.
func (e *entry) lineEnd(i int) int {
	if i+1 < len(e.starts) {
		return e.starts[i+1]
	}
	return len(e.text)
}

// Match is one line Search found.
type Match struct {
	Line int    `json:"line"`
	Text string `json:"text"`
}

// maxSearchLine bounds the text of one matching line in Search's answer.
const maxSearchLine = 400

// maxRankLines bounds the lines one Search ranks (see Search).
const maxRankLines = 20000

// Search ranks the result's lines against query with the RAG engine's hybrid ranking (BM25 and
// the offline embedder, fused) and returns the best limit lines; lines that share a word with
// the query come before lines that are only similar.
func (s *Store) Search(ctx context.Context, owner, id, query string, limit int) ([]Match, int, error) {
	if strings.TrimSpace(query) == "" {
		return nil, 0, errors.New("query: required; give words the lines should contain")
	}
	if limit < 0 || limit > 200 {
		return nil, 0, fmt.Errorf("limit: %d is out of range; use 1 to 200", limit)
	}
	if limit == 0 {
		limit = 20
	}
	e, err := s.get(owner, id)
	if err != nil {
		return nil, 0, err
	}
	var docs []rag.RankDoc
	var lineNo []int
	for i := range e.starts {
		line := strings.TrimRight(e.text[e.starts[i]:e.lineEnd(i)], "\r\n")
		if strings.TrimSpace(line) == "" {
			continue
		}
		docs = append(docs, rag.RankDoc{Name: fmt.Sprint(i + 1), Text: line})
		lineNo = append(lineNo, i+1)
	}
	words := queryWords(query)
	if len(docs) > maxRankLines {
		// Ranking costs about 15 µs a line: a result of hundreds of thousands of lines ranks
		// only the lines that share a word with the query (and at most maxRankLines of them).
		var keep []rag.RankDoc
		var keepNo []int
		for i, d := range docs {
			if len(keep) < maxRankLines && sharesWord(d.Text, words) {
				keep, keepNo = append(keep, d), append(keepNo, lineNo[i])
			}
		}
		docs, lineNo = keep, keepNo
	}
	hits, err := rag.Rank(ctx, query, docs, len(docs))
	if err != nil {
		return nil, 0, err
	}
	var lexical, similar []Match
	for _, h := range hits {
		m := Match{Line: lineNo[h.Index], Text: cutLine(docs[h.Index].Text)}
		if sharesWord(docs[h.Index].Text, words) {
			lexical = append(lexical, m)
		} else if len(similar) < limit {
			similar = append(similar, m)
		}
	}
	out := append(lexical, similar...)
	if len(out) > limit {
		out = out[:limit]
	}
	return out, len(lexical), nil
}

func queryWords(q string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(q), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_' }) {
		if len(w) >= 2 {
			out = append(out, w)
		}
	}
	return out
}

func sharesWord(line string, words []string) bool {
	l := strings.ToLower(line)
	for _, w := range words {
		if strings.Contains(l, w) {
			return true
		}
	}
	return false
}

func cutLine(s string) string {
	if len(s) <= maxSearchLine {
		return s
	}
	cut := maxSearchLine
	for cut > 0 && !utf8Start(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

// lineStarts is the byte offset of each line's start ("" has none; a final line without a
// newline counts).
func lineStarts(text string) []int {
	if text == "" {
		return nil
	}
	starts := []int{0}
	for i := 0; i < len(text); i++ {
		if text[i] == '\n' && i+1 < len(text) {
			starts = append(starts, i+1)
		}
	}
	return starts
}

// head is the first HeadLines lines of text, at most HeadBytes.
func head(text string) string {
	end, n := 0, 0
	for end < len(text) && n < HeadLines {
		i := strings.IndexByte(text[end:], '\n')
		if i < 0 {
			end = len(text)
			break
		}
		end += i + 1
		n++
	}
	if end > HeadBytes {
		end = HeadBytes
		for end > 0 && !utf8Start(text[end]) {
			end--
		}
	}
	return text[:end]
}

func newID() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return "h" + hex.EncodeToString(b)
}

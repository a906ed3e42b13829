package rag

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"
)

// TestVersion1CollectionStillOpens: a collection written before segments stored BM25 terms
// (testdata/v1-collection, made by the previous release) opens, answers, takes new content
// (written as version 2 segments) and keeps answering after a restart.
func TestVersion1CollectionStillOpens(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"manifest.json", "seg-000000.bin"} {
		b, err := os.ReadFile(filepath.Join("testdata/v1-collection/old", f))
		if err != nil {
			t.Fatal(err)
		}
		os.MkdirAll(filepath.Join(dir, "old"), 0o700)
		if err := os.WriteFile(filepath.Join(dir, "old", f), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "old", "seg-000000.bin")); !strings.HasPrefix(string(b), segMagicV1) {
		t.Fatal("fixture is not a version 1 segment")
	}
	open := func() *Engine {
		store, err := OpenEmbedded(dir)
		if err != nil {
			t.Fatal(err)
		}
		return NewEngine(store, Offline{})
	}
	ask := func(eng *Engine, q, want string) {
		t.Helper()
		hits, err := eng.Query(context.Background(), "old", q, 1, Hybrid)
		if err != nil || len(hits) != 1 || hits[0].Source != want {
			t.Fatalf("%q: %v %+v, want %s", q, err, hits, want)
		}
	}
	eng := open()
	ask(eng, "how do I compress a stream", "docs/zip.md")
	ask(eng, "zebra giraffe", "notes.txt")
	ask(eng, "read the configuration file", "pkg/server.go")
	fsys := fstest.MapFS{"more/ice.md": {Data: []byte("# Penguins\n\nemperor penguins live on antarctic ice\n")}}
	if _, err := eng.Ingest(context.Background(), wsOf(t, fsys), "more", IngestOptions{Collection: "old"}); err != nil {
		t.Fatal(err)
	}
	segs, _ := filepath.Glob(filepath.Join(dir, "old", "seg-*.bin"))
	v2 := 0
	for _, s := range segs {
		if b, _ := os.ReadFile(s); strings.HasPrefix(string(b), segMagic) {
			v2++
		}
	}
	if v2 != 1 {
		t.Fatalf("%d version 2 segments among %v", v2, segs)
	}
	eng = open()
	ask(eng, "emperor penguins antarctic", "more/ice.md")
	ask(eng, "zebra giraffe", "notes.txt")
}

// TestStagedBatches: an ingest that commits many batches (staged: durable, index rebuilt once
// at the end) leaves every file queryable, in this process and after a restart; a cancelled one
// still publishes what it committed.
func TestStagedBatches(t *testing.T) {
	defer func(b int) { batchBytes = b }(batchBytes)
	batchBytes = 2000
	eng, dir := newTestEngine(t)
	fsys := fstest.MapFS{}
	for i := range 60 {
		fsys[fmt.Sprintf("a/f%02d.md", i)] = &fstest.MapFile{Data: []byte(fmt.Sprintf("# Note %d\n\nuniqword%d %s\n", i, i, strings.Repeat("filler text about nothing in particular ", 12)))}
	}
	if _, err := eng.Ingest(context.Background(), wsOf(t, fsys), "a", IngestOptions{Collection: "c"}); err != nil {
		t.Fatal(err)
	}
	if segs, _ := filepath.Glob(filepath.Join(dir, "c", "seg-*.bin")); len(segs) < 5 {
		t.Fatalf("expected many batches, found segments %v", segs)
	}
	ask := func(eng *Engine, q, want string) {
		t.Helper()
		hits, err := eng.Query(context.Background(), "c", q, 1, Hybrid)
		if err != nil || len(hits) != 1 || hits[0].Source != want {
			t.Fatalf("%q: %v %+v, want %s", q, err, hits, want)
		}
	}
	for _, i := range []int{0, 17, 59} {
		ask(eng, fmt.Sprintf("uniqword%d", i), fmt.Sprintf("a/f%02d.md", i))
	}
	store2, _ := OpenEmbedded(dir)
	eng2 := NewEngine(store2, Offline{})
	ask(eng2, "uniqword42", "a/f42.md")

	// cancelled half way: the batches committed before the cancellation are queryable
	more := fstest.MapFS{}
	for i := range 200 {
		more[fmt.Sprintf("b/g%03d.md", i)] = &fstest.MapFile{Data: []byte(fmt.Sprintf("# Other %d\n\notherword%d %s\n", i, i, strings.Repeat("more filler text ", 30)))}
	}
	ctx, cancel := context.WithCancel(context.Background())
	_, err := eng.Ingest(ctx, wsOf(t, more), "b", IngestOptions{Collection: "c", ProgressEvery: time.Nanosecond, Progress: func(p Progress) {
		if p.Files > 40 {
			cancel()
		}
	}})
	if err == nil || !strings.Contains(err.Error(), "cancelled") {
		t.Fatalf("cancelled ingest: %v", err)
	}
	ask(eng, "otherword3", "b/g003.md")
	ask(eng, "uniqword17", "a/f17.md")
}

// TestSourceReaderBinary: the reader (keeping the text or only hashing it) stops at the first
// 8 KiB of a binary file and agrees with isBinary on the whole file, including a text file with a
// multi-byte rune across the 8 KiB mark and one with a NUL byte after it.
func TestSourceReaderBinary(t *testing.T) {
	runeAtMark := strings.Repeat("a", 8191) + "é" + strings.Repeat("b", 100<<10)
	files := fstest.MapFS{
		"big.bin":      {Data: append([]byte("\x00ELF"), make([]byte, 200<<10)...)},
		"small.bin":    {Data: []byte("PNG\x00")},
		"small.txt":    {Data: []byte("package small\n")},
		"rune.txt":     {Data: []byte(runeAtMark)},
		"late-nul.txt": {Data: []byte(strings.Repeat("x", 9000) + "\x00" + strings.Repeat("y", 70<<10))},
		"bad-utf8.txt": {Data: []byte(strings.Repeat("z", 100) + "\xff\xfe" + strings.Repeat("z", 70<<10))},
	}
	rd := sourceReader{buf: make([]byte, 64<<10), hash: sha256.New()}
	for name, f := range files {
		want := sha256.Sum256(f.Data)
		wantBinary := isBinary(string(f.Data))
		data, sum, err := rd.read(files, name)
		if wantBinary != errors.Is(err, errBinary) {
			t.Fatalf("%s: read error %v, isBinary of the whole file %v", name, err, wantBinary)
		}
		if err == nil && (data != string(f.Data) || !bytes.Equal(sum, want[:])) {
			t.Fatalf("%s: content or hash differs from the file's", name)
		}
		// hashOnly (re-ingest's first look at a known file) decides and hashes alike.
		sum, err = rd.hashOnly(files, name)
		if wantBinary != errors.Is(err, errBinary) || err == nil && !bytes.Equal(sum, want[:]) {
			t.Fatalf("%s: hashOnly %x, %v; want the file's hash, binary %v", name, sum, err, wantBinary)
		}
	}
}

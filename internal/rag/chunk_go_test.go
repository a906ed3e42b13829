package rag

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// TestGoScanMatchesParser: the lexical Go chunker gives the parser-based chunker's chunks
// (content and section) on GOROOT's own sources.
func TestGoScanMatchesParser(t *testing.T) {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Fatalf("go env GOROOT: %v", err)
	}
	root := filepath.Join(strings.TrimSpace(string(out)), "src")
	var files, same int
	var diffs []string
	for _, dir := range []string{"net/http", "strings", "go/ast", "encoding/json", "runtime", "crypto/tls", "cmd/compile/internal/ssa"} {
		ents, err := os.ReadDir(filepath.Join(root, dir))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			if !strings.HasSuffix(e.Name(), ".go") || e.Type()&fs.ModeType != 0 {
				continue
			}
			b, err := os.ReadFile(filepath.Join(root, dir, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			want := chunkGoParsed(e.Name(), string(b))
			got, ok := chunkGoScan(string(b))
			files++
			if ok && reflect.DeepEqual(got, want) {
				same++
				continue
			}
			if len(diffs) < 5 {
				diffs = append(diffs, describeDiff(dir+"/"+e.Name(), got, want))
			}
		}
	}
	t.Logf("%d of %d files chunked identically", same, files)
	for _, d := range diffs {
		t.Log(d)
	}
	if files < 500 || float64(same) < 0.99*float64(files) {
		t.Fatalf("only %d of %d files chunked as the parser does", same, files)
	}
}

func describeDiff(name string, got, want []Chunk) string {
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			return name + ": chunk " + itoa(i) + " scan " + got[i].Section + " | " + short(got[i].Content) + " ;; parser " + want[i].Section + " | " + short(want[i].Content)
		}
	}
	return name + ": " + itoa(len(got)) + " vs " + itoa(len(want)) + " chunks"
}

func short(s string) string {
	if len(s) > 80 {
		return s[:40] + "…" + s[len(s)-40:]
	}
	return s
}

func itoa(i int) string { return strconv.Itoa(i) }

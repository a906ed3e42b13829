package rag

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
)

// evalQuestion is one labelled question of testdata/eval.tsv.
type evalQuestion struct {
	Question string
	Packages []string
}

func loadEval(t testing.TB) []evalQuestion { return loadEvalFile(t, "testdata/eval.tsv") }

func loadEvalFile(t testing.TB, path string) []evalQuestion {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var qs []evalQuestion
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		q, pk, ok := strings.Cut(line, "\t")
		if !ok {
			t.Fatalf("eval.tsv: no tab in %q", line)
		}
		qs = append(qs, evalQuestion{q, strings.Fields(pk)})
	}
	return qs
}

// evalDistractors are packages in the corpus that no question asks about, so retrieval has to
// tell close neighbours apart (crypto/md5 vs crypto/sha256, log vs log/slog, ...).
var evalDistractors = []string{"crypto/md5", "crypto/cipher", "encoding/pem", "hash/fnv", "io/fs", "log", "sync/atomic", "os/user", "mime", "html", "container/list", "math/bits", "unicode"}

// evalCorpus writes `go doc -all` of every package the evaluation mentions into dir as
// <import path>.txt and returns dir. The text is cached per Go version in the user cache dir.
func evalCorpus(t testing.TB, qs []evalQuestion) string {
	goBin, err := exec.LookPath("go")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("go not on PATH: the evaluation corpus is generated with `go doc -all`")
		}
		t.Skip("go not on PATH: the evaluation corpus is generated with `go doc -all`")
	}
	set := map[string]bool{}
	for _, q := range qs {
		for _, p := range q.Packages {
			set[p] = true
		}
	}
	for _, p := range evalDistractors {
		set[p] = true
	}
	var pkgs []string
	for p := range set {
		pkgs = append(pkgs, p)
	}
	sort.Strings(pkgs)
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "switchboard-test", "rag-eval-corpus", runtime.Version())
	var mu sync.Mutex
	var errs []string
	var wg sync.WaitGroup
	sem := make(chan struct{}, 2)
	for _, p := range pkgs {
		file := filepath.Join(dir, p+".txt")
		if st, err := os.Stat(file); err == nil && st.Size() > 0 {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			out, err := exec.Command(goBin, "doc", "-all", p).Output()
			if err == nil {
				err = os.MkdirAll(filepath.Dir(file), 0o755)
			}
			if err == nil {
				err = writeFileAtomic(file, func(w io.Writer) error { _, err := w.Write(out); return err })
			}
			if err != nil {
				mu.Lock()
				errs = append(errs, fmt.Sprintf("go doc -all %s: %v", p, err))
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(errs) > 0 {
		t.Fatal(strings.Join(errs, "\n"))
	}
	return dir
}

type evalScore struct {
	Hit5, MRR float64
	Misses    []string
}

func runEval(t testing.TB, eng *Engine, coll string, qs []evalQuestion, mode Mode) evalScore {
	var s evalScore
	for _, q := range qs {
		hits, err := eng.Query(context.Background(), coll, q.Question, 10, mode)
		if err != nil {
			t.Fatal(err)
		}
		rank := 0
		for i, h := range hits {
			pkg := strings.TrimSuffix(h.Source, ".txt")
			if contains(q.Packages, pkg) {
				rank = i + 1
				break
			}
		}
		if rank > 0 && rank <= 5 {
			s.Hit5++
		} else {
			var got []string
			for i, h := range hits {
				if i < 5 {
					got = append(got, strings.TrimSuffix(h.Source, ".txt"))
				}
			}
			s.Misses = append(s.Misses, fmt.Sprintf("%q want %v got %v", q.Question, q.Packages, got))
		}
		if rank > 0 {
			s.MRR += 1 / float64(rank)
		}
	}
	s.Hit5 /= float64(len(qs))
	s.MRR /= float64(len(qs))
	return s
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// TestRetrievalEvaluation is the retrieval-quality regression floor: the labelled questions of
// testdata/eval.tsv over the `go doc -all` text of the standard-library packages they name.
// The hybrid ranking with the offline embedder must reach hit@5 >= 0.90 and beat plain BM25.
// Figures are in docs/benchmarks.md; `go test -run TestRetrievalEvaluation -v ./internal/rag`
// prints them and the misses.
func TestRetrievalEvaluation(t *testing.T) {
	qs := loadEval(t)
	if len(qs) < 40 {
		t.Fatalf("evaluation set has %d questions, want at least 40", len(qs))
	}
	heldOut := loadEvalFile(t, "testdata/eval_heldout.tsv")
	dir := evalCorpus(t, append(append([]evalQuestion(nil), qs...), heldOut...))
	store, err := OpenEmbedded(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	eng := NewEngine(store, Offline{})
	res, err := eng.Ingest(context.Background(), openWS(t, dir), ".", IngestOptions{Collection: "eval"})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("corpus: %d packages, %d chunks", res.Files, res.Chunks)
	hybrid := runEval(t, eng, "eval", qs, Hybrid)
	bm25 := runEval(t, eng, "eval", qs, LexicalOnly)
	vec := runEval(t, eng, "eval", qs, VectorOnly)
	t.Logf("questions=%d hybrid hit@5=%.3f MRR=%.3f | bm25 hit@5=%.3f MRR=%.3f | vector hit@5=%.3f MRR=%.3f",
		len(qs), hybrid.Hit5, hybrid.MRR, bm25.Hit5, bm25.MRR, vec.Hit5, vec.MRR)
	hh, hb := runEval(t, eng, "eval", heldOut, Hybrid), runEval(t, eng, "eval", heldOut, LexicalOnly)
	t.Logf("held-out questions=%d hybrid hit@5=%.3f MRR=%.3f | bm25 hit@5=%.3f MRR=%.3f", len(heldOut), hh.Hit5, hh.MRR, hb.Hit5, hb.MRR)
	for _, m := range hh.Misses {
		t.Logf("held-out hybrid miss: %s", m)
	}
	for _, m := range hybrid.Misses {
		t.Logf("hybrid miss: %s", m)
	}
	for _, m := range bm25.Misses {
		t.Logf("bm25 miss: %s", m)
	}
	if hybrid.Hit5 < 0.90 {
		t.Errorf("hybrid hit@5 = %.3f, floor 0.90", hybrid.Hit5)
	}
	if !(hybrid.Hit5 > bm25.Hit5 || (hybrid.Hit5 == bm25.Hit5 && hybrid.MRR > bm25.MRR)) {
		t.Errorf("hybrid (hit@5 %.3f, MRR %.3f) does not beat plain BM25 (hit@5 %.3f, MRR %.3f)", hybrid.Hit5, hybrid.MRR, bm25.Hit5, bm25.MRR)
	}
}

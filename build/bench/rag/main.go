//go:build unix

// Command rag benchmarks Switchboard's embedded RAG store against chromem-go
// (github.com/philippgille/chromem-go), the embedded Go vector store a user would pick instead,
// on the same corpus with the same vectors:
//
//	go run ./build/bench/rag [-src $(go env GOROOT)/src] [-queries 5] [-runs 3]
//
// Each system runs in its own child process (so peak RSS is its own; it first reads the tree once,
// untimed, so no timed ingest reads from disk): ingest of every text file
// under -src (chunked by internal/rag, embedded with the offline embedder), a second ingest of
// the unchanged tree (Switchboard only: chromem-go has no incremental ingest), then query latency
// (p50/p99) over the questions of internal/rag/testdata/eval.tsv. Switchboard's query is the
// whole rag_query path (embed the question, BM25 + vector ranking, fusion); chromem-go's is
// embed + QueryEmbedding (vector only).
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/philippgille/chromem-go"

	"github.com/switchboard-hub/switchboard/internal/rag"
	"github.com/switchboard-hub/switchboard/internal/search"
	"github.com/switchboard-hub/switchboard/internal/workspace"
)

// cpuprofile names the file the first ingest's CPU profile goes to ("" for none).
var cpuprofile string

// profileIngest runs ingest under the CPU profiler when -cpuprofile is set.
func profileIngest(ingest func() rag.IngestResult) rag.IngestResult {
	if cpuprofile == "" {
		return ingest()
	}
	f := must(os.Create(cpuprofile))
	defer f.Close()
	if err := pprof.StartCPUProfile(f); err != nil {
		fatal(err.Error())
	}
	defer pprof.StopCPUProfile()
	return ingest()
}

type result struct {
	System       string  `json:"system"`
	Files        int     `json:"files"`
	Chunks       int     `json:"chunks"`
	IngestSec    float64 `json:"ingest_s"`
	IngestCPUSec float64 `json:"ingest_cpu_s"` // user+system CPU of the process during the ingest
	ChunksPerSec float64 `json:"chunks_per_s"`
	ReingestSec  float64 `json:"reingest_s,omitempty"`
	OpenSec      float64 `json:"open_s,omitempty"`
	QueryP50ms   float64 `json:"query_p50_ms"`
	QueryP99ms   float64 `json:"query_p99_ms"`
	Queries      int     `json:"queries"`
	PeakRSSMB    float64 `json:"peak_rss_mb"`
	DiskMB       float64 `json:"disk_mb"`
}

func main() {
	goroot := strings.TrimSpace(string(must(exec.Command("go", "env", "GOROOT").Output())))
	src := flag.String("src", filepath.Join(goroot, "src"), "tree to ingest")
	system := flag.String("system", "", "run one system (switchboard or chromem) in this process")
	reps := flag.Int("queries", 5, "repetitions of the query set")
	evalFile := flag.String("eval", "internal/rag/testdata/eval.tsv", "questions")
	runs := flag.Int("runs", 3, "runs of each system (alternating); the table shows medians")
	flag.StringVar(&cpuprofile, "cpuprofile", "", "write a CPU profile of the first ingest (with -system switchboard)")
	flag.Parse()
	questions := loadQuestions(*evalFile)
	if *system != "" {
		warmPageCache(*src)
		var r result
		switch *system {
		case "switchboard":
			r = runSwitchboard(*src, questions, *reps)
		case "chromem":
			r = runChromem(*src, questions, *reps)
		default:
			fatal("unknown -system " + *system)
		}
		r.PeakRSSMB = peakRSSMB()
		if err := json.NewEncoder(os.Stdout).Encode(r); err != nil {
			fatal(err.Error())
		}
		return
	}
	self := must(os.Executable())
	// Runs alternate between the systems, so a change in machine load hits both alike; the
	// table shows each figure's median over the runs.
	byRun := map[string][]result{}
	for i := range *runs {
		for _, sys := range []string{"switchboard", "chromem"} {
			cmd := exec.Command(self, "-system", sys, "-src", *src, "-queries", strconv.Itoa(*reps), "-eval", *evalFile)
			cmd.Stderr = os.Stderr
			out, err := cmd.Output()
			if err != nil {
				fatal(fmt.Sprintf("%s: %v", sys, err))
			}
			var r result
			if err := json.Unmarshal(out, &r); err != nil {
				fatal(fmt.Sprintf("%s: %v: %s", sys, err, out))
			}
			fmt.Fprintf(os.Stderr, "run %d: %s\n", i+1, bytes.TrimSpace(out))
			byRun[sys] = append(byRun[sys], r)
		}
	}
	rs := []result{medianResult(byRun["switchboard"]), medianResult(byRun["chromem"])}
	sb, ch := rs[0], rs[1]
	fmt.Printf("corpus: %s (%d files, %d chunks), %s, GOMAXPROCS=%d, median of %d runs\n", *src, sb.Files, sb.Chunks, runtime.Version(), runtime.GOMAXPROCS(0), *runs)
	var each []string
	for _, r := range byRun["switchboard"] {
		each = append(each, fmt.Sprintf("%.0f", r.ChunksPerSec))
	}
	fmt.Printf("Switchboard ingest chunks/s in each run: %s\n\n", strings.Join(each, ", "))
	fmt.Println("| | Switchboard (embedded, hybrid) | chromem-go v0.7.0 (persistent) | ratio |")
	fmt.Println("|---|---|---|---|")
	fmt.Printf("| ingest, total | %.1f s | %.1f s | %.2f× |\n", sb.IngestSec, ch.IngestSec, ch.IngestSec/sb.IngestSec)
	fmt.Printf("| ingest, chunks/s | %.0f | %.0f | %.2f× |\n", sb.ChunksPerSec, ch.ChunksPerSec, sb.ChunksPerSec/ch.ChunksPerSec)
	fmt.Printf("| ingest, CPU time (user+sys) | %.1f s | %.1f s | %.2f× |\n", sb.IngestCPUSec, ch.IngestCPUSec, ch.IngestCPUSec/sb.IngestCPUSec)
	fmt.Printf("| ingest, chunks per CPU-second | %.0f | %.0f | %.2f× |\n", float64(sb.Chunks)/sb.IngestCPUSec, float64(ch.Chunks)/ch.IngestCPUSec, (float64(sb.Chunks)/sb.IngestCPUSec)/(float64(ch.Chunks)/ch.IngestCPUSec))
	fmt.Printf("| re-ingest of the unchanged tree | %.2f s (%.2f× the first) | n/a | |\n", sb.ReingestSec, sb.ReingestSec/sb.IngestSec)
	fmt.Printf("| open from disk (first query) | %.1f s | %.1f s | |\n", sb.OpenSec, ch.OpenSec)
	fmt.Printf("| query p50 (%d queries) | %.2f ms | %.2f ms | %.2f× |\n", sb.Queries, sb.QueryP50ms, ch.QueryP50ms, ch.QueryP50ms/sb.QueryP50ms)
	fmt.Printf("| query p99 | %.2f ms | %.2f ms | %.2f× |\n", sb.QueryP99ms, ch.QueryP99ms, ch.QueryP99ms/sb.QueryP99ms)
	fmt.Printf("| peak RSS | %.0f MB | %.0f MB | %.2f× |\n", sb.PeakRSSMB, ch.PeakRSSMB, ch.PeakRSSMB/sb.PeakRSSMB)
	fmt.Printf("| on disk | %.0f MB | %.0f MB | %.2f× |\n", sb.DiskMB, ch.DiskMB, ch.DiskMB/sb.DiskMB)
}

// medianResult returns the runs' median of every figure.
func medianResult(rs []result) result {
	med := func(f func(result) float64) float64 {
		xs := make([]float64, len(rs))
		for i, r := range rs {
			xs[i] = f(r)
		}
		sort.Float64s(xs)
		if len(xs)%2 == 1 {
			return xs[len(xs)/2]
		}
		return (xs[len(xs)/2-1] + xs[len(xs)/2]) / 2
	}
	m := rs[0]
	m.IngestSec = med(func(r result) float64 { return r.IngestSec })
	m.IngestCPUSec = med(func(r result) float64 { return r.IngestCPUSec })
	m.ChunksPerSec = med(func(r result) float64 { return r.ChunksPerSec })
	m.ReingestSec = med(func(r result) float64 { return r.ReingestSec })
	m.OpenSec = med(func(r result) float64 { return r.OpenSec })
	m.QueryP50ms = med(func(r result) float64 { return r.QueryP50ms })
	m.QueryP99ms = med(func(r result) float64 { return r.QueryP99ms })
	m.PeakRSSMB = med(func(r result) float64 { return r.PeakRSSMB })
	m.DiskMB = med(func(r result) float64 { return r.DiskMB })
	return m
}

func runSwitchboard(src string, questions []string, reps int) result {
	dir := must(os.MkdirTemp("", "rag-bench-sb-"))
	defer os.RemoveAll(dir)
	store := must(rag.OpenEmbedded(dir))
	eng := rag.NewEngine(store, rag.Offline{})
	ctx := context.Background()
	cpu0 := cpuSeconds()
	t0 := time.Now()
	ws := must(workspace.Open(src))
	defer ws.Close()
	res := profileIngest(func() rag.IngestResult {
		return must(eng.Ingest(ctx, ws, ".", rag.IngestOptions{Collection: "bench"}))
	})
	ingest := time.Since(t0)
	ingestCPU := cpuSeconds() - cpu0
	t1 := time.Now()
	res2 := must(eng.Ingest(ctx, ws, ".", rag.IngestOptions{Collection: "bench"}))
	reingest := time.Since(t1)
	if res2.Changed != 0 {
		fatal(fmt.Sprintf("re-ingest changed %d files", res2.Changed))
	}
	// a fresh store on the same directory: what a restart costs before the first answer
	store2 := must(rag.OpenEmbedded(dir))
	eng2 := rag.NewEngine(store2, rag.Offline{})
	t2 := time.Now()
	must(eng2.Query(ctx, "bench", "warm up", 5, rag.Hybrid))
	open := time.Since(t2)
	lat := measure(questions, reps, func(q string) {
		must(eng2.Query(ctx, "bench", q, 5, rag.Hybrid))
	})
	return result{System: "switchboard", Files: res.Files, Chunks: res.Chunks, IngestSec: ingest.Seconds(), IngestCPUSec: ingestCPU, ChunksPerSec: float64(res.Chunks) / ingest.Seconds(),
		ReingestSec: reingest.Seconds(), OpenSec: open.Seconds(), QueryP50ms: pct(lat, 50), QueryP99ms: pct(lat, 99), Queries: len(lat), DiskMB: du(dir)}
}

func runChromem(src string, questions []string, reps int) result {
	dir := must(os.MkdirTemp("", "rag-bench-chromem-"))
	defer os.RemoveAll(dir)
	ctx := context.Background()
	emb := rag.Offline{}
	embedFunc := func(ctx context.Context, text string) ([]float32, error) {
		v, err := emb.Embed(ctx, []string{text})
		if err != nil {
			return nil, err
		}
		return v[0], nil
	}
	cpu0 := cpuSeconds()
	t0 := time.Now()
	db := must(chromem.NewPersistentDB(dir, false))
	col := must(db.CreateCollection("bench", nil, embedFunc))
	files := walk(src)
	var docs []chromem.Document
	nfiles := 0
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(src, f))
		if err != nil || binary(data) {
			continue
		}
		nfiles++
		chunks := rag.ChunkFile(f, string(data))
		vecs := must(rag.EmbedChunks(ctx, emb, chunks))
		for i, c := range chunks {
			docs = append(docs, chromem.Document{ID: f + "#" + strconv.Itoa(c.ChunkIndex), Content: c.Content, Embedding: vecs[i],
				Metadata: map[string]string{"source": c.Source, "section": c.Section}})
		}
	}
	if err := col.AddDocuments(ctx, docs, runtime.GOMAXPROCS(0)); err != nil {
		fatal(err.Error())
	}
	ingest := time.Since(t0)
	ingestCPU := cpuSeconds() - cpu0
	n := len(docs)
	runtime.GC()
	t2 := time.Now()
	db2 := must(chromem.NewPersistentDB(dir, false))
	col2 := db2.GetCollection("bench", embedFunc)
	open := time.Since(t2)
	lat := measure(questions, reps, func(q string) {
		v := must(embedFunc(ctx, q))
		must(col2.QueryEmbedding(ctx, v, 5, nil, nil))
	})
	return result{System: "chromem-go", Files: nfiles, Chunks: n, IngestSec: ingest.Seconds(), IngestCPUSec: ingestCPU, ChunksPerSec: float64(n) / ingest.Seconds(),
		OpenSec: open.Seconds(), QueryP50ms: pct(lat, 50), QueryP99ms: pct(lat, 99), Queries: len(lat), DiskMB: du(dir)}
}

// warmPageCache reads every file under src once, so that neither system's timed ingest reads
// from disk. The benchmark VM's kernel runs DAMON reclaim (pageout of page-cache pages not
// accessed for 30 s), which dropped the tree between runs: a chromem-go run takes longer than
// that, and the next ingest then read GOROOT/src from disk (25–40 MB/s of block reads, 7–10 %
// iowait in vmstat).
func warmPageCache(src string) {
	buf := make([]byte, 64<<10)
	for _, f := range walk(src) {
		if fh, err := os.Open(filepath.Join(src, f)); err == nil {
			_, _ = io.CopyBuffer(io.Discard, fh, buf)
			fh.Close()
		}
	}
}

// walk lists the files rag.Engine.Ingest takes (search.Walk, files up to the size cap), so that
// chromem-go gets the same ones.
func walk(src string) []string {
	root := must(os.OpenRoot(src))
	defer root.Close()
	var out []string
	_ = search.Walk(context.Background(), root, search.WalkOptions{}, func(p string, dir *os.Root, name string, isDir bool) error {
		if isDir {
			return nil
		}
		if info, err := dir.Lstat(name); err == nil && info.Mode().IsRegular() && info.Size() <= rag.DefaultMaxFileBytes {
			out = append(out, p)
		}
		return nil
	})
	sort.Strings(out)
	return out
}

func binary(data []byte) bool {
	head := data
	if len(head) > 8192 {
		head = head[:8192]
	}
	if bytes.IndexByte(head, 0) >= 0 {
		return true
	}
	for len(head) > 0 && !utf8.Valid(head) {
		if len(data) > 8192 && len(head) > 8192-4 {
			head = head[:len(head)-1]
			continue
		}
		return true
	}
	return false
}

func measure(questions []string, reps int, f func(string)) []time.Duration {
	for _, q := range questions[:min(3, len(questions))] {
		f(q) // warm-up
	}
	var lat []time.Duration
	for range reps {
		for _, q := range questions {
			t := time.Now()
			f(q)
			lat = append(lat, time.Since(t))
		}
	}
	return lat
}

func pct(d []time.Duration, p int) float64 {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(a, b int) bool { return s[a] < s[b] })
	i := (len(s)*p + 99) / 100
	if i > 0 {
		i--
	}
	return float64(s[i].Microseconds()) / 1000
}

func loadQuestions(path string) []string {
	f := must(os.Open(path))
	defer f.Close()
	var qs []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := sc.Text()
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		q, _, _ := strings.Cut(l, "\t")
		qs = append(qs, q)
	}
	return qs
}

// cpuSeconds is the process's user+system CPU time so far.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

func peakRSSMB() float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "VmHWM:") {
			kb, _ := strconv.ParseFloat(strings.Fields(l)[1], 64)
			return kb / 1024
		}
	}
	return 0
}

func du(dir string) float64 {
	var n int64
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return float64(n) / (1 << 20)
}

func must[T any](v T, err error) T {
	if err != nil {
		fatal(err.Error())
	}
	return v
}

func fatal(msg string) {
	fmt.Fprintln(os.Stderr, "rag bench:", msg)
	os.Exit(1)
}

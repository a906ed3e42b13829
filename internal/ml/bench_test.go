//go:build unix

package ml_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/switchboard-hub/switchboard/internal/ml"
	"github.com/switchboard-hub/switchboard/internal/ml/mltest"
)

// BenchmarkStream measures a streamed generation of 1000 tokens from the in-process servers,
// through Backend.Generate ("switchboard") and through the plainest client that does the same
// job with net/http and encoding/json ("plain"), against the same server in the same run. The
// server's cost (one JSON line and one flush per token) is in both; the difference is the client.
//
//	go test -run '^$' -bench Stream -benchtime 40x ./internal/ml/
func BenchmarkStream(b *testing.B) {
	const tokens = 1000
	reply := strings.Repeat("tok ", tokens)
	for _, kind := range []string{ml.KindOllama, ml.KindOpenAI} {
		var srv *mltest.Server
		if kind == ml.KindOllama {
			srv = mltest.NewOllama("m")
		} else {
			srv = mltest.NewOpenAI("m")
		}
		srv.Reply = func(string) string { return reply }
		be, err := ml.NewBackend("bench", kind, srv.URL, "m", "", "")
		if err != nil {
			b.Fatal(err)
		}
		// cpu-ns/token (process CPU time: client and server) stays meaningful on a loaded machine,
		// where wall time mostly measures waiting for a core.
		var cpu0 time.Duration
		report := func(b *testing.B) {
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*tokens), "ns/token")
			b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(b.N*tokens), "cpu-ns/token")
		}
		b.Run(kind+"/switchboard", func(b *testing.B) {
			b.ReportAllocs()
			cpu0 = cpuTime()
			for b.Loop() {
				n := 0
				res, err := be.Generate(context.Background(), ml.Request{Prompt: "p", OnToken: func(string) { n++ }})
				if err != nil || n != tokens || len(res.Text) != len(reply) {
					b.Fatalf("%v: %d tokens", err, n)
				}
			}
			report(b)
		})
		b.Run(kind+"/plain", func(b *testing.B) {
			b.ReportAllocs()
			cpu0 = cpuTime()
			for b.Loop() {
				var n int
				var text string
				if kind == ml.KindOllama {
					n, text = plainOllama(b, srv.URL)
				} else {
					n, text = plainOpenAI(b, srv.URL)
				}
				if n != tokens || len(text) != len(reply) {
					b.Fatalf("%d tokens", n)
				}
			}
			report(b)
		})
		srv.Close()
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func post(b *testing.B, url string, body any) *http.Response {
	raw, _ := json.Marshal(body)
	resp, err := http.Post(url, "application/json", bytes.NewReader(raw))
	if err != nil {
		b.Fatal(err)
	}
	return resp
}

func plainOllama(b *testing.B, base string) (int, string) {
	resp := post(b, base+"/api/chat", map[string]any{"model": "m", "messages": []map[string]string{{"role": "user", "content": "p"}}})
	defer resp.Body.Close()
	dec := json.NewDecoder(resp.Body)
	var sb strings.Builder
	n := 0
	for {
		var c struct {
			Message struct{ Content string } `json:"message"`
			Done    bool                     `json:"done"`
		}
		if err := dec.Decode(&c); err != nil {
			b.Fatal(err)
		}
		if c.Message.Content != "" {
			sb.WriteString(c.Message.Content)
			n++
		}
		if c.Done {
			return n, sb.String()
		}
	}
}

func plainOpenAI(b *testing.B, base string) (int, string) {
	resp := post(b, base+"/v1/chat/completions", map[string]any{"model": "m", "stream": true, "messages": []map[string]string{{"role": "user", "content": "p"}}})
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	var sb strings.Builder
	n := 0
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		if line == "[DONE]" {
			return n, sb.String()
		}
		var c struct {
			Choices []struct {
				Delta struct{ Content string } `json:"delta"`
			} `json:"choices"`
		}
		if err := json.Unmarshal([]byte(line), &c); err != nil {
			b.Fatal(err)
		}
		if len(c.Choices) > 0 && c.Choices[0].Delta.Content != "" {
			sb.WriteString(c.Choices[0].Delta.Content)
			n++
		}
	}
	b.Fatal("no [DONE]")
	return 0, ""
}

package ml_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-hub/switchboard/internal/ml"
	"github.com/switchboard-hub/switchboard/internal/ml/mltest"
	"github.com/switchboard-hub/switchboard/internal/testutil"
)

func f64(v float64) *float64 { return &v }

func newBackend(t *testing.T, kind, url, model, key, endpoint string) *ml.Backend {
	t.Helper()
	b, err := ml.NewBackend("test", kind, url, model, key, endpoint)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestOllamaStreamedChat(t *testing.T) {
	srv := mltest.NewOllama("llama3.2:latest", "qwen2.5:0.5b")
	defer srv.Close()
	srv.Reply = func(p string) string { return "one two three four five" }
	b := newBackend(t, ml.KindOllama, srv.URL, "", "", "")
	var got []string
	res, err := b.Generate(context.Background(), ml.Request{Prompt: "count", Temperature: f64(0.3), MaxTokens: 4, OnToken: func(s string) { got = append(got, s) }})
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "one two three four " || strings.Join(got, "|") != "one |two |three |four " {
		t.Fatalf("text %q, pieces %q", res.Text, got)
	}
	if res.Model != "llama3.2:latest" || res.Tokens != 4 {
		t.Fatalf("model %q tokens %d", res.Model, res.Tokens)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	r := reqs[0]
	if r.Path != "/api/chat" || !r.Stream || r.Temperature == nil || *r.Temperature != 0.3 || r.MaxTokens != 4 || r.Prompt != "count" {
		t.Fatalf("server saw %+v", r)
	}
}

func TestOllamaNonStreamedAndGenerateEndpoint(t *testing.T) {
	srv := mltest.NewOllama("llama3.2:latest")
	defer srv.Close()
	b := newBackend(t, ml.KindOllama, srv.URL, "llama3.2", "", "generate")
	res, err := b.Generate(context.Background(), ml.Request{Prompt: "hello there"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "echo: hello there" || res.Tokens != 3 {
		t.Fatalf("%+v", res)
	}
	r := srv.Requests()[0]
	if r.Path != "/api/generate" || r.Stream || r.Temperature != nil || r.MaxTokens != 0 || r.Model != "llama3.2" {
		t.Fatalf("server saw %+v", r)
	}
	// streamed through /api/generate too
	var n int
	res, err = b.Generate(context.Background(), ml.Request{Prompt: "a b", OnToken: func(string) { n++ }})
	if err != nil || res.Text != "echo: a b" || n != 3 {
		t.Fatalf("streamed generate: %+v %v (%d pieces)", res, err, n)
	}
}

func TestOllamaErrors(t *testing.T) {
	srv := mltest.NewOllama("llama3.2:latest")
	defer srv.Close()
	b := newBackend(t, ml.KindOllama, srv.URL, "", "", "")
	_, err := b.Generate(context.Background(), ml.Request{Prompt: "x", Model: "nope"})
	if err == nil || !strings.Contains(err.Error(), `model "nope" not found`) || !strings.Contains(err.Error(), "HTTP 404") {
		t.Fatalf("unknown model: %v", err)
	}
	srv.Fail = func(string) (int, string) { return 500, "out of memory" }
	_, err = b.Generate(context.Background(), ml.Request{Prompt: "x", OnToken: func(string) {}})
	if err == nil || !strings.Contains(err.Error(), "out of memory") {
		t.Fatalf("server error: %v", err)
	}
	if _, err := b.Generate(context.Background(), ml.Request{Prompt: " "}); err == nil || !strings.HasPrefix(err.Error(), "prompt:") {
		t.Fatalf("empty prompt: %v", err)
	}
	url := srv.URL
	srv.Close()
	err = newBackend(t, ml.KindOllama, url, "m", "", "").Ping(context.Background())
	if err == nil || !strings.Contains(err.Error(), "not reachable") || !strings.Contains(err.Error(), url) {
		t.Fatalf("closed server: %v", err)
	}
}

func TestOpenAIStreamedAndNot(t *testing.T) {
	srv := mltest.NewOpenAI("gpt-4o-mini", "gpt-4o")
	defer srv.Close()
	srv.APIKey = "sk-test"
	srv.Reply = func(string) string { return "alpha beta gamma" }
	b := newBackend(t, ml.KindOpenAI, srv.URL, "", "sk-test", "") // no /v1: added
	if b.URL != srv.URL+"/v1" {
		t.Fatalf("base URL %q", b.URL)
	}
	var pieces []string
	res, err := b.Generate(context.Background(), ml.Request{Prompt: "p", Temperature: f64(1.2), MaxTokens: 2, OnToken: func(s string) { pieces = append(pieces, s) }})
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "alpha beta " || len(pieces) != 2 || res.Tokens != 2 || res.Model != "gpt-4o-mini" {
		t.Fatalf("streamed: %+v %q", res, pieces)
	}
	res, err = b.Generate(context.Background(), ml.Request{Prompt: "p", Model: "gpt-4o"})
	if err != nil || res.Text != "alpha beta gamma" || res.Tokens != 3 || res.Model != "gpt-4o" {
		t.Fatalf("non-streamed: %+v %v", res, err)
	}
	reqs := srv.Requests()
	if !reqs[0].Stream || *reqs[0].Temperature != 1.2 || reqs[0].MaxTokens != 2 || reqs[0].Auth != "Bearer sk-test" {
		t.Fatalf("first request %+v", reqs[0])
	}
	if reqs[1].Stream || reqs[1].Temperature != nil || reqs[1].MaxTokens != 0 {
		t.Fatalf("second request %+v", reqs[1])
	}
	bad := newBackend(t, ml.KindOpenAI, srv.URL+"/v1", "gpt-4o", "wrong", "")
	if _, err := bad.Generate(context.Background(), ml.Request{Prompt: "p"}); err == nil || !strings.Contains(err.Error(), "Incorrect API key") {
		t.Fatalf("bad key: %v", err)
	}
	if err := bad.Ping(context.Background()); err == nil || !strings.Contains(err.Error(), "HTTP 401") {
		t.Fatalf("bad key ping: %v", err)
	}
}

// Cancelling the context while tokens stream closes the connection: the server sees its
// request's context end before it finished.
func TestCancelStopsBackendRequest(t *testing.T) {
	for _, kind := range []string{ml.KindOllama, ml.KindOpenAI} {
		t.Run(kind, func(t *testing.T) {
			var srv *mltest.Server
			if kind == ml.KindOllama {
				srv = mltest.NewOllama("m")
			} else {
				srv = mltest.NewOpenAI("m")
			}
			defer srv.Close()
			srv.Reply = func(string) string { return strings.Repeat("tok ", 500) }
			srv.TokenDelay = 20 * time.Millisecond
			b := newBackend(t, kind, srv.URL, "m", "", "")
			ctx, cancel := context.WithCancel(context.Background())
			errc := make(chan error, 1)
			go func() {
				_, err := b.Generate(ctx, ml.Request{Prompt: "p", OnToken: func(string) {}})
				errc <- err
			}()
			select {
			case <-srv.Started():
			case <-time.After(10 * time.Second):
				t.Fatal("no token streamed")
			}
			cancel()
			if err := <-errc; !errors.Is(err, context.Canceled) {
				t.Fatalf("Generate after cancel: %v", err)
			}
			testutil.Receive(t, srv.Abandoned(), "the server to see the request cancelled")
		})
	}
}

func TestRegistry(t *testing.T) {
	oll := mltest.NewOllama("llama3.2:latest")
	defer oll.Close()
	oai := mltest.NewOpenAI("gpt-4o-mini")
	defer oai.Close()
	dead := mltest.NewOllama("x")
	deadURL := dead.URL
	dead.Close()

	env := map[string]string{}
	get := func(k string) string { return env[k] }

	// Only ollama without OpenAI variables.
	r, err := ml.NewRegistry(ml.Options{OllamaHost: deadURL, Getenv: get})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(r.Names(), ","); got != "ollama" {
		t.Fatalf("names %s", got)
	}
	if r.Default(context.Background()) != "ollama" { // nothing available: the first one
		t.Fatal("default")
	}

	env["LOCAL_KEY"] = "k"
	r, err = ml.NewRegistry(ml.Options{OllamaHost: deadURL, OpenAIBaseURL: oai.URL + "/v1", Getenv: get, CacheTTL: time.Second, Backends: []ml.BackendConfig{
		{Name: "local", Kind: "ollama", URL: oll.URL, Model: "llama3.2:latest"},
		{Name: "vllm", Kind: "openai", URL: oai.URL, APIKeyEnv: "LOCAL_KEY"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(r.Names(), ","); got != "ollama,openai,local,vllm" {
		t.Fatalf("names %s", got)
	}
	sts := r.Statuses(context.Background())
	avail := map[string]bool{}
	for _, s := range sts {
		avail[s.Name] = s.Available
		if !s.Available && s.Error == "" {
			t.Errorf("%s unavailable without error", s.Name)
		}
	}
	if avail["ollama"] || !avail["openai"] || !avail["local"] || !avail["vllm"] {
		t.Fatalf("availability %v", avail)
	}
	if d := r.Default(context.Background()); d != "openai" {
		t.Fatalf("default %q, want the first available", d)
	}
	_, err = r.Resolve(context.Background(), "gpu")
	if err == nil || !strings.Contains(err.Error(), `unknown backend "gpu"`) || !strings.Contains(err.Error(), "local (available)") || !strings.Contains(err.Error(), "ollama (unreachable)") {
		t.Fatalf("unknown backend: %v", err)
	}

	// Cached: a server that goes away stays available for the TTL, then is seen as down.
	b, _ := r.Get("local")
	oll.Close()
	if err := r.Check(context.Background(), b); err != nil {
		t.Fatalf("within TTL: %v", err)
	}
	// The TTL is a second so a loaded machine stays inside it above; its end is time itself,
	// with no event: check again and again.
	testutil.EventuallyWithin(t, 5*time.Second, "the closed server to be seen as down once the 1 s TTL is over", func() bool {
		return r.Check(context.Background(), b) != nil
	})

	// Config default, replacement of a built-in, bad entries.
	r, err = ml.NewRegistry(ml.Options{OllamaHost: deadURL, OpenAIBaseURL: oai.URL + "/v1", Getenv: get, Default: "ollama", Backends: []ml.BackendConfig{{Name: "ollama", Kind: "ollama", URL: "http://gpu:11434"}}})
	if err != nil || r.Default(context.Background()) != "ollama" || len(r.Names()) != 2 {
		t.Fatalf("override: %v %v", err, r.Names())
	}
	if b, _ := r.Get("ollama"); b.URL != "http://gpu:11434" {
		t.Fatalf("override URL %s", b.URL)
	}
	for _, bad := range []ml.Options{
		{Getenv: get, Default: "missing"},
		{Getenv: get, Backends: []ml.BackendConfig{{Name: "x", Kind: "llama", URL: "http://h"}}},
		{Getenv: get, Backends: []ml.BackendConfig{{Name: "x", Kind: "ollama", URL: "ftp://h"}}},
		{Getenv: get, Backends: []ml.BackendConfig{{Name: "", Kind: "ollama", URL: "http://h"}}},
	} {
		if _, err := ml.NewRegistry(bad); err == nil {
			t.Errorf("NewRegistry(%+v) accepted", bad)
		}
	}
}

// Errors and framing details of real servers: an Ollama error line in the middle of a stream, an
// SSE stream with comments, CRLF line ends and an error event, and a stream cut short.
func TestStreamEdgeCases(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/chat", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, `{"model":"m","message":{"role":"assistant","content":"par"},"done":false}`)
		fmt.Fprintln(w, `{"error":"an error was encountered while running the model: unexpected EOF"}`)
	})
	mux.HandleFunc("POST /api/generate", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, `{"model":"m","response":"cut","done":false}`) // no done message
	})
	mux.HandleFunc("POST /v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, ": keep-alive\r\n\r\nevent: message\r\ndata: {\"model\":\"m\",\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\r\n\r\n")
		fmt.Fprint(w, "data:{\"choices\":[{\"delta\":{\"content\":\"b\"}}]}\n\n")
		fmt.Fprint(w, "data: {\"choices\":[],\"usage\":{\"completion_tokens\":2}}\n\ndata: [DONE]\n\n")
	})
	mux.HandleFunc("POST /bad/v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\n")
		fmt.Fprint(w, "data: {\"error\":{\"message\":\"context length exceeded\",\"type\":\"invalid_request_error\"}}\n\n")
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	ctx := context.Background()
	on := func(string) {}

	res, err := newBackend(t, ml.KindOllama, srv.URL, "m", "", "").Generate(ctx, ml.Request{Prompt: "p", OnToken: on})
	if err == nil || !strings.Contains(err.Error(), "unexpected EOF") || res.Text != "par" {
		t.Fatalf("ollama error line: %q %v", res.Text, err)
	}
	_, err = newBackend(t, ml.KindOllama, srv.URL, "m", "", "generate").Generate(ctx, ml.Request{Prompt: "p", OnToken: on})
	if err == nil || !strings.Contains(err.Error(), "ended before its done message") {
		t.Fatalf("ollama cut: %v", err)
	}
	res, err = newBackend(t, ml.KindOpenAI, srv.URL+"/v1", "m", "", "").Generate(ctx, ml.Request{Prompt: "p", OnToken: on})
	if err != nil || res.Text != "ab" || res.Tokens != 2 || res.Model != "m" {
		t.Fatalf("sse framing: %+v %v", res, err)
	}
	res, err = newBackend(t, ml.KindOpenAI, srv.URL+"/bad/v1", "m", "", "").Generate(ctx, ml.Request{Prompt: "p", OnToken: on})
	if err == nil || !strings.Contains(err.Error(), "context length exceeded") || res.Text != "a" {
		t.Fatalf("sse error event: %q %v", res.Text, err)
	}
}

func TestBuiltinOpenAIDefaults(t *testing.T) {
	r, err := ml.NewRegistry(ml.Options{OpenAIAPIKey: "sk-x"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := r.Get("openai")
	if err != nil || b.URL != "https://api.openai.com/v1" || b.Model != ml.DefaultOpenAIModel {
		t.Fatalf("%+v %v", b, err)
	}
}

// TestAssumedBackend: the local Ollama the hub tries on its own is marked assumed (not set up
// by anyone: its absence is no error), one named by OLLAMA_HOST or [[ml.backends]] is not.
func TestAssumedBackend(t *testing.T) {
	for _, c := range []struct {
		name string
		o    ml.Options
		want bool
	}{
		{"nothing set", ml.Options{}, true},
		{"OLLAMA_HOST", ml.Options{OllamaHost: "http://127.0.0.1:1"}, false},
		{"[[ml.backends]] ollama", ml.Options{Backends: []ml.BackendConfig{{Name: "ollama", Kind: "ollama", URL: "http://127.0.0.1:1"}}}, false},
	} {
		r, err := ml.NewRegistry(c.o)
		if err != nil {
			t.Fatal(err)
		}
		for _, st := range r.Statuses(t.Context()) {
			if st.Name == "ollama" && st.Assumed != c.want {
				t.Errorf("%s: assumed = %v, want %v", c.name, st.Assumed, c.want)
			}
		}
	}
}

// Package mltest has in-process HTTP servers that follow the documented wire protocols of Ollama
// (https://github.com/ollama/ollama/blob/main/docs/api.md: /api/version, /api/tags, /api/chat,
// /api/generate; NDJSON streaming by default, "stream": false for one JSON body; options
// temperature and num_predict) and of OpenAI's chat completions API (GET /v1/models, POST
// /v1/chat/completions with Bearer auth; "stream": true answers with server-sent events of
// chat.completion.chunk objects ending in "data: [DONE]", stream_options.include_usage adds a
// usage chunk). No model can run on the test machines, so the "model" answers from a reply
// function, one word per streamed token. Every request is recorded for assertions, and a request
// whose client went away is counted (Cancelled), so tests can observe cancellation server-side.
package mltest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"
)

// Request is one generation request as the server decoded it.
type Request struct {
	Path        string
	Model       string
	Prompt      string // the last user message (chat) or prompt (generate)
	Stream      bool
	Temperature *float64
	MaxTokens   int // Ollama options.num_predict, OpenAI max_tokens
	Auth        string
}

// Server is a fake generation server.
type Server struct {
	*httptest.Server
	Models []string
	// Reply answers a prompt (default: "echo: " + prompt).
	Reply func(prompt string) string
	// Fail, when it returns a non-empty message, answers the prompt with that HTTP error instead.
	Fail func(prompt string) (status int, message string)
	// TokenDelay is slept before each streamed token.
	TokenDelay time.Duration
	// APIKey, when set, is required as "Authorization: Bearer KEY" (OpenAI only).
	APIKey string

	mu        sync.Mutex
	requests  []Request
	cancelled int
	started   chan struct{} // receives a value when a streamed generation has sent its first token
	abandoned chan struct{} // receives a value when a client abandons a streamed generation
}

// Requests returns the generation requests received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Cancelled counts generations the client abandoned before the server finished.
func (s *Server) Cancelled() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cancelled
}

// Started receives a value each time a streamed generation has sent its first token.
func (s *Server) Started() <-chan struct{} { return s.started }

// Abandoned receives a value each time the server sees a client abandon a streamed generation
// (counted by Cancelled), so a test can wait for it instead of polling the count.
func (s *Server) Abandoned() <-chan struct{} { return s.abandoned }

func newServer(models []string) *Server {
	return &Server{Models: models, started: make(chan struct{}, 64), abandoned: make(chan struct{}, 64),
		Reply: func(p string) string { return "echo: " + p }}
}

func (s *Server) record(r Request) {
	s.mu.Lock()
	s.requests = append(s.requests, r)
	s.mu.Unlock()
}

// tokens splits a reply into streamed pieces: words with their leading space.
func tokens(text string) []string {
	var out []string
	for _, w := range strings.SplitAfter(text, " ") {
		if w != "" {
			out = append(out, w)
		}
	}
	return out
}

// generate produces the pieces for a request, truncated to maxTokens, and whether it was truncated.
func (s *Server) generate(prompt string, maxTokens int) ([]string, bool) {
	toks := tokens(s.Reply(prompt))
	if maxTokens > 0 && len(toks) > maxTokens {
		return toks[:maxTokens], true
	}
	return toks, false
}

// emit writes pieces one by one, flushing each; false when the client went away.
func (s *Server) emit(w http.ResponseWriter, r *http.Request, n int, write func(i int)) bool {
	fl, _ := w.(http.Flusher)
	for i := range n {
		if s.TokenDelay > 0 {
			select {
			case <-time.After(s.TokenDelay):
			case <-r.Context().Done():
				s.mu.Lock()
				s.cancelled++
				s.mu.Unlock()
				select {
				case s.abandoned <- struct{}{}:
				default:
				}
				return false
			}
		}
		write(i)
		if fl != nil {
			fl.Flush()
		}
		if i == 0 {
			select {
			case s.started <- struct{}{}:
			default:
			}
		}
	}
	return true
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func (s *Server) hasModel(m string) bool {
	for _, x := range s.Models {
		if x == m || strings.TrimSuffix(x, ":latest") == m {
			return true
		}
	}
	return false
}

// --- Ollama -------------------------------------------------------------------------------------

// NewOllama starts a fake Ollama server with the given models (/api/tags lists them; a request
// for another model is answered 404 "model ... not found", and one without a model 400, as Ollama does).
func NewOllama(models ...string) *Server {
	s := newServer(models)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprint(w, "Ollama is running")
	})
	mux.HandleFunc("GET /api/version", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, 200, map[string]string{"version": "0.5.7"})
	})
	mux.HandleFunc("GET /api/tags", func(w http.ResponseWriter, _ *http.Request) {
		var list []map[string]any
		for _, m := range s.Models {
			list = append(list, map[string]any{"name": m, "model": m, "modified_at": "2024-12-01T10:00:00Z", "size": 2019393189,
				"digest":  "a80c4f17acd55265feec403c7aef86be0c25983ab279d83f3bcd3abbcb5b8b72",
				"details": map[string]any{"format": "gguf", "family": "llama", "parameter_size": "3.2B", "quantization_level": "Q4_K_M"}})
		}
		writeJSON(w, 200, map[string]any{"models": list})
	})
	mux.HandleFunc("POST /api/chat", s.ollamaGenerate)
	mux.HandleFunc("POST /api/generate", s.ollamaGenerate)
	s.Server = httptest.NewServer(mux)
	return s
}

func (s *Server) ollamaGenerate(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Model    string `json:"model"`
		Prompt   string `json:"prompt"`
		Messages []struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"messages"`
		Stream  *bool `json:"stream"`
		Options struct {
			Temperature *float64 `json:"temperature"`
			NumPredict  int      `json:"num_predict"`
		} `json:"options"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		writeJSON(w, 400, map[string]string{"error": "invalid request: " + err.Error()})
		return
	}
	chat := r.URL.Path == "/api/chat"
	prompt := body.Prompt
	if chat {
		for _, m := range body.Messages {
			if m.Role == "user" {
				prompt = m.Content
			}
		}
	}
	stream := body.Stream == nil || *body.Stream // Ollama streams unless told otherwise
	s.record(Request{Path: r.URL.Path, Model: body.Model, Prompt: prompt, Stream: stream, Temperature: body.Options.Temperature, MaxTokens: body.Options.NumPredict})
	if body.Model == "" {
		writeJSON(w, 400, map[string]string{"error": "model is required"})
		return
	}
	if !s.hasModel(body.Model) {
		writeJSON(w, 404, map[string]string{"error": fmt.Sprintf("model %q not found, try pulling it first", body.Model)})
		return
	}
	if s.Fail != nil {
		if st, msg := s.Fail(prompt); msg != "" {
			writeJSON(w, st, map[string]string{"error": msg})
			return
		}
	}
	toks, truncated := s.generate(prompt, body.Options.NumPredict)
	reason := "stop"
	if truncated {
		reason = "length"
	}
	now := func() string { return time.Now().UTC().Format(time.RFC3339Nano) }
	chunk := func(text string, done bool) map[string]any {
		c := map[string]any{"model": body.Model, "created_at": now(), "done": done}
		if chat {
			c["message"] = map[string]string{"role": "assistant", "content": text}
		} else {
			c["response"] = text
		}
		if done {
			c["done_reason"] = reason
			c["total_duration"] = 5_000_000
			c["load_duration"] = 1_000_000
			c["prompt_eval_count"] = len(tokens(prompt))
			c["prompt_eval_duration"] = 1_000_000
			c["eval_count"] = len(toks)
			c["eval_duration"] = 3_000_000
			if !chat {
				c["context"] = []int{1, 2, 3}
			}
		}
		return c
	}
	if !stream {
		writeJSON(w, 200, chunk(strings.Join(toks, ""), true))
		return
	}
	w.Header().Set("Content-Type", "application/x-ndjson")
	enc := json.NewEncoder(w)
	if !s.emit(w, r, len(toks), func(i int) { _ = enc.Encode(chunk(toks[i], false)) }) {
		return
	}
	_ = enc.Encode(chunk("", true))
}

// --- OpenAI -------------------------------------------------------------------------------------

// NewOpenAI starts a fake OpenAI-compatible server (routes under /v1).
func NewOpenAI(models ...string) *Server {
	s := newServer(models)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/models", func(w http.ResponseWriter, r *http.Request) {
		if !s.authorized(w, r) {
			return
		}
		var data []map[string]any
		for _, m := range s.Models {
			data = append(data, map[string]any{"id": m, "object": "model", "created": 1715367049, "owned_by": "system"})
		}
		writeJSON(w, 200, map[string]any{"object": "list", "data": data})
	})
	mux.HandleFunc("POST /v1/chat/completions", s.openaiChat)
	s.Server = httptest.NewServer(mux)
	return s
}

func openaiError(w http.ResponseWriter, status int, typ, code, msg string) {
	writeJSON(w, status, map[string]any{"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": code}})
}

func (s *Server) authorized(w http.ResponseWriter, r *http.Request) bool {
	if s.APIKey == "" || r.Header.Get("Authorization") == "Bearer "+s.APIKey {
		return true
	}
	openaiError(w, 401, "invalid_request_error", "invalid_api_key", "Incorrect API key provided. You can find your API key at https://platform.openai.com/account/api-keys.")
	return false
}

func (s *Server) openaiChat(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(w, r) {
		return
	}
	var body struct {
		Model    string `json:"model"`
		Messages []struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"messages"`
		Temperature         *float64 `json:"temperature"`
		MaxTokens           int      `json:"max_tokens"`
		MaxCompletionTokens int      `json:"max_completion_tokens"`
		Stream              bool     `json:"stream"`
		StreamOptions       *struct {
			IncludeUsage bool `json:"include_usage"`
		} `json:"stream_options"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		openaiError(w, 400, "invalid_request_error", "", "We could not parse the JSON body of your request.")
		return
	}
	prompt := ""
	for _, m := range body.Messages {
		if m.Role == "user" {
			prompt = m.Content
		}
	}
	maxTok := body.MaxTokens
	if maxTok == 0 {
		maxTok = body.MaxCompletionTokens
	}
	s.record(Request{Path: r.URL.Path, Model: body.Model, Prompt: prompt, Stream: body.Stream, Temperature: body.Temperature, MaxTokens: maxTok, Auth: r.Header.Get("Authorization")})
	if len(body.Messages) == 0 {
		openaiError(w, 400, "invalid_request_error", "", "[] is too short - 'messages'")
		return
	}
	if !s.hasModel(body.Model) {
		openaiError(w, 404, "invalid_request_error", "model_not_found", fmt.Sprintf("The model `%s` does not exist or you do not have access to it.", body.Model))
		return
	}
	if body.Temperature != nil && (*body.Temperature < 0 || *body.Temperature > 2) {
		openaiError(w, 400, "invalid_request_error", "", "temperature must be between 0 and 2")
		return
	}
	if s.Fail != nil {
		if st, msg := s.Fail(prompt); msg != "" {
			openaiError(w, st, "server_error", "", msg)
			return
		}
	}
	toks, truncated := s.generate(prompt, maxTok)
	reason := "stop"
	if truncated {
		reason = "length"
	}
	id, created := "chatcmpl-"+fmt.Sprint(time.Now().UnixNano()), time.Now().Unix()
	usage := map[string]int{"prompt_tokens": len(tokens(prompt)), "completion_tokens": len(toks), "total_tokens": len(tokens(prompt)) + len(toks)}
	if !body.Stream {
		writeJSON(w, 200, map[string]any{"id": id, "object": "chat.completion", "created": created, "model": body.Model,
			"choices": []any{map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": strings.Join(toks, ""), "refusal": nil},
				"logprobs": nil, "finish_reason": reason}},
			"usage": usage, "system_fingerprint": "fp_test"})
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	event := func(choices []any, extra map[string]any) {
		c := map[string]any{"id": id, "object": "chat.completion.chunk", "created": created, "model": body.Model, "system_fingerprint": "fp_test", "choices": choices}
		for k, v := range extra {
			c[k] = v
		}
		raw, _ := json.Marshal(c)
		fmt.Fprintf(w, "data: %s\n\n", raw)
	}
	delta := func(d map[string]any, finish any) []any {
		return []any{map[string]any{"index": 0, "delta": d, "logprobs": nil, "finish_reason": finish}}
	}
	event(delta(map[string]any{"role": "assistant", "content": "", "refusal": nil}, nil), nil)
	if !s.emit(w, r, len(toks), func(i int) { event(delta(map[string]any{"content": toks[i]}, nil), nil) }) {
		return
	}
	event(delta(map[string]any{}, reason), nil)
	if body.StreamOptions != nil && body.StreamOptions.IncludeUsage {
		event([]any{}, map[string]any{"usage": usage})
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
}

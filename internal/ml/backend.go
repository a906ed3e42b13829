// Package ml talks to text-generation servers and scores what they say. Two wire protocols are
// supported: Ollama's native API (/api/chat, /api/generate; NDJSON streaming) and the
// OpenAI-compatible chat completions API (/v1/chat/completions; SSE streaming) that OpenAI,
// llama.cpp's server, LM Studio and vLLM speak. A Registry holds named backends, knows which are
// reachable (a cheap, briefly cached live check) and which is the default.
//
// The package also has the heuristic and LLM-judge scorers (score.go), the capability probes
// (probe.go) and a small InfluxDB 1.x HTTP client for training and generation status (influx.go).
// It has no MCP imports.
package ml

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Backend kinds.
const (
	KindOllama = "ollama"
	KindOpenAI = "openai"
)

// Request is one generation.
type Request struct {
	Prompt      string
	Model       string   // empty: the backend's model
	Temperature *float64 // nil: the server's default
	MaxTokens   int      // 0: the server's default
	// OnToken, when set, receives each piece of text as the server streams it (from the
	// goroutine that called Generate). Without it the request is made with streaming off.
	OnToken func(text string)
}

// Result is a finished generation.
type Result struct {
	Text     string
	Model    string
	Tokens   int // completion tokens as the server counted them (streamed pieces when it did not)
	Duration time.Duration
}

// Backend is one named generation server.
type Backend struct {
	Name  string
	Kind  string // KindOllama or KindOpenAI
	URL   string // Ollama: the server root; OpenAI: the base URL including /v1
	Model string // default model; empty: the first one the server lists
	// Endpoint selects Ollama's API: "chat" (default) or "generate".
	Endpoint string
	apiKey   string
	client   *http.Client
}

// NewBackend checks a backend description and returns it ready to use. apiKey is sent as a
// bearer token to OpenAI-compatible servers (may be empty for local ones).
func NewBackend(name, kind, rawURL, model, apiKey, endpoint string) (*Backend, error) {
	if strings.TrimSpace(name) == "" {
		return nil, errors.New("name: required; give the backend a name such as \"local\"")
	}
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("url: %q is not an http(s) URL; write it like http://localhost:11434", rawURL)
	}
	switch kind {
	case KindOllama:
		if endpoint == "" {
			endpoint = "chat"
		}
		if endpoint != "chat" && endpoint != "generate" {
			return nil, fmt.Errorf("endpoint: %q is not an Ollama endpoint; use chat or generate", endpoint)
		}
	case KindOpenAI:
		if endpoint != "" && endpoint != "chat" {
			return nil, fmt.Errorf("endpoint: OpenAI-compatible backends only use chat completions; remove endpoint %q", endpoint)
		}
		if u.Path == "" || u.Path == "/" {
			u.Path = "/v1" // the convention of OPENAI_BASE_URL: the base includes /v1
		}
		endpoint = "chat"
	default:
		return nil, fmt.Errorf("kind: %q is not a backend kind; use ollama or openai", kind)
	}
	u.Path = strings.TrimRight(u.Path, "/")
	return &Backend{Name: name, Kind: kind, URL: u.String(), Model: model, Endpoint: endpoint, apiKey: apiKey,
		client: &http.Client{Transport: http.DefaultTransport}}, nil
}

// pingTimeout bounds the live availability check.
const pingTimeout = 1500 * time.Millisecond

// Ping is the cheap live check: Ollama's GET /api/version, an OpenAI server's GET /models.
func (b *Backend) Ping(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, pingTimeout)
	defer cancel()
	path := "/api/version"
	if b.Kind == KindOpenAI {
		path = "/models"
	}
	resp, err := b.do(ctx, http.MethodGet, path, nil)
	if err != nil {
		return err
	}
	resp.Body.Close()
	return nil
}

// ResolveModel returns model, else the backend's model, else the first model the server lists.
func (b *Backend) ResolveModel(ctx context.Context, model string) (string, error) {
	if model != "" {
		return model, nil
	}
	if b.Model != "" {
		return b.Model, nil
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var names []string
	if b.Kind == KindOllama {
		var tags struct {
			Models []struct {
				Name string `json:"name"`
			} `json:"models"`
		}
		if err := b.getJSON(ctx, "/api/tags", &tags); err != nil {
			return "", err
		}
		for _, m := range tags.Models {
			names = append(names, m.Name)
		}
	} else {
		var list struct {
			Data []struct {
				ID string `json:"id"`
			} `json:"data"`
		}
		if err := b.getJSON(ctx, "/models", &list); err != nil {
			return "", err
		}
		for _, m := range list.Data {
			names = append(names, m.ID)
		}
	}
	if len(names) == 0 {
		return "", fmt.Errorf("model: backend %s (%s) has no models; pull one (ollama pull NAME) or pass model", b.Name, b.URL)
	}
	return names[0], nil
}

func (b *Backend) getJSON(ctx context.Context, path string, out any) error {
	resp, err := b.do(ctx, http.MethodGet, path, nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(io.LimitReader(resp.Body, 8<<20)).Decode(out); err != nil {
		return fmt.Errorf("backend %s: GET %s: bad JSON: %w", b.Name, path, err)
	}
	return nil
}

// do sends a request and turns transport failures and non-2xx answers into errors that name the
// backend and URL, with the server's own error message when it sent one.
func (b *Backend) do(ctx context.Context, method, path string, body any) (*http.Response, error) {
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, b.URL+path, rd)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if b.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+b.apiKey)
	}
	resp, err := b.client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("backend %s: %s is not reachable: %v", b.Name, b.URL, unwrapURLError(err))
	}
	if resp.StatusCode/100 != 2 {
		defer resp.Body.Close()
		raw, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		return nil, fmt.Errorf("backend %s: %s %s: HTTP %d: %s", b.Name, method, b.URL+path, resp.StatusCode, serverError(raw))
	}
	return resp, nil
}

func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// serverError extracts the message of Ollama's {"error":"..."} and OpenAI's
// {"error":{"message":"..."}} bodies, else returns the trimmed body.
func serverError(raw []byte) string {
	var e struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(raw, &e) == nil && len(e.Error) > 0 {
		var s string
		if json.Unmarshal(e.Error, &s) == nil {
			return s
		}
		var o struct {
			Message string `json:"message"`
		}
		if json.Unmarshal(e.Error, &o) == nil && o.Message != "" {
			return o.Message
		}
	}
	s := strings.TrimSpace(string(raw))
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	if s == "" {
		return "(empty body)"
	}
	return s
}

// Generate runs one generation. With req.OnToken set the server streams (Ollama NDJSON, OpenAI
// SSE) and each piece is passed on as it arrives; cancelling ctx closes the connection, which
// stops generation on the server.
func (b *Backend) Generate(ctx context.Context, req Request) (Result, error) {
	if strings.TrimSpace(req.Prompt) == "" {
		return Result{}, errors.New("prompt: required; pass the text to generate from")
	}
	model, err := b.ResolveModel(ctx, req.Model)
	if err != nil {
		return Result{}, err
	}
	start := time.Now()
	var res Result
	if b.Kind == KindOllama {
		res, err = b.generateOllama(ctx, model, req)
	} else {
		res, err = b.generateOpenAI(ctx, model, req)
	}
	res.Duration = time.Since(start)
	if res.Model == "" {
		res.Model = model
	}
	return res, err
}

// --- Ollama -------------------------------------------------------------------------------------

type ollamaMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type ollamaOptions struct {
	Temperature *float64 `json:"temperature,omitempty"`
	NumPredict  int      `json:"num_predict,omitempty"`
}

type ollamaRequest struct {
	Model    string          `json:"model"`
	Messages []ollamaMessage `json:"messages,omitempty"` // /api/chat
	Prompt   string          `json:"prompt,omitempty"`   // /api/generate
	Stream   bool            `json:"stream"`
	Options  *ollamaOptions  `json:"options,omitempty"`
}

// ollamaChunk is one NDJSON line of /api/chat or /api/generate (or the single non-streamed body).
// Only what is used is decoded: every line repeats model, created_at and the message role, and
// skipping them saves three allocations per token (see BenchmarkStream).
type ollamaChunk struct {
	Message struct {
		Content string `json:"content"`
	} `json:"message"` // chat
	Response string `json:"response"` // generate
	Done     bool   `json:"done"`
	EvalCnt  int    `json:"eval_count"`
	Error    string `json:"error"`
}

func (b *Backend) generateOllama(ctx context.Context, model string, req Request) (Result, error) {
	body := ollamaRequest{Model: model, Stream: req.OnToken != nil}
	if req.Temperature != nil || req.MaxTokens > 0 {
		body.Options = &ollamaOptions{Temperature: req.Temperature, NumPredict: req.MaxTokens}
	}
	path := "/api/chat"
	if b.Endpoint == "generate" {
		path = "/api/generate"
		body.Prompt = req.Prompt
	} else {
		body.Messages = []ollamaMessage{{Role: "user", Content: req.Prompt}}
	}
	resp, err := b.do(ctx, http.MethodPost, path, body)
	if err != nil {
		return Result{Model: model}, err
	}
	defer resp.Body.Close()
	res := Result{Model: model}
	var text strings.Builder
	// NDJSON is a sequence of JSON values: one Decoder reads them all and reuses its state (a
	// json.Unmarshal per line costs six allocations per token more; see BenchmarkStream).
	dec := json.NewDecoder(resp.Body)
	pieces, done := 0, false
	for !done {
		var c ollamaChunk
		if err := dec.Decode(&c); err != nil {
			res.Text = text.String()
			if ctx.Err() != nil {
				return res, ctx.Err()
			}
			if errors.Is(err, io.EOF) {
				return res, fmt.Errorf("backend %s: %s ended before its done message", b.Name, path)
			}
			var se *json.SyntaxError
			if errors.As(err, &se) {
				return res, fmt.Errorf("backend %s: %s sent something that is not NDJSON: %v", b.Name, path, err)
			}
			return res, fmt.Errorf("backend %s: reading %s: %w", b.Name, path, err)
		}
		if c.Error != "" {
			res.Text = text.String()
			return res, fmt.Errorf("backend %s: %s", b.Name, c.Error)
		}
		piece := c.Response
		if c.Message.Content != "" {
			piece = c.Message.Content
		}
		if piece != "" {
			text.WriteString(piece)
			pieces++
			if req.OnToken != nil {
				req.OnToken(piece)
			}
		}
		if c.Done {
			res.Tokens, done = c.EvalCnt, true
		}
	}
	res.Text = text.String()
	if res.Tokens == 0 {
		res.Tokens = pieces
	}
	return res, nil
}

// --- OpenAI-compatible --------------------------------------------------------------------------

type openaiRequest struct {
	Model         string          `json:"model"`
	Messages      []ollamaMessage `json:"messages"`
	Temperature   *float64        `json:"temperature,omitempty"`
	MaxTokens     int             `json:"max_tokens,omitempty"`
	Stream        bool            `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options,omitempty"`
}

type openaiUsage struct {
	CompletionTokens int `json:"completion_tokens"`
}

type openaiResponse struct {
	Model   string `json:"model"`
	Choices []struct {
		Message *struct {
			Content string `json:"content"`
		} `json:"message"`
		Delta *struct {
			Content string `json:"content"`
		} `json:"delta"`
	} `json:"choices"`
	Usage *openaiUsage `json:"usage"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
}

func (b *Backend) generateOpenAI(ctx context.Context, model string, req Request) (Result, error) {
	body := openaiRequest{Model: model, Messages: []ollamaMessage{{Role: "user", Content: req.Prompt}},
		Temperature: req.Temperature, MaxTokens: req.MaxTokens, Stream: req.OnToken != nil}
	if body.Stream {
		body.StreamOptions = &struct {
			IncludeUsage bool `json:"include_usage"`
		}{true}
	}
	const path = "/chat/completions"
	resp, err := b.do(ctx, http.MethodPost, path, body)
	if err != nil {
		return Result{Model: model}, err
	}
	defer resp.Body.Close()
	res := Result{Model: model}
	if !body.Stream {
		var r openaiResponse
		if err := json.NewDecoder(io.LimitReader(resp.Body, 64<<20)).Decode(&r); err != nil {
			return res, fmt.Errorf("backend %s: %s: bad JSON: %w", b.Name, path, err)
		}
		if r.Error != nil {
			return res, fmt.Errorf("backend %s: %s", b.Name, r.Error.Message)
		}
		if len(r.Choices) == 0 || r.Choices[0].Message == nil {
			return res, fmt.Errorf("backend %s: %s answered without choices", b.Name, path)
		}
		res.Text = r.Choices[0].Message.Content
		if r.Model != "" {
			res.Model = r.Model
		}
		if r.Usage != nil {
			res.Tokens = r.Usage.CompletionTokens
		}
		return res, nil
	}
	// Server-sent events: "data: {json}" lines, events separated by blank lines, "data: [DONE]" last.
	var text strings.Builder
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	pieces, done := 0, false
	var data []byte
	flush := func() error {
		if len(data) == 0 {
			return nil
		}
		payload := bytes.TrimSpace(data)
		data = data[:0]
		if string(payload) == "[DONE]" {
			done = true
			return nil
		}
		var r openaiResponse
		if err := json.Unmarshal(payload, &r); err != nil {
			return fmt.Errorf("backend %s: %s sent an event that is not JSON: %.200q", b.Name, path, payload)
		}
		if r.Error != nil {
			return fmt.Errorf("backend %s: %s", b.Name, r.Error.Message)
		}
		if r.Model != "" {
			res.Model = r.Model
		}
		if r.Usage != nil {
			res.Tokens = r.Usage.CompletionTokens
		}
		for _, c := range r.Choices {
			if c.Delta != nil && c.Delta.Content != "" {
				text.WriteString(c.Delta.Content)
				pieces++
				req.OnToken(c.Delta.Content)
			}
		}
		return nil
	}
	for !done && sc.Scan() {
		line := sc.Bytes()
		switch {
		case len(line) == 0:
			if err := flush(); err != nil {
				res.Text = text.String()
				return res, err
			}
		case bytes.HasPrefix(line, []byte("data:")):
			if len(data) > 0 {
				data = append(data, '\n')
			}
			data = append(data, bytes.TrimPrefix(bytes.TrimPrefix(line, []byte("data:")), []byte(" "))...)
		}
		// comments (":"), event:, id:, retry: lines carry nothing we need
	}
	if !done {
		if err := flush(); err != nil {
			res.Text = text.String()
			return res, err
		}
	}
	res.Text = text.String()
	if err := sc.Err(); err != nil {
		if ctx.Err() != nil {
			return res, ctx.Err()
		}
		return res, fmt.Errorf("backend %s: reading %s: %w", b.Name, path, err)
	}
	if !done {
		if ctx.Err() != nil {
			return res, ctx.Err()
		}
		return res, fmt.Errorf("backend %s: %s stream ended without data: [DONE]", b.Name, path)
	}
	if res.Tokens == 0 {
		res.Tokens = pieces
	}
	return res, nil
}

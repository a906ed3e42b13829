package rag

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/switchboard-hub/switchboard/internal/ollama"
)

// DefaultOllamaModel is the embedding model used with Ollama unless configured.
const DefaultOllamaModel = "nomic-embed-text"

// DefaultOpenAIModel is the embedding model used with an OpenAI-compatible API unless configured.
const DefaultOpenAIModel = "text-embedding-3-small"

// httpEmbedder is shared by the Ollama and OpenAI-compatible embedders.
type httpEmbedder struct {
	kind   string
	model  string
	base   string // without trailing slash
	apiKey string
	client *http.Client
	dim    atomic.Int64
	batch  int
}

func (h *httpEmbedder) Name() string  { return h.kind }
func (h *httpEmbedder) Model() string { return h.model }
func (h *httpEmbedder) Dim() int      { return int(h.dim.Load()) }

// URL is the endpoint base, for messages and doctor.
func (h *httpEmbedder) URL() string { return h.base }

// NewOllama returns an embedder for Ollama's /api/embed. host is an OLLAMA_HOST-style value
// (the app passes [rag] embedder_url, else $OLLAMA_HOST; empty: http://localhost:11434); model
// empty means nomic-embed-text.
func NewOllama(host, model string) *httpEmbedder {
	if model == "" {
		model = DefaultOllamaModel
	}
	return &httpEmbedder{kind: "ollama", model: model, base: strings.TrimRight(ollama.Host(host).String(), "/"),
		client: &http.Client{Timeout: 2 * time.Minute}, batch: 64}
}

// NewOpenAI returns an embedder for an OpenAI-compatible /v1/embeddings endpoint. baseURL empty
// means https://api.openai.com/v1 (the app passes [rag] embedder_url, else $OPENAI_BASE_URL, and
// $OPENAI_API_KEY).
func NewOpenAI(baseURL, apiKey, model string) *httpEmbedder {
	if baseURL == "" {
		baseURL = "https://api.openai.com/v1"
	}
	if model == "" {
		model = DefaultOpenAIModel
	}
	return &httpEmbedder{kind: "openai", model: model, base: strings.TrimRight(baseURL, "/"), apiKey: apiKey,
		client: &http.Client{Timeout: 2 * time.Minute}, batch: 128}
}

// Embed implements Embedder, sending texts in batches.
func (h *httpEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += h.batch {
		end := min(start+h.batch, len(texts))
		vecs, err := h.embedBatch(ctx, texts[start:end])
		if err != nil {
			return nil, err
		}
		if len(vecs) != end-start {
			return nil, fmt.Errorf("%s at %s returned %d embeddings for %d inputs", h.kind, h.base, len(vecs), end-start)
		}
		for _, v := range vecs {
			if len(v) == 0 {
				return nil, fmt.Errorf("%s at %s returned an empty embedding (model %s)", h.kind, h.base, h.model)
			}
			if d := h.dim.Load(); d != 0 && int(d) != len(v) {
				return nil, fmt.Errorf("%s at %s returned %d dimensions, earlier %d (model %s)", h.kind, h.base, len(v), d, h.model)
			}
			h.dim.Store(int64(len(v)))
			normalize(v)
			out = append(out, v)
		}
	}
	return out, nil
}

func normalize(v []float32) {
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	if n > 0 {
		inv := float32(1 / math.Sqrt(n))
		for i := range v {
			v[i] *= inv
		}
	}
}

func (h *httpEmbedder) embedBatch(ctx context.Context, texts []string) ([][]float32, error) {
	var endpoint string
	var body any
	switch h.kind {
	case "ollama":
		endpoint = h.base + "/api/embed"
		body = struct {
			Model string   `json:"model"`
			Input []string `json:"input"`
		}{h.model, texts}
	default:
		endpoint = h.base + "/embeddings"
		body = struct {
			Model          string   `json:"model"`
			Input          []string `json:"input"`
			EncodingFormat string   `json:"encoding_format"`
		}{h.model, texts, "float"}
	}
	b, _ := json.Marshal(body)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("%s URL %q: %w", h.kind, h.base, err)
	}
	req.Header.Set("Content-Type", "application/json")
	if h.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+h.apiKey)
	}
	resp, err := h.client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &UnreachableError{What: h.kind, URL: h.base, Err: err}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 256<<20))
	if err != nil {
		return nil, fmt.Errorf("%s at %s: reading response: %w", h.kind, h.base, err)
	}
	if resp.StatusCode != http.StatusOK {
		msg := strings.TrimSpace(string(data))
		var e struct {
			Error any `json:"error"`
		}
		if json.Unmarshal(data, &e) == nil && e.Error != nil {
			switch v := e.Error.(type) {
			case string:
				msg = v
			case map[string]any:
				if m, ok := v["message"].(string); ok {
					msg = m
				}
			}
		}
		hint := ""
		switch {
		case h.kind == "ollama" && resp.StatusCode == http.StatusNotFound:
			hint = fmt.Sprintf("; pull the model with `ollama pull %s` or set [rag] model", h.model)
		case resp.StatusCode == http.StatusUnauthorized:
			hint = "; set OPENAI_API_KEY or [rag] api_key"
		}
		return nil, fmt.Errorf("%s at %s answered %s: %s%s", h.kind, h.base, resp.Status, msg, hint)
	}
	if h.kind == "ollama" {
		var r struct {
			Embeddings [][]float32 `json:"embeddings"`
		}
		if err := json.Unmarshal(data, &r); err != nil {
			return nil, fmt.Errorf("ollama at %s: bad response: %w", h.base, err)
		}
		return r.Embeddings, nil
	}
	var r struct {
		Data []struct {
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		} `json:"data"`
	}
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("openai at %s: bad response: %w", h.base, err)
	}
	out := make([][]float32, len(r.Data))
	for _, d := range r.Data {
		if d.Index < 0 || d.Index >= len(out) {
			return nil, fmt.Errorf("openai at %s: embedding index %d out of range", h.base, d.Index)
		}
		out[d.Index] = d.Embedding
	}
	return out, nil
}

// UnreachableError is a backend or embedder that could not be reached.
type UnreachableError struct {
	What string // "ollama", "openai", "qdrant"
	URL  string
	Err  error
}

// Error names what could not be reached and where, and how to fix it.
func (e *UnreachableError) Error() string {
	return fmt.Sprintf("%s at %s is unreachable (%v); start it or fix the URL in [rag], then run `switchboard doctor`", e.What, e.URL, e.Err)
}

// Unwrap returns the dial or request error, so callers can match it.
func (e *UnreachableError) Unwrap() error { return e.Err }

// Ping checks that an HTTP embedder answers (for switchboard doctor): it embeds one word.
func Ping(ctx context.Context, e Embedder) error {
	_, err := e.Embed(ctx, []string{"ping"})
	var ue *UnreachableError
	if errors.As(err, &ue) {
		return err
	}
	return err
}

// Package ollamasim is Ollama's embedding endpoint for tests, following its documented
// POST /api/embed: {"model","input":[...]} → {"model","embeddings":[[...]]}, and a 404
// {"error":"model ... not found"} for the model named "missing". Ollama does not run on the
// machines this project is built on, so the real embedding client is tested against this.
package ollamasim

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// Options shape the server's answers.
type Options struct {
	// Embed returns the vector for one input; nil: {1, 0, 0, 0} for every input.
	Embed func(text string) []float32
	// Hold, when set, keeps every request waiting until it is closed (or its client gives up).
	Hold <-chan struct{}
}

// Server is a running endpoint.
type Server struct {
	// URL is the base URL, as OLLAMA_HOST or [rag] embedder_url take it.
	URL string
	// Started receives one value, when the first embedding request arrives.
	Started <-chan struct{}
}

// Start serves the endpoint until the test ends.
func Start(t testing.TB, o Options) *Server {
	t.Helper()
	if o.Embed == nil {
		o.Embed = func(string) []float32 { return []float32{1, 0, 0, 0} }
	}
	started := make(chan struct{}, 1)
	var once sync.Once
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/api/embed" {
			http.NotFound(w, r)
			return
		}
		var req struct {
			Model string   `json:"model"`
			Input []string `json:"input"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, `{"error":"bad json"}`, http.StatusBadRequest)
			return
		}
		if req.Model == "missing" {
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprintf(w, `{"error":"model %q not found, try pulling it first"}`, req.Model)
			return
		}
		once.Do(func() { started <- struct{}{} })
		if o.Hold != nil {
			select {
			case <-o.Hold:
			case <-r.Context().Done():
				return
			}
		}
		out := struct {
			Model      string      `json:"model"`
			Embeddings [][]float32 `json:"embeddings"`
		}{Model: req.Model, Embeddings: make([][]float32, 0, len(req.Input))}
		for _, in := range req.Input {
			out.Embeddings = append(out.Embeddings, o.Embed(in))
		}
		_ = json.NewEncoder(w).Encode(out) // the client reports a broken answer
	}))
	t.Cleanup(srv.Close)
	return &Server{URL: srv.URL, Started: started}
}

package ml

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/switchboard-hub/switchboard/internal/ollama"
)

// BackendConfig describes a backend in the config file ([[ml.backends]]).
type BackendConfig struct {
	Name      string
	Kind      string // ollama or openai
	URL       string
	Model     string
	APIKeyEnv string // name of the environment variable holding the API key
	Endpoint  string // Ollama only: chat (default) or generate
}

// Options build a Registry.
type Options struct {
	Backends []BackendConfig
	Default  string // name of the default backend; empty: the first available
	// The built-in backends' settings, from the environment (config.Env): OLLAMA_HOST,
	// OPENAI_BASE_URL, OPENAI_API_KEY.
	OllamaHost, OpenAIBaseURL, OpenAIAPIKey string
	// Getenv reads the variables backends name in api_key_env (config.Env.Getenv); nil: none
	// is set.
	Getenv   func(key string) string
	CacheTTL time.Duration // how long a live check is trusted; default 5s
}

// DefaultOpenAIModel is the built-in openai backend's model when it talks to api.openai.com
// (OPENAI_BASE_URL unset). Other servers answer with the first model they list.
const DefaultOpenAIModel = "gpt-4o-mini"

// Status is one backend as ml_backends and the dashboard show it.
type Status struct {
	Name      string `json:"name"`
	Kind      string `json:"kind"`
	URL       string `json:"url"`
	Model     string `json:"model,omitempty"`
	Available bool   `json:"available"`
	Error     string `json:"error,omitempty"`
	// Assumed: nobody set this backend up; the hub tries the usual local Ollama on its own
	// (no OLLAMA_HOST, no [[ml.backends]] entry of that name). Its absence is "not set up",
	// not an error.
	Assumed bool `json:"assumed,omitempty"`
}

// Registry holds the named backends. Safe for concurrent use.
type Registry struct {
	backends []*Backend
	assumed  map[string]bool // built-in backends nobody configured (Status.Assumed)
	def      string
	ttl      time.Duration

	mu     sync.Mutex
	checks map[string]*check
}

type check struct {
	at      time.Time
	err     error
	pending chan struct{} // closed when the running check finishes
}

// NewRegistry builds the built-in backends from the environment's settings — `ollama`
// (OllamaHost, default http://localhost:11434) always, `openai` (OpenAIBaseURL, default
// https://api.openai.com/v1, key OpenAIAPIKey) when either is set — then the configured ones; a
// configured backend with a built-in name replaces it.
func NewRegistry(o Options) (*Registry, error) {
	getenv := o.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	r := &Registry{def: o.Default, ttl: o.CacheTTL, checks: map[string]*check{}, assumed: map[string]bool{"ollama": o.OllamaHost == ""}}
	if r.ttl <= 0 {
		r.ttl = 5 * time.Second
	}
	add := func(b *Backend) {
		for i, have := range r.backends {
			if have.Name == b.Name {
				r.backends[i] = b
				return
			}
		}
		r.backends = append(r.backends, b)
	}
	b, err := NewBackend("ollama", KindOllama, ollama.Host(o.OllamaHost).String(), "", "", "")
	if err != nil {
		return nil, fmt.Errorf("OLLAMA_HOST: %w", err)
	}
	add(b)
	if base, key := o.OpenAIBaseURL, o.OpenAIAPIKey; base != "" || key != "" {
		model := ""
		if base == "" {
			// OpenAI itself lists image, audio and embedding models first: pick a chat model.
			base, model = "https://api.openai.com/v1", DefaultOpenAIModel
		}
		b, err := NewBackend("openai", KindOpenAI, base, model, key, "")
		if err != nil {
			return nil, fmt.Errorf("OPENAI_BASE_URL: %w", err)
		}
		add(b)
	}
	for i, c := range o.Backends {
		key := ""
		if c.APIKeyEnv != "" {
			key = getenv(c.APIKeyEnv)
		}
		b, err := NewBackend(c.Name, c.Kind, c.URL, c.Model, key, c.Endpoint)
		if err != nil {
			return nil, fmt.Errorf("ml.backends[%d] (%s): %w", i, c.Name, err)
		}
		add(b)
		delete(r.assumed, c.Name)
	}
	if r.def != "" {
		if _, err := r.Get(r.def); err != nil {
			return nil, fmt.Errorf("ml.default_backend: %w", err)
		}
	}
	return r, nil
}

// Names lists the backends in registration order.
func (r *Registry) Names() []string {
	out := make([]string, len(r.backends))
	for i, b := range r.backends {
		out[i] = b.Name
	}
	return out
}

// Get returns the named backend, or an error listing the known ones.
func (r *Registry) Get(name string) (*Backend, error) {
	for _, b := range r.backends {
		if b.Name == name {
			return b, nil
		}
	}
	names := r.Names()
	sort.Strings(names)
	return nil, fmt.Errorf("backend: unknown backend %q; available backends: %s", name, strings.Join(names, ", "))
}

// Resolve returns the named backend, or the default one for an empty name. An unknown name is
// an error listing the backends and which of them answer right now.
func (r *Registry) Resolve(ctx context.Context, name string) (*Backend, error) {
	if name == "" {
		name = r.Default(ctx)
		if name == "" {
			return nil, errors.New("backend: no backend is configured; set OLLAMA_HOST, OPENAI_BASE_URL or [[ml.backends]] in the config")
		}
	}
	for _, b := range r.backends {
		if b.Name == name {
			return b, nil
		}
	}
	var parts []string
	for _, st := range r.Statuses(ctx) {
		state := "available"
		if !st.Available {
			state = "unreachable"
		}
		parts = append(parts, st.Name+" ("+state+")")
	}
	return nil, fmt.Errorf("backend: unknown backend %q; available backends: %s", name, strings.Join(parts, ", "))
}

// Default is the configured default backend, else the first available one, else the first one.
func (r *Registry) Default(ctx context.Context) string {
	if r.def != "" {
		return r.def
	}
	if len(r.backends) == 0 {
		return ""
	}
	for _, st := range r.Statuses(ctx) {
		if st.Available {
			return st.Name
		}
	}
	return r.backends[0].Name
}

// Check runs (or reuses, within the cache TTL) the live check of one backend. Concurrent
// callers share one request.
func (r *Registry) Check(ctx context.Context, b *Backend) error {
	r.mu.Lock()
	c := r.checks[b.Name]
	if c != nil && c.pending == nil && time.Since(c.at) < r.ttl {
		r.mu.Unlock()
		return c.err
	}
	if c != nil && c.pending != nil {
		wait := c.pending
		r.mu.Unlock()
		select {
		case <-wait:
		case <-ctx.Done():
			return ctx.Err()
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		return r.checks[b.Name].err
	}
	nc := &check{pending: make(chan struct{})}
	r.checks[b.Name] = nc
	r.mu.Unlock()

	err := b.Ping(context.WithoutCancel(ctx))

	r.mu.Lock()
	done := nc.pending
	nc.err, nc.at, nc.pending = err, time.Now(), nil
	r.mu.Unlock()
	close(done)
	return err
}

// Statuses checks every backend (in parallel, cached) and reports them in registration order.
func (r *Registry) Statuses(ctx context.Context) []Status {
	out := make([]Status, len(r.backends))
	var wg sync.WaitGroup
	for i, b := range r.backends {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := r.Check(ctx, b)
			out[i] = Status{Name: b.Name, Kind: b.Kind, URL: b.URL, Model: b.Model, Available: err == nil, Assumed: r.assumed[b.Name]}
			if err != nil {
				out[i].Error = err.Error()
			}
		}()
	}
	wg.Wait()
	return out
}

package tools

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/internal/metrics"
	"github.com/switchboard-hub/switchboard/internal/ml"
	"github.com/switchboard-hub/switchboard/internal/wshub"
	"github.com/switchboard-hub/switchboard/mcp/channel"
	"github.com/switchboard-hub/switchboard/mcp/tool"
)

// ML tools: generation on Ollama and OpenAI-compatible backends (internal/ml), response scoring,
// capability probes, InfluxDB status and the backend list. The group is a subsystem of the hub
// so that its dashboard feed (hub channel "ml") stops with it.

// MLOptions configure the ML tools.
type MLOptions struct {
	// JudgeBackend judges ml_score's semantic suite; empty: the default backend.
	JudgeBackend string
	// InfluxURL and InfluxDB are ml_status's defaults (empty: http://localhost:8086, lem). With
	// WriteInflux, every generation of ml_generate and ml_probe is also written there.
	InfluxURL, InfluxDB string
	WriteInflux         bool
	// FeedInterval is how often the dashboard feed re-checks the backends (default 10s).
	FeedInterval time.Duration
}

// checkML validates a registry and its options as NewMLTools and Set take them.
func checkML(reg *ml.Registry, o MLOptions) (MLOptions, error) {
	if reg == nil {
		return o, errors.New("ml: registry is nil")
	}
	if o.JudgeBackend != "" {
		if _, err := reg.Get(o.JudgeBackend); err != nil {
			return o, fmt.Errorf("ml.judge_backend: %w", err)
		}
	}
	if _, err := ml.NewInflux(o.InfluxURL, o.InfluxDB); err != nil {
		return o, fmt.Errorf("ml: %w", err)
	}
	return o, nil
}

// mlState is one configuration of the ML tools: every call reads it once (MLTools.state), so a
// call never mixes two registries when Set swaps it.
type mlState struct {
	reg  *ml.Registry
	opts MLOptions
}

// MLTools is the ML tools' dependencies and their dashboard feed (hub channel "ml"). It is a
// subsystem of the hub (mcp.Subsystem: Name, Tools, Shutdown) so the feed stops with it.
type MLTools struct {
	hub     *wshub.Hub     // set by Start; nil: no feed
	metrics *metrics.Store // set by Start; nil: generations are not counted
	logger  *slog.Logger

	cur      atomic.Pointer[mlState]
	interval time.Duration // the feed's re-check period

	stop     chan struct{}
	refresh  chan struct{} // SetML asks the feed loop for a re-check now
	stopOnce sync.Once
	wg       sync.WaitGroup // feed loop and InfluxDB writes

	mu   sync.Mutex        // guards last, swapping cur against publish, and closing stop against wg.Add
	last *MLBackendsOutput // last published to the hub
}

// NewMLTools validates reg and o (a judge backend that does not exist, an InfluxDB URL that
// does not parse are errors naming the field) and returns the tools on them.
func NewMLTools(reg *ml.Registry, o MLOptions) (*MLTools, error) {
	o, err := checkML(reg, o)
	if err != nil {
		return nil, err
	}
	if o.FeedInterval <= 0 {
		o.FeedInterval = 10 * time.Second
	}
	m := &MLTools{logger: slog.New(slog.DiscardHandler), interval: o.FeedInterval, stop: make(chan struct{}), refresh: make(chan struct{}, 1)}
	m.cur.Store(&mlState{reg: reg, opts: o})
	return m, nil
}

// Start gives the tools the hub's parts, once they exist: the WebSocket hub (the "ml" feed
// starts on it), where generations are counted, and the logger.
func (m *MLTools) Start(h *wshub.Hub, store *metrics.Store, logger *slog.Logger) {
	m.hub, m.metrics = h, store
	if logger != nil {
		m.logger = logger
	}
	m.wireFeed()
}

// Set replaces the inference backends and ML options (the Settings view saves them live),
// validated as NewMLTools does; on error nothing changes. Calls in flight finish on the
// registry they started with; the next calls and the dashboard feed use the new one, and the
// feed re-checks at once so the dashboard shows the new backends. o.FeedInterval is ignored:
// the feed keeps the interval it started with.
func (m *MLTools) Set(reg *ml.Registry, o MLOptions) error {
	o, err := checkML(reg, o)
	if err != nil {
		return err
	}
	o.FeedInterval = m.interval
	m.mu.Lock() // against publish: a list of the old registry is not published after this
	m.cur.Store(&mlState{reg: reg, opts: o})
	m.mu.Unlock()
	select {
	case m.refresh <- struct{}{}:
	default: // a re-check is already due
	}
	return nil
}

func (m *MLTools) state() *mlState { return m.cur.Load() }

// Name is the subsystem's name.
func (m *MLTools) Name() string { return "ml" }

// Tools declares the ML tools, bound to m (mcp.Subsystem).
func (m *MLTools) Tools() tool.Group { return MLGroup() }

// MLGroup declares the ml_* tools (toolset ml) as values that need no hub; NewMLTools builds
// the *MLTools they are bound to.
func MLGroup() tool.Group {
	return tool.NewGroup("ml",
		tool.Func(sdk.Tool{Name: "ml_generate", Annotations: tool.OpenWorld(tool.Write("Generate text", false, false)),
			Description: "Generate text with an inference backend (Ollama or an OpenAI-compatible server). The reply is streamed from the " +
				"backend; send a progress token to get progress notifications while tokens arrive. Cancelling the call stops the backend. " +
				"backend defaults to the default backend (see ml_backends); temperature and max_tokens are passed to the backend."}, (*MLTools).generate),
		tool.Func(sdk.Tool{Name: "ml_score", Annotations: tool.OpenWorld(tool.ReadOnly("Score a response")),
			Description: "Score a prompt/response pair. suites is a comma-separated list of heuristic (default; no backend: length fit, " +
				"structure, repetition, refusal/hedging, format compliance, coverage of the prompt's key terms, overall, each 0..1) and " +
				"semantic (an LLM judge rates relevance, accuracy, coherence and helpfulness 1-10 with reasoning). The content suite is " +
				"not available here: use ml_probe."}, (*MLTools).score),
		tool.Func(sdk.Tool{Name: "ml_probe", Annotations: tool.OpenWorld(tool.Write("Run capability probes", false, false)),
			Description: "Run the built-in capability probes (categories " + strings.Join(ml.ProbeCategories, ", ") + ") against a backend at " +
				"temperature 0.7 and 2048 max tokens, each checked automatically (passed). A probe that fails to generate has a response " +
				"starting with \"error: \"; the run continues."}, (*MLTools).probe),
		tool.Func(sdk.Tool{Name: "ml_status", Annotations: tool.OpenWorld(tool.ReadOnly("Training and generation status")),
			Description: "Training and generation progress from InfluxDB 1.x: every measurement with its latest point, its point counts over " +
				"the last hour and day, and the loss trend of training measurements. Defaults: http://localhost:8086, database lem."}, (*MLTools).status),
		tool.Func(sdk.Tool{Name: "ml_backends", Annotations: tool.ReadOnly("List inference backends"),
			Description: "List the inference backends with a live availability check (cached a few seconds) and the default backend."}, (*MLTools).backends),
	)
}

// Shutdown stops the feed and waits for pending InfluxDB writes (or ctx).
func (m *MLTools) Shutdown(ctx context.Context) error {
	m.stopOnce.Do(func() {
		m.mu.Lock()
		close(m.stop)
		m.mu.Unlock()
	})
	done := make(chan struct{})
	go func() { m.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// --- ml_generate --------------------------------------------------------------------------------

// MLGenerateInput is ml_generate's arguments: a prompt and, optionally, which backend and model to
// use and how to sample.
type MLGenerateInput struct {
	Prompt      string   `json:"prompt" jsonschema:"the input prompt"`
	Backend     string   `json:"backend,omitempty" jsonschema:"backend name (see ml_backends); default: the default backend"`
	Model       string   `json:"model,omitempty" jsonschema:"model override; default: the backend's configured model, else the first model it lists"`
	Temperature *float64 `json:"temperature,omitempty" jsonschema:"sampling temperature 0..2; default: the backend's"`
	MaxTokens   int      `json:"max_tokens,omitempty" jsonschema:"maximum tokens to generate; default: the backend's"`
}

// MLGenerateOutput is ml_generate's result: the generated text and the backend and model that
// produced it.
type MLGenerateOutput struct {
	Response string `json:"response" jsonschema:"generated text"`
	Backend  string `json:"backend" jsonschema:"backend used"`
	Model    string `json:"model" jsonschema:"model used"`
}

// progressTick is how often streamed tokens are reported as progress (and the heartbeat while
// the backend is still thinking: at least every progressHeartbeat).
const (
	progressTick      = 100 * time.Millisecond
	progressHeartbeat = time.Second
	maxBeats          = 999
)

// progressValue is the reported progress: n units done, plus a thousandth per heartbeat sent
// since the last unit, because MCP requires every notification's progress to be larger than the
// previous one's. The integer part stays the true count.
func progressValue(n, beats int) float64 { return float64(n) + float64(beats)/1000 }

func (m *MLTools) generate(ctx context.Context, req *sdk.CallToolRequest, in MLGenerateInput) (*sdk.CallToolResult, MLGenerateOutput, error) {
	if strings.TrimSpace(in.Prompt) == "" {
		return nil, MLGenerateOutput{}, errors.New("prompt: required; pass the text to generate from")
	}
	if in.Temperature != nil && (*in.Temperature < 0 || *in.Temperature > 2) {
		return nil, MLGenerateOutput{}, fmt.Errorf("temperature: %v is out of range; use a number from 0 to 2", *in.Temperature)
	}
	if in.MaxTokens < 0 || in.MaxTokens > 1<<20 {
		return nil, MLGenerateOutput{}, fmt.Errorf("max_tokens: %d is out of range; use a positive number up to %d, or omit it", in.MaxTokens, 1<<20)
	}
	st := m.state()
	b, err := st.reg.Resolve(ctx, in.Backend)
	if err != nil {
		return nil, MLGenerateOutput{}, err
	}
	var (
		mu     sync.Mutex
		pieces int
		chars  int
	)
	onToken := func(t string) {
		mu.Lock()
		pieces++
		chars += len(t)
		mu.Unlock()
	}
	stopProgress := func() {}
	if tok := req.Params.GetProgressToken(); tok != nil && req.Session != nil {
		pctx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		stopProgress = func() { cancel(); <-done }
		go func() {
			defer close(done)
			t := time.NewTicker(progressTick)
			defer t.Stop()
			sent, beats, lastSend := -1, 0, time.Now()
			for {
				select {
				case <-pctx.Done():
					return
				case <-t.C:
				}
				now := time.Now()
				mu.Lock()
				n, c := pieces, chars
				mu.Unlock()
				switch {
				case n != sent:
					beats = 0
				// Half a tick of slack: ticks land a little late under load, and waiting for the
				// next one would stretch every heartbeat to 1.1 s and more.
				case now.Sub(lastSend) < progressHeartbeat-progressTick/2 || beats >= maxBeats:
					continue
				default:
					beats++
				}
				p := &sdk.ProgressNotificationParams{ProgressToken: tok, Progress: progressValue(n, beats),
					Message: fmt.Sprintf("%s: %d tokens, %d bytes received", b.Name, n, c)}
				if n == 0 {
					p.Message = b.Name + ": waiting for the first token"
				}
				if in.MaxTokens > 0 {
					p.Total = float64(in.MaxTokens)
				}
				_ = req.Session.NotifyProgress(pctx, p)
				sent, lastSend = n, now // from the tick, so a slow send does not push the next heartbeat later
			}
		}()
	}
	res, err := b.Generate(ctx, ml.Request{Prompt: in.Prompt, Model: in.Model, Temperature: in.Temperature, MaxTokens: in.MaxTokens, OnToken: onToken})
	stopProgress()
	m.recordGeneration(st.opts, "ml_generate", b.Name, res, err)
	if err != nil {
		return nil, MLGenerateOutput{}, err
	}
	return nil, MLGenerateOutput{Response: res.Text, Backend: b.Name, Model: res.Model}, nil
}

// recordGeneration stores a metrics event and, when configured, an InfluxDB point.
func (m *MLTools) recordGeneration(o MLOptions, source, backend string, res ml.Result, genErr error) {
	ok := genErr == nil
	if st := m.metrics; st != nil {
		data := map[string]any{"source": source, "backend": backend, "model": res.Model, "tokens": res.Tokens, "ok": ok}
		if !ok {
			data["error"] = genErr.Error()
		}
		if _, err := st.Record(metrics.Event{Type: "ml_generation", Duration: res.Duration, Data: data}); err != nil {
			m.logger.Warn("ml: metrics", "error", err)
		}
	}
	if !o.WriteInflux {
		return
	}
	ix, err := ml.NewInflux(o.InfluxURL, o.InfluxDB)
	if err != nil {
		return
	}
	tps := 0.0
	if s := res.Duration.Seconds(); s > 0 {
		tps = float64(res.Tokens) / s
	}
	pt := ml.Point{Measurement: "generation", Time: time.Now(),
		Tags:   map[string]string{"source": source, "backend": backend, "model": res.Model},
		Fields: map[string]any{"duration_ms": float64(res.Duration.Microseconds()) / 1000, "tokens": res.Tokens, "tokens_per_second": tps, "ok": ok}}
	m.mu.Lock()
	select {
	case <-m.stop: // shutting down: Shutdown may already be waiting
		m.mu.Unlock()
		return
	default:
	}
	m.wg.Add(1)
	m.mu.Unlock()
	go func() {
		defer m.wg.Done()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := ix.Write(ctx, pt); err != nil {
			m.logger.Warn("ml: influx write", "error", err)
		}
	}()
}

// --- ml_score -----------------------------------------------------------------------------------

// MLScoreInput is ml_score's arguments: a prompt, the response to evaluate and the suites to run.
type MLScoreInput struct {
	Prompt   string `json:"prompt" jsonschema:"the original prompt"`
	Response string `json:"response" jsonschema:"the model response to evaluate"`
	Suites   string `json:"suites,omitempty" jsonschema:"comma-separated suites: heuristic, semantic; default heuristic"`
}

// MLHeuristicScores is ml_score's heuristic suite: scores computed from the text alone, with no
// model involved.
type MLHeuristicScores struct {
	LengthFit        float64 `json:"length_fit" jsonschema:"0..1: word count fits what the prompt asks for (in N words, briefly, one word, in detail; else 5-400 words)"`
	Structure        float64 `json:"structure" jsonschema:"0..1: complete final sentence, paragraphs or lists for long answers, a list when the prompt asks for one"`
	Repetition       float64 `json:"repetition" jsonschema:"0..1: 1 minus the share of repeated word trigrams (1 = nothing repeated)"`
	Refusal          float64 `json:"refusal" jsonschema:"0..1: 1 = no refusal or hedging; a refusal is 0, each hedging phrase takes 0.15 off"`
	FormatCompliance float64 `json:"format_compliance" jsonschema:"0..1: has the format the prompt asks for (valid JSON, code block, list, yes/no, one word, number); 1 when none is asked"`
	Coverage         float64 `json:"coverage" jsonschema:"0..1: share of the prompt's key terms the response mentions"`
	Overall          float64 `json:"overall" jsonschema:"0..1: weighted mean (format 0.25, refusal 0.2, coverage, repetition and length 0.15 each, structure 0.1)"`
	ExpectedFormat   string  `json:"expected_format" jsonschema:"format detected in the prompt: json, code, list, yes_no, one_word, number or none"`
	Words            int     `json:"words" jsonschema:"word count of the response"`
}

// MLSemanticScores is ml_score's semantic suite: an LLM judge's ratings of the response and its
// reasoning.
type MLSemanticScores struct {
	Relevance   float64 `json:"relevance" jsonschema:"1..10: does the response address the prompt"`
	Accuracy    float64 `json:"accuracy" jsonschema:"1..10: factual and logical correctness"`
	Coherence   float64 `json:"coherence" jsonschema:"1..10: clarity and organisation"`
	Helpfulness float64 `json:"helpfulness" jsonschema:"1..10: usefulness to the asker"`
	Overall     float64 `json:"overall" jsonschema:"mean of the four scores"`
	Reasoning   string  `json:"reasoning" jsonschema:"the judge's reasoning"`
	Judge       string  `json:"judge" jsonschema:"backend that judged"`
	Model       string  `json:"model" jsonschema:"the judge's model"`
}

// MLScoreOutput is ml_score's result: one set of scores per suite that was requested.
type MLScoreOutput struct {
	Heuristic *MLHeuristicScores `json:"heuristic,omitempty" jsonschema:"heuristic scores (present when requested)"`
	Semantic  *MLSemanticScores  `json:"semantic,omitempty" jsonschema:"LLM judge scores (present when requested)"`
	// Content is the contract's content suite, which this tool does not run (ml_probe does): the
	// key is in the schema so clients written against the contract find it, and it is never set.
	Content *MLContentScores `json:"content,omitempty" jsonschema:"content scores: never filled by this tool (the content suite runs in ml_probe)"`
}

// MLContentScores is the shape of the contract's content scores, as ml_probe reports them: how
// many capability probes passed.
type MLContentScores struct {
	Passed int `json:"passed" jsonschema:"probes that passed"`
	Total  int `json:"total" jsonschema:"probes run"`
}

func (m *MLTools) score(ctx context.Context, _ *sdk.CallToolRequest, in MLScoreInput) (*sdk.CallToolResult, MLScoreOutput, error) {
	if strings.TrimSpace(in.Prompt) == "" {
		return nil, MLScoreOutput{}, errors.New("prompt: required; pass the prompt the response answers")
	}
	if strings.TrimSpace(in.Response) == "" {
		return nil, MLScoreOutput{}, errors.New("response: required; pass the model response to score")
	}
	suites := map[string]bool{}
	for _, s := range strings.Split(in.Suites, ",") {
		s = strings.ToLower(strings.TrimSpace(s))
		switch s {
		case "":
		case "heuristic", "semantic":
			suites[s] = true
		case "content":
			return nil, MLScoreOutput{}, errors.New("suites: content is not available in ml_score; use ml_probe for capability checks")
		default:
			return nil, MLScoreOutput{}, fmt.Errorf("suites: unknown suite %q; use heuristic, semantic or both (comma-separated)", s)
		}
	}
	if len(suites) == 0 {
		suites["heuristic"] = true
	}
	var out MLScoreOutput
	if suites["heuristic"] {
		h := ml.Heuristic(in.Prompt, in.Response)
		out.Heuristic = &MLHeuristicScores{LengthFit: h.LengthFit, Structure: h.Structure, Repetition: h.Repetition, Refusal: h.Refusal,
			FormatCompliance: h.FormatCompliance, Coverage: h.Coverage, Overall: h.Overall, ExpectedFormat: h.ExpectedFormat, Words: h.Words}
	}
	if suites["semantic"] {
		judge, err := m.judge(ctx, m.state())
		if err != nil {
			return nil, MLScoreOutput{}, err
		}
		sc, err := ml.Judge(ctx, judge, in.Prompt, in.Response)
		if err != nil {
			return nil, MLScoreOutput{}, err
		}
		v := MLSemanticScores(sc)
		out.Semantic = &v
	}
	return nil, out, nil
}

// judge is the configured judge backend, else the default one; it must answer its live check.
func (m *MLTools) judge(ctx context.Context, st *mlState) (*ml.Backend, error) {
	name := st.opts.JudgeBackend
	if name == "" {
		name = st.reg.Default(ctx)
	}
	if name == "" {
		return nil, errors.New("suites: semantic needs a judge backend and none is configured; set OLLAMA_HOST, OPENAI_BASE_URL or [[ml.backends]] (and [ml] judge_backend), or score with suites=heuristic")
	}
	b, err := st.reg.Get(name)
	if err != nil {
		return nil, err
	}
	if err := st.reg.Check(ctx, b); err != nil {
		return nil, fmt.Errorf("suites: semantic needs a judge backend and %s (%s) is not available: %v; start it, set [ml] judge_backend, or score with suites=heuristic", b.Name, b.URL, err)
	}
	return b, nil
}

// --- ml_probe -----------------------------------------------------------------------------------

// MLProbeInput is ml_probe's arguments: the backend to probe and the categories of capability
// probes to run.
type MLProbeInput struct {
	Backend    string `json:"backend,omitempty" jsonschema:"backend name (see ml_backends); default: the default backend"`
	Categories string `json:"categories,omitempty" jsonschema:"comma-separated categories to run: reasoning, math, coding, instruction, knowledge, safety; default all"`
}

// MLProbeResultItem is one probe's outcome in ml_probe's result.
type MLProbeResultItem struct {
	ID       string `json:"id" jsonschema:"probe identifier"`
	Category string `json:"category" jsonschema:"probe category"`
	Response string `json:"response" jsonschema:"backend response, or an error prefixed with \"error: \""`
	Passed   bool   `json:"passed" jsonschema:"whether the response passed the probe's automatic check"`
}

// MLProbeOutput is ml_probe's result.
type MLProbeOutput struct {
	Total   int                 `json:"total" jsonschema:"number of probes executed"`
	Results []MLProbeResultItem `json:"results" jsonschema:"per-probe results, in probe order"`
}

func (m *MLTools) probe(ctx context.Context, req *sdk.CallToolRequest, in MLProbeInput) (*sdk.CallToolResult, MLProbeOutput, error) {
	probes, err := ml.SelectProbes(in.Categories)
	if err != nil {
		return nil, MLProbeOutput{}, err
	}
	st := m.state()
	b, err := st.reg.Resolve(ctx, in.Backend)
	if err != nil {
		return nil, MLProbeOutput{}, err
	}
	tok := req.Params.GetProgressToken()
	var (
		mu              sync.Mutex // serialises notifications, so progress only grows
		finished, beats int
	)
	notify := func(done bool, msg string) {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case done:
			finished, beats = finished+1, 0
		case beats >= maxBeats:
			return
		default:
			beats++
		}
		if tok == nil || req.Session == nil {
			return
		}
		_ = req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: tok, Progress: progressValue(finished, beats),
			Total: float64(len(probes)), Message: msg})
	}
	hbDone := make(chan struct{})
	hbStopped := make(chan struct{})
	go func() { // heartbeat: probes can take minutes each on a slow model
		defer close(hbStopped)
		t := time.NewTicker(progressHeartbeat)
		defer t.Stop()
		for {
			select {
			case <-hbDone:
				return
			case <-t.C:
				notify(false, "probing "+b.Name)
			}
		}
	}()
	results := ml.RunProbes(ctx, b, "", probes, func(r ml.ProbeResult) {
		m.recordGeneration(st.opts, "ml_probe", b.Name, r.Gen, r.Err)
		notify(true, fmt.Sprintf("%s: %s done", b.Name, r.ID))
	})
	close(hbDone)
	<-hbStopped
	out := MLProbeOutput{Total: len(results), Results: make([]MLProbeResultItem, len(results))}
	for i, r := range results {
		out.Results[i] = MLProbeResultItem{ID: r.ID, Category: r.Category, Response: r.Response, Passed: r.Passed}
	}
	return nil, out, nil
}

// --- ml_status ----------------------------------------------------------------------------------

// MLStatusInput is ml_status's arguments: the InfluxDB to read training and generation status from,
// overriding the [ml] config.
type MLStatusInput struct {
	InfluxURL string `json:"influx_url,omitempty" jsonschema:"InfluxDB 1.x URL; default from [ml] influx_url, else http://localhost:8086"`
	InfluxDB  string `json:"influx_db,omitempty" jsonschema:"database name; default from [ml] influx_db, else lem"`
}

// MLStatusOutput is ml_status's result: a report formatted for reading, not parsing.
type MLStatusOutput struct {
	Status string `json:"status" jsonschema:"formatted multi-line status report"`
}

func (m *MLTools) status(ctx context.Context, _ *sdk.CallToolRequest, in MLStatusInput) (*sdk.CallToolResult, MLStatusOutput, error) {
	u, db, o := in.InfluxURL, in.InfluxDB, m.state().opts
	if u == "" {
		u = o.InfluxURL
	}
	if db == "" {
		db = o.InfluxDB
	}
	ix, err := ml.NewInflux(u, db)
	if err != nil {
		return nil, MLStatusOutput{}, err
	}
	rep, err := ix.Status(ctx)
	if err != nil {
		return nil, MLStatusOutput{}, err
	}
	return nil, MLStatusOutput{Status: rep.Format()}, nil
}

// --- ml_backends and the dashboard feed ---------------------------------------------------------

func (m *MLTools) list(ctx context.Context) MLBackendsOutput {
	st := m.state()
	sts := st.reg.Statuses(ctx)
	out := MLBackendsOutput{Backends: make([]MLBackendInfo, len(sts)), Default: st.reg.Default(ctx)}
	for i, st := range sts {
		out.Backends[i] = MLBackendInfo{Name: st.Name, Available: st.Available, Kind: st.Kind, URL: st.URL, Model: st.Model, Error: st.Error, Assumed: st.Assumed}
	}
	m.publish(st, out)
	return out
}

func (m *MLTools) backends(ctx context.Context, _ *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, MLBackendsOutput, error) {
	return nil, m.list(ctx), nil
}

// publish sends the backend list on hub channel "ml" when it changed. A list of a registry that
// SetML has since replaced (a call that started before) is not published: it would take the
// dashboard back to the old backends until the next re-check.
func (m *MLTools) publish(st *mlState, out MLBackendsOutput) {
	if m.hub == nil {
		return
	}
	m.mu.Lock()
	if m.cur.Load() != st {
		m.mu.Unlock()
		return
	}
	changed := m.last == nil || !reflect.DeepEqual(*m.last, out)
	m.last = &out
	m.mu.Unlock()
	if changed {
		m.hub.Publish(channel.ML, wshub.TypeEvent, out)
	}
}

// wireFeed serves hub channel "ml": a snapshot of the backend list, then an event whenever a
// periodic re-check (while the hub has clients) or an ml_backends call finds it changed.
func (m *MLTools) wireFeed() {
	if m.hub == nil {
		return
	}
	// The snapshot is checked afresh (within the registry's cache): the periodic re-check below
	// only runs while some client is connected to the hub, so the last list may be old.
	m.hub.SetSnapshotProvider(channel.ML, func(string) (any, bool) {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		return m.list(ctx), true
	})
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		t := time.NewTicker(m.interval)
		defer t.Stop()
		for {
			if m.hub.Stats().Clients > 0 { // nobody watching: no need to poke the backends
				ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
				m.list(ctx)
				cancel()
			}
			select {
			case <-m.stop:
				return
			case <-t.C:
			case <-m.refresh:
			}
		}
	}()
}

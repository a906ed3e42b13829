//go:build linux

package clients_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
)

// A scripted stand-in for the model APIs the agent CLIs speak: Anthropic Messages (Claude Code),
// Gemini generateContent/streamGenerateContent (Gemini CLI) and OpenAI Responses (Codex), on
// 127.0.0.1. It plays one fixed conversation, whatever the prompt says:
//
//	turn 1: call <…>file_write {path: hello.txt, content: <nonce>}
//	turn 2: call <…>file_read {path: hello.txt}
//	turn 3: call <…>lang_list {}            (a tool without arguments)
//	turn 4: answer with a final text
//
// The turn is the number of tool results already in the conversation the CLI sends, so the
// script needs no server-side state, and every result the CLI sends back to the model is
// recorded: that is what the test asserts on, with the file on the hub side. The hub's tools
// are found by suffix in the tool list of the request, so each CLI's naming
// (mcp__switchboard__file_write, mcp_switchboard_file_write, …) works unchanged. Requests that
// offer no file_write tool are the CLIs' side requests (titles, quota probes, classifiers,
// token counts): they get a short, well-formed answer.

const (
	scriptPath  = "hello.txt"
	noArgTool   = "lang_list"
	finalPrefix = "All three Switchboard tools answered: "
)

// toolResult is one tool result the CLI sent back to the model.
type toolResult struct {
	Name    string // the tool name as the CLI exposed it
	Text    string // every string in the result, joined, plus its raw JSON
	IsError bool   // the API's own error flag (is_error, an error key, …)
}

// modelStub is one scripted model server. All fields behind mu.
type modelStub struct {
	t     *testing.T
	nonce string
	srv   *httptest.Server

	mu       sync.Mutex
	requests []string     // "METHOD path" of every request, in order
	unknown  []string     // requests the stub did not recognise
	tools    []string     // tool names offered in the last scripted request
	results  []toolResult // tool results in the last scripted request
	turns    int          // scripted (main conversation) requests answered
	final    bool         // the final text was sent
	notes    []string     // what the stub noticed about the client

	// deferred: the MCP tools Claude Code named as deferred (behind ToolSearch) in the last
	// request of the conversation.
	deferred []string

	// scenario, when set, replaces the file_write conversation (modes_test.go).
	scenario *scenario
}

// scenario is another scripted conversation. anchor is the tool (by suffix) whose presence in a
// request's tool list marks the main conversation; load lists the tools (by suffix) a model
// loads through Claude Code's ToolSearch when it defers them; step decides the answer from the
// tool results so far (name "" with text: the final answer). step runs with m.mu held.
type scenario struct {
	anchor string
	load   []string
	step   func(m *modelStub, tools []string, results []toolResult) (name string, args map[string]any, text string)
}

func newModelStub(t *testing.T, nonce string) *modelStub {
	m := &modelStub{t: t, nonce: nonce}
	m.srv = httptest.NewServer(http.HandlerFunc(m.serve))
	t.Cleanup(m.srv.Close)
	return m
}

func (m *modelStub) URL() string { return m.srv.URL }

// next decides the scripted answer for a main-conversation request: a tool call (name, args)
// or, with name "", the final text.
func (m *modelStub) next(tools []string, results []toolResult) (name string, args map[string]any, text string, ok bool) {
	if sc := m.scenario; sc != nil {
		if pickTool(tools, sc.anchor) == "" {
			return "", nil, "", false
		}
		m.mu.Lock()
		defer m.mu.Unlock()
		m.tools, m.results = tools, results
		m.turns++
		name, args, text = sc.step(m, tools, results)
		m.final = m.final || name == ""
		return name, args, text, true
	}
	write, read, noarg := pickTool(tools, "file_write"), pickTool(tools, "file_read"), pickTool(tools, noArgTool)
	if write == "" {
		return "", nil, "", false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.tools, m.results = tools, results
	m.turns++
	switch len(results) {
	case 0:
		return write, map[string]any{"path": scriptPath, "content": m.nonce}, "", true
	case 1:
		return read, map[string]any{"path": scriptPath}, "", true
	case 2:
		if noarg == "" {
			m.final = true
			return "", nil, "no " + noArgTool + " tool offered", true
		}
		return noarg, map[string]any{}, "", true
	default:
		m.final = true
		return "", nil, finalPrefix + m.nonce, true
	}
}

// pickTool returns the offered tool whose name ends in suffix after a separator (or is suffix),
// preferring one that names switchboard.
func pickTool(tools []string, suffix string) string {
	var found string
	for _, n := range tools {
		if n != suffix && !strings.HasSuffix(n, "_"+suffix) && !strings.HasSuffix(n, "."+suffix) && !strings.HasSuffix(n, "/"+suffix) {
			continue
		}
		if strings.Contains(strings.ToLower(n), "switchboard") {
			return n
		}
		if found == "" {
			found = n
		}
	}
	return found
}

func (m *modelStub) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	m.mu.Lock()
	m.requests = append(m.requests, r.Method+" "+r.URL.Path)
	n := len(m.requests)
	m.mu.Unlock()
	if dir := os.Getenv("SWITCHBOARD_MATRIX_DUMP"); dir != "" { // debugging: every request body
		_ = os.MkdirAll(dir, 0o755)
		_ = os.WriteFile(filepath.Join(dir, fmt.Sprintf("%s-%02d.txt", strings.ReplaceAll(m.t.Name(), "/", "_"), n)),
			append([]byte(r.Method+" "+r.URL.String()+"\n"+fmt.Sprint(r.Header)+"\n\n"), body...), 0o644)
	}
	p := r.URL.Path
	switch {
	case r.Method == http.MethodPost && strings.HasSuffix(p, "/messages/count_tokens"):
		writeJSON(w, map[string]any{"input_tokens": 42})
	case r.Method == http.MethodPost && strings.HasSuffix(p, "/messages"):
		m.anthropic(w, body)
	case r.Method == http.MethodPost && strings.Contains(p, ":streamGenerateContent"):
		m.gemini(w, r, body, true)
	case r.Method == http.MethodPost && strings.Contains(p, ":generateContent"):
		m.gemini(w, r, body, false)
	case r.Method == http.MethodPost && strings.Contains(p, ":countTokens"):
		writeJSON(w, map[string]any{"totalTokens": 42})
	case r.Method == http.MethodPost && strings.HasSuffix(p, "/responses"):
		m.responses(w, body)
	case r.Method == http.MethodGet && strings.HasSuffix(p, "/models"):
		writeJSON(w, map[string]any{"object": "list", "data": []any{}, "models": []any{}})
	default:
		m.mu.Lock()
		m.unknown = append(m.unknown, fmt.Sprintf("%s %s %.200s", r.Method, r.URL.String(), body))
		m.mu.Unlock()
		http.Error(w, `{"error":{"message":"not served by the Switchboard test model stub"}}`, http.StatusNotFound)
	}
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// sse writes one server-sent event (event may be empty) and flushes it.
func sse(w http.ResponseWriter, event string, v any) {
	b, _ := json.Marshal(v)
	if event != "" {
		fmt.Fprintf(w, "event: %s\n", event)
	}
	fmt.Fprintf(w, "data: %s\n\n", b)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

func startSSE(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
}

// flatten collects every string in a decoded JSON value, and the value's JSON, into one text the
// assertions search.
func flatten(v any) string {
	var sb strings.Builder
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			sb.WriteString(x)
			sb.WriteByte('\n')
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for _, k := range keys {
				walk(x[k])
			}
		}
	}
	walk(v)
	raw, _ := json.Marshal(v)
	sb.Write(raw)
	return sb.String()
}

// --- Anthropic Messages (Claude Code) ---------------------------------------------------------

func (m *modelStub) anthropic(w http.ResponseWriter, body []byte) {
	var req struct {
		Model    string `json:"model"`
		Stream   bool   `json:"stream"`
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var tools []string
	for _, t := range req.Tools {
		tools = append(tools, t.Name)
	}
	names := map[string]string{} // tool_use id → name
	var results []toolResult
	searched := false // a ToolSearch result is in the conversation
	for _, msg := range req.Messages {
		var blocks []map[string]any
		if json.Unmarshal(msg.Content, &blocks) != nil {
			continue // a plain string
		}
		for _, b := range blocks {
			switch b["type"] {
			case "tool_use":
				id, _ := b["id"].(string)
				names[id], _ = b["name"].(string)
			case "tool_result":
				id, _ := b["tool_use_id"].(string)
				isErr, _ := b["is_error"].(bool)
				if names[id] == toolSearch {
					searched = true
					continue
				}
				results = append(results, toolResult{Name: names[id], Text: flatten(b["content"]), IsError: isErr})
			}
		}
	}
	// Claude Code defers MCP tools when there are many (ours: 60+): the request names them in
	// the system prompt and offers ToolSearch, which the model calls with "select:<names>" to
	// load their schemas before it may call them. The script does what a model does.
	var name string
	var args map[string]any
	var text string
	var ok bool
	anchor, load := "file_write", []string{"file_write", "file_read", noArgTool}
	if m.scenario != nil {
		anchor, load = m.scenario.anchor, m.scenario.load
	}
	deferred := deferredTools.FindAllString(string(body), -1)
	if pickTool(tools, anchor) != "" || pickTool(deferred, anchor) != "" {
		m.mu.Lock()
		m.deferred = deferred
		m.mu.Unlock()
	}
	if pickTool(tools, anchor) == "" && slices.Contains(tools, toolSearch) && pickTool(deferred, anchor) != "" {
		if !searched {
			m.mu.Lock()
			m.notes = append(m.notes, "Claude Code deferred the MCP tools behind ToolSearch")
			m.mu.Unlock()
			name, ok = toolSearch, true
			var sel []string
			for _, suffix := range load {
				if n := pickTool(deferred, suffix); n != "" {
					sel = append(sel, n)
				}
			}
			args = map[string]any{"query": "select:" + strings.Join(sel, ","), "max_results": 5}
		} else {
			name, args, text, ok = m.next(append(tools, deferred...), results)
		}
	} else {
		name, args, text, ok = m.next(tools, results)
	}
	if !ok {
		text = "Switchboard client test" // titles, quota probes, summaries
	}
	m.mu.Lock()
	id := fmt.Sprintf("msg_%d", len(m.requests))
	m.mu.Unlock()
	var content []map[string]any
	stop := "end_turn"
	if name != "" {
		stop = "tool_use"
		content = append(content, map[string]any{"type": "tool_use", "id": "toolu_" + id, "name": name, "input": args})
	} else {
		content = append(content, map[string]any{"type": "text", "text": text})
	}
	usage := map[string]any{"input_tokens": 10, "output_tokens": 5, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
	if !req.Stream {
		writeJSON(w, map[string]any{"id": id, "type": "message", "role": "assistant", "model": req.Model, "content": content,
			"stop_reason": stop, "stop_sequence": nil, "usage": usage})
		return
	}
	startSSE(w)
	sse(w, "message_start", map[string]any{"type": "message_start", "message": map[string]any{"id": id, "type": "message", "role": "assistant",
		"model": req.Model, "content": []any{}, "stop_reason": nil, "stop_sequence": nil, "usage": usage}})
	if name != "" {
		sse(w, "content_block_start", map[string]any{"type": "content_block_start", "index": 0,
			"content_block": map[string]any{"type": "tool_use", "id": "toolu_" + id, "name": name, "input": map[string]any{}}})
		a, _ := json.Marshal(args)
		sse(w, "content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
			"delta": map[string]any{"type": "input_json_delta", "partial_json": string(a)}})
	} else {
		sse(w, "content_block_start", map[string]any{"type": "content_block_start", "index": 0,
			"content_block": map[string]any{"type": "text", "text": ""}})
		sse(w, "content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
			"delta": map[string]any{"type": "text_delta", "text": text}})
	}
	sse(w, "content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
	sse(w, "message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": 5}})
	sse(w, "message_stop", map[string]any{"type": "message_stop"})
}

// --- Gemini generateContent / streamGenerateContent (Gemini CLI) ------------------------------

func (m *modelStub) gemini(w http.ResponseWriter, r *http.Request, body []byte, stream bool) {
	var req struct {
		Contents []struct {
			Role  string           `json:"role"`
			Parts []map[string]any `json:"parts"`
		} `json:"contents"`
		Tools []struct {
			FunctionDeclarations []struct {
				Name       string `json:"name"`
				Parameters struct {
					Properties map[string]any `json:"properties"`
				} `json:"parametersJsonSchema"`
			} `json:"functionDeclarations"`
		} `json:"tools"`
		GenerationConfig struct {
			ResponseMimeType   string         `json:"responseMimeType"`
			ResponseJSONSchema map[string]any `json:"responseJsonSchema"`
			ResponseSchema     map[string]any `json:"responseSchema"`
		} `json:"generationConfig"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var tools []string
	params := map[string]map[string]any{} // tool → its parameters' properties
	for _, t := range req.Tools {
		for _, f := range t.FunctionDeclarations {
			tools = append(tools, f.Name)
			params[f.Name] = f.Parameters.Properties
		}
	}
	var results []toolResult
	for _, c := range req.Contents {
		for _, p := range c.Parts {
			fr, ok := p["functionResponse"].(map[string]any)
			if !ok {
				continue
			}
			name, _ := fr["name"].(string)
			resp, _ := fr["response"].(map[string]any)
			_, isErr := resp["error"]
			results = append(results, toolResult{Name: name, Text: flatten(resp), IsError: isErr})
		}
	}
	name, args, text, ok := m.next(tools, results)
	var part map[string]any
	switch {
	case ok && name != "":
		// Gemini CLI adds a wait_for_previous parameter to every tool it declares (MCP tools
		// too) and its system prompt tells the model to set it to true on a call that depends
		// on an earlier one. The script does what the prompt asks: file_read and lang_list come
		// after the write.
		if _, has := params[name][waitForPrevious]; has && len(results) > 0 {
			args[waitForPrevious] = true
			m.mu.Lock()
			m.notes = append(m.notes, fmt.Sprintf("%s declared with %s; the model set it to true", name, waitForPrevious))
			m.mu.Unlock()
		}
		part = map[string]any{"functionCall": map[string]any{"name": name, "args": args}}
	case ok:
		part = map[string]any{"text": text}
	case req.GenerationConfig.ResponseMimeType == "application/json":
		// Side requests with a JSON schema (next-speaker check, model routing, …): a value that
		// fits the schema, choosing the first enum value.
		schema := req.GenerationConfig.ResponseJSONSchema
		if schema == nil {
			schema = req.GenerationConfig.ResponseSchema
		}
		b, _ := json.Marshal(sampleJSON(schema))
		part = map[string]any{"text": string(b)}
	default:
		part = map[string]any{"text": "Switchboard client test"}
	}
	resp := map[string]any{
		"candidates": []any{map[string]any{"content": map[string]any{"role": "model", "parts": []any{part}},
			"finishReason": "STOP", "index": 0}},
		"usageMetadata": map[string]any{"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
		"modelVersion":  "stub",
	}
	if !stream {
		writeJSON(w, resp)
		return
	}
	startSSE(w)
	sse(w, "", resp)
}

// sampleJSON returns a value that satisfies a (simple) JSON schema.
func sampleJSON(schema map[string]any) any {
	if schema == nil {
		return map[string]any{}
	}
	if e, ok := schema["enum"].([]any); ok && len(e) > 0 {
		return e[0]
	}
	typ, _ := schema["type"].(string)
	switch strings.ToLower(typ) {
	case "string":
		return "Switchboard client test"
	case "number", "integer":
		if v, ok := schema["minimum"].(float64); ok {
			return v
		}
		return 1
	case "boolean":
		return false
	case "array":
		return []any{}
	default:
		out := map[string]any{}
		props, _ := schema["properties"].(map[string]any)
		for k, v := range props {
			s, _ := v.(map[string]any)
			out[k] = sampleJSON(s)
		}
		return out
	}
}

// --- OpenAI Responses (Codex) -----------------------------------------------------------------

func (m *modelStub) responses(w http.ResponseWriter, body []byte) {
	var req struct {
		Model  string           `json:"model"`
		Stream bool             `json:"stream"`
		Input  []map[string]any `json:"input"`
		Tools  []map[string]any `json:"tools"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	// Codex offers an MCP server's tools in a namespace ({"type": "namespace", "name":
	// "mcp__switchboard", "tools": [{"name": "file_write", …}]}); the script names them
	// <namespace>__<tool> and calls them with the namespace and the tool's own name.
	var tools []string
	split := map[string][2]string{} // qualified name → namespace, name
	for _, t := range req.Tools {
		n, _ := t["name"].(string)
		sub, ok := t["tools"].([]any)
		if !ok {
			if n != "" {
				tools = append(tools, n)
			}
			continue
		}
		for _, st := range sub {
			sm, _ := st.(map[string]any)
			if sn, _ := sm["name"].(string); sn != "" {
				q := qualify(n, sn)
				tools = append(tools, q)
				split[q] = [2]string{n, sn}
			}
		}
	}
	names := map[string]string{}
	var results []toolResult
	for _, it := range req.Input {
		switch it["type"] {
		case "function_call":
			id, _ := it["call_id"].(string)
			ns, _ := it["namespace"].(string)
			n, _ := it["name"].(string)
			if ns != "" {
				n = qualify(ns, n)
			}
			names[id] = n
		case "function_call_output":
			id, _ := it["call_id"].(string)
			out := it["output"]
			isErr := false
			if om, ok := out.(map[string]any); ok {
				if s, ok := om["success"].(bool); ok && !s {
					isErr = true
				}
			}
			results = append(results, toolResult{Name: names[id], Text: flatten(out), IsError: isErr})
		}
	}
	name, args, text, ok := m.next(tools, results)
	if !ok {
		text = "Switchboard client test"
	}
	m.mu.Lock()
	id := fmt.Sprintf("resp_%d", len(m.requests))
	m.mu.Unlock()
	var item map[string]any
	if name != "" {
		a, _ := json.Marshal(args)
		item = map[string]any{"type": "function_call", "id": "fc_" + id, "call_id": "call_" + id, "name": name, "arguments": string(a), "status": "completed"}
		if nn, ok := split[name]; ok {
			item["namespace"], item["name"] = nn[0], nn[1]
		}
	} else {
		item = map[string]any{"type": "message", "id": "msg_" + id, "role": "assistant", "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": text, "annotations": []any{}}}}
	}
	usage := map[string]any{"input_tokens": 10, "output_tokens": 5, "total_tokens": 15,
		"input_tokens_details": map[string]any{"cached_tokens": 0}, "output_tokens_details": map[string]any{"reasoning_tokens": 0}}
	resp := map[string]any{"id": id, "object": "response", "model": req.Model, "status": "completed", "output": []any{item}, "usage": usage}
	if !req.Stream {
		writeJSON(w, resp)
		return
	}
	startSSE(w)
	sse(w, "response.created", map[string]any{"type": "response.created", "response": map[string]any{"id": id, "object": "response", "status": "in_progress", "output": []any{}}})
	sse(w, "response.output_item.added", map[string]any{"type": "response.output_item.added", "output_index": 0, "item": item})
	if name == "" {
		sse(w, "response.output_text.delta", map[string]any{"type": "response.output_text.delta", "item_id": "msg_" + id, "output_index": 0, "content_index": 0, "delta": text})
	}
	sse(w, "response.output_item.done", map[string]any{"type": "response.output_item.done", "output_index": 0, "item": item})
	sse(w, "response.completed", map[string]any{"type": "response.completed", "response": resp})
}

func qualify(namespace, name string) string {
	return strings.TrimSuffix(namespace, "__") + "__" + name
}

// report summarises what the stub saw, for failure messages.
func (m *modelStub) report() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var b bytes.Buffer
	fmt.Fprintf(&b, "model stub: %d requests (%s)\n", len(m.requests), strings.Join(m.requests, ", "))
	fmt.Fprintf(&b, "scripted turns: %d, final text sent: %v\n", m.turns, m.final)
	fmt.Fprintf(&b, "tools offered: %s\n", strings.Join(m.tools, " "))
	for i, r := range m.results {
		fmt.Fprintf(&b, "tool result %d (%s, error=%v): %.600s\n", i+1, r.Name, r.IsError, r.Text)
	}
	for _, n := range m.notes {
		fmt.Fprintf(&b, "note: %s\n", n)
	}
	for _, u := range m.unknown {
		fmt.Fprintf(&b, "unhandled: %s\n", u)
	}
	return b.String()
}

const (
	toolSearch      = "ToolSearch"
	waitForPrevious = "wait_for_previous"
)

var deferredTools = regexp.MustCompile(`mcp__[A-Za-z0-9_-]+?__[a-z_]+`)

var successTrue = regexp.MustCompile(`"?success"?\W{0,4}:\s*true`)

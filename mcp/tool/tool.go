// Package tool is the one way Switchboard declares an MCP tool: as a value (Tool), in a Group
// with its toolset, whose handlers are bound to the group's dependencies when a hub is composed.
// Every tool, in mcp/ and in subsystems such as mcp/ide, is declared through Func (or New), so
// every tool decodes its arguments the same way and answers the same mistakes with the same plain
// errors ("path: required; ..."). The declarations exist without a server: the tool reference
// (docs/tools.md) and the schema snapshots are made from them alone.
package tool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/internal/jsonobj"
	"github.com/switchboard-hub/switchboard/mcp/toolcall"
)

// New declares a tool whose handler needs nothing from a group (conformance fixtures, tests):
// the tool is bound at once. See Func for the general case.
func New[In, Out any](def sdk.Tool, h sdk.ToolHandlerFor[In, Out]) Tool {
	t := declare[In, Out](def)
	t.Handler = typedHandler(t.Def, h)
	return t
}

// Func declares a tool whose handler is a method of its group's dependencies D, usually as a
// method expression: tool.Func(def, (*fileTools).fileRead). The declaration is a value: its
// schemas, toolset (given by the Group it joins) and workspace declarations exist without a
// server or the dependencies, so listings and docs/tools.md need no running hub; Group.Bind
// builds the handler from the dependencies when a hub is composed.
func Func[D, In, Out any](def sdk.Tool, h func(D, context.Context, *sdk.CallToolRequest, In) (*sdk.CallToolResult, Out, error)) Tool {
	t := declare[In, Out](def)
	name := t.Def.Name
	t.bind = func(deps any) sdk.ToolHandler {
		d, ok := deps.(D)
		if !ok {
			panic(fmt.Sprintf("tool %s: bound to %T, declared for %v", name, deps, reflect.TypeFor[D]()))
		}
		def := t.Def
		return typedHandler(def, func(ctx context.Context, req *sdk.CallToolRequest, in In) (*sdk.CallToolResult, Out, error) {
			return h(d, ctx, req, in)
		})
	}
	return t
}

// Add declares a tool with New and adds it to server directly, outside any inventory (the
// conformance fixtures, tests of this package).
func Add[In, Out any](server *sdk.Server, def *sdk.Tool, h sdk.ToolHandlerFor[In, Out]) {
	t := New(*def, h)
	server.AddTool(t.Def, t.Handler)
}

// declare builds a tool's definition from its input and output types: generated schemas made
// portable (see Portable), and the workspace declarations of the input type.
func declare[In, Out any](def sdk.Tool) Tool {
	in, err := jsonschema.ForType(reflect.TypeFor[In](), schemaOptions())
	if err != nil {
		panic(fmt.Sprintf("tool %s: input schema: %v", def.Name, err))
	}
	out, err := jsonschema.ForType(reflect.TypeFor[Out](), schemaOptions())
	if err != nil {
		panic(fmt.Sprintf("tool %s: output schema: %v", def.Name, err))
	}
	Portable(in)
	Portable(out)
	def.InputSchema, def.OutputSchema = in, out
	ws := declaredWorkspace(reflect.TypeFor[In]())
	return Tool{Def: &def, Workspace: ws.uses, PathArgs: ws.paths}
}

// typedHandler is the raw handler of a typed tool, like go-sdk's AddTool with the same generated
// schemas, but it decodes the arguments once (encoding/json, unknown keys refused, required keys
// checked) and encodes the output once, instead of go-sdk's JSON round trips through
// map[string]any for schema validation of input and output on every call. Those round trips
// also produce errors such as `validating "arguments": validating root: ...` that name no field
// a caller recognises; here every error starts with the JSON key at fault and says what to do.
//
// A handler's error becomes a tool error (IsError, text = the error), never a JSON-RPC error, so
// the model sees it and can correct the call.
func typedHandler[In, Out any](def *sdk.Tool, h sdk.ToolHandlerFor[In, Out]) sdk.ToolHandler {
	in := def.InputSchema.(*jsonschema.Schema)
	fillOut := hasNilable(reflect.TypeFor[Out](), map[reflect.Type]bool{})
	required := in.Required
	known := make(map[string]bool, len(in.Properties))
	for k := range in.Properties {
		known[k] = true
	}
	name := def.Name
	return func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		var args In
		raw := req.Params.Arguments
		if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
			raw = []byte("{}")
		}
		// The keys (unknown and required ones) come from the call's members as the hub's outer
		// layer split them once (toolcall); a call that did not come through the hub's
		// middleware is walked here, in place (jsonobj) when the object is simple. Then one
		// typed decode.
		var ignored []string
		var err error
		if keys, ok := splitKeys(ctx); ok {
			ignored, err = checkKeyList(keys, known, required)
		} else {
			ignored, err = checkKeys(raw, known, required)
		}
		if err != nil {
			return Error(err), nil
		}
		if err := json.Unmarshal(raw, &args); err != nil {
			var te *json.UnmarshalTypeError
			if errors.As(err, &te) && te.Field != "" {
				return Error(fmt.Errorf("%s: want %s, got a JSON %s", te.Field, jsonKind(te.Type), te.Value)), nil
			}
			return Error(fmt.Errorf("arguments: %v", err)), nil
		}
		res, outv, err := h(ctx, req, args)
		if err != nil {
			res = Error(err)
			if ignored != nil {
				warnIgnored(ctx, req, res, ignored, in.Properties)
			}
			return res, nil
		}
		if fillOut {
			// The schema promises arrays and objects, never null (see Portable).
			fillNil(reflect.ValueOf(&outv).Elem())
		}
		if res == nil {
			res = &sdk.CallToolResult{}
		}
		// The typed value, not json.RawMessage(b): go-sdk marshals the result again, and
		// encoding/json re-scans a RawMessage byte by byte (about 10 ns/byte), while a struct
		// encodes its strings on a fast path. For a 4 KiB file_read this was ~40 µs per call.
		res.StructuredContent = outv
		if res.Content == nil {
			// The text is the structured content's JSON unless the handler wrote its own (a
			// compact listing, as code_references does): then the output is encoded once.
			b, err := json.Marshal(outv)
			if err != nil {
				return nil, fmt.Errorf("marshal %s output: %w", name, err)
			}
			res.Content = []sdk.Content{&sdk.TextContent{Text: string(b)}}
		}
		if ignored != nil {
			warnIgnored(ctx, req, res, ignored, in.Properties)
		}
		return res, nil
	}
}

// InWorkspace is embedded in a tool's input type to declare that the tool works in the caller's
// workspace although no argument names a path (file_patch's patch text, notes, a browser
// navigation to a file:// URL): a roots client is asked about its root before such a call runs.
type InWorkspace struct{}

// A field tagged `workspace:"path"` (a string or a list of strings) holds paths in the caller's
// workspace. The declaration, not the argument's name or description, decides that the tool
// needs the caller's workspace (root consent), which arguments policy path rules match in
// canonical form, and which absolute paths pick a root. Paths relative to something else (a
// repository's pathspecs) and names that are only inspected (lang_detect) are not tagged.
const workspaceTag = "workspace"

type workspaceDecl struct {
	uses  bool
	paths []string
}

// declaredWorkspace reads an input type's declarations: fields tagged workspace:"path" (by
// their JSON name) and an embedded InWorkspace.
func declaredWorkspace(t reflect.Type) workspaceDecl {
	var d workspaceDecl
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return d
	}
	for f := range t.Fields() {
		if f.Anonymous && f.Type == reflect.TypeFor[InWorkspace]() {
			d.uses = true
			continue
		}
		switch f.Tag.Get(workspaceTag) {
		case "":
			continue
		case "path":
		default:
			panic(fmt.Sprintf("field %s: workspace tag %q: the only declaration is workspace:\"path\"", f.Name, f.Tag.Get(workspaceTag)))
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" {
			name = f.Name
		}
		d.paths = append(d.paths, name)
		d.uses = true
	}
	return d
}

// IgnoredMetaKey is the result _meta key listing the arguments a call sent that the tool does
// not take (the audit log records them).
const IgnoredMetaKey = "switchboard/ignoredArguments"

// checkKeys returns the arguments the tool does not take and reports the first missing required
// one. Unknown arguments are not an error: real clients add their own (Gemini CLI sends
// wait_for_previous with every call), and refusing them breaks every call such a client makes.
// They are ignored and named in a warning (warnIgnored).
func checkKeys(raw json.RawMessage, known map[string]bool, required []string) (ignored []string, err error) {
	var present [16]bool // required keys seen, by index; tools have fewer (small frame: deep in the call)
	simple := len(required) <= len(present) && jsonobj.Members(raw, func(k, _ []byte) {
		if !known[string(k)] {
			ignored = append(ignored, string(k))
			return
		}
		for i, r := range required {
			if r == string(k) {
				present[i] = true
			}
		}
	})
	if simple {
		for i, k := range required {
			if !present[i] {
				return nil, fmt.Errorf("%s: required; see the tool's input schema", k)
			}
		}
		return ignored, nil
	}
	ignored = nil
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(raw, &keys); err != nil {
		return nil, fmt.Errorf("arguments: must be a JSON object (%v)", err)
	}
	for k := range keys {
		if !known[k] {
			ignored = append(ignored, k)
		}
	}
	slices.Sort(ignored)
	for _, k := range required {
		if _, ok := keys[k]; !ok {
			return nil, fmt.Errorf("%s: required; see the tool's input schema", k)
		}
	}
	return ignored, nil
}

// splitKeys returns the argument names of the call in ctx, as the hub's outer layer split them,
// when it did (ok false: the arguments were not split, or are not an object whose members could
// be; checkKeys then reads them and says what is wrong).
func splitKeys(ctx context.Context) ([][]byte, bool) {
	c, ok := toolcall.Carried(ctx)
	if !ok {
		return nil, false
	}
	return c.Keys()
}

// checkKeyList is checkKeys over argument names already split.
func checkKeyList(keys [][]byte, known map[string]bool, required []string) (ignored []string, err error) {
	for _, k := range keys {
		if !known[string(k)] {
			ignored = append(ignored, string(k))
		}
	}
	for _, r := range required {
		if !slices.ContainsFunc(keys, func(k []byte) bool { return string(k) == r }) {
			return nil, fmt.Errorf("%s: required; see the tool's input schema", r)
		}
	}
	return ignored, nil
}

// warnIgnored tells the client which arguments were ignored: a warning line in the result
// (what models and most clients show), a logging notification (clients that show server logs)
// and the result's _meta (for the audit log).
func warnIgnored(ctx context.Context, req *sdk.CallToolRequest, res *sdk.CallToolResult, ignored []string, props map[string]*jsonschema.Schema) {
	takes := "no arguments"
	if len(props) > 0 {
		takes = keyList(props)
	}
	msg := fmt.Sprintf("warning: %s ignored %s %s: not an argument of this tool (it takes %s)",
		req.Params.Name, plural(len(ignored), "argument", "arguments"), strings.Join(ignored, ", "), takes)
	res.Content = append(res.Content, &sdk.TextContent{Text: msg})
	if res.Meta == nil {
		res.Meta = sdk.Meta{}
	}
	res.Meta[IgnoredMetaKey] = ignored
	if req.Session != nil {
		// The session's level (logging/setLevel), not the call's: go-sdk reads a per-request
		// level from the call's context, which clients that set a session level leave empty.
		_ = req.Session.Log(context.Background(), &sdk.LoggingMessageParams{Level: "warning", Logger: "switchboard", Data: msg})
	}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// ToolsetMetaKey is the tool definition's _meta key naming its toolset.
const ToolsetMetaKey = "switchboard/toolset"

// ToolsetOf is the toolset a tool definition declares ("" for none).
func ToolsetOf(t *sdk.Tool) string {
	if t == nil {
		return ""
	}
	s, _ := t.Meta[ToolsetMetaKey].(string)
	return s
}

// jsonKind names a Go type the way a JSON caller thinks of it.
func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return t.String()
}

// keyList names a tool's arguments for error messages, sorted.
func keyList(props map[string]*jsonschema.Schema) string {
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return strings.Join(keys, ", ")
}

// ErrorText is the tool result for a call the hub answers in the tool's place (a refusal):
// IsError set, msg as content. The model reads it; the session lives on.
func ErrorText(msg string) *sdk.CallToolResult {
	return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: msg}}}
}

// Error is the tool result for a failed call: IsError set and the error's text as content.
func Error(err error) *sdk.CallToolResult {
	r := &sdk.CallToolResult{}
	r.SetError(err)
	return r
}

func ptr[T any](v T) *T { return &v }

// Annotation presets. Every tool states whether it only reads, whether it can destroy data,
// whether repeating it is harmless, and whether it reaches outside the machine. The audit log
// derives its level from them: a tool not annotated read-only is logged at Security level.

// ReadOnly annotates a tool that only reads local state.
func ReadOnly(title string) *sdk.ToolAnnotations {
	return &sdk.ToolAnnotations{Title: title, ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: ptr(false)}
}

// Write annotates a tool that changes local state.
func Write(title string, destructive, idempotent bool) *sdk.ToolAnnotations {
	return &sdk.ToolAnnotations{Title: title, DestructiveHint: ptr(destructive), IdempotentHint: idempotent, OpenWorldHint: ptr(false)}
}

// OpenWorld marks annotations of a tool that reaches a service outside the hub (a backend, a
// browser, the network). It returns a for chaining.
func OpenWorld(a *sdk.ToolAnnotations) *sdk.ToolAnnotations {
	a.OpenWorldHint = ptr(true)
	return a
}

// InputRequired is a multi round-trip answer (protocol 2026-07-28): the call did not run yet,
// the client puts the questions in asks to its user and calls again with the answers and state.
// go-sdk's result type field is unexported; its JSON form is the supported way to set it.
func InputRequired(asks sdk.InputRequestMap, state string) (*sdk.CallToolResult, error) {
	ir, err := json.Marshal(asks)
	if err != nil {
		return nil, err
	}
	raw, err := json.Marshal(struct {
		Content       []any           `json:"content"`
		InputRequests json.RawMessage `json:"inputRequests"`
		RequestState  string          `json:"requestState"`
		ResultType    string          `json:"resultType"`
	}{[]any{}, ir, state, "input_required"})
	if err != nil {
		return nil, err
	}
	var res sdk.CallToolResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, err
	}
	res.Content = []sdk.Content{}
	return &res, nil
}

// Package dashcontrol declares the dashboard's controls — switch a transport, start a process,
// approve a server, save a settings section — once each: the name the Wails binding and the
// TypeScript client call it by, its HTTP route, its arguments in order (and where each travels
// over HTTP), its result and the function that does it. From one table (app/controls.go) the
// HTTP API is served generically (Route.Serve), the Wails bindings call through it (Invoke), and
// build/gencontrols writes the binding methods and the TypeScript client, so adding a control is
// one entry instead of five hand-kept copies.
//
// The arguments are typed (Param[T]) and Call0 … Call3 take them with the function, so the
// compiler checks a declaration against the method it calls.
package dashcontrol

import (
	"fmt"
	"reflect"
	"strings"
)

// Source says where an argument travels over HTTP.
type Source int

const (
	// SourcePath is a wildcard of the route: {name} in /api/servers/{name}.
	SourcePath Source = iota
	// SourceBodyField is one field of the JSON body object: {"enabled": true}.
	SourceBodyField
	// SourceBody is the whole JSON body: a struct such as PolicyInput.
	SourceBody
	// SourceQueryParam is one query parameter: ?lines=50.
	SourceQueryParam
	// SourceQuery is a struct whose fields are query parameters, by their JSON names: ?client=…&limit=….
	SourceQuery
)

// String names the source as error messages and the generated clients say it.
func (s Source) String() string {
	switch s {
	case SourcePath:
		return "path"
	case SourceBodyField:
		return "body field"
	case SourceBody:
		return "body"
	case SourceQueryParam:
		return "query parameter"
	case SourceQuery:
		return "query"
	}
	return fmt.Sprintf("Source(%d)", int(s))
}

// Arg describes one argument of a control, in the order its method takes it.
type Arg struct {
	// Name is the parameter's name in the Go binding and the TypeScript method, and over HTTP the
	// path wildcard, the body field's JSON key or the query parameter (unused for SourceBody and
	// SourceQuery, whose fields carry their own names).
	Name   string
	Type   reflect.Type
	Source Source
	// Required (body fields only): an absent or null field is refused, naming it, instead of
	// passing the zero value on — for switches, where a missing "enabled" must not mean false.
	Required bool
	// Default (query parameters only): the value when the parameter is absent or empty (nil: the
	// zero value). The TypeScript client leaves out a value equal to it.
	Default any
	// Values (strings only): what the dashboard may send; the TypeScript parameter is their union.
	// The Controller still checks the value: this only types the client.
	Values []string
}

// Param is an argument being declared, typed so that Call1 … Call3 check it against the
// function's parameter.
type Param[T any] struct{ arg Arg }

func param[T any](name string, src Source) Param[T] {
	return Param[T]{Arg{Name: name, Type: reflect.TypeFor[T](), Source: src}}
}

// Path declares an argument taken from the route's {name} wildcard.
func Path[T any](name string) Param[T] { return param[T](name, SourcePath) }

// BodyField declares an argument taken from the JSON body's field name.
func BodyField[T any](name string) Param[T] { return param[T](name, SourceBodyField) }

// Body declares an argument that is the whole JSON body; name is its parameter name only.
func Body[T any](name string) Param[T] { return param[T](name, SourceBody) }

// QueryParam declares an argument taken from the query parameter name.
func QueryParam[T any](name string) Param[T] { return param[T](name, SourceQueryParam) }

// Query declares a struct argument whose fields are query parameters (by their JSON names);
// name is its parameter name only.
func Query[T any](name string) Param[T] { return param[T](name, SourceQuery) }

// Required refuses a request whose body lacks the field (see Arg.Required).
func (p Param[T]) Required() Param[T] {
	p.arg.Required = true
	return p
}

// Default is the query parameter's value when the request has none (see Arg.Default).
func (p Param[T]) Default(v T) Param[T] {
	p.arg.Default = v
	return p
}

// OneOf lists the values the dashboard may send (see Arg.Values).
func (p Param[T]) OneOf(values ...string) Param[T] {
	p.arg.Values = values
	return p
}

// Arg returns the declaration.
func (p Param[T]) Arg() Arg { return p.arg }

// Call is a control's arguments, its result type and the function that does it, on a receiver
// of type R (the app's Controller).
type Call[R any] struct {
	args   []Arg
	result reflect.Type
	fn     func(recv R, args []any) (any, error)
}

// Call0 declares a control without arguments.
func Call0[R, Out any](fn func(R) (Out, error)) Call[R] {
	return Call[R]{result: reflect.TypeFor[Out](), fn: func(r R, _ []any) (any, error) { return fn(r) }}
}

// Call1 declares a control with one argument.
func Call1[R, A, Out any](a Param[A], fn func(R, A) (Out, error)) Call[R] {
	return Call[R]{args: []Arg{a.arg}, result: reflect.TypeFor[Out](), fn: func(r R, in []any) (any, error) {
		return fn(r, in[0].(A))
	}}
}

// Call2 declares a control with two arguments.
func Call2[R, A, B, Out any](a Param[A], b Param[B], fn func(R, A, B) (Out, error)) Call[R] {
	return Call[R]{args: []Arg{a.arg, b.arg}, result: reflect.TypeFor[Out](), fn: func(r R, in []any) (any, error) {
		return fn(r, in[0].(A), in[1].(B))
	}}
}

// Call3 declares a control with three arguments.
func Call3[R, A, B, C, Out any](a Param[A], b Param[B], c Param[C], fn func(R, A, B, C) (Out, error)) Call[R] {
	return Call[R]{args: []Arg{a.arg, b.arg, c.arg}, result: reflect.TypeFor[Out](), fn: func(r R, in []any) (any, error) {
		return fn(r, in[0].(A), in[1].(B), in[2].(C))
	}}
}

// Call4 declares a control with four arguments.
func Call4[R, A, B, C, D, Out any](a Param[A], b Param[B], c Param[C], d Param[D], fn func(R, A, B, C, D) (Out, error)) Call[R] {
	return Call[R]{args: []Arg{a.arg, b.arg, c.arg, d.arg}, result: reflect.TypeFor[Out](), fn: func(r R, in []any) (any, error) {
		return fn(r, in[0].(A), in[1].(B), in[2].(C), in[3].(D))
	}}
}

// NoError adapts a method that cannot fail (a plain read) to Call0.
func NoError[R, Out any](fn func(R) Out) func(R) (Out, error) {
	return func(r R) (Out, error) { return fn(r), nil }
}

// check tells whether args fit the declaration: a binding generated from another table fails
// here with an error instead of a panic in the type assertions of Call1 … Call4.
func (c Call[R]) check(name string, args []any) error {
	if len(args) != len(c.args) {
		return fmt.Errorf("control %s: called with %d arguments, declared with %d; regenerate the bindings (go run ./build/gencontrols)", name, len(args), len(c.args))
	}
	for i, a := range args {
		if t := reflect.TypeOf(a); t == nil || !t.AssignableTo(c.args[i].Type) {
			return fmt.Errorf("control %s: argument %s is a %v, declared as %v; regenerate the bindings (go run ./build/gencontrols)", name, c.args[i].Name, t, c.args[i].Type)
		}
	}
	return nil
}

// Control is one entry of the table.
type Control[R any] struct {
	// Name is the Go binding's method (App.SetTransport); the TypeScript method is the same in
	// lower camel case (setTransport).
	Name string
	// Route is the HTTP method and path pattern, as http.ServeMux takes it: "POST /api/transports/{name}".
	Route string
	// Doc says what the control does, continuing a sentence that starts with its name
	// ("switches one transport on or off and returns the new list."): the Go binding's doc
	// comment and the TypeScript method's.
	Doc string
	// Action labels the client's errors ("enable tcp: …"): literal text with {arg} (an argument's
	// value; a list is joined with ", "), {arg.field} (a JSON field of a struct argument) and
	// {arg?then:else} (then when the argument is true, non-empty or a non-empty list).
	Action string
	// Fixed are body fields the TypeScript client sends with a constant value. They tell apart
	// controls that share a route (preview and apply of a client edit: "dryRun"); an absent field
	// counts as its zero value.
	Fixed map[string]any
	// BindByHand: the Wails binding is written by hand in app/desktop/bindings.go (it needs what
	// only the window has); the generator leaves it out.
	BindByHand bool
	// ServeByHand: the HTTP route is written by hand in app/dashboard/server.go (it needs the
	// request); Routes leaves it out.
	ServeByHand bool
	Call        Call[R]
}

// Spec is a control's declaration without its function: what the generator reads.
type Spec struct {
	Name, Method, Path, Doc, Action string
	Args                            []Arg
	Result                          reflect.Type
	Fixed                           map[string]any
	BindByHand, ServeByHand         bool
}

// Spec returns the declaration.
func (c Control[R]) Spec() Spec {
	method, path, _ := strings.Cut(c.Route, " ")
	return Spec{Name: c.Name, Method: method, Path: path, Doc: c.Doc, Action: c.Action,
		Args: c.Call.args, Result: c.Call.result, Fixed: c.Fixed,
		BindByHand: c.BindByHand, ServeByHand: c.ServeByHand}
}

// Table is the declared controls, in order. It is not changed after NewTable.
type Table[R any] struct {
	controls []Control[R]
	byName   map[string]int
}

// NewTable keeps the controls; Validate checks them (a test does, and the generator).
func NewTable[R any](controls ...Control[R]) *Table[R] {
	t := &Table[R]{controls: controls, byName: make(map[string]int, len(controls))}
	for i, c := range controls {
		if _, dup := t.byName[c.Name]; !dup {
			t.byName[c.Name] = i
		}
	}
	return t
}

// Specs returns every control's declaration, in table order.
func (t *Table[R]) Specs() []Spec {
	out := make([]Spec, len(t.controls))
	for i, c := range t.controls {
		out[i] = c.Spec()
	}
	return out
}

// Invoke runs the control name on recv with args (the generated Wails bindings call it).
func Invoke[Out, R any](t *Table[R], recv R, name string, args ...any) (Out, error) {
	var zero Out
	i, ok := t.byName[name]
	if !ok {
		return zero, fmt.Errorf("control %s: not in the control table; regenerate the bindings (go run ./build/gencontrols)", name)
	}
	c := t.controls[i]
	if err := c.Call.check(name, args); err != nil {
		return zero, err
	}
	if want := reflect.TypeFor[Out](); c.Call.result != want {
		return zero, fmt.Errorf("control %s: answers %v, the binding wants %v; regenerate the bindings (go run ./build/gencontrols)", name, c.Call.result, want)
	}
	v, err := c.Call.fn(recv, args)
	out, _ := v.(Out)
	return out, err
}

// LowerCamel is the TypeScript method of a Go name: SetTransport → setTransport,
// RAGQuery → ragQuery, SaveML → saveML.
func LowerCamel(name string) string {
	r := []rune(name)
	n := 0
	for n < len(r) && r[n] >= 'A' && r[n] <= 'Z' {
		n++
	}
	switch {
	case n == 0:
		return name
	case n == len(r):
		return strings.ToLower(name)
	case n > 1:
		n-- // the last capital starts the next word: RAGQuery → rag + Query
	}
	return strings.ToLower(string(r[:n])) + string(r[n:])
}

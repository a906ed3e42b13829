package script

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/dlclark/regexp2/v2"
	"github.com/dop251/goja"
	"github.com/dop251/goja/parser"
)

// scriptName is the file name goja reports in positions; positionRE finds it in a stack.
const scriptName = "script.js"

var positionRE = regexp.MustCompile(regexp.QuoteMeta(scriptName) + `:(\d+):(\d+)`)

// The user's code is the body of an async function. The wrapper's head is a line of its own, so
// a position in the user's code is the wrapper's minus one line, columns unchanged.
const (
	wrapperHead  = "(async function () {\n"
	wrapperTail  = "\n})"
	wrapperLines = 1
)

// maxJSONDepth bounds the nesting of a tool's structured result: goja parses JSON recursively on
// the Go stack, so a deeply nested result must be refused before it reaches the parser.
const maxJSONDepth = 512

// compile parses the wrapped code, reporting a syntax error at its place in the user's code.
func compile(code string) (*goja.Program, error) {
	src := wrapperHead + code + wrapperTail
	ast, err := parser.ParseFile(nil, scriptName, src, 0)
	if err != nil {
		var list parser.ErrorList
		if errors.As(err, &list) && len(list) > 0 {
			line, col := list[0].Position.Line-wrapperLines, list[0].Position.Column
			// An error found in the wrapper's tail (an unclosed bracket) is at the end of the code.
			if lines := strings.Split(code, "\n"); line > len(lines) {
				line, col = len(lines), len(lines[len(lines)-1])+1
			}
			return nil, &ScriptError{Message: "SyntaxError: " + list[0].Message, Line: max(line, 1), Column: col}
		}
		return nil, &ScriptError{Message: "SyntaxError: " + err.Error()}
	}
	prog, err := goja.CompileAST(ast, false)
	if err != nil {
		return nil, &ScriptError{Message: err.Error()}
	}
	return prog, nil
}

// removedGlobals are taken away before the user's code runs. The buffer types allocate their
// whole length in one native call that neither the wall clock nor the memory watchdog can
// interrupt; scripts exchange JSON with tools and do not need them.
var removedGlobals = []string{
	"ArrayBuffer", "SharedArrayBuffer", "DataView", "Int8Array", "Uint8Array", "Uint8ClampedArray",
	"Int16Array", "Uint16Array", "Int32Array", "Uint32Array", "Float32Array", "Float64Array",
	"BigInt64Array", "BigUint64Array", "WeakRef", "FinalizationRegistry",
	// goja's constructor for wrapped Go errors: nothing a script needs, and a door to Go values.
	"GoError",
}

// guardsJS wraps the built-ins whose single native call allocates in proportion to a number the
// script chooses (a count, a length): goja cannot interrupt a native call, so these are refused
// up front with a RangeError when the result could not fit in the memory limit. It runs before the
// user's code and keeps the originals in its closure, out of the script's reach.
const guardsJS = `(function (maxChars, maxItems, matchTimeoutMs) {
  "use strict";
  const apply = Reflect.apply, defineProperty = Object.defineProperty, RangeErr = RangeError;
  const now = Date.now;
  const toLen = (v) => { const n = Math.floor(Number(v)); return n > 0 ? n : 0; };
  function guard(obj, name, size) {
    const orig = obj[name];
    defineProperty(obj, name, { writable: true, configurable: true, enumerable: false,
      value: { [name](...args) {
        const n = size(this, args);
        const cap = size.items ? maxItems : maxChars, unit = size.items ? " elements" : " characters";
        if (n > cap) {
          throw new RangeErr(String(name) + " would make " + n + unit + "; one call may make at most " +
            cap + unit + " in a script (work on smaller pieces)");
        }
        return apply(orig, this, args);
      } }[name] });
  }
  const str = String.prototype;
  guard(str, "repeat", (s, a) => String(s).length * toLen(a[0]));
  guard(str, "padStart", (s, a) => toLen(a[0]));
  guard(str, "padEnd", (s, a) => toLen(a[0]));
  const byLength = (s) => toLen(s == null ? 0 : s.length);
  byLength.items = true;
  const arr = Array.prototype;
  for (const name of ["fill", "join", "toString", "toLocaleString", "copyWithin", "reverse",
      "sort", "toSorted", "toReversed", "flat", "flatMap", "indexOf", "lastIndexOf", "includes",
      "slice", "splice", "toSpliced", "concat", "with", "keys", "values", "entries"]) {
    if (typeof arr[name] === "function") guard(arr, name, byLength);
  }
  guard(arr, Symbol.iterator, byLength);
  const emptySeparator = (s, a) => (a[0] === "" ? String(s).length : 0);
  emptySeparator.items = true;
  guard(str, "split", emptySeparator);
  // A backtracking match that ran out its time (regexpMatchTimeout) comes back from goja as "no
  // match"; timing every regular expression operation turns that into an error, so a script never
  // goes on with a wrong answer.
  const rxProto = RegExp.prototype;
  for (const name of ["exec", "test", Symbol.match, Symbol.matchAll, Symbol.replace, Symbol.search,
      Symbol.split]) {
    const orig = rxProto[name];
    defineProperty(rxProto, name, { writable: true, configurable: true, enumerable: false,
      value: { [name](...args) {
        const t = now();
        const out = apply(orig, this, args);
        if (now() - t >= matchTimeoutMs) {
          throw new RangeErr("regular expression " + String(this) + " ran longer than " +
            matchTimeoutMs + " ms (catastrophic backtracking); simplify it or match a smaller text");
        }
        return out;
      } }[name] });
  }
  const firstArgLength = (s, a) => toLen(a[0] == null ? 0 : a[0].length);
  firstArgLength.items = true;
  guard(Array, "from", firstArgLength);
  const secondArgLength = (s, a) => toLen(a[1] == null ? 0 : a[1].length);
  secondArgLength.items = true;
  guard(Function.prototype, "apply", secondArgLength);
  guard(Reflect, "apply", (s, a) => toLen(a[2] == null ? 0 : a[2].length));
  guard(Reflect, "construct", secondArgLength);
})`

// maxNativeItems bounds the elements one native array call may walk: goja runs a built-in to its
// end without checking for an interrupt, and walking a sparse array costs about a microsecond an
// element on the 2-core machine (a spread of 10^6 holes took 0.9 s), so this caps the time a
// script can run past its wall limit at about a second.
const maxNativeItems = 1 << 20

// regexpMatchTimeout bounds one backtracking match. goja runs patterns that RE2 accepts on Go's
// regexp (linear time) and the rest (lookaround, backreferences) on regexp2, which backtracks and
// is not interruptible; regexp2's only bound is its package-wide default timeout, set once below.
const regexpMatchTimeout = time.Second

func init() {
	// Set once at start-up and never changed: the hub's only regexp2 user is this package's engine.
	regexp2.DefaultMatchTimeout = regexpMatchTimeout
}

// setup builds the runtime: limits, globals, guards, console and tools.
func (r *runner) setup(tools []string) error {
	vm := goja.New()
	vm.SetMaxCallStackSize(r.lim.Depth)
	// No Go field or method names are ever exposed (only JSON-converted values and functions), but
	// a mapper that hides everything keeps a future slip from reaching Go objects by reflection.
	vm.SetFieldNameMapper(hideGoFields{})
	r.vm = vm

	global := vm.GlobalObject()
	for _, name := range removedGlobals {
		if err := global.Delete(name); err != nil {
			return fmt.Errorf("script: removing %s: %w", name, err)
		}
	}
	jsonObj := global.Get("JSON").ToObject(vm)
	var ok bool
	if r.stringify, ok = goja.AssertFunction(jsonObj.Get("stringify")); !ok {
		return errors.New("script: JSON.stringify missing")
	}
	if r.parse, ok = goja.AssertFunction(jsonObj.Get("parse")); !ok {
		return errors.New("script: JSON.parse missing")
	}
	r.errorCtor = global.Get("Error")

	guards, err := vm.RunString(guardsJS)
	if err != nil {
		return fmt.Errorf("script: installing guards: %w", err)
	}
	guardFn, _ := goja.AssertFunction(guards)
	// A UTF-16 code unit is two bytes in goja's strings; an array element is at least a 16-byte
	// interface value. Either way a limit-sized result is refused.
	maxChars := r.lim.Memory / 2
	maxItems := min(r.lim.Memory/16, maxNativeItems)
	if _, err := guardFn(goja.Undefined(), vm.ToValue(maxChars), vm.ToValue(maxItems),
		vm.ToValue(regexpMatchTimeout.Milliseconds())); err != nil {
		return fmt.Errorf("script: installing guards: %w", err)
	}

	console := vm.NewObject()
	for _, m := range []struct{ name, prefix string }{{"log", ""}, {"info", ""}, {"debug", ""},
		{"warn", "[warn] "}, {"error", "[error] "}} {
		if err := console.Set(m.name, r.consoleFunc(m.prefix)); err != nil {
			return fmt.Errorf("script: console.%s: %w", m.name, err)
		}
	}
	if err := freeze(vm, console); err != nil {
		return err
	}
	if err := global.DefineDataProperty("console", console, goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_FALSE); err != nil {
		return fmt.Errorf("script: console: %w", err)
	}

	toolsObj := vm.NewObject()
	if err := toolsObj.SetPrototype(nil); err != nil {
		return fmt.Errorf("script: tools: %w", err)
	}
	for _, name := range tools {
		if err := toolsObj.Set(name, r.toolFunc(name)); err != nil {
			return fmt.Errorf("script: tools.%s: %w", name, err)
		}
	}
	// An unknown name is a clear error, not "undefined is not a function": a Proxy in front of the
	// frozen object answers names it does not hold.
	proxy, err := r.toolsProxy(toolsObj)
	if err != nil {
		return err
	}
	if err := global.DefineDataProperty("tools", proxy, goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_FALSE); err != nil {
		return fmt.Errorf("script: tools: %w", err)
	}
	return nil
}

func freeze(vm *goja.Runtime, o *goja.Object) error {
	f, _ := goja.AssertFunction(vm.GlobalObject().Get("Object").ToObject(vm).Get("freeze"))
	if _, err := f(goja.Undefined(), o); err != nil {
		return fmt.Errorf("script: freezing: %w", err)
	}
	return nil
}

// toolsProxy freezes target and returns a proxy whose get of a missing name throws an error that
// says how to find tools. Names that every object is asked for by the engine (then, toJSON,
// Symbol keys) answer undefined, so `await tools` and JSON.stringify(tools) behave.
func (r *runner) toolsProxy(target *goja.Object) (*goja.Object, error) {
	if err := freeze(r.vm, target); err != nil {
		return nil, err
	}
	proxy := r.vm.NewProxy(target, &goja.ProxyTrapConfig{
		Get: func(t *goja.Object, property string, receiver goja.Value) goja.Value {
			if v := t.Get(property); v != nil {
				return v
			}
			switch property {
			case "then", "toJSON", "constructor", "valueOf", "toString", "inspect":
				return goja.Undefined()
			}
			panic(r.vm.NewTypeError("tools.%s is not a tool offered to this script; find tools with "+
				"tools_search (a script sees each tool under its full name, e.g. tools[\"server__tool\"])",
				property))
		},
	})
	return r.vm.ToValue(proxy).ToObject(r.vm), nil
}

// toolFunc is the async function a script calls as tools[name]. It returns a promise the loop
// settles when the call is done; calls beyond Concurrency wait in a queue.
func (r *runner) toolFunc(name string) func(goja.FunctionCall) goja.Value {
	return func(call goja.FunctionCall) goja.Value {
		p, resolve, reject := r.vm.NewPromise()
		r.calls++
		if r.calls > r.lim.Calls {
			r.stop(&LimitError{Limit: "calls", Value: int64(r.lim.Calls), Unit: "calls",
				Detail: fmt.Sprintf("call %d was tools.%s", r.calls, name)})
			return r.vm.ToValue(p)
		}
		args, err := r.argsJSON(call.Argument(0))
		if err != nil {
			r.rejectWith(reject, fmt.Sprintf("tools.%s: %v", name, err))
			return r.vm.ToValue(p)
		}
		r.queue = append(r.queue, &pendingCall{name: name, args: args, resolve: resolve, reject: reject})
		r.startQueued()
		return r.vm.ToValue(p)
	}
}

// argsJSON turns a call's argument into the JSON object the tool receives, with the stringify
// captured before the script ran.
func (r *runner) argsJSON(v goja.Value) (json.RawMessage, error) {
	if v == nil || goja.IsUndefined(v) || goja.IsNull(v) {
		return json.RawMessage("{}"), nil
	}
	if o, ok := v.(*goja.Object); !ok || o.ClassName() == "Array" || o.ClassName() == "Function" {
		return nil, errors.New("the argument must be an object of named arguments, e.g. {path: \"go.mod\"}")
	}
	s, err := r.stringify(goja.Undefined(), v)
	if err != nil {
		return nil, err
	}
	if goja.IsUndefined(s) {
		return nil, errors.New("the argument cannot be converted to JSON")
	}
	return json.RawMessage(s.String()), nil
}

// settle resolves or rejects a finished call's promise, which runs the script on to its next
// await. The error is goja's uncatchable kind (an interrupt), if any.
func (r *runner) settle(d callDone) error {
	r.startQueued()
	c := d.call
	if d.err != nil {
		return r.rejectWith(c.reject, fmt.Sprintf("tools.%s: %v", c.name, d.err))
	}
	if d.res.IsError {
		msg := d.res.Text
		if msg == "" && d.res.Structured != nil {
			msg = string(d.res.Structured)
		}
		if msg == "" {
			msg = "tools." + c.name + " failed"
		}
		return r.rejectWith(c.reject, msg)
	}
	if d.res.Structured == nil {
		return c.resolve(d.res.Text)
	}
	if int64(len(d.res.Structured)) > r.lim.Memory/2 {
		return r.rejectWith(c.reject, fmt.Sprintf("tools.%s: its result of %d bytes is more than the "+
			"script's memory limit allows; ask the tool for less", c.name, len(d.res.Structured)))
	}
	if depth := jsonDepth(d.res.Structured); depth > maxJSONDepth {
		return r.rejectWith(c.reject, fmt.Sprintf("tools.%s: its result nests deeper than %d levels",
			c.name, maxJSONDepth))
	}
	v, err := r.parse(goja.Undefined(), r.vm.ToValue(string(d.res.Structured)))
	if err != nil {
		if isUncatchable(err) {
			return err
		}
		return r.rejectWith(c.reject, fmt.Sprintf("tools.%s: its structured result is not valid JSON", c.name))
	}
	return c.resolve(v)
}

func isUncatchable(err error) bool {
	var interrupted *goja.InterruptedError
	var overflow *goja.StackOverflowError
	return errors.As(err, &interrupted) || errors.As(err, &overflow)
}

// rejectWith rejects with a real Error (made by the Error constructor captured before the script
// ran), never a Go error value, which goja would wrap with reflection.
func (r *runner) rejectWith(reject func(any) error, msg string) error {
	e, err := r.vm.New(r.errorCtor, r.vm.ToValue(msg))
	if err != nil {
		return err
	}
	return reject(e)
}

// jsonDepth is the deepest nesting of arrays and objects in a JSON text, strings skipped.
func jsonDepth(b []byte) int {
	depth, deepest, inString, escaped := 0, 0, false, false
	for _, c := range b {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			depth++
			deepest = max(deepest, depth)
		case c == '}' || c == ']':
			depth--
		}
	}
	return deepest
}

// consoleFunc appends a line to the logs, counted against the output limit.
func (r *runner) consoleFunc(prefix string) func(goja.FunctionCall) goja.Value {
	return func(call goja.FunctionCall) goja.Value {
		parts := make([]string, 0, len(call.Arguments))
		for _, a := range call.Arguments {
			parts = append(parts, r.display(a))
		}
		line := prefix + strings.Join(parts, " ")
		r.outBytes += len(line) + 1
		if r.outBytes > r.lim.Output {
			r.stop(&LimitError{Limit: "output", Value: int64(r.lim.Output), Unit: "bytes",
				Detail: "console output"})
			return goja.Undefined()
		}
		r.logs = append(r.logs, line)
		return goja.Undefined()
	}
}

// display renders one console argument: strings as they are, errors as "Name: message", other
// values as JSON where they have one.
func (r *runner) display(v goja.Value) string {
	if v == nil || goja.IsUndefined(v) {
		return "undefined"
	}
	if o, ok := v.(*goja.Object); ok {
		if o.ClassName() == "Error" || o.ClassName() == "Function" {
			return v.String()
		}
		s, err := r.stringify(goja.Undefined(), v)
		if err == nil && !goja.IsUndefined(s) {
			return s.String()
		}
		return v.String()
	}
	return v.String()
}

// resultJSON serialises the script's return value, counted against the output limit.
func (r *runner) resultJSON(v goja.Value) (json.RawMessage, error) {
	s, err := r.stringify(goja.Undefined(), v)
	if err != nil {
		return nil, r.engineError(err)
	}
	out := "null"
	if !goja.IsUndefined(s) {
		out = s.String()
	}
	if r.outBytes+len(out) > r.lim.Output {
		return nil, &LimitError{Limit: "output", Value: int64(r.lim.Output), Unit: "bytes",
			Detail: fmt.Sprintf("the result is %d bytes and the logs %d", len(out), r.outBytes)}
	}
	return json.RawMessage(out), nil
}

// scriptError describes an uncaught exception, with its position in the user's code when it is
// an Error thrown from it.
func (r *runner) scriptError(v goja.Value) error {
	if r.stopErr != nil {
		return r.stopErr
	}
	se := &ScriptError{Message: r.display(v)}
	if o, ok := v.(*goja.Object); ok {
		if stack := o.Get("stack"); stack != nil && !goja.IsUndefined(stack) {
			if m := positionRE.FindStringSubmatch(stack.String()); m != nil {
				line, _ := strconv.Atoi(m[1])
				col, _ := strconv.Atoi(m[2])
				se.Line, se.Column = max(line-wrapperLines, 1), col
			}
		}
	}
	return se
}

// hideGoFields maps no Go field or method to JavaScript.
type hideGoFields struct{}

func (hideGoFields) FieldName(reflect.Type, reflect.StructField) string { return "" }
func (hideGoFields) MethodName(reflect.Type, reflect.Method) string     { return "" }

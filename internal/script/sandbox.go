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
	"unicode/utf8"

	"github.com/dlclark/regexp2/v2"
	"github.com/dop251/goja"
	"github.com/dop251/goja/ast"
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

// goja's parser and JSON decoder recurse on the Go stack, and a Go stack overflow is fatal to the
// whole process (measured: 300,000 nested brackets in code, or 3,000,000 in JSON.parse, kill it).
// So code is bounded in size and bracket nesting before it is parsed, dynamic code (eval,
// Function) is not available at all, and JSON text is bounded in nesting before it is decoded.
//
// goja's parser and compiler are also slow on some deep shapes, and neither can be interrupted
// (measured on the 2 loaded cores: 49,000 nested blocks compiled in 11 s; 85,000 nested arrow
// functions did not parse in 100 s, 3,000 took 80 ms). So, before parsing, the opening brackets
// and arrows in the whole code are counted (anywhere, strings included: a count cannot be fooled
// by a regular expression or template literal that hides a quote, as a scanner could), and after
// parsing, before compiling, the syntax tree's depth is bounded.
const (
	maxCodeBytes = 256 << 10
	// maxOpeners bounds any bracket nesting: 100,000 nested brackets parse, 300,000 overflow the
	// Go stack; a dense 256 KiB script has about 25,000.
	maxOpeners = 50000
	maxArrows  = 2000
	// maxNesting bounds the syntax tree's depth (about three nodes per level of brackets).
	maxNesting = 3000
)

// astDepth is the deepest nesting of syntax nodes under v, walked by reflection over goja's AST
// types, no further than limit+1 levels (so the walk's own recursion stays bounded).
func astDepth(v reflect.Value, limit int) int {
	switch v.Kind() {
	case reflect.Interface, reflect.Pointer:
		if v.IsNil() {
			return 0
		}
		if v.Kind() == reflect.Pointer && v.Elem().Kind() == reflect.Struct && v.Type().Elem().PkgPath() == astPkg {
			if limit < 0 {
				return 1
			}
			return 1 + astDepth(v.Elem(), limit-1)
		}
		return astDepth(v.Elem(), limit)
	case reflect.Struct:
		if v.Type().PkgPath() != astPkg {
			return 0
		}
		deepest := 0
		for i := 0; i < v.NumField() && deepest <= limit; i++ {
			deepest = max(deepest, astDepth(v.Field(i), limit))
		}
		return deepest
	case reflect.Slice:
		deepest := 0
		for i := 0; i < v.Len() && deepest <= limit; i++ {
			deepest = max(deepest, astDepth(v.Index(i), limit))
		}
		return deepest
	}
	return 0
}

var astPkg = reflect.TypeFor[ast.Program]().PkgPath()

// maxJSONDepth bounds the nesting of a tool's structured result: goja parses JSON recursively on
// the Go stack, so a deeply nested result must be refused before it reaches the parser.
const maxJSONDepth = 512

// maxMessage bounds an error message taken from the script (an exception's text can be any size).
const maxMessage = 2048

// compile parses the wrapped code, reporting a syntax error at its place in the user's code.
func compile(code string) (*goja.Program, error) {
	if len(code) > maxCodeBytes {
		return nil, fmt.Errorf("script: code is %d bytes, more than %d; split the work into smaller "+
			"scripts or move data into tool calls", len(code), maxCodeBytes)
	}
	if n := strings.Count(code, "(") + strings.Count(code, "[") + strings.Count(code, "{"); n > maxOpeners {
		return nil, &ScriptError{Message: fmt.Sprintf("SyntaxError: the code has %d opening brackets, "+
			"more than %d; split it into smaller scripts", n, maxOpeners)}
	}
	if n := strings.Count(code, "=>"); n > maxArrows {
		return nil, &ScriptError{Message: fmt.Sprintf("SyntaxError: the code has %d arrows (=>), "+
			"more than %d; split it into smaller scripts", n, maxArrows)}
	}
	src := wrapperHead + code + wrapperTail
	tree, err := parser.ParseFile(nil, scriptName, src, 0)
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
	if depth := astDepth(reflect.ValueOf(tree), maxNesting); depth > maxNesting {
		return nil, &ScriptError{Message: fmt.Sprintf("SyntaxError: the code nests more than %d "+
			"levels deep; flatten it", maxNesting)}
	}
	prog, err := goja.CompileAST(tree, false)
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
const guardsJS = `(function (maxChars, maxItems, matchTimeoutMs, maxDepth) {
  "use strict";
  const apply = Reflect.apply, defineProperty = Object.defineProperty, RangeErr = RangeError;
  const EvalErr = EvalError;
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
  // A long replacement or separator multiplies: bound the most the result could be.
  const replaced = (s, a) => String(s).length * (typeof a[1] === "string" ? a[1].length : 1);
  guard(str, "replace", replaced);
  guard(str, "replaceAll", replaced);
  const byLength = (s) => toLen(s == null ? 0 : s.length);
  byLength.items = true;
  const arr = Array.prototype;
  for (const name of ["fill", "join", "toString", "toLocaleString", "copyWithin", "reverse",
      "sort", "toSorted", "toReversed", "flat", "flatMap", "indexOf", "lastIndexOf", "includes",
      "slice", "splice", "toSpliced", "concat", "with", "keys", "values", "entries"]) {
    if (typeof arr[name] === "function") guard(arr, name, byLength);
  }
  guard(arr, Symbol.iterator, byLength);
  guard(arr, "join", (s, a) => toLen(s == null ? 0 : s.length) * (a[0] === undefined ? 1 : String(a[0]).length));
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
  // Dynamic code goes through goja's parser, which recurses on the Go stack: a script that builds
  // deeply nested source could kill the hub. Scripts are code already; they do not need eval.
  const noDynamicCode = function () {
    throw new EvalErr("eval and the Function constructors are not available in scripts");
  };
  for (const proto of [Function.prototype, Object.getPrototypeOf(async function () {}),
      Object.getPrototypeOf(function* () {})]) {
    defineProperty(proto, "constructor", { value: noDynamicCode, writable: true, configurable: true, enumerable: false });
  }
  noDynamicCode.prototype = Function.prototype;
  defineProperty(globalThis, "Function", { value: noDynamicCode, writable: true, configurable: true, enumerable: false });
  defineProperty(globalThis, "eval", { value: noDynamicCode, writable: true, configurable: true, enumerable: false });

  // goja's JSON.stringify recurses on the Go stack and checks for cycles in time proportional to
  // the depth at every level (20,000 levels took 2 s in one uninterruptible call), so nesting is
  // bounded: a replacer keeps the chain of holders (the replacer is called in pre-order with the
  // holder as this), on an object without a prototype so that no setter the script defines on
  // Array.prototype or Object.prototype can intercept it. Running JavaScript for every value also
  // keeps a huge stringify interruptible by the wall clock and the memory watchdog.
  const stringify = JSON.stringify, isArray = Array.isArray, includes = Array.prototype.includes;
  const map = Array.prototype.map, create = Object.create;
  defineProperty(JSON, "stringify", { writable: true, configurable: true, enumerable: false,
    value: function stringify_(value, replacer, space) {
      const chain = create(null);
      let depth = 0;
      const allow = isArray(replacer) ? apply(map, replacer, [String]) : null;
      const fn = typeof replacer === "function" ? replacer : null;
      return apply(stringify, JSON, [value, function (key, v) {
        while (depth > 0 && chain[depth - 1] !== this) depth--;
        if (allow !== null && key !== "" && !isArray(this) && !apply(includes, allow, [key])) return undefined;
        if (fn !== null) v = apply(fn, this, [key, v]);
        if (v !== null && typeof v === "object") {
          if (depth >= maxDepth) throw new RangeErr("JSON.stringify: the value nests deeper than " + maxDepth + " levels");
          chain[depth++] = v;
        }
        return v;
      }, space]);
    } });
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

// guardsProgram is compiled once; a goja Program is immutable and shared by runtimes.
var guardsProgram = goja.MustCompile("guards.js", guardsJS, true)

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
	if r.parse, ok = goja.AssertFunction(jsonObj.Get("parse")); !ok {
		return errors.New("script: JSON.parse missing")
	}
	r.errorCtor = global.Get("Error")
	if r.toString, ok = goja.AssertFunction(global.Get("String")); !ok {
		return errors.New("script: String missing")
	}
	if r.reflectGet, ok = goja.AssertFunction(global.Get("Reflect").ToObject(vm).Get("get")); !ok {
		return errors.New("script: Reflect.get missing")
	}
	if err := jsonObj.Set("parse", r.guardedParse); err != nil {
		return fmt.Errorf("script: JSON.parse: %w", err)
	}

	guards, err := vm.RunProgram(guardsProgram)
	if err != nil {
		return fmt.Errorf("script: installing guards: %w", err)
	}
	guardFn, _ := goja.AssertFunction(guards)
	// A UTF-16 code unit is two bytes in goja's strings; an array element is at least a 16-byte
	// interface value. Either way a limit-sized result is refused.
	maxChars := r.lim.Memory / 2
	maxItems := min(r.lim.Memory/16, maxNativeItems)
	if _, err := guardFn(goja.Undefined(), vm.ToValue(maxChars), vm.ToValue(maxItems),
		vm.ToValue(regexpMatchTimeout.Milliseconds()), vm.ToValue(maxJSONDepth)); err != nil {
		return fmt.Errorf("script: installing guards: %w", err)
	}

	// The host uses the guarded stringify too (a deep argument must not reach goja's), captured
	// before the script runs so that replacing JSON.stringify changes nothing for the host.
	if r.stringify, ok = goja.AssertFunction(jsonObj.Get("stringify")); !ok {
		return errors.New("script: JSON.stringify missing")
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

// guardedParse is JSON.parse with the text's nesting bounded first.
func (r *runner) guardedParse(call goja.FunctionCall) goja.Value {
	text := call.Argument(0).String()
	if depth := jsonDepth([]byte(text)); depth > maxJSONDepth {
		panic(r.vm.NewTypeError("JSON.parse: the text nests deeper than %d levels", maxJSONDepth))
	}
	v, err := r.parse(goja.Undefined(), r.vm.ToValue(text), call.Argument(1))
	if err != nil {
		var ex *goja.Exception
		if errors.As(err, &ex) {
			panic(ex.Value()) // the SyntaxError, thrown on to the script
		}
		panic(err) // uncatchable (an interrupt): goja propagates it
	}
	return v
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
		r.reinterrupt()
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
		r.reinterrupt()
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
	if o, ok := v.(*goja.Object); ok && o.ClassName() != "Error" && o.ClassName() != "Function" {
		if s, err := r.stringify(goja.Undefined(), v); err == nil && !goja.IsUndefined(s) {
			return s.String()
		}
	}
	return r.jsString(v)
}

// jsString is String(v) by the String function captured before the script ran, called so that a
// throwing toString (the script's own) gives a placeholder instead of a Go panic.
func (r *runner) jsString(v goja.Value) string {
	s, err := r.toString(goja.Undefined(), v)
	if err != nil {
		return "(a value whose conversion to text failed)"
	}
	return s.String()
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
	if stop := r.stopReason(); stop != nil {
		return stop
	}
	se := &ScriptError{Message: truncate(r.display(v), maxMessage)}
	if o, ok := v.(*goja.Object); ok && o.ClassName() == "Error" {
		// Read through Reflect.get, captured: a getter the script put on "stack" may throw.
		stack, err := r.reflectGet(goja.Undefined(), o, r.vm.ToValue("stack"))
		if err == nil && !goja.IsUndefined(stack) {
			if m := positionRE.FindStringSubmatch(r.jsString(stack)); m != nil {
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

// truncate cuts s to at most n bytes, on a rune boundary, marking the cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + fmt.Sprintf("… (%d bytes in all)", len(s))
}

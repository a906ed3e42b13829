package script

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// Each attack runs in a real Run; afterwards the next Run must still work, so a test also proves
// the process (the hub) survived it.
func TestAttacksAreStopped(t *testing.T) {
	deepJSON := strings.Repeat("[", 100000) + strings.Repeat("]", 100000)
	hugeJSON := `{"s":"` + strings.Repeat("x", 20<<20) + `"}`
	bombs := &fakeCaller{handlers: map[string]func(context.Context, json.RawMessage) (CallResult, error){
		"deep": func(context.Context, json.RawMessage) (CallResult, error) {
			return CallResult{Structured: json.RawMessage(deepJSON)}, nil
		},
		"huge": func(context.Context, json.RawMessage) (CallResult, error) {
			return CallResult{Structured: json.RawMessage(hugeJSON)}, nil
		},
	}}
	short := Limits{Wall: 300 * time.Millisecond}
	// The wall limit is generous so that a loaded machine still meets the memory limit first.
	smallHeap := Limits{Wall: 60 * time.Second, Memory: 64 << 20}

	for _, tc := range []struct {
		name  string
		code  string
		lim   Limits
		limit string // the LimitError expected, or ""
		error string // else a ScriptError containing this, or ""
		value string // else this result
	}{
		{name: "infinite loop", code: `for (;;) {}`, lim: short, limit: "wall"},
		{name: "infinite loop that catches", code: `for (;;) { try { for (;;) {} } catch (e) {} }`, lim: short, limit: "wall"},
		{name: "infinite loop in a finally", code: `try { throw 1 } finally { for (;;) {} }`, lim: short, limit: "wall"},
		{name: "deep recursion", code: `function f(n) { return f(n + 1) + 1 } f(0)`, limit: "recursion"},
		{name: "recursion caught and retried", code: `function f() { try { return f() } catch (e) { return f() } } f()`, limit: "recursion"},
		{name: "recursion through a built-in", code: `function f() { [1].forEach(f) } f()`, limit: "recursion"},
		{name: "recursion through toString", code: `const o = {toString() { return String(o) }}; String(o)`, limit: "recursion"},
		{name: "allocation bomb", code: `let a = []; for (;;) a.push("x".repeat(1e6))`, lim: smallHeap, limit: "memory"},
		{name: "doubling string", code: `let s = "x"; for (;;) s += s`, lim: smallHeap, limit: "memory"},
		{name: "object bomb", code: `const o = {}; for (let i = 0; ; i++) o["k" + i] = [i]`, lim: smallHeap, limit: "memory"},
		{name: "huge string in one call", code: `return "x".repeat(1e12).length`, error: "one call may make at most"},
		{name: "huge padding in one call", code: `return "".padEnd(2 ** 40).length`, error: "one call may make at most"},
		{name: "huge array fill in one call", code: `return new Array(2 ** 32 - 1).fill(0).length`, error: "one call may make at most"},
		{name: "huge spread in one call", code: `return [...new Array(1e9)].length`, error: "one call may make at most"},
		{name: "huge apply in one call", code: `return Math.max.apply(null, new Array(1e9))`, error: "one call may make at most"},
		{name: "long separator in one join", code: `return new Array(1e6).join("x".repeat(1e6)).length`, error: "one call may make at most"},
		{name: "long replacement in one replaceAll", code: `return "x".repeat(1e6).replaceAll("x", "y".repeat(1e6)).length`, error: "one call may make at most"},
		{name: "replace still works", code: `return ["a-b-c".replaceAll("-", "+"), "a-b".replace(/-/, (m) => "[" + m + "]"), [1, 2].join(", ")]`,
			value: `["a+b+c","a[-]b","1, 2"]`},
		{name: "huge join in one call", code: `return new Array(1e9).join("x").length`, error: "one call may make at most"},
		{name: "buffers are absent", code: `return [typeof ArrayBuffer, typeof Uint8Array, typeof SharedArrayBuffer, typeof DataView].join()`,
			value: `"undefined,undefined,undefined,undefined"`},
		{name: "catastrophic regex (RE2 path) is linear", code: `return /(a+)+$/.test("a".repeat(40) + "b")`, lim: short, value: `false`},
		{name: "catastrophic regex (backtracking path)", code: `return /^(a+)+\1?$/.test("a".repeat(40) + "b")`,
			lim: Limits{Wall: 300 * time.Millisecond}, limit: "wall"},
		{name: "catastrophic regex caught and looped", code: `for (;;) { try { /^(a+)+\1?$/.test("a".repeat(40) + "b") } catch (e) {} }`,
			lim: Limits{Wall: 300 * time.Millisecond}, limit: "wall"},
		{name: "JSON bomb: deeply nested tool result", code: `try { await tools.deep({}) } catch (e) { return e.message }`,
			value: `"tools.deep: its result nests deeper than 512 levels"`},
		{name: "JSON bomb: huge tool result", code: `try { await tools.huge({}) } catch (e) { return e.message.includes("more than the script's memory limit allows") }`,
			lim: Limits{Memory: 16 << 20}, value: `true`},
		{name: "JSON bomb: JSON.parse of deep text", code: `return JSON.parse("[".repeat(3e6) + "]".repeat(3e6))`, error: "nests deeper than 512"},
		{name: "JSON.parse still works", code: `return JSON.parse('{"a":[1,{"b":2}]}', (k, v) => k === "b" ? v * 10 : v)`, value: `{"a":[1,{"b":20}]}`},
		{name: "JSON.parse syntax error is catchable", code: `try { JSON.parse("{") } catch (e) { return e.name }`, value: `"SyntaxError"`},
		{name: "deeply nested value returned", code: `let o = {}; for (let i = 0; i < 1e5; i++) o = {o}; return o`, error: "nests deeper than 512"},
		{name: "deep stringify with index setters planted", code: `Object.defineProperty(Array.prototype, "0", {set() {}});
Object.defineProperty(Object.prototype, "0", {set() {}});
let o = {}; for (let i = 0; i < 1e5; i++) o = {o}; return JSON.stringify(o).length`, error: "nests deeper than 512"},
		{name: "exponential stringify is interruptible", code: `let a = [1]; for (let i = 0; i < 40; i++) a = [a, a]; return JSON.stringify(a).length`,
			lim: Limits{Wall: 300 * time.Millisecond}, limit: "wall"},
		{name: "exponential join is interruptible", code: `let a = [1]; for (let i = 0; i < 40; i++) a = [a, a]; return String(a).length`,
			lim: Limits{Wall: 300 * time.Millisecond}, limit: "wall"},
		{name: "deeply nested tool argument", code: `let o = {}; for (let i = 0; i < 1e5; i++) o = {o}; await tools.echo(o)`, error: "nests deeper than 512"},
		{name: "JSON.stringify keeps its replacer and space", code: `return JSON.stringify({a: 1, b: [2], c: 3}, ["a", "b"], 1)`,
			value: `"{\n \"a\": 1,\n \"b\": [\n  2\n ]\n}"`},
		{name: "deeply nested code", code: strings.Repeat("[", 40000) + strings.Repeat("]", 40000), error: "nests more than 3000 levels"},
		{name: "deeply nested blocks hidden from a scanner", code: "const r = /\\//;" + strings.Repeat("{", 40000) + strings.Repeat("}", 40000),
			error: "nests more than 3000 levels"},
		{name: "too many brackets", code: strings.Repeat("[", 100000) + strings.Repeat("]", 100000), error: "opening brackets"},
		{name: "deeply nested code hidden from the nesting scan", code: "const r = /\\//; return " + strings.Repeat("[", 100000) + strings.Repeat("]", 100000),
			error: "opening brackets"},
		{name: "unclosed brackets at the bound", code: strings.Repeat("[", 50000), error: "SyntaxError"},
		{name: "nested arrows", code: "return " + strings.Repeat("x=>", 85000) + "1", error: "arrows"},
		{name: "2,000 nested arrows", code: "return " + strings.Repeat("x=>", 2000) + "1", error: "nests more than 3000 levels"},
		{name: "500 nested arrows", code: "return " + strings.Repeat("x=>", 500) + "1", value: "null"},
		{name: "nested code at the bound", code: "return " + strings.Repeat("[", 900) + strings.Repeat("]", 900) + ".length", value: "1"},
		{name: "assignment chain at the size bound", code: "let a; return " + strings.Repeat("a=", 130000) + "1", error: "nests more than 3000 levels"},
		{name: "deeply nested code in a string is fine", code: `return "` + strings.Repeat("[", 5000) + `".length`, value: `5000`},
		{name: "huge result", code: `return "x".repeat(2e6)`, limit: "output"},
		{name: "log flood", code: `for (;;) console.log("spam spam spam")`, limit: "output"},
		{name: "timers are absent", code: `return [typeof setTimeout, typeof setInterval, typeof queueMicrotask, typeof setImmediate].join()`,
			value: `"undefined,undefined,undefined,undefined"`},
		{name: "no require, process, modules, network", code: `return [typeof require, typeof process, typeof module, typeof exports,
  typeof fetch, typeof XMLHttpRequest, typeof WebSocket, typeof Deno, typeof Bun, typeof __dirname].join()`,
			value: `"undefined,undefined,undefined,undefined,undefined,undefined,undefined,undefined,undefined,undefined"`},
		{name: "dynamic import", code: `await import("fs")`, error: "SyntaxError"},
		{name: "Function('return this') is not available", code: `return Function("return this")()`, error: "EvalError"},
		{name: "globalThis.constructor escape", code: `return globalThis.constructor.constructor("return process")()`, error: "EvalError"},
		{name: "a tool's constructor is no door", code: `const F = tools.echo.constructor;
let out; try { F("return process")() } catch (e) { out = e.name }
return [F === Function, out, Object.getOwnPropertyNames(tools.echo).sort().join()]`,
			value: `[true,"EvalError","length,name"]`},
		{name: "async function constructor is no door", code: `return (async function () {}).constructor("return 1")`, error: "EvalError"},
		{name: "generator function constructor is no door", code: `return (function* () {}).constructor("return 1")`, error: "EvalError"},
		{name: "eval is not available", code: `return eval("typeof process")`, error: "EvalError"},
		{name: "instanceof Function still works", code: `return [(() => 1) instanceof Function, typeof Function.prototype.call]`, value: `[true,"function"]`},
		{name: "GoError is absent", code: `return typeof GoError`, value: `"undefined"`},
		{name: "tools cannot be replaced", code: `"use strict"; let out; try { tools = {} } catch (e) { out = e.name }
return [out, await tools.echo({x: 1})]`, value: `["TypeError",{"x":1}]`},
		{name: "tools is frozen", code: `"use strict"; const out = [];
for (const f of [() => { tools.echo = () => 1 }, () => { tools.other = 1 }, () => { delete tools.echo },
    () => Object.setPrototypeOf(tools, {}), () => Object.defineProperty(tools, "echo", {value: 1})]) {
  try { f(); out.push("changed") } catch (e) { out.push(e.name) }
}
return [out.join(), Object.isFrozen(tools)]`, value: `["TypeError,TypeError,TypeError,TypeError,TypeError",true]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			res, err := Run(context.Background(), tc.code, []string{"echo", "deep", "huge"}, bombs, tc.lim)
			elapsed := time.Since(start)
			switch {
			case tc.limit != "":
				var le *LimitError
				if !errors.As(err, &le) || le.Limit != tc.limit {
					t.Fatalf("err = %.300v (value %.300s), want the %s limit", err, res.Value, tc.limit)
				}
				if !strings.Contains(err.Error(), tc.limit+" limit of") {
					t.Errorf("message %q does not name the limit", err)
				}
			case tc.error != "":
				var se *ScriptError
				if !errors.As(err, &se) || !strings.Contains(se.Message, tc.error) {
					t.Fatalf("err = %.300v (value %.300s), want a ScriptError containing %q", err, res.Value, tc.error)
				}
			default:
				if err != nil || string(res.Value) != tc.value {
					t.Fatalf("got %.300s, %.300v; want %s", res.Value, err, tc.value)
				}
			}
			t.Logf("stopped after %v", elapsed)
			if res, err := Run(context.Background(), `return 40 + 2`, nil, bombs, Limits{}); err != nil || string(res.Value) != "42" {
				t.Fatalf("the next Run after the attack: %s, %v", res.Value, err)
			}
		})
	}
}

// A script that pollutes prototypes, JSON and its tools changes nothing for the host (which tool
// is called, with what) nor for the next script.
func TestPollutionNeitherRedirectsCallsNorSurvivesTheRun(t *testing.T) {
	c := &fakeCaller{}
	tools := []string{"file_read", "file_delete"}
	res := mustRun(t, `Object.prototype.polluted = "yes";
Object.prototype.toJSON = function () { return {path: "/etc/shadow"} };
Array.prototype.push = null;
JSON.stringify = () => '{"path":"/etc/passwd"}';
JSON.parse = () => "forged";
String.prototype.toString = () => "file_delete";
Function.prototype.call = () => "hijacked";
Error = function () { return "forged error" };
try { tools.file_read = tools.file_delete } catch (e) {}
const read = tools.file_read;
const got = await read({path: "go.mod"});
return typeof got`, tools, c, Limits{})
	if names := c.names(); len(names) != 1 || names[0] != "file_read" {
		t.Fatalf("the caller was asked for %v, want only file_read", names)
	}
	// Object.prototype.toJSON is the script's to use (it runs inside the sandbox); what matters is
	// that the host sent valid JSON for the tool the script named and parsed the answer itself.
	if !json.Valid([]byte(c.args[0])) {
		t.Errorf("arguments %q are not JSON", c.args[0])
	}
	if string(res.Value) != `"object"` {
		t.Errorf("the script got %s, want the tool's parsed object", res.Value)
	}

	res = mustRun(t, `return [typeof ({}).polluted, typeof [].push, typeof JSON.stringify({}),
  JSON.parse("1"), typeof Object.prototype.toJSON, String(Error("x"))]`, tools, c, Limits{})
	if string(res.Value) != `["undefined","function","string",1,"undefined","Error: x"]` {
		t.Errorf("the next run sees %s", res.Value)
	}
}

// The only globals are the standard built-ins plus console and tools: anything else (a Go object,
// a host helper) would be authority the script was not given.
func TestGlobalsAreOnlyStandardBuiltIns(t *testing.T) {
	res := mustRun(t, `return Object.getOwnPropertyNames(globalThis)`, nil, nil, Limits{})
	var got []string
	if err := json.Unmarshal(res.Value, &got); err != nil {
		t.Fatal(err)
	}
	allowed := map[string]bool{}
	for _, n := range strings.Fields(`Object Function Array String Number BigInt RegExp Date Boolean Proxy
		Reflect Error AggregateError TypeError ReferenceError SyntaxError RangeError EvalError URIError
		eval Math JSON Symbol WeakSet WeakMap Map Set Promise globalThis NaN undefined Infinity isNaN
		parseInt parseFloat isFinite decodeURI decodeURIComponent encodeURI encodeURIComponent escape
		unescape console tools`) {
		allowed[n] = true
	}
	var extra []string
	for _, n := range got {
		if !allowed[n] {
			extra = append(extra, n)
		}
	}
	sort.Strings(extra)
	if len(extra) > 0 {
		t.Errorf("unexpected globals %v", extra)
	}
}

// A script that booby-traps the values the host reads after it (an error's toString and stack, a
// result's toJSON) gets its own error or the wall limit, never a Go panic in the hub.
func TestTrappedErrorsAndResultsDoNotPanicTheHost(t *testing.T) {
	for _, tc := range []struct{ name, code, want string }{
		{"throwing toString", `Error.prototype.toString = function () { throw new Error("trap") }; throw new Error("x")`, "conversion to text failed"},
		{"throwing stack getter", `const e = new Error("x"); Object.defineProperty(e, "stack", {get() { throw 1 }}); throw e`, "Error: x"},
		{"looping toString", `Error.prototype.toString = function () { for (;;) {} }; throw new Error("x")`, "wall limit"},
		{"throwing toJSON in the result", `return {toJSON() { throw new Error("no json") }}`, "no json"},
		{"looping toJSON in the result", `return {toJSON() { for (;;) {} }}`, "wall limit"},
		{"looping toJSON in a log line", `console.log({toJSON() { for (;;) {} }})`, "wall limit"},
		{"throwing toJSON in an argument", `try { await tools.echo({toJSON() { throw new Error("arg trap") }}) } catch (e) { throw e }`, "arg trap"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Run(context.Background(), tc.code, []string{"echo"}, &fakeCaller{}, Limits{Wall: 300 * time.Millisecond})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one containing %q", err, tc.want)
			}
			if res, err := Run(context.Background(), `return 1`, nil, nil, Limits{}); err != nil || string(res.Value) != "1" {
				t.Fatalf("the next Run: %s, %v", res.Value, err)
			}
		})
	}
}

// Scripts run side by side (as the hub's sessions do) keep to their own runtimes.
func TestConcurrentRunsAreIndependent(t *testing.T) {
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			code := fmt.Sprintf(`Object.prototype.mine = %d;
let sum = 0; for (let k = 0; k < 50; k++) sum += (await tools.echo({k})).k;
return [({}).mine, sum]`, i)
			res, err := Run(context.Background(), code, []string{"echo"}, &fakeCaller{}, Limits{})
			if want := fmt.Sprintf("[%d,1225]", i); err != nil || string(res.Value) != want {
				errs <- fmt.Errorf("run %d: %s, %v; want %s", i, res.Value, err, want)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

package script

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeCaller answers inner calls from a table of handlers and records what it was asked, including
// how many calls were in flight at once.
type fakeCaller struct {
	handlers map[string]func(ctx context.Context, args json.RawMessage) (CallResult, error)

	mu          sync.Mutex
	calls       []string
	args        []string
	inFlight    int
	maxInFlight int
}

func (f *fakeCaller) Call(ctx context.Context, name string, args json.RawMessage) (CallResult, error) {
	f.mu.Lock()
	f.calls = append(f.calls, name)
	f.args = append(f.args, string(args))
	f.inFlight++
	f.maxInFlight = max(f.maxInFlight, f.inFlight)
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		f.inFlight--
		f.mu.Unlock()
	}()
	h, ok := f.handlers[name]
	if !ok {
		return CallResult{Structured: args}, nil // echo
	}
	return h(ctx, args)
}

func (f *fakeCaller) names() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}

func run(t *testing.T, code string, tools []string, c Caller, lim Limits) (Result, error) {
	t.Helper()
	if c == nil {
		c = &fakeCaller{}
	}
	return Run(context.Background(), code, tools, c, lim)
}

func mustRun(t *testing.T, code string, tools []string, c Caller, lim Limits) Result {
	t.Helper()
	res, err := run(t, code, tools, c, lim)
	if err != nil {
		t.Fatalf("Run(%q): %v", code, err)
	}
	return res
}

func TestRunReturnsTheValueAsJSON(t *testing.T) {
	for _, tc := range []struct{ code, want string }{
		{`return 1 + 1`, `2`},
		{``, `null`},
		{`return undefined`, `null`},
		{`return {a: [1, "x", null], b: true}`, `{"a":[1,"x",null],"b":true}`},
		{`const x = await Promise.resolve(5); return x * 2`, `10`},
		{`return "line1\nline2"`, `"line1\nline2"`},
	} {
		res := mustRun(t, tc.code, nil, nil, Limits{})
		if string(res.Value) != tc.want {
			t.Errorf("Run(%q) = %s, want %s", tc.code, res.Value, tc.want)
		}
	}
}

func TestToolCallsGetStructuredResultElseText(t *testing.T) {
	c := &fakeCaller{handlers: map[string]func(context.Context, json.RawMessage) (CallResult, error){
		"file_read": func(context.Context, json.RawMessage) (CallResult, error) {
			return CallResult{Structured: json.RawMessage(`{"content":"module x","size":8}`), Text: "ignored"}, nil
		},
		"github__search_issues": func(context.Context, json.RawMessage) (CallResult, error) {
			return CallResult{Text: "3 issues"}, nil
		},
	}}
	res := mustRun(t, `const f = await tools.file_read({path: "go.mod"});
const s = await tools["github__search_issues"]({q: "bug"});
return [f.size, s]`, []string{"file_read", "github__search_issues"}, c, Limits{})
	if string(res.Value) != `[8,"3 issues"]` {
		t.Errorf("value = %s", res.Value)
	}
	if got := strings.Join(c.args, " "); got != `{"path":"go.mod"} {"q":"bug"}` {
		t.Errorf("the caller got arguments %s", got)
	}
	if res.Calls != 2 {
		t.Errorf("Calls = %d, want 2", res.Calls)
	}
}

func TestMissingArgumentIsAnEmptyObjectAndABadOneIsRejected(t *testing.T) {
	c := &fakeCaller{}
	res := mustRun(t, `const a = await tools.echo();
let err = "";
try { await tools.echo([1, 2]) } catch (e) { err = e.message }
return [a, err]`, []string{"echo"}, c, Limits{})
	var got []any
	if err := json.Unmarshal(res.Value, &got); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got[0]) != "map[]" || !strings.Contains(got[1].(string), "must be an object") {
		t.Errorf("value = %s", res.Value)
	}
	if len(c.names()) != 1 {
		t.Errorf("the caller was asked %d times, want 1 (a bad argument never reaches it)", len(c.names()))
	}
}

func TestToolErrorAndCallerErrorAreCatchableRejections(t *testing.T) {
	c := &fakeCaller{handlers: map[string]func(context.Context, json.RawMessage) (CallResult, error){
		"denied": func(context.Context, json.RawMessage) (CallResult, error) {
			return CallResult{Text: "denied by policy rule 3", IsError: true}, nil
		},
		"broken": func(context.Context, json.RawMessage) (CallResult, error) {
			return CallResult{}, errors.New("upstream server crashed")
		},
	}}
	res := mustRun(t, `const out = [];
for (const name of ["denied", "broken"]) {
  try { await tools[name]({}) } catch (e) { out.push([e instanceof Error, e.message]) }
}
return out`, []string{"denied", "broken"}, c, Limits{})
	want := `[[true,"denied by policy rule 3"],[true,"tools.broken: upstream server crashed"]]`
	if string(res.Value) != want {
		t.Errorf("value = %s, want %s", res.Value, want)
	}

	_, err := run(t, `await tools.denied({})`, []string{"denied"}, c, Limits{})
	var se *ScriptError
	if !errors.As(err, &se) || !strings.Contains(se.Message, "denied by policy rule 3") {
		t.Errorf("uncaught tool error = %v, want a ScriptError with the tool's text", err)
	}
}

func TestUnknownToolSaysHowToFindTools(t *testing.T) {
	_, err := run(t, `return await tools.file_raed({path: "x"})`, []string{"file_read"}, nil, Limits{})
	var se *ScriptError
	if !errors.As(err, &se) || !strings.Contains(se.Message, "file_raed") || !strings.Contains(se.Message, "tools_search") {
		t.Fatalf("err = %v, want a ScriptError naming file_raed and tools_search", err)
	}
	// Asking whether a tool exists does not throw.
	res := mustRun(t, `return ["file_read" in tools, "nope" in tools, Object.keys(tools)]`, []string{"file_read"}, nil, Limits{})
	if string(res.Value) != `[true,false,["file_read"]]` {
		t.Errorf("value = %s", res.Value)
	}
}

func TestConsoleGoesToLogs(t *testing.T) {
	res := mustRun(t, `console.log("a", 1, {b: 2}, [3]); console.error(new Error("bad")); console.warn("w"); return null`,
		nil, nil, Limits{})
	want := []string{`a 1 {"b":2} [3]`, `[error] Error: bad`, `[warn] w`}
	if strings.Join(res.Logs, "|") != strings.Join(want, "|") {
		t.Errorf("logs = %q, want %q", res.Logs, want)
	}
}

func TestErrorsCarryTheLineAndColumnInTheUsersCode(t *testing.T) {
	for _, tc := range []struct {
		name, code string
		line, col  int
		msg        string
	}{
		{"thrown on line 1", `throw new Error("first")`, 1, 7, "first"},
		{"type error on line 3", "const a = 1;\nconst b = null;\n  b.field.x = a;", 3, 5, "TypeError"},
		{"syntax error on line 2", "let x = 1;\nlet = = 2;", 2, 7, "SyntaxError"},
		{"unclosed bracket at the end", "return (1 +\n 2", 2, 3, "SyntaxError"},
		{"after an await", "await tools.echo({});\nnull.x", 2, 6, "TypeError"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := run(t, tc.code, []string{"echo"}, nil, Limits{})
			var se *ScriptError
			if !errors.As(err, &se) {
				t.Fatalf("err = %v, want a ScriptError", err)
			}
			if se.Line != tc.line || se.Column != tc.col || !strings.Contains(se.Message, tc.msg) {
				t.Errorf("got line %d column %d %q, want line %d column %d containing %q",
					se.Line, se.Column, se.Message, tc.line, tc.col, tc.msg)
			}
			if !strings.Contains(err.Error(), fmt.Sprintf("line %d, column %d", tc.line, tc.col)) {
				t.Errorf("message %q does not name the position", err.Error())
			}
		})
	}
}

func TestNegativeLimitIsRejectedNamingTheField(t *testing.T) {
	_, err := Run(context.Background(), `return 1`, nil, &fakeCaller{}, Limits{Calls: -1})
	if err == nil || !strings.Contains(err.Error(), "Calls") || !strings.Contains(err.Error(), "positive") {
		t.Fatalf("err = %v, want one naming Calls and the fix", err)
	}
}

func TestCancellingTheContextStopsTheScriptPromptly(t *testing.T) {
	blocking := &fakeCaller{handlers: map[string]func(context.Context, json.RawMessage) (CallResult, error){
		"wait": func(ctx context.Context, _ json.RawMessage) (CallResult, error) {
			<-ctx.Done()
			return CallResult{}, ctx.Err()
		},
	}}
	for _, code := range []string{`for (;;) {}`, `await tools.wait({})`} {
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(100*time.Millisecond, cancel)
		start := time.Now()
		_, err := Run(ctx, code, []string{"wait"}, blocking, Limits{})
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Run(%q) after cancel = %v, want context.Canceled", code, err)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("Run(%q) took %v to stop after cancel", code, d)
		}
	}
}

func TestAPromiseNothingSettlesIsAnError(t *testing.T) {
	_, err := run(t, `await new Promise(() => {})`, nil, nil, Limits{})
	var se *ScriptError
	if !errors.As(err, &se) || !strings.Contains(se.Message, "nothing will settle") {
		t.Fatalf("err = %v", err)
	}
}

func TestConcurrencyCapHoldsUnderPromiseAll(t *testing.T) {
	c := &fakeCaller{handlers: map[string]func(context.Context, json.RawMessage) (CallResult, error){
		"slow": func(ctx context.Context, args json.RawMessage) (CallResult, error) {
			time.Sleep(10 * time.Millisecond)
			return CallResult{Structured: args}, nil
		},
	}}
	res := mustRun(t, `const ps = [];
for (let i = 0; i < 24; i++) ps.push(tools.slow({i}));
const out = await Promise.all(ps);
return out.map(o => o.i).join(",")`, []string{"slow"}, c, Limits{Concurrency: 3})
	want := make([]string, 24)
	for i := range want {
		want[i] = fmt.Sprint(i)
	}
	if string(res.Value) != `"`+strings.Join(want, ",")+`"` {
		t.Errorf("value = %s (results out of order or lost)", res.Value)
	}
	if c.maxInFlight != 3 {
		t.Errorf("at most %d calls were in flight, want exactly 3 (the cap, reached)", c.maxInFlight)
	}
}

func TestThousandCallsWorkAndOneMoreHitsTheCallsLimit(t *testing.T) {
	c := &fakeCaller{}
	res := mustRun(t, `let n = 0; for (let i = 0; i < 1000; i++) n += (await tools.noop({i})).i >= 0 ? 1 : 0; return n`,
		[]string{"noop"}, c, Limits{Calls: 1000})
	if string(res.Value) != "1000" || res.Calls != 1000 {
		t.Fatalf("value %s, calls %d; want 1000 and 1000", res.Value, res.Calls)
	}
	_, err := run(t, `for (let i = 0; i < 1001; i++) { try { await tools.noop({}) } catch (e) {} } return "went on"`,
		[]string{"noop"}, c, Limits{Calls: 1000})
	var le *LimitError
	if !errors.As(err, &le) || le.Limit != "calls" || le.Value != 1000 {
		t.Fatalf("err = %v, want the calls limit of 1000", err)
	}
	if !strings.Contains(err.Error(), "calls limit of 1000") || !strings.Contains(err.Error(), "fewer tool calls") {
		t.Errorf("message %q does not name the limit, its value and the fix", err)
	}
}

func TestOversizedCodeIsRejectedNamingTheLimit(t *testing.T) {
	_, err := Run(context.Background(), strings.Repeat(" ", 300<<10), nil, &fakeCaller{}, Limits{})
	if err == nil || !strings.Contains(err.Error(), "code is 307200 bytes, more than 262144") {
		t.Fatalf("err = %v", err)
	}
}

func TestWallLimitStopsAScriptWaitingOnACallAndKeepsItsLogs(t *testing.T) {
	c := &fakeCaller{handlers: map[string]func(context.Context, json.RawMessage) (CallResult, error){
		"hang": func(ctx context.Context, _ json.RawMessage) (CallResult, error) {
			<-ctx.Done() // the hub's path honours ctx; Run cancels it when it stops
			return CallResult{}, ctx.Err()
		},
	}}
	start := time.Now()
	res, err := Run(context.Background(), `console.log("before"); await tools.hang({}); return 1`,
		[]string{"hang"}, c, Limits{Wall: 200 * time.Millisecond})
	var le *LimitError
	if !errors.As(err, &le) || le.Limit != "wall" || le.Value != 200 || le.Unit != "ms" {
		t.Fatalf("err = %v, want the wall limit of 200 ms", err)
	}
	if !strings.Contains(err.Error(), "wall limit of 200 ms exceeded") || !strings.Contains(err.Error(), "raise the timeout") {
		t.Errorf("message %q does not name the limit, its value and the fix", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("stopping took %v", d)
	}
	if len(res.Logs) != 1 || res.Logs[0] != "before" || res.Value != nil || res.Calls != 1 {
		t.Errorf("result with the error = %+v, want the log line, no value, 1 call", res)
	}
}

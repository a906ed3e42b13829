package script

import (
	"fmt"
	"time"
)

// Defaults for a zero field of Limits. They are sized for an agent's glue code (a few hundred
// tool calls over JSON results), not for number crunching: a script that needs more says so
// through its caller's Limits.
const (
	DefaultWall        = 60 * time.Second
	DefaultMemory      = 256 << 20 // bytes of heap growth
	DefaultOutput      = 1 << 20   // bytes of result plus logs
	DefaultCalls       = 5000
	DefaultConcurrency = 8
	DefaultDepth       = 2000 // JavaScript call frames
)

// Limits bound one Run. A zero field takes its Default; a negative one is an error, so a typo
// never turns a limit off.
type Limits struct {
	// Wall is the whole run's time, waiting on tool calls included.
	Wall time.Duration
	// Memory bounds how far the hub's heap may grow while the script runs (see docs/architecture.md,
	// "Script mode": goja has no per-runtime allocator, so this is measured on the process).
	Memory int64
	// Output bounds the bytes of the returned JSON value plus every console line.
	Output int
	// Calls bounds the inner tool calls a script may start.
	Calls int
	// Concurrency bounds the inner calls in flight at once (Promise.all queues the rest), so one
	// script cannot monopolise the hub's upstream servers.
	Concurrency int
	// Depth bounds the JavaScript call stack, so deep recursion is a LimitError and never a Go
	// stack overflow, which would kill the hub.
	Depth int
}

// withDefaults fills zero fields and rejects negative ones, naming the field and the fix.
func (l Limits) withDefaults() (Limits, error) {
	type field struct {
		name string
		neg  bool
	}
	for _, f := range []field{
		{"Wall", l.Wall < 0}, {"Memory", l.Memory < 0}, {"Output", l.Output < 0},
		{"Calls", l.Calls < 0}, {"Concurrency", l.Concurrency < 0}, {"Depth", l.Depth < 0},
	} {
		if f.neg {
			return l, fmt.Errorf("script limits: %s is negative; use 0 for the default or a positive value", f.name)
		}
	}
	if l.Wall == 0 {
		l.Wall = DefaultWall
	}
	if l.Memory == 0 {
		l.Memory = DefaultMemory
	}
	if l.Output == 0 {
		l.Output = DefaultOutput
	}
	if l.Calls == 0 {
		l.Calls = DefaultCalls
	}
	if l.Concurrency == 0 {
		l.Concurrency = DefaultConcurrency
	}
	if l.Depth == 0 {
		l.Depth = DefaultDepth
	}
	return l, nil
}

// LimitError says which limit stopped a script. It is returned (never thrown into the script),
// so a script cannot catch it and carry on.
type LimitError struct {
	// Limit is one of "wall", "memory", "output", "calls", "recursion".
	Limit string
	// Value is the limit in force, in its unit (see Unit).
	Value int64
	// Unit is "ms", "bytes", "calls" or "frames".
	Unit string
	// Detail adds what was observed, when known.
	Detail string
}

func (e *LimitError) Error() string {
	msg := fmt.Sprintf("script stopped: %s limit of %d %s exceeded", e.Limit, e.Value, e.Unit)
	if e.Detail != "" {
		msg += " (" + e.Detail + ")"
	}
	return msg + "; " + e.fix()
}

func (e *LimitError) fix() string {
	switch e.Limit {
	case "wall":
		return "make the script do less per run, or raise the timeout"
	case "memory":
		return "keep less data in the script (filter tool results as they arrive), or raise the memory limit"
	case "output":
		return "return a smaller value and log less (summarise, or return a count instead of the data)"
	case "calls":
		return "make fewer tool calls per run (batch, or split the work across runs), or raise the calls limit"
	case "recursion":
		return "replace deep recursion with a loop"
	}
	return "raise the limit"
}

// ScriptError is an exception the script did not catch, or a syntax error, with its position in
// the user's code (1-based; 0 when the engine did not give one, e.g. `throw "text"`).
type ScriptError struct {
	Message string
	Line    int
	Column  int
}

func (e *ScriptError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("script error at line %d, column %d: %s", e.Line, e.Column, e.Message)
	}
	return "script error: " + e.Message
}

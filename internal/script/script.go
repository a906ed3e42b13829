// Package script runs an agent's JavaScript in a sandbox whose only authority is the tool calls it
// is offered: script mode's script_run (issue 36). The engine is goja (pure Go; the choice is
// measured in docs/benchmarks.md, "Script engine"). Each Run gets a fresh runtime, so nothing a
// script does to its globals or prototypes outlives it, and every inner call goes through the
// Caller, which is the hub's ordinary path (policy, approvals, audit).
package script

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/dop251/goja"
)

// Caller makes one tool call for a script: the hub routes it through policy, approvals and audit
// exactly as a direct call. It must return when ctx is cancelled: Run waits for its calls.
type Caller interface {
	Call(ctx context.Context, name string, args json.RawMessage) (CallResult, error)
}

// CallResult is what one inner call gave. The script receives Structured when it is not nil
// (parsed as JSON), else Text; IsError makes the call reject with Text as the Error's message.
type CallResult struct {
	Structured json.RawMessage
	Text       string
	IsError    bool
}

// Result is a finished script's outcome.
type Result struct {
	// Value is the script's return value as JSON (undefined gives null).
	Value json.RawMessage
	// Logs are console.log lines in order; console.error and console.warn lines are prefixed.
	Logs []string
	// Calls counts the inner calls the script started.
	Calls int
	// Duration is the run's wall time.
	Duration time.Duration
}

// Run runs code, the body of an async function (top-level await; return gives the result), with
// a frozen global `tools` holding one async function per name in tools. It returns a *LimitError
// when a limit stopped the script, a *ScriptError for an uncaught exception or a syntax error, and
// a wrapped ctx error when ctx ended first. Logs gathered so far come back with every error.
func Run(ctx context.Context, code string, tools []string, caller Caller, lim Limits) (Result, error) {
	start := time.Now()
	lim, err := lim.withDefaults()
	if err != nil {
		return Result{}, err
	}
	if caller == nil && len(tools) > 0 {
		return Result{}, errors.New("script: caller is nil but tools are offered; pass the hub's Caller")
	}
	for i, name := range tools {
		if name == "" {
			return Result{}, fmt.Errorf("script: tools[%d] is empty; pass the tools' full names", i)
		}
	}
	prog, err := compile(code)
	if err != nil {
		return Result{}, err
	}

	runCtx, cancel := context.WithCancel(ctx)
	r := &runner{
		ctx:     runCtx,
		lim:     lim,
		caller:  caller,
		stopped: make(chan struct{}),
		done:    make(chan callDone, lim.Concurrency),
	}
	// Owner of every goroutine started below: cancel ends the inner calls and the watchdog, and
	// wg.Wait makes sure none outlives Run.
	quit := make(chan struct{})
	defer func() {
		close(quit)
		cancel()
		r.wg.Wait()
	}()

	if err := r.setup(tools); err != nil {
		return Result{}, err
	}
	r.wg.Add(1)
	go r.watch(quit)

	value, err := r.run(prog)
	if stop := r.stopReason(); stop != nil {
		// A limit that fired while the host was reading the outcome (a toJSON or toString of the
		// script's that never returns) is the outcome.
		value, err = nil, stop
	}
	res := Result{Value: value, Logs: r.logs, Calls: r.calls, Duration: time.Since(start)}
	if err != nil {
		res.Value = nil
	}
	return res, err
}

// runner is one Run's state. Everything but stop, stopped and the done channel belongs to the
// goroutine that called Run (goja's runtime is not goroutine-safe).
type runner struct {
	ctx    context.Context
	lim    Limits
	caller Caller
	vm     *goja.Runtime

	stopMu  sync.Mutex
	stopErr error // guarded by stopMu: the watchdog writes it, the Run goroutine reads it
	stopped chan struct{}

	done     chan callDone
	inFlight int
	queue    []*pendingCall
	wg       sync.WaitGroup

	calls    int
	logs     []string
	outBytes int

	// Captured before the user's code runs, so a script that replaces JSON or Error cannot change
	// what the host sends to tools or receives back.
	stringify  goja.Callable
	parse      goja.Callable
	toString   goja.Callable
	reflectGet goja.Callable
	errorCtor  goja.Value
}

type pendingCall struct {
	name            string
	args            json.RawMessage
	resolve, reject func(any) error
}

type callDone struct {
	call *pendingCall
	res  CallResult
	err  error
}

// stop ends the script with err (the first reason wins): it interrupts JavaScript that is running
// and wakes the loop if it is waiting on calls. Safe from any goroutine.
func (r *runner) stop(err error) {
	r.stopMu.Lock()
	defer r.stopMu.Unlock()
	if r.stopErr != nil {
		return
	}
	r.stopErr = err
	close(r.stopped)
	if r.vm != nil {
		r.vm.Interrupt(err)
	}
}

// stopReason is the error that stopped the script, or nil.
func (r *runner) stopReason() error {
	r.stopMu.Lock()
	defer r.stopMu.Unlock()
	return r.stopErr
}

// reinterrupt renews a stop's interrupt. A native function that called back into JavaScript may
// have received (and so consumed) the interrupt as an error; renewing it makes sure the script
// stops at its next instruction all the same.
func (r *runner) reinterrupt() {
	if err := r.stopReason(); err != nil {
		r.vm.Interrupt(err)
	}
}

// watch enforces the wall time, ctx and the memory limit from outside the VM.
func (r *runner) watch(quit <-chan struct{}) {
	defer r.wg.Done()
	wall := time.NewTimer(r.lim.Wall)
	defer wall.Stop()
	mem := newHeapWatch(r.lim.Memory)
	tick := time.NewTicker(heapSampleEvery)
	defer tick.Stop()
	for {
		select {
		case <-quit:
			return
		case <-r.ctx.Done():
			r.stop(cancelled(r.ctx))
			return
		case <-wall.C:
			r.stop(&LimitError{Limit: "wall", Value: r.lim.Wall.Milliseconds(), Unit: "ms"})
			return
		case <-tick.C:
			if grown, over := mem.over(); over {
				r.stop(&LimitError{Limit: "memory", Value: r.lim.Memory, Unit: "bytes",
					Detail: fmt.Sprintf("the heap grew by %d bytes while the script ran", grown)})
				return
			}
		}
	}
}

// run calls the compiled async function and then serves its tool calls until its promise settles.
func (r *runner) run(prog *goja.Program) (json.RawMessage, error) {
	fnVal, err := r.vm.RunProgram(prog)
	if err != nil {
		return nil, r.engineError(err)
	}
	fn, ok := goja.AssertFunction(fnVal)
	if !ok {
		return nil, errors.New("script: internal error: the wrapper is not a function")
	}
	pv, err := fn(goja.Undefined())
	if err != nil {
		return nil, r.engineError(err)
	}
	promise, ok := pv.Export().(*goja.Promise)
	if !ok {
		return nil, errors.New("script: internal error: the wrapper did not return a promise")
	}
	for {
		if err := r.stopReason(); err != nil {
			return nil, err
		}
		switch promise.State() {
		case goja.PromiseStateFulfilled:
			return r.resultJSON(promise.Result())
		case goja.PromiseStateRejected:
			return nil, r.scriptError(promise.Result())
		}
		r.startQueued()
		if r.inFlight == 0 {
			return nil, &ScriptError{Message: "the script awaits a promise that nothing will settle " +
				"(no tool call is in flight, and timers are not available in scripts)"}
		}
		select {
		case d := <-r.done:
			r.inFlight--
			if r.ctx.Err() != nil {
				// The call most likely failed because of the cancel: report the cancel, not that.
				r.stop(cancelled(r.ctx))
				return nil, r.stopReason()
			}
			if err := r.settle(d); err != nil {
				return nil, r.engineError(err)
			}
		case <-r.stopped:
			return nil, r.stopReason()
		}
	}
}

// startQueued starts queued calls while there is room under Concurrency.
func (r *runner) startQueued() {
	for len(r.queue) > 0 && r.inFlight < r.lim.Concurrency {
		c := r.queue[0]
		r.queue[0] = nil
		r.queue = r.queue[1:]
		r.start(c)
	}
}

func (r *runner) start(c *pendingCall) {
	r.inFlight++
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		res, err := r.call(c)
		// done has room for every call in flight, so this never blocks.
		r.done <- callDone{call: c, res: res, err: err}
	}()
}

// call runs one inner call; a panic in the caller fails that call instead of the hub.
func (r *runner) call(c *pendingCall) (res CallResult, err error) {
	defer func() {
		if p := recover(); p != nil {
			res, err = CallResult{}, fmt.Errorf("internal error in the hub's call (%v)", p)
		}
	}()
	return r.caller.Call(r.ctx, c.name, c.args)
}

// engineError turns an error out of goja into the package's errors.
func (r *runner) engineError(err error) error {
	if stop := r.stopReason(); stop != nil {
		return stop
	}
	var interrupted *goja.InterruptedError
	if errors.As(err, &interrupted) {
		if e, ok := interrupted.Value().(error); ok {
			return e
		}
		return fmt.Errorf("script interrupted: %v", interrupted.Value())
	}
	var overflow *goja.StackOverflowError
	if errors.As(err, &overflow) {
		return &LimitError{Limit: "recursion", Value: int64(r.lim.Depth), Unit: "frames",
			Detail: "the call stack grew past the limit"}
	}
	var ex *goja.Exception
	if errors.As(err, &ex) {
		return r.scriptError(ex.Value())
	}
	return fmt.Errorf("script: %w", err)
}

func cancelled(ctx context.Context) error {
	return fmt.Errorf("script cancelled: %w", context.Cause(ctx))
}

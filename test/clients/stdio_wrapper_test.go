//go:build linux

package clients_test

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// A stdio hub must exit when its client closes its stdin: that is how most clients end a stdio
// server, and a hub that lingers (e.g. because a subscriptions/listen stream is still open)
// leaks one process per session. A CLI that closes stdin and then, after a grace period, sends
// SIGTERM hides the bug from a plain "is anything left running" check, so the CLIs start the
// stdio hub through this wrapper — this test binary, re-executed — which relays stdin to the
// real `switchboard serve --stdio` and records, in the file named by wrapEnv, when stdin
// closed, which signals arrived (forwarded to the hub) and when the hub exited.

const (
	wrapEnv     = "SWITCHBOARD_MATRIX_STDIO_EVENTS" // event file; set = run as the wrapper
	wrapBinEnv  = "SWITCHBOARD_MATRIX_STDIO_BIN"    // the switchboard binary to run
	wrapDumpEnv = "SWITCHBOARD_MATRIX_STDIO_DUMP"   // optional: copy of everything the client sent
)

// stdioExitGrace is how long after its stdin closed the hub has to exit on its own.
const stdioExitGrace = 3 * time.Second

func stdioWrapper() int {
	events, err := os.OpenFile(os.Getenv(wrapEnv), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		fmt.Fprintln(os.Stderr, "stdio wrapper:", err)
		return 2
	}
	var mu sync.Mutex
	start := time.Now()
	record := func(what string) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(events, "%d %s\n", time.Since(start).Milliseconds(), what)
	}
	hub := exec.Command(os.Getenv(wrapBinEnv), os.Args[1:]...)
	dump := os.Getenv(wrapDumpEnv)
	for _, k := range []string{wrapEnv, wrapBinEnv, wrapDumpEnv} {
		_ = os.Unsetenv(k)
	}
	hub.Env = os.Environ()
	hub.Stdout, hub.Stderr = os.Stdout, os.Stderr
	// When the CLI kills the wrapper (SIGKILL), the hub dies with it, as it would if the CLI
	// had started it directly.
	hub.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	in, err := hub.StdinPipe()
	if err != nil {
		fmt.Fprintln(os.Stderr, "stdio wrapper:", err)
		return 2
	}
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	if err := hub.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "stdio wrapper:", err)
		return 2
	}
	record("start")
	ending := make(chan struct{}) // closed at the first end request (stdin closed or a signal)
	var endOnce sync.Once
	end := func() { endOnce.Do(func() { close(ending) }) }
	go func() {
		for s := range sigs {
			record("signal " + s.String())
			end()
			_ = hub.Process.Signal(s)
		}
	}()
	go func() { // once asked to end, say every 250 ms that the hub still runs
		<-ending
		for range time.Tick(250 * time.Millisecond) {
			record("still-running")
		}
	}()
	go func() {
		var src io.Reader = os.Stdin
		if dump != "" {
			if f, err := os.Create(dump); err == nil {
				defer f.Close()
				src = io.TeeReader(os.Stdin, f)
			}
		}
		_, _ = io.Copy(in, src)
		record("stdin-closed")
		end()
		_ = in.Close()
	}()
	err = hub.Wait()
	record("hub-exited " + strconv.Quote(fmt.Sprint(err)))
	if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
		return ee.ExitCode()
	}
	return 0
}

// checkStdioExit fails the row when the client asked the stdio hub to end — closed its stdin
// or sent SIGINT/SIGTERM/SIGHUP — and the hub did not exit by itself within stdioExitGrace,
// or before the client gave up and killed it (Claude Code sends SIGINT, SIGTERM 100 ms later,
// SIGKILL 400 ms after that).
func checkStdioExit(t interface{ Logf(string, ...any) }, file string, fail func(string, ...any)) {
	b, err := os.ReadFile(file)
	if err != nil {
		fail("the stdio hub was never started by the client (%v)", err)
		return
	}
	end, exit, lastAlive, how := -1, -1, -1, ""
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		ms, what, _ := strings.Cut(line, " ")
		at, _ := strconv.Atoi(ms)
		switch {
		case (what == "stdin-closed" || strings.HasPrefix(what, "signal ")) && end < 0:
			end, how = at, what
		case strings.HasPrefix(what, "hub-exited") && exit < 0:
			exit = at
		case what == "still-running":
			lastAlive = at
		}
	}
	grace := int(stdioExitGrace.Milliseconds())
	switch {
	case end < 0:
		t.Logf("stdio hub: the client neither closed its stdin nor signalled it (killed it?); events (ms):\n%s", b)
	case exit >= 0 && exit <= end+grace:
		t.Logf("stdio hub: exited %d ms after the client's %s", exit-end, how)
	case exit > end+grace:
		fail("the stdio hub exited only %d ms after the client's %s (a stdio server must exit when its client closes its stdin or signals it); events (ms since start):\n%s", exit-end, how, b)
	default: // the wrapper never saw the hub exit: the client (or the test, after the row) killed it
		fail("the client had to kill the stdio hub: it still ran %d ms after the client's %s (a stdio server must exit when its client closes its stdin or signals it); events (ms since start):\n%s", max(lastAlive, end)-end, how, b)
	}
}

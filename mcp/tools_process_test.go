package mcp

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/internal/process"
	"github.com/switchboard-hub/switchboard/internal/testutil"
	"github.com/switchboard-hub/switchboard/mcp/tools"
)

// newProcessTestService builds a Service with a process service on a fresh workspace and a real
// client session to it.
func newProcessTestService(t *testing.T, opts process.Options) (*Service, *sdk.ClientSession) {
	t.Helper()
	s := newTestService(t, WithProcessService(process.New(opts)))
	return s, connect(t, s)
}

// rawCall returns a tool's structured result as a generic map, to check the exact JSON keys.
func rawCall(t *testing.T, cs *sdk.ClientSession, tool string, args any) map[string]any {
	t.Helper()
	var m map[string]any
	mustCall(t, cs, tool, args, &m)
	return m
}

func keysOf(m map[string]any) []string {
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func waitProcess(t *testing.T, cs *sdk.ClientSession, id string) tools.ProcessWaitOutput {
	t.Helper()
	var w tools.ProcessWaitOutput
	mustCall(t, cs, "process_wait", map[string]any{"id": id, "timeout": 10}, &w)
	if !w.Exited {
		t.Fatalf("process_wait(%s): still running after 10s: %+v", id, w)
	}
	return w
}

// pollOutput calls process_output until the output contains want.
func pollOutput(t *testing.T, cs *sdk.ClientSession, id, want string) tools.ProcessOutputOutput {
	t.Helper()
	var o tools.ProcessOutputOutput
	if !testutil.Poll(testutil.Patience, func() bool {
		o = tools.ProcessOutputOutput{}
		mustCall(t, cs, "process_output", map[string]any{"id": id}, &o)
		return strings.Contains(o.Output, want)
	}) {
		t.Fatalf("process_output(%s) = %q, want it to contain %q", id, o.Output, want)
	}
	return o
}

// TestProcessToolsContractKeys pins the JSON keys of the six process tools in docs/tools.md (plus the
// documented additions) so a renamed field cannot slip through.
func TestProcessToolsContractKeys(t *testing.T) {
	_, cs := newProcessTestService(t, process.Options{})
	start := rawCall(t, cs, "process_start", map[string]any{"command": "cat"})
	if got, want := keysOf(start), []string{"args", "command", "id", "pid", "startedAt"}; !slices.Equal(got, want) {
		t.Errorf("process_start keys %v, want %v", got, want)
	}
	id := start["id"].(string)
	input := rawCall(t, cs, "process_input", map[string]any{"id": id, "input": "x\n"})
	if got, want := keysOf(input), []string{"id", "message", "success"}; !slices.Equal(got, want) {
		t.Errorf("process_input keys %v, want %v", got, want)
	}
	out := rawCall(t, cs, "process_output", map[string]any{"id": id})
	if got, want := keysOf(out), []string{"dropped", "id", "next", "output", "status"}; !slices.Equal(got, want) {
		t.Errorf("process_output keys %v, want %v", got, want)
	}
	list := rawCall(t, cs, "process_list", map[string]any{})
	if got, want := keysOf(list), []string{"processes", "total"}; !slices.Equal(got, want) {
		t.Errorf("process_list keys %v, want %v", got, want)
	}
	entry := list["processes"].([]any)[0].(map[string]any)
	for _, k := range []string{"id", "command", "args", "dir", "status", "pid", "exitCode", "startedAt", "duration"} {
		if _, ok := entry[k]; !ok {
			t.Errorf("process_list entry lacks %q: %v", k, entry)
		}
	}
	stop := rawCall(t, cs, "process_stop", map[string]any{"id": id})
	if got, want := keysOf(stop), []string{"id", "message", "success"}; !slices.Equal(got, want) {
		t.Errorf("process_stop keys %v, want %v", got, want)
	}
	kill := rawCall(t, cs, "process_kill", map[string]any{"id": id})
	if got, want := keysOf(kill), []string{"id", "message", "success"}; !slices.Equal(got, want) {
		t.Errorf("process_kill keys %v, want %v", got, want)
	}
	wait := rawCall(t, cs, "process_wait", map[string]any{"id": id})
	if got, want := keysOf(wait), []string{"duration", "exitCode", "exited", "id", "output", "status"}; !slices.Equal(got, want) {
		t.Errorf("process_wait keys %v, want %v", got, want)
	}
	exec := rawCall(t, cs, "exec", map[string]any{"command": "true"})
	if got, want := keysOf(exec), []string{"duration_ms", "exit_code", "stderr", "stdout", "timed_out", "truncated"}; !slices.Equal(got, want) {
		t.Errorf("exec keys %v, want %v", got, want)
	}
}

func TestProcessToolsLifecycle(t *testing.T) {
	s, cs := newProcessTestService(t, process.Options{StopGrace: 2 * time.Second})
	if err := os.Mkdir(filepath.Join(s.Workspace().Dir(), "sub"), 0o755); err != nil {
		t.Fatal(err)
	}

	var started tools.ProcessStartOutput
	mustCall(t, cs, "process_start", map[string]any{"command": "sh", "args": []string{"-c", "pwd; echo to-err >&2; exit 7"}, "dir": "sub"}, &started)
	if started.ID == "" || started.PID <= 0 || started.Command != "sh" || len(started.Args) != 2 || started.StartedAt.IsZero() {
		t.Fatalf("process_start = %+v", started)
	}
	w := waitProcess(t, cs, started.ID)
	wantDir := filepath.Join(s.Workspace().Dir(), "sub")
	if w.Status != "exited" || w.ExitCode != 7 || !strings.Contains(w.Output, wantDir+"\n") || !strings.Contains(w.Output, "to-err\n") || w.Duration <= 0 {
		t.Fatalf("process_wait = %+v", w)
	}

	// A long-running cat: input round trip, incremental output, stop.
	var cat tools.ProcessStartOutput
	mustCall(t, cs, "process_start", map[string]any{"command": "cat"}, &cat)
	var in tools.ProcessInputOutput
	mustCall(t, cs, "process_input", map[string]any{"id": cat.ID, "input": "first\n"}, &in)
	if !in.Success {
		t.Fatalf("process_input = %+v", in)
	}
	o1 := pollOutput(t, cs, cat.ID, "first\n")
	if o1.Status != "running" || o1.Next != int64(len("first\n")) || o1.Dropped != 0 {
		t.Fatalf("process_output = %+v", o1)
	}
	mustCall(t, cs, "process_input", map[string]any{"id": cat.ID, "input": "second\n"}, nil)
	deadline := time.Now().Add(5 * time.Second)
	var o2 tools.ProcessOutputOutput
	for o2.Output != "second\n" {
		if time.Now().After(deadline) {
			t.Fatalf("process_output since %d = %+v", o1.Next, o2)
		}
		mustCall(t, cs, "process_output", map[string]any{"id": cat.ID, "since": o1.Next}, &o2)
	}
	var tail tools.ProcessOutputOutput
	mustCall(t, cs, "process_output", map[string]any{"id": cat.ID, "tail": 3}, &tail)
	if tail.Output != "nd\n" {
		t.Fatalf("process_output tail 3 = %q", tail.Output)
	}

	var list tools.ProcessListOutput
	mustCall(t, cs, "process_list", map[string]any{"running_only": true}, &list)
	if list.Total != 1 || len(list.Processes) != 1 || list.Processes[0].ID != cat.ID || list.Processes[0].Status != "running" || list.Processes[0].Dir != "." {
		t.Fatalf("process_list running_only = %+v", list)
	}
	mustCall(t, cs, "process_list", map[string]any{}, &list)
	if list.Total != 2 || list.Processes[0].ID != started.ID || list.Processes[0].Dir != "sub" || list.Processes[0].ExitCode != 7 || list.Processes[0].EndedAt.IsZero() {
		t.Fatalf("process_list = %+v", list)
	}

	var stop tools.ProcessControlOutput
	mustCall(t, cs, "process_stop", map[string]any{"id": cat.ID}, &stop)
	if !stop.Success || !strings.Contains(stop.Message, "status stopped") {
		t.Fatalf("process_stop = %+v", stop)
	}
	mustCall(t, cs, "process_stop", map[string]any{"id": cat.ID}, &stop)
	if stop.Success || !strings.Contains(stop.Message, "already ended") {
		t.Fatalf("second process_stop = %+v", stop)
	}
	if e := call(t, cs, "process_input", map[string]any{"id": cat.ID, "input": "late\n"}, nil); !strings.Contains(e, "id: ") || !strings.Contains(e, "not running") {
		t.Fatalf("process_input after stop: %q", e)
	}

	var sleeper tools.ProcessStartOutput
	mustCall(t, cs, "process_start", map[string]any{"command": "sleep", "args": []string{"300"}}, &sleeper)
	var kill tools.ProcessControlOutput
	mustCall(t, cs, "process_kill", map[string]any{"id": sleeper.ID}, &kill)
	if !kill.Success || !strings.Contains(kill.Message, "status killed, exit code 137") {
		t.Fatalf("process_kill = %+v", kill)
	}
}

func TestProcessWaitTimeout(t *testing.T) {
	_, cs := newProcessTestService(t, process.Options{})
	var started tools.ProcessStartOutput
	mustCall(t, cs, "process_start", map[string]any{"command": "sh", "args": []string{"-c", "echo waiting; sleep 300"}}, &started)
	pollOutput(t, cs, started.ID, "waiting")
	var w tools.ProcessWaitOutput
	mustCall(t, cs, "process_wait", map[string]any{"id": started.ID, "timeout": 1}, &w)
	if w.Exited || w.Status != "running" || w.Output != "waiting\n" {
		t.Fatalf("process_wait before exit = %+v", w)
	}
}

func TestProcessStartPTY(t *testing.T) {
	_, cs := newProcessTestService(t, process.Options{})
	script := "if test -t 1; then echo tty-yes; else echo tty-no; fi"
	var term, plain tools.ProcessStartOutput
	mustCall(t, cs, "process_start", map[string]any{"command": "sh", "args": []string{"-c", script}, "pty": true}, &term)
	mustCall(t, cs, "process_start", map[string]any{"command": "sh", "args": []string{"-c", script}}, &plain)
	if w := waitProcess(t, cs, term.ID); !strings.Contains(w.Output, "tty-yes") {
		t.Fatalf("pty output %q", w.Output)
	}
	if w := waitProcess(t, cs, plain.ID); !strings.Contains(w.Output, "tty-no") {
		t.Fatalf("pipe output %q", w.Output)
	}
}

func TestExecTool(t *testing.T) {
	s, cs := newProcessTestService(t, process.Options{})
	if err := os.Mkdir(filepath.Join(s.Workspace().Dir(), "pkg"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args map[string]any
		want tools.ExecOutput
	}{
		{"output and exit code", map[string]any{"command": "sh", "args": []string{"-c", "echo out; echo err >&2; exit 2"}},
			tools.ExecOutput{ExitCode: 2, Stdout: "out\n", Stderr: "err\n"}},
		{"stdin and env", map[string]any{"command": "sh", "args": []string{"-c", `cat; echo "$GREETING"`}, "stdin": "in ", "env": []string{"GREETING=hi"}},
			tools.ExecOutput{Stdout: "in hi\n"}},
		{"dir", map[string]any{"command": "pwd", "dir": "pkg"},
			tools.ExecOutput{Stdout: filepath.Join(s.Workspace().Dir(), "pkg") + "\n"}},
		{"timeout", map[string]any{"command": "sleep", "args": []string{"30"}, "timeout": 1},
			tools.ExecOutput{ExitCode: 137, TimedOut: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got tools.ExecOutput
			mustCall(t, cs, "exec", tt.args, &got)
			if tt.want.TimedOut && got.DurationMs < 900 {
				t.Fatalf("timed out after %d ms, before the 1 s timeout", got.DurationMs)
			}
			got.DurationMs = 0
			if got != tt.want {
				t.Fatalf("exec = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestProcessToolErrorsNameFieldAndFix(t *testing.T) {
	s, cs := newProcessTestService(t, process.Options{MaxProcesses: 1})
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(s.Workspace().Dir(), "escape")); err != nil {
		t.Fatal(err)
	}
	mustCall(t, cs, "process_start", map[string]any{"command": "sleep", "args": []string{"300"}}, nil)

	tests := []struct {
		tool string
		args map[string]any
		want []string
	}{
		{"process_start", map[string]any{"command": ""}, []string{"command: required"}},
		{"process_start", map[string]any{"command": "true", "dir": "../"}, []string{"dir: ", "outside the workspace"}},
		{"process_start", map[string]any{"command": "true", "dir": "escape"}, []string{"dir: ", "outside the workspace"}},
		{"process_start", map[string]any{"command": "true", "dir": "missing"}, []string{"dir: ", "no such file"}},
		{"process_start", map[string]any{"command": "true"}, []string{"too many running processes", "process_stop"}},
		{"process_start", map[string]any{"command": "true", "env": []string{"NOVALUE"}}, []string{"env: ", "KEY=VALUE"}},
		{"process_stop", map[string]any{"id": "proc-99"}, []string{`id: process "proc-99"`, "process_list"}},
		{"process_kill", map[string]any{"id": ""}, []string{"id: required"}},
		{"process_output", map[string]any{"id": "nope"}, []string{"id: ", "process_list"}},
		{"process_output", map[string]any{"id": "proc-1", "tail": -1}, []string{"tail: "}},
		{"process_output", map[string]any{"id": "proc-1", "since": -5}, []string{"since: "}},
		{"process_input", map[string]any{"id": "proc-1", "input": ""}, []string{"input: required"}},
		{"process_input", map[string]any{"id": "proc-42", "input": "x"}, []string{"id: ", "process_list"}},
		{"process_wait", map[string]any{"id": "proc-1", "timeout": 601}, []string{"timeout: ", "1 to 600"}},
		{"process_wait", map[string]any{"id": "proc-7"}, []string{"id: ", "process_list"}},
		{"exec", map[string]any{"command": "no-such-command-xyz"}, []string{"command: ", "not found"}},
		{"exec", map[string]any{"command": "true", "timeout": -1}, []string{"timeout: "}},
		{"exec", map[string]any{"command": "true", "dir": "/etc"}, []string{"dir: ", "outside the workspace"}},
	}
	for _, tt := range tests {
		name, _ := json.Marshal(tt.args)
		t.Run(tt.tool+string(name), func(t *testing.T) {
			e := call(t, cs, tt.tool, tt.args, nil)
			if e == "" {
				t.Fatal("want a tool error")
			}
			for _, w := range tt.want {
				if !strings.Contains(e, w) {
					t.Errorf("error %q does not mention %q", e, w)
				}
			}
		})
	}
	// The cap released: a finished start that failed (unknown command) is a tool error naming
	// the command and leaves the process service usable.
	mustCall(t, cs, "process_kill", map[string]any{"id": "proc-1"}, nil)
	var before tools.ProcessListOutput
	mustCall(t, cs, "process_list", map[string]any{}, &before)
	if e := call(t, cs, "process_start", map[string]any{"command": "no-such-command-xyz"}, nil); !strings.Contains(e, "command: ") || !strings.Contains(e, "not found") {
		t.Fatalf("unknown command: %q", e)
	}
	// The caller got no ID, so process_list must not show a record for the failed start.
	var after tools.ProcessListOutput
	mustCall(t, cs, "process_list", map[string]any{}, &after)
	if after.Total != before.Total {
		t.Fatalf("failed start left a record the caller never got an ID for: %+v", after.Processes)
	}
}

// A child started through the tools does not see the hub's secrets; env still sets values.
func TestProcessEnvWithoutHubSecrets(t *testing.T) {
	t.Setenv("SWITCHBOARD_TOKEN", "hub-http-token")
	t.Setenv("SWITCHBOARD_IDE_TOKEN", "hub-ide-token")
	t.Setenv("OPENAI_API_KEY", "sk-hub")
	_, cs := newProcessTestService(t, process.Options{})
	var out tools.ExecOutput
	mustCall(t, cs, "exec", map[string]any{"command": "env", "env": []string{"OPENAI_API_KEY=from-agent"}}, &out)
	if strings.Contains(out.Stdout, "hub-") || strings.Contains(out.Stdout, "sk-hub") || !strings.Contains(out.Stdout, "OPENAI_API_KEY=from-agent\n") {
		t.Fatalf("exec child environment:\n%s", out.Stdout)
	}
	var st tools.ProcessStartOutput
	mustCall(t, cs, "process_start", map[string]any{"command": "env"}, &st)
	w := waitProcess(t, cs, st.ID)
	if strings.Contains(w.Output, "hub-") || !strings.Contains(w.Output, "PATH=") {
		t.Fatalf("process_start child environment:\n%s", w.Output)
	}
}

func TestProcessToolAnnotations(t *testing.T) {
	s, _ := newProcessTestService(t, process.Options{})
	want := map[string]struct{ readOnly, destructive bool }{
		"process_start":  {false, false},
		"process_stop":   {false, true},
		"process_kill":   {false, true},
		"process_input":  {false, false},
		"exec":           {false, true},
		"process_list":   {true, false},
		"process_output": {true, false},
		"process_wait":   {true, false},
	}
	seen := 0
	for _, tool := range s.Tools() {
		w, ok := want[tool.Name]
		if !ok {
			continue
		}
		seen++
		a := tool.Annotations
		destructive := a.DestructiveHint != nil && *a.DestructiveHint
		if a.ReadOnlyHint != w.readOnly || (!w.readOnly && destructive != w.destructive) || a.OpenWorldHint == nil || *a.OpenWorldHint {
			t.Errorf("%s annotations %+v, want readOnly %v destructive %v, closed world", tool.Name, a, w.readOnly, w.destructive)
		}
	}
	if seen != len(want) {
		t.Fatalf("found %d of %d process tools", seen, len(want))
	}
}

// TestProcessVisibleAcrossClients: a process started by one client is seen and controlled by
// another, since both share the hub's process service.
func TestProcessVisibleAcrossClients(t *testing.T) {
	s, a := newProcessTestService(t, process.Options{})
	b := connect(t, s)
	var started tools.ProcessStartOutput
	mustCall(t, a, "process_start", map[string]any{"command": "sleep", "args": []string{"300"}}, &started)
	var list tools.ProcessListOutput
	mustCall(t, b, "process_list", map[string]any{"running_only": true}, &list)
	if list.Total != 1 || list.Processes[0].ID != started.ID {
		t.Fatalf("client b sees %+v", list)
	}
	var kill tools.ProcessControlOutput
	mustCall(t, b, "process_kill", map[string]any{"id": started.ID}, &kill)
	if !kill.Success {
		t.Fatalf("client b kill = %+v", kill)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if info, err := s.Processes().Wait(ctx, started.ID); err != nil || info.Status != process.StatusKilled {
		t.Fatalf("after kill by b: %+v, %v", info, err)
	}
}

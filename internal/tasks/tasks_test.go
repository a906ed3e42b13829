package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func open(t *testing.T, o Options) *Store {
	t.Helper()
	s, err := Open(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

var (
	alice      = Owner{Session: "s1", Client: "claude-code", Transport: "unix"}
	aliceAgain = Owner{Session: "s7", Client: "claude-code", Transport: "unix"}
	bob        = Owner{Session: "s2", Client: "cursor", Transport: "unix"}
	aliceHTTP  = Owner{Session: "s9", Client: "claude-code", Transport: "http"}
	// The same name and transport under another client's own token.
	aliceToken = Owner{Session: "s1", Client: "claude-code", Transport: "unix", Identity: "laptop"}
)

// TestLifecycleAndOwnership: a task is found by its owner and by the same client reconnecting
// over the same kind of connection, never by another client or the same name over another
// credential; progress and the result are what the store returns.
func TestLifecycleAndOwnership(t *testing.T) {
	s := open(t, Options{})
	var changes []string
	s.Subscribe(func(c Change) { changes = append(changes, c.Kind+":"+string(c.Task.Status)) })
	task := s.Start(alice, "exec", time.Now(), func() {})
	if !strings.HasPrefix(task.ID, "task-") || len(task.ID) != len("task-")+32 {
		t.Fatalf("id %q is not 128 random bits", task.ID)
	}
	s.SetProgress(task.ID, Progress{Done: 3, Total: 10, Message: "3 of 10"})
	got, err := s.Get(task.ID, aliceAgain)
	if err != nil || got.Status != Working || got.Progress == nil || got.Progress.Done != 3 {
		t.Fatalf("reconnected owner: %+v, %v", got, err)
	}
	for _, other := range []Owner{bob, aliceHTTP, aliceToken, {}} {
		if _, err := s.Get(task.ID, other); !errors.Is(err, ErrNotOwner) {
			t.Errorf("%+v read another's task: %v", other, err)
		}
		if err := s.Cancel(task.ID, &other); !errors.Is(err, ErrNotOwner) {
			t.Errorf("%+v cancelled another's task: %v", other, err)
		}
	}
	if s.Running() != 1 {
		t.Fatalf("running = %d", s.Running())
	}
	s.Finish(task.ID, json.RawMessage(`{"content":[{"type":"text","text":"ok"}]}`), nil)
	got, _ = s.Get(task.ID, alice)
	if got.Status != Completed || string(got.Result) != `{"content":[{"type":"text","text":"ok"}]}` {
		t.Fatalf("finished: %+v", got)
	}
	if s.Running() != 0 || len(s.List()) != 1 || s.List()[0].Result != nil {
		t.Fatalf("list after finish: %+v", s.List())
	}
	if _, err := s.Get("task-nope", alice); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown id: %v", err)
	}
	want := "started:working updated:working ended:completed"
	if strings.Join(changes, " ") != want {
		t.Fatalf("changes %v, want %s", changes, want)
	}
}

// TestCancelStopsTheCall: Cancel cancels the call's context and the task stays cancelled
// whatever the call then returns; the user (nil caller) may cancel any task.
func TestCancelStopsTheCall(t *testing.T) {
	s := open(t, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	task := s.Start(alice, "exec", time.Now(), cancel)
	if err := s.Cancel(task.ID, nil); err != nil {
		t.Fatal(err)
	}
	if ctx.Err() == nil {
		t.Fatal("the call's context is still live")
	}
	s.Finish(task.ID, nil, &RPCError{Code: -32603, Message: "context canceled"})
	got, _ := s.Get(task.ID, alice)
	if got.Status != Cancelled || got.Error != nil {
		t.Fatalf("after cancel: %+v", got)
	}
}

// TestFinishedTasksSurviveARestart: a finished task is read back by a new store on the same
// directory; an oversized result is stored cut with a note; expired ones are dropped.
func TestFinishedTasksSurviveARestart(t *testing.T) {
	dir := t.TempDir()
	s := open(t, Options{Dir: dir, MaxResultBytes: 2048})
	small := s.Start(alice, "exec", time.Now(), func() {})
	big := s.Start(alice, "file_read", time.Now(), func() {})
	running := s.Start(alice, "exec", time.Now(), func() {})
	s.Finish(small.ID, json.RawMessage(`{"content":[{"type":"text","text":"done"}]}`), nil)
	huge, _ := json.Marshal(map[string]any{"content": []map[string]any{{"type": "text", "text": strings.Repeat("é", 5000)}}})
	s.Finish(big.ID, huge, nil)
	s.Close()

	s2 := open(t, Options{Dir: dir, MaxResultBytes: 2048})
	got, err := s2.Get(small.ID, aliceAgain)
	if err != nil || got.Status != Completed || !strings.Contains(string(got.Result), "done") {
		t.Fatalf("after restart: %+v, %v", got, err)
	}
	got, err = s2.Get(big.ID, alice)
	if err != nil || !got.Truncated || len(got.Result) > 2048+256 || !strings.Contains(string(got.Result), "truncated") {
		t.Fatalf("oversized result: truncated=%v len=%d %v", got.Truncated, len(got.Result), err)
	}
	var res struct{ Content []struct{ Text string } }
	if err := json.Unmarshal(got.Result, &res); err != nil || len(res.Content) != 2 {
		t.Fatalf("a cut result is still a tool result: %v %s", err, got.Result)
	}
	if _, err := s2.Get(running.ID, alice); !errors.Is(err, ErrNotFound) {
		t.Fatalf("a task that never finished came back: %v", err)
	}
	s2.Sweep(time.Now().Add(2 * DefaultTTL))
	if len(s2.List()) != 0 {
		t.Fatalf("expired tasks kept: %+v", s2.List())
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*.json")); len(left) != 0 {
		t.Fatalf("expired task files left: %v", left)
	}
	if _, err := os.Stat(dir); err != nil {
		t.Fatal(err)
	}
}

// TestCloseCancelsRunningCalls: closing the store (the hub stopping) cancels the calls still
// running; once a call returns its task is written as cancelled, and a new store reads it so.
func TestCloseCancelsRunningCalls(t *testing.T) {
	dir := t.TempDir()
	s := open(t, Options{Dir: dir})
	ctx, cancel := context.WithCancel(context.Background())
	task := s.Start(alice, "exec", time.Now(), cancel)
	s.Close()
	if ctx.Err() == nil {
		t.Fatal("Close left the call running")
	}
	s.Finish(task.ID, json.RawMessage(`{"content":[],"isError":true}`), nil) // the call returns with its context's error
	got, err := open(t, Options{Dir: dir}).Get(task.ID, aliceAgain)
	if err != nil || got.Status != Cancelled || !strings.Contains(got.StatusMessage, "hub stopped") {
		t.Fatalf("after a restart: %+v, %v", got, err)
	}
}

package notify_test

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-hub/switchboard/internal/notify"
	"github.com/switchboard-hub/switchboard/internal/notify/notifytest"
	"github.com/switchboard-hub/switchboard/internal/policy"
	"github.com/switchboard-hub/switchboard/internal/secrets/secretstest"
	"github.com/switchboard-hub/switchboard/internal/testutil"
	"github.com/switchboard-hub/switchboard/internal/upstream"
)

// recorder is a Sender that keeps what it was asked to show.
type recorder struct {
	mu    sync.Mutex
	notes []notify.Notification
	err   error
	more  chan struct{}
}

func newRecorder() *recorder { return &recorder{more: make(chan struct{}, 64)} }

func (r *recorder) Notify(_ context.Context, n notify.Notification) error {
	r.mu.Lock()
	r.notes = append(r.notes, n)
	err := r.err
	r.mu.Unlock()
	r.more <- struct{}{}
	return err
}

// next waits for the next notification.
func (r *recorder) next(t *testing.T) notify.Notification {
	t.Helper()
	select {
	case <-r.more:
	case <-time.After(5 * time.Second):
		t.Fatal("no notification")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.notes[len(r.notes)-1]
}

// none checks that nothing is shown for d.
func (r *recorder) none(t *testing.T, d time.Duration) {
	t.Helper()
	select {
	case <-r.more:
		r.mu.Lock()
		defer r.mu.Unlock()
		t.Fatalf("unexpected notification %+v", r.notes[len(r.notes)-1])
	case <-time.After(d):
	}
}

func runNotifier(t *testing.T, o notify.Options) *notify.Notifier {
	t.Helper()
	n := notify.New(o)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); n.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return n
}

// The Notifier's texts, and its rules running on real time: refusals throttled per client and
// collapsed when the interval ends, one notification per crash episode.
func TestNotifier(t *testing.T) {
	rec := newRecorder()
	n := runNotifier(t, notify.Options{Sender: rec, DenyInterval: 300 * time.Millisecond, CrashWindow: time.Minute})

	n.ApprovalWaiting(policy.Approval{Kind: policy.KindCall, Client: "claude-code", Tool: "file_write"})
	if got := rec.next(t); got != (notify.Notification{Summary: "Switchboard: approval needed", Body: "claude-code wants to run file_write"}) {
		t.Errorf("approval = %+v", got)
	}
	n.ApprovalWaiting(policy.Approval{Kind: policy.KindRoot, Root: "/home/u/src"})
	if got := rec.next(t); got.Body != "A client wants to use /home/u/src as its workspace" {
		t.Errorf("root approval = %+v", got)
	}

	for _, tool := range []string{"exec", "file_delete", "file_write"} {
		n.Refused(notify.Refusal{Client: "cursor", Tool: tool, Rule: "rule 2"})
	}
	if got := rec.next(t); got != (notify.Notification{Summary: "Switchboard: call refused", Body: "cursor: exec was refused by rule 2"}) {
		t.Errorf("first refusal = %+v", got)
	}
	start := time.Now()
	if got := rec.next(t); got.Body != "cursor: file_write was refused by rule 2, and 1 more" {
		t.Errorf("collapsed = %+v", got)
	}
	if waited := time.Since(start); waited < 200*time.Millisecond {
		t.Errorf("the collapsed notification came after %s, before the interval ended", waited)
	}
	rec.none(t, 400*time.Millisecond)

	st := upstream.Status{Name: "graph", State: upstream.StateBackoff, LastError: "start: exit status 3"}
	for i := 1; i <= 5; i++ {
		st.Restarts = i
		n.ServerStatus(st)
	}
	if got := rec.next(t); got.Summary != "Switchboard: server keeps crashing" || got.Body != "graph exited 3 times in 1m0s; last error: start: exit status 3" {
		t.Errorf("crash = %+v", got)
	}
	n.ServerStatus(upstream.Status{Name: "broken", State: upstream.StateFailed})
	if got := rec.next(t); got.Summary != "Switchboard: server failed" || !strings.HasPrefix(got.Body, "broken cannot start: none recorded") {
		t.Errorf("failed = %+v", got)
	}
	rec.none(t, 200*time.Millisecond) // graph's exits 4 and 5 are the same episode

	// A server whose grant stopped working: shown once when it falls from running back to
	// "sign in"; one that was never signed in waits without a notification.
	n.ServerStatus(upstream.Status{Name: "notion", State: upstream.StateSignin})
	rec.none(t, 200*time.Millisecond)
	n.ServerStatus(upstream.Status{Name: "linear", State: upstream.StateRunning})
	remote := upstream.Status{Name: "linear", State: upstream.StateSignin}
	n.ServerStatus(remote)
	if got := rec.next(t); got.Summary != "Switchboard: sign in needed" || !strings.Contains(got.Body, "switchboard servers login linear") {
		t.Errorf("sign-in = %+v", got)
	}
	n.ServerStatus(remote)
	rec.none(t, 200*time.Millisecond)
	n.ServerStatus(upstream.Status{Name: "linear", State: upstream.StateRunning})
	n.ServerStatus(remote)
	if got := rec.next(t); got.Summary != "Switchboard: sign in needed" {
		t.Errorf("second sign-in = %+v", got)
	}
}

// A notification that cannot be shown is logged once at info, not at every attempt.
func TestNotifierLogsAFailureOnce(t *testing.T) {
	rec := newRecorder()
	rec.err = errors.New("org.freedesktop.DBus.Error.ServiceUnknown")
	var logs testutil.SyncBuffer
	n := runNotifier(t, notify.Options{Sender: rec, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	for range 3 {
		n.ApprovalWaiting(policy.Approval{Client: "c", Tool: "t"})
		rec.next(t)
	}
	if got := strings.Count(logs.String(), "cannot show"); got != 1 || !strings.Contains(logs.String(), "level=INFO") {
		t.Errorf("logged %d times:\n%s", got, logs.String())
	}
}

// Desktop against a notification service on a private session bus: the spec's Notify with
// Switchboard's app_name, icon and desktop entry, a normal urgency and the default timeout.
func TestDesktopNotify(t *testing.T) {
	secretstest.Bus(t)
	svc := notifytest.Start(t)
	d, err := notify.Connect("Switchboard", "switchboard", "switchboard")
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := d.Notify(context.Background(), notify.Notification{Summary: "Switchboard: approval needed", Body: "cursor wants to run exec"}); err != nil {
		t.Fatal(err)
	}
	got := svc.Wait(t, "approval", 5*time.Second, func(n notifytest.Notification) bool { return true })
	if got.AppName != "Switchboard" || got.AppIcon != "switchboard" || got.Summary != "Switchboard: approval needed" ||
		got.Body != "cursor wants to run exec" || got.ExpireTimeout != -1 || len(got.Actions) != 0 || got.ReplacesID != 0 {
		t.Errorf("notification = %+v", got)
	}
	if u, ok := got.Hints["urgency"].Value().(byte); !ok || u != 1 {
		t.Errorf("urgency hint = %v", got.Hints["urgency"])
	}
	if e, _ := got.Hints["desktop-entry"].Value().(string); e != "switchboard" {
		t.Errorf("desktop-entry hint = %v", got.Hints["desktop-entry"])
	}
	if err := d.Notify(context.Background(), notify.Notification{}); err == nil || !strings.Contains(err.Error(), "summary") {
		t.Errorf("an empty summary: %v (the service refuses it)", err)
	}
}

// No notification service on the bus, or no bus at all: Connect says which.
func TestDesktopConnectWithoutService(t *testing.T) {
	secretstest.Bus(t)
	if _, err := notify.Connect("Switchboard", "", ""); err == nil || !strings.Contains(err.Error(), "no notification service (org.freedesktop.Notifications) on the session bus") {
		t.Errorf("bus without a service: %v", err)
	}
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "unix:path="+filepath.Join(t.TempDir(), "nobus"))
	if _, err := notify.Connect("Switchboard", "", ""); err == nil || !strings.Contains(err.Error(), "no session bus") {
		t.Errorf("no bus: %v", err)
	}
}

package desktop

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/app"
	"github.com/switchboard-hub/switchboard/app/apptest"
	"github.com/switchboard-hub/switchboard/internal/config"
	"github.com/switchboard-hub/switchboard/internal/hublog"
	"github.com/switchboard-hub/switchboard/internal/notify"
	"github.com/switchboard-hub/switchboard/internal/notify/notifytest"
	"github.com/switchboard-hub/switchboard/internal/policy"
	"github.com/switchboard-hub/switchboard/internal/secrets/secretstest"
	"github.com/switchboard-hub/switchboard/internal/testutil"
	"github.com/switchboard-hub/switchboard/internal/upstream"
)

// notifyStack is a real hub with the desktop's transports and its [[servers]] started eagerly.
func notifyStack(t *testing.T, tweak func(*config.Config)) *app.Stack {
	t.Helper()
	cfg := apptest.Config(t)
	cfg.Hub.Addr = "127.0.0.1:0"
	tweak(&cfg)
	st, err := app.BuildStack(cfg, "test", app.StackOptions{WithHub: true, EagerServers: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		if err := st.Close(ctx); err != nil {
			t.Errorf("close stack: %v", err)
		}
	})
	if err := st.StartDefaultTransports(); err != nil {
		t.Fatal(err)
	}
	return st
}

// Desktop notifications from a real hub reach a notification service on a private session bus:
// a server that crashes at start (the fixture, FIXTURE_MODE=crash-at-start) once it has exited
// three times, a call waiting for approval, and refused calls — the first at once, the next ones
// collapsed into "and N more" when the client's interval ends.
func TestDesktopNotificationsFromARealHub(t *testing.T) {
	secretstest.Bus(t)
	svc := notifytest.Start(t)
	sdkDir := testutil.NodeModule(t, "@modelcontextprotocol/sdk")
	fixture := filepath.Join(filepath.Dir(filepath.Dir(filepath.Dir(sdkDir))), "upstream-fixture.mjs")
	st := notifyStack(t, func(c *config.Config) {
		c.Policy = policy.Config{AskTimeout: "60s", Rules: []policy.RuleSpec{
			{Tool: "file_write", Args: map[string]string{"path": "ask/*"}, Action: "ask"},
			{Tool: "file_delete", Action: "deny"},
		}}
		c.Servers = []upstream.Spec{{Name: "crasher", Command: "node", Args: []string{fixture}, Env: map[string]string{"FIXTURE_MODE": "crash-at-start"}}}
		// The user approved its command: a server whose command is not approved never runs.
		if err := upstream.ApproveCommandFile(app.ApprovalsFile(*c), c.Servers[0]); err != nil {
			t.Fatal(err)
		}
	})
	// A tray host is there to answer (the broker refuses to ask when nobody can).
	defer st.Service.Approvals().AddPresence(func() bool { return true })()
	stop := startDesktopNotifications(st, notify.Options{DenyInterval: time.Second})
	defer stop()

	all := func(n notifytest.Notification) bool { return n.AppName == "Switchboard" }
	// Backoff 1 s, then 2 s: the third exit comes about 3 s after the first.
	crash := svc.Wait(t, "about the crashing server", 30*time.Second, func(n notifytest.Notification) bool {
		return n.Summary == notify.SummaryCrash
	})
	if !all(crash) || !strings.HasPrefix(crash.Body, "crasher exited 3 times in 5m0s; last error: start: ") || !strings.Contains(crash.Body, "exited with status 3") {
		t.Errorf("crash notification = %+v", crash)
	}

	cs := apptest.ConnectClient(t, st, "notify-client")
	waiting := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "file_write", Arguments: map[string]any{"path": "ask/x.txt", "content": "x"}})
		waiting <- err
	}()
	ask := svc.Wait(t, "about the approval", 10*time.Second, func(n notifytest.Notification) bool { return n.Summary == notify.SummaryApproval })
	if !all(ask) || ask.Body != "notify-client wants to run file_write" {
		t.Errorf("approval notification = %+v", ask)
	}
	for _, a := range st.Service.Approvals().Pending() {
		if err := st.Service.DecideApproval(a.ID, "deny", policy.ByTray); err != nil {
			t.Fatal(err)
		}
	}
	if err := <-waiting; err != nil {
		t.Fatal(err)
	}

	for _, path := range []string{"a.txt", "b.txt", "c.txt"} {
		if res := apptest.CallTool(t, cs, "file_delete", map[string]any{"path": path}); !res.IsError {
			t.Fatalf("file_delete %s was not refused", path)
		}
	}
	refused := svc.Wait(t, "about the refused call", 10*time.Second, func(n notifytest.Notification) bool { return n.Summary == notify.SummaryRefused })
	if !all(refused) || !strings.HasPrefix(refused.Body, "notify-client: file_delete was refused by rule 2") || strings.Contains(refused.Body, "more") {
		t.Errorf("refused notification = %+v", refused)
	}
	collapsed := svc.Wait(t, "collapsing the other refusals", 10*time.Second, func(n notifytest.Notification) bool {
		return n.Summary == notify.SummaryRefused && strings.HasSuffix(n.Body, ", and 1 more")
	})
	if !all(collapsed) {
		t.Errorf("collapsed notification = %+v", collapsed)
	}
	collapsedBy := time.Now()
	// One notification per episode: the exits after the third are the same episode.
	actx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := st.Service.Upstreams().Await(actx, func() bool {
		s, err := st.Service.Upstreams().Status("crasher")
		return err == nil && s.Restarts >= 4
	}); err != nil {
		t.Fatalf("the crasher did not exit a fourth time: %v", err)
	}
	// The refusals' interval must end with nothing more to show. That is about time itself, the
	// one wait here with no event: wait out the interval (1 s, above) from the collapsed notice;
	// usually it is over already.
	time.Sleep(time.Until(collapsedBy.Add(time.Second)))
	// Then a barrier: the notifier shows its events in order, one goroutine, so once a fresh
	// question's notice is in, every notice the earlier events (the fourth exit) caused is in too.
	go func() {
		_, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "file_write", Arguments: map[string]any{"path": "ask/barrier.txt", "content": "x"}})
		waiting <- err
	}()
	svc.Wait(t, "about the second question (the barrier)", 10*time.Second, func(n notifytest.Notification) bool {
		return n.Summary == notify.SummaryApproval && n.Body == "notify-client wants to run file_write" && n.ID != ask.ID
	})
	for _, a := range st.Service.Approvals().Pending() {
		if err := st.Service.DecideApproval(a.ID, "deny", policy.ByTray); err != nil {
			t.Fatal(err)
		}
	}
	if err := <-waiting; err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, n := range svc.All() {
		count[n.Summary]++
	}
	if count[notify.SummaryCrash] != 1 || count[notify.SummaryApproval] != 2 || count[notify.SummaryRefused] != 2 || len(count) != 3 {
		t.Errorf("notifications by summary = %v, want one crash (one episode), two approvals (the second is the barrier), two refusals", count)
	}
}

// With no notification service on the session bus, or with [desktop] notifications = false,
// nothing is shown and the hub log says why, once, at info.
func TestDesktopNotificationsOff(t *testing.T) {
	secretstest.Bus(t)
	for _, c := range []struct {
		name, want string
		on         bool
	}{
		{"no service", "notifications: off: no notification service (org.freedesktop.Notifications) on the session bus", true},
		{"switched off", "notifications: off ([desktop] notifications = false in the config file)", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := notifyStack(t, func(cfg *config.Config) { cfg.Desktop.Notifications = c.on })
			stop := startDesktopNotifications(st, notify.Options{})
			stop()
			var got []string
			for _, r := range st.HubLog.Records(hublog.Query{}) {
				if strings.HasPrefix(r.Msg, "notifications") {
					got = append(got, r.Level+" "+r.Msg)
				}
			}
			if len(got) != 1 || got[0] != "INFO "+c.want {
				t.Errorf("hub log = %q, want %q once", got, c.want)
			}
		})
	}
}

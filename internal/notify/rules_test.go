package notify_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-hub/switchboard/internal/notify"
	"github.com/switchboard-hub/switchboard/internal/upstream"
)

var t0 = time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC)

// at is t0 plus a duration written like "1m30s".
func at(d string) time.Time {
	v, err := time.ParseDuration(d)
	if err != nil {
		panic(err)
	}
	return t0.Add(v)
}

func TestDenyThrottle(t *testing.T) {
	type step struct {
		at     string
		client string // a refusal of client's call to tool "t<n>"; "" = only ask what is due
		want   string // what shows at that moment: "client:tool+more", space-separated
	}
	cases := []struct {
		name  string
		steps []step
	}{
		{"one refusal shows at once", []step{{"0s", "cursor", "cursor:t0+0"}}},
		{"a burst: the first at once, the rest collapsed a minute later", []step{
			{"0s", "cursor", "cursor:t0+0"},
			{"5s", "cursor", ""},
			{"10s", "cursor", ""},
			{"20s", "cursor", ""},
			{"59s", "", ""},
			{"60s", "", "cursor:t3+2"}, // the latest, and 2 more
			{"61s", "", ""},
		}},
		{"one held refusal is shown alone, without 'more'", []step{
			{"0s", "cursor", "cursor:t0+0"},
			{"30s", "cursor", ""},
			{"1m", "", "cursor:t1+0"},
		}},
		{"after a collapse the next minute is throttled too", []step{
			{"0s", "cursor", "cursor:t0+0"},
			{"10s", "cursor", ""},
			{"1m", "", "cursor:t1+0"},
			{"1m10s", "cursor", ""}, // within a minute of the collapse
			{"2m", "", "cursor:t3+0"},
			{"3m30s", "cursor", "cursor:t5+0"}, // a quiet minute: at once again
		}},
		{"clients are throttled apart", []step{
			{"0s", "cursor", "cursor:t0+0"},
			{"1s", "claude-code", "claude-code:t1+0"},
			{"2s", "cursor", ""},
			{"3s", "claude-code", ""},
			{"4s", "claude-code", ""},
			{"1m", "", "cursor:t2+0"},
			{"1m1s", "", "claude-code:t4+1"},
		}},
		{"a refusal a minute or more after the last shows at once", []step{
			{"0s", "cursor", "cursor:t0+0"},
			{"1m", "cursor", "cursor:t1+0"},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			th := notify.DenyThrottle{Interval: time.Minute}
			for i, s := range c.steps {
				now := at(s.at)
				var got []string
				for _, r := range th.Due(now) {
					got = append(got, fmt.Sprintf("%s:%s+%d", r.Client, r.Tool, r.More))
				}
				if s.client != "" {
					if r, ok := th.Add(notify.Refusal{Client: s.client, Tool: fmt.Sprintf("t%d", i), Rule: "rule 1"}, now); ok {
						got = append(got, fmt.Sprintf("%s:%s+%d", r.Client, r.Tool, r.More))
					}
				}
				if g := strings.Join(got, " "); g != s.want {
					t.Errorf("step %d at %s: got %q, want %q", i, s.at, g, s.want)
				}
			}
		})
	}
}

func TestDenyThrottleNext(t *testing.T) {
	th := notify.DenyThrottle{Interval: time.Minute}
	if !th.Next().IsZero() {
		t.Error("Next with nothing held")
	}
	th.Add(notify.Refusal{Client: "a"}, at("0s"))
	if !th.Next().IsZero() {
		t.Error("Next with nothing held: the first refusal was shown")
	}
	th.Add(notify.Refusal{Client: "a"}, at("10s"))
	th.Add(notify.Refusal{Client: "b"}, at("20s"))
	th.Add(notify.Refusal{Client: "b"}, at("30s"))
	if got := th.Next(); !got.Equal(at("1m")) {
		t.Errorf("Next = %v, want a's minute", got)
	}
	th.Due(at("1m"))
	if got := th.Next(); !got.Equal(at("1m20s")) {
		t.Errorf("Next = %v, want b's minute", got)
	}
}

func TestCrashWatch(t *testing.T) {
	type obs struct {
		at       string
		state    string
		restarts int
		want     string // "" or "crash N" / "failed"
	}
	cases := []struct {
		name string
		obs  []obs
	}{
		{"three exits within five minutes: once", []obs{
			{"0s", "running", 0, ""},
			{"10s", "backoff", 1, ""},
			{"12s", "starting", 1, ""},
			{"13s", "backoff", 2, ""},
			{"20s", "backoff", 3, "crash 3"},
			{"50s", "backoff", 4, ""}, // the same episode
			{"2m", "backoff", 5, ""},
		}},
		{"exits spread wider than the window: never", []obs{
			{"0s", "backoff", 1, ""},
			{"3m", "backoff", 2, ""},
			{"6m", "backoff", 3, ""},
			{"9m", "backoff", 4, ""},
		}},
		{"several exits seen at once count each", []obs{
			{"0s", "running", 0, ""},
			{"1m", "backoff", 3, "crash 3"},
		}},
		{"a quiet window ends the episode; the next one is reported again", []obs{
			{"0s", "backoff", 1, ""},
			{"1s", "backoff", 2, ""},
			{"3s", "backoff", 3, "crash 3"},
			{"4s", "running", 3, ""},
			{"10m", "backoff", 4, ""}, // five quiet minutes: a new episode begins with one exit
			{"10m2s", "backoff", 5, ""},
			{"10m6s", "backoff", 6, "crash 3"},
		}},
		{"running again within the window does not end the episode", []obs{
			{"0s", "backoff", 1, ""},
			{"1s", "backoff", 2, ""},
			{"3s", "backoff", 3, "crash 3"},
			{"1m", "running", 3, ""},
			{"2m", "backoff", 4, ""},
		}},
		{"failed: at once, once", []obs{
			{"0s", "failed", 0, "failed"},
			{"10s", "failed", 0, ""},
			{"10m", "failed", 0, ""}, // still failed: the same episode
		}},
		{"a restart by the user starts the count again", []obs{
			{"0s", "backoff", 1, ""},
			{"1s", "backoff", 2, ""},
			{"2s", "running", 0, ""}, // a new supervisor: its count is 0
			{"3s", "backoff", 1, ""},
			{"4s", "backoff", 2, ""},
			{"5s", "backoff", 3, "crash 3"},
		}},
		{"disabled ends the episode", []obs{
			{"0s", "backoff", 1, ""},
			{"1s", "backoff", 2, ""},
			{"2s", "backoff", 3, "crash 3"},
			{"3s", "disabled", 3, ""},
			{"4s", "backoff", 4, ""}, // enabled again, same count: its exits count from here
			{"5s", "backoff", 5, ""},
			{"6s", "backoff", 6, "crash 3"},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := notify.CrashWatch{Window: 5 * time.Minute, Restarts: 3}
			for i, o := range c.obs {
				cr, ok := w.Observe(upstream.Status{Name: "graph", State: o.state, Restarts: o.restarts, LastError: "start: exit status 3"}, at(o.at))
				got := ""
				switch {
				case ok && cr.Failed:
					got = "failed"
				case ok:
					got = fmt.Sprintf("crash %d", cr.Restarts)
				}
				if got != o.want {
					t.Errorf("observation %d (%s %s restarts %d): got %q, want %q", i, o.at, o.state, o.restarts, got, o.want)
				}
				if ok && (cr.Server != "graph" || cr.LastError != "start: exit status 3") {
					t.Errorf("crash = %+v", cr)
				}
			}
		})
	}
}

// Servers are watched apart, and a server removed and added again starts afresh.
func TestCrashWatchServersApart(t *testing.T) {
	w := notify.CrashWatch{Window: 5 * time.Minute, Restarts: 3}
	obs := func(name string, restarts int, d string) bool {
		_, ok := w.Observe(upstream.Status{Name: name, State: "backoff", Restarts: restarts}, at(d))
		return ok
	}
	obs("a", 1, "0s")
	obs("b", 1, "0s")
	obs("a", 2, "1s")
	if obs("b", 2, "1s") || !obs("a", 3, "2s") {
		t.Fatal("a's third exit not reported, or b's second reported")
	}
	w.Forget("a")
	if obs("a", 3, "3s") != true {
		t.Error("a forgotten then seen with 3 exits: its exits count afresh and reach 3")
	}
}

package mcp

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-hub/switchboard/internal/metrics"
	"github.com/switchboard-hub/switchboard/internal/testutil"
	"github.com/switchboard-hub/switchboard/mcp/tools"
)

func newMetricsService(t *testing.T) (*Service, *metrics.Store) {
	t.Helper()
	store, err := metrics.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	return newTestService(t, WithMetricsStore(store)), store
}

// withoutToolCalls drops the tool_call group the hub records for every call (asynchronously, so its
// count is not knowable here) and returns it separately.
func withoutToolCalls(counts []tools.MetricCount) (rest []tools.MetricCount, toolCalls int) {
	for _, c := range counts {
		if c.Key == "tool_call" {
			toolCalls = c.Count
			continue
		}
		rest = append(rest, c)
	}
	return rest, toolCalls
}

func TestMetricsRecordAndQuery(t *testing.T) {
	s, _ := newMetricsService(t)
	cs := connect(t, s)

	before := time.Now().UTC()
	records := []map[string]any{
		{"type": "build_completed", "repo": "core", "agent_id": "a1", "data": map[string]any{"ok": true, "timestamp": "user data"}},
		{"type": "build_completed", "repo": "web", "agent_id": "a2"},
		{"type": "security_alert", "repo": "core"},
		{"type": "build_completed", "repo": "core", "agent_id": "a1"},
	}
	var last tools.MetricsRecordOutput
	for _, r := range records {
		var out tools.MetricsRecordOutput
		mustCall(t, cs, "metrics_record", r, &out)
		if !out.Success || out.Timestamp.Before(before) || out.Timestamp.After(time.Now().UTC()) {
			t.Fatalf("metrics_record(%v) = %+v", r, out)
		}
		if out.Timestamp.Before(last.Timestamp) {
			t.Fatalf("timestamps went backwards: %v then %v", last.Timestamp, out.Timestamp)
		}
		last = out
	}

	// Without include_internal the hub's own tool_call events stay out of every count.
	var q tools.MetricsQueryOutput
	mustCall(t, cs, "metrics_query", map[string]any{"since": "1h"}, &q)
	byType := q.ByType
	if want := []tools.MetricCount{{Key: "build_completed", Count: 3}, {Key: "security_alert", Count: 1}}; !slices.Equal(byType, want) {
		t.Fatalf("by_type %v, want %v and no tool_call", q.ByType, want)
	}
	if q.Total != 4 {
		t.Fatalf("total %d, want the 4 recorded", q.Total)
	}
	for _, e := range q.Events {
		if e.Type == "tool_call" {
			t.Fatalf("hub-internal event listed without include_internal: %+v", q.Events)
		}
	}
	// With it, they are counted (recorded asynchronously: wait for them to land).
	var all tools.MetricsQueryOutput
	if !testutil.Poll(testutil.Patience, func() bool {
		all = tools.MetricsQueryOutput{}
		mustCall(t, cs, "metrics_query", map[string]any{"since": "1h", "include_internal": true}, &all)
		_, toolCalls := withoutToolCalls(all.ByType)
		return toolCalls >= 4 && all.Total == 4+toolCalls && all.Internal == 0
	}) {
		t.Fatalf("include_internal: %+v", all)
	}
	var again tools.MetricsQueryOutput
	mustCall(t, cs, "metrics_query", map[string]any{"since": "1h"}, &again)
	if again.Internal < 4 || again.Total != 4 {
		t.Fatalf("internal events left out should be counted in internal: %+v", again)
	}
	if want := []tools.MetricCount{{Key: "core", Count: 3}, {Key: "web", Count: 1}}; !slices.Equal(q.ByRepo, want) {
		t.Fatalf("by_repo %v, want %v", q.ByRepo, want)
	}
	// tool_call events carry the MCP session as agent; keep only ours.
	var agents []tools.MetricCount
	for _, c := range q.ByAgent {
		if strings.HasPrefix(c.Key, "a") && len(c.Key) == 2 {
			agents = append(agents, c)
		}
	}
	if want := []tools.MetricCount{{Key: "a1", Count: 2}, {Key: "a2", Count: 1}}; !slices.Equal(agents, want) {
		t.Fatalf("by_agent %v, want %v among them", q.ByAgent, want)
	}
	var ours []tools.MetricEventBrief
	for _, e := range q.Events {
		if e.Type != "tool_call" {
			ours = append(ours, e)
		}
	}
	if len(q.Events) > 10 || len(ours) == 0 || ours[0].Type != "build_completed" || ours[0].Repo != "core" || ours[0].AgentID != "a1" || !ours[0].Timestamp.Equal(last.Timestamp) {
		t.Fatalf("events %+v: want at most 10, newest first, led by the last build_completed", q.Events)
	}
	for i := 1; i < len(q.Events); i++ {
		if q.Events[i].Timestamp.After(q.Events[i-1].Timestamp) {
			t.Fatalf("events not newest first: %+v", q.Events)
		}
	}

	// The default window (7d) sees the same events; a window after them sees none of ours.
	var def tools.MetricsQueryOutput
	mustCall(t, cs, "metrics_query", map[string]any{}, &def)
	if typ, _ := withoutToolCalls(def.ByType); !slices.Equal(typ, byType) {
		t.Fatalf("default window by_type %v, want %v", def.ByType, byType)
	}
}

func TestMetricsToolErrorsNameFieldAndFix(t *testing.T) {
	s, _ := newMetricsService(t)
	cs := connect(t, s)
	cases := []struct {
		tool string
		args map[string]any
		want string
	}{
		{"metrics_record", map[string]any{"type": ""}, "type: required"},
		{"metrics_record", map[string]any{"repo": "core"}, "type"},
		{"metrics_record", map[string]any{"type": "tool_call"}, `type: "tool_call" is reserved`},
		{"metrics_record", map[string]any{"type": "x", "data": map[string]any{"blob": strings.Repeat("a", metrics.MaxEventBytes)}}, "data: event is"},
		{"metrics_query", map[string]any{"since": "7x"}, `since: "7x" has unit "x"; use d, h or m, e.g. "7d", "24h", "30m"`},
		{"metrics_query", map[string]any{"since": "0d"}, `since: "0d" must be positive`},
		{"metrics_query", map[string]any{"since": "1.5h"}, "whole number"},
	}
	for _, c := range cases {
		got := call(t, cs, c.tool, c.args, nil)
		if !strings.Contains(got, c.want) {
			t.Errorf("%s(%v): error %q, want it to contain %q", c.tool, c.args, got, c.want)
		}
	}
}

func TestMetricsToolsWithoutStore(t *testing.T) {
	s := newTestService(t)
	cs := connect(t, s)
	for tool, args := range map[string]map[string]any{"metrics_record": {"type": "x"}, "metrics_query": {"since": "1h"}} {
		if got := call(t, cs, tool, args, nil); !strings.Contains(got, "no metrics store is configured") {
			t.Errorf("%s without a store: %q", tool, got)
		}
	}
}

func TestMetricsQueryEmptyListsAreArrays(t *testing.T) {
	s, _ := newMetricsService(t)
	cs := connect(t, s)
	// Nothing has a repo here (tool_call events have none), so by_repo is empty: it must be [],
	// not null, for clients that iterate it.
	var q tools.MetricsQueryOutput
	mustCall(t, cs, "metrics_query", map[string]any{"since": "1m"}, &q)
	if q.ByType == nil || q.ByRepo == nil || len(q.ByRepo) != 0 || q.ByAgent == nil || q.Events == nil {
		t.Fatalf("empty lists decoded as null: %+v", q)
	}
}

package tools

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/mcp/tool"

	"github.com/switchboard-hub/switchboard/internal/metrics"
)

// Metrics tools: metrics_record appends an event to the daily JSONL files of internal/metrics,
// metrics_query aggregates a lookback window. The hub also records one tool_call event per tool
// call there (see callRecorder), so queries show tool usage without agents recording it.

// MetricsRecordInput is metrics_record's arguments: an event type and what it is about; the hub
// assigns the timestamp.
type MetricsRecordInput struct {
	Type    string         `json:"type" jsonschema:"event type, e.g. build_completed or security_alert"`
	AgentID string         `json:"agent_id,omitempty" jsonschema:"identifier of the agent the event is about"`
	Repo    string         `json:"repo,omitempty" jsonschema:"repository the event is about"`
	Data    map[string]any `json:"data,omitempty" jsonschema:"any additional event data; a timestamp here is kept as plain data"`
}

// MetricsRecordOutput is metrics_record's result, with the timestamp the event was stored under.
type MetricsRecordOutput struct {
	Success   bool      `json:"success" jsonschema:"whether the event was recorded"`
	Timestamp time.Time `json:"timestamp" jsonschema:"timestamp the server assigned (UTC)"`
}

// MetricsQueryInput is metrics_query's arguments: the lookback window, and whether to count the
// hub's own tool_call events.
type MetricsQueryInput struct {
	Since           string `json:"since,omitempty" jsonschema:"lookback window: a positive whole number and a unit d, h or m, e.g. 7d, 24h, 30m; default 7d"`
	IncludeInternal bool   `json:"include_internal,omitempty" jsonschema:"also count the hub's own events (type tool_call, one per tool call); default false leaves them out"`
}

// MetricCount is one group of metrics_query's counts: a type, repository or agent and how many
// events it has.
type MetricCount struct {
	Key   string `json:"key" jsonschema:"group key: type name, repository or agent ID"`
	Count int    `json:"count" jsonschema:"number of events in the group"`
}

// MetricEventBrief is one recent event in metrics_query's result, without its data.
type MetricEventBrief struct {
	Type      string    `json:"type" jsonschema:"event type"`
	Timestamp time.Time `json:"timestamp" jsonschema:"event timestamp"`
	AgentID   string    `json:"agent_id,omitempty" jsonschema:"agent identifier, if set"`
	Repo      string    `json:"repo,omitempty" jsonschema:"repository, if set"`
}

// MetricsQueryOutput is metrics_query's result: totals and counts per type, repository and agent in
// the window, and the latest events.
type MetricsQueryOutput struct {
	Total   int                `json:"total" jsonschema:"number of events in the window"`
	ByType  []MetricCount      `json:"by_type" jsonschema:"event counts by type, most frequent first"`
	ByRepo  []MetricCount      `json:"by_repo" jsonschema:"event counts by repository, most frequent first"`
	ByAgent []MetricCount      `json:"by_agent" jsonschema:"event counts by agent ID, most frequent first"`
	Events  []MetricEventBrief `json:"events" jsonschema:"the 10 most recent events, newest first"`
	// Internal counts what include_internal would add.
	Internal int `json:"internal,omitempty" jsonschema:"hub-internal events (tool_call) in the window that were left out; pass include_internal: true to count them"`
}

// internalMetricTypes are event types the hub records about itself; metrics_query leaves them
// out unless include_internal is set, and metrics_record refuses them so agents cannot forge them.
var internalMetricTypes = []string{ToolCallEventType}

// ToolCallEventType is the metrics event the hub records for every tool call.
const ToolCallEventType = "tool_call"

var errNoMetricsStore = errors.New("metrics: no metrics store is configured on this server; start switchboard with its data directory (the default) to record and query metrics")

// MetricsTools are metrics_record and metrics_query, on the hub's metrics store (nil: the
// tools say how to configure one).
type MetricsTools struct{ metrics *metrics.Store }

// NewMetricsTools is the metrics tools' dependencies (m nil: no store; the tools say so).
func NewMetricsTools(m *metrics.Store) *MetricsTools { return &MetricsTools{metrics: m} }

// MetricsGroup declares the group's tools (toolset metrics) as values that need no hub;
// NewMetricsTools builds the dependencies they are bound to.
func MetricsGroup() tool.Group {
	return tool.NewGroup("metrics",
		tool.Func(sdk.Tool{Name: "metrics_record", Annotations: tool.Write("Record metric", false, false),
			Description: "Record a metrics event (AI activity, builds, security findings) with optional agent, repository and data. " +
				"The server assigns the timestamp."}, (*MetricsTools).metricsRecord),
		tool.Func(sdk.Tool{Name: "metrics_query", Annotations: tool.ReadOnly("Query metrics"),
			Description: "Count metrics events in a lookback window (default 7d) by type, repository and agent, with the 10 most recent events. " +
				"The hub also records every tool call as type tool_call; those are left out unless include_internal is true."}, (*MetricsTools).metricsQuery),
	)
}

func (g *MetricsTools) metricsRecord(_ context.Context, _ *sdk.CallToolRequest, in MetricsRecordInput) (*sdk.CallToolResult, MetricsRecordOutput, error) {
	if g.metrics == nil {
		return nil, MetricsRecordOutput{}, errNoMetricsStore
	}
	if slices.Contains(internalMetricTypes, in.Type) {
		return nil, MetricsRecordOutput{}, fmt.Errorf("type: %q is reserved for the hub's own events; choose another name, e.g. %q", in.Type, "agent_"+in.Type)
	}
	ev, err := g.metrics.Record(metrics.Event{Type: in.Type, AgentID: in.AgentID, Repo: in.Repo, Data: in.Data})
	if err != nil {
		return nil, MetricsRecordOutput{}, err
	}
	return nil, MetricsRecordOutput{Success: true, Timestamp: ev.Timestamp}, nil
}

func (g *MetricsTools) metricsQuery(_ context.Context, _ *sdk.CallToolRequest, in MetricsQueryInput) (*sdk.CallToolResult, MetricsQueryOutput, error) {
	if g.metrics == nil {
		return nil, MetricsQueryOutput{}, errNoMetricsStore
	}
	window, err := metrics.ParseSince(in.Since)
	if err != nil {
		return nil, MetricsQueryOutput{}, err
	}
	var exclude []string
	if !in.IncludeInternal {
		exclude = internalMetricTypes
	}
	sum, err := g.metrics.QueryExcluding(time.Now().Add(-window), exclude...)
	if err != nil {
		return nil, MetricsQueryOutput{}, err
	}
	out := MetricsQueryOutput{
		Total:    sum.Total,
		ByType:   metricCounts(sum.ByType),
		ByRepo:   metricCounts(sum.ByRepo),
		ByAgent:  metricCounts(sum.ByAgent),
		Events:   make([]MetricEventBrief, 0, len(sum.Recent)),
		Internal: sum.Excluded,
	}
	for _, ev := range sum.Recent {
		out.Events = append(out.Events, MetricEventBrief{Type: ev.Type, Timestamp: ev.Timestamp, AgentID: ev.AgentID, Repo: ev.Repo})
	}
	return nil, out, nil
}

func metricCounts(in []metrics.Count) []MetricCount {
	out := make([]MetricCount, 0, len(in))
	for _, c := range in {
		out = append(out, MetricCount{Key: c.Key, Count: c.Count})
	}
	return out
}

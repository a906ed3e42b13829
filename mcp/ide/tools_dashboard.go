package ide

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/mcp/ide/protocol"
	"github.com/switchboard-hub/switchboard/mcp/tool"
)

// defaultActivityLimit keeps an unbounded ide_dashboard_activity answer readable.
const defaultActivityLimit = 50

type DashboardOverview struct {
	Repos          int  `json:"repos" jsonschema:"repositories managed by the backend (as it reports; else distinct repositories seen in builds)"`
	Services       int  `json:"services" jsonschema:"services managed by the backend, as it reports"`
	ActiveSessions int  `json:"activeSessions" jsonschema:"agent sessions not closed, ended, completed or failed"`
	RecentBuilds   int  `json:"recentBuilds" jsonschema:"builds started in the last 24 hours"`
	BridgeOnline   bool `json:"bridgeOnline" jsonschema:"whether the bridge to the agentic backend is connected right now"`
}

type DashboardOverviewInput struct{}

type DashboardOverviewOutput struct {
	Overview     DashboardOverview `json:"overview" jsonschema:"platform summary"`
	BridgeOnline bool              `json:"bridgeOnline" jsonschema:"whether the bridge to the agentic backend is connected; when false the answer is the state last received"`
	Warning      string            `json:"warning,omitempty" jsonschema:"why the answer may be stale: the bridge is offline, the backend refused or did not answer the refresh"`
}

type DashboardActivityInput struct {
	Limit int `json:"limit,omitempty" jsonschema:"maximum number of events to return, newest first; default 50"`
}

type DashboardActivityOutput struct {
	Events       []ActivityEvent `json:"events" jsonschema:"activity events, newest first"`
	BridgeOnline bool            `json:"bridgeOnline" jsonschema:"whether the bridge to the agentic backend is connected; when false the answer is the state last received"`
	Warning      string          `json:"warning,omitempty" jsonschema:"why the answer may be stale: the bridge is offline, the backend refused or did not answer the refresh"`
}

type DashboardMetricsInput struct {
	Period string `json:"period,omitempty" jsonschema:"time period: 1h, 24h or 7d; default 24h"`
}

type DashboardMetrics struct {
	BuildsTotal   int     `json:"buildsTotal" jsonschema:"builds started in the period"`
	BuildsSuccess int     `json:"buildsSuccess" jsonschema:"of those, builds that succeeded"`
	BuildsFailed  int     `json:"buildsFailed" jsonschema:"of those, builds that failed"`
	AvgBuildTime  string  `json:"avgBuildTime" jsonschema:"average duration of the finished builds, e.g. 1m2.5s"`
	AgentSessions int     `json:"agentSessions" jsonschema:"agent sessions created in the period"`
	MessagesTotal int     `json:"messagesTotal" jsonschema:"chat messages (user and assistant) in the period"`
	SuccessRate   float64 `json:"successRate" jsonschema:"succeeded / finished builds, 0.0 to 1.0"`
}

type DashboardMetricsOutput struct {
	Period       string           `json:"period" jsonschema:"echoed period"`
	Metrics      DashboardMetrics `json:"metrics" jsonschema:"aggregate metrics"`
	BridgeOnline bool             `json:"bridgeOnline" jsonschema:"whether the bridge to the agentic backend is connected; when false the answer is the state last received"`
	Warning      string           `json:"warning,omitempty" jsonschema:"why the answer may be stale: the bridge is offline, the backend refused or did not answer the refresh"`
}

func (s *Subsystem) registerDashboardTools(server *mcp.Server) {
	tool.Add(server, &mcp.Tool{
		Name:        "ide_dashboard_overview",
		Description: "Get a high-level overview of the agentic platform: repositories, services, active sessions, recent builds and whether the IDE bridge is online.",
		Annotations: readOnly(),
	}, s.dashboardOverview)
	tool.Add(server, &mcp.Tool{
		Name:        "ide_dashboard_activity",
		Description: "Get the recent activity feed of the agentic platform, newest first.",
		Annotations: readOnly(),
	}, s.dashboardActivity)
	tool.Add(server, &mcp.Tool{
		Name:        "ide_dashboard_metrics",
		Description: "Get aggregate build and agent metrics for a period (1h, 24h or 7d), computed from what the bridge has observed.",
		Annotations: readOnly(),
	}, s.dashboardMetrics)
}

func (s *Subsystem) dashboardOverview(ctx context.Context, _ *mcp.CallToolRequest, _ DashboardOverviewInput) (*mcp.CallToolResult, DashboardOverviewOutput, error) {
	_, err := s.ask(ctx, protocol.TypeDashboardOverview, "", struct{}{})
	online, warning := s.freshness(err)
	o := s.store.Overview()
	o.BridgeOnline = online
	return nil, DashboardOverviewOutput{Overview: o, BridgeOnline: online, Warning: warning}, nil
}

func (s *Subsystem) dashboardActivity(ctx context.Context, _ *mcp.CallToolRequest, in DashboardActivityInput) (*mcp.CallToolResult, DashboardActivityOutput, error) {
	if in.Limit < 0 {
		return nil, DashboardActivityOutput{}, fmt.Errorf("limit: %d is negative; use a positive count (default %d)", in.Limit, defaultActivityLimit)
	}
	limit := in.Limit
	if limit == 0 {
		limit = defaultActivityLimit
	}
	_, err := s.ask(ctx, protocol.TypeDashboardActivity, "", protocol.ActivityRequest{Limit: limit})
	online, warning := s.freshness(err)
	return nil, DashboardActivityOutput{Events: s.store.Activity(limit), BridgeOnline: online, Warning: warning}, nil
}

func (s *Subsystem) dashboardMetrics(ctx context.Context, _ *mcp.CallToolRequest, in DashboardMetricsInput) (*mcp.CallToolResult, DashboardMetricsOutput, error) {
	period := in.Period
	if period == "" {
		period = "24h"
	}
	if _, ok := periods[period]; !ok {
		return nil, DashboardMetricsOutput{}, fmt.Errorf(`period: %q is not supported; use "1h", "24h" or "7d"`, in.Period)
	}
	_, err := s.ask(ctx, protocol.TypeDashboardMetrics, "", protocol.MetricsRequest{Period: period})
	online, warning := s.freshness(err)
	return nil, DashboardMetricsOutput{Period: period, Metrics: s.store.Metrics(period), BridgeOnline: online, Warning: warning}, nil
}

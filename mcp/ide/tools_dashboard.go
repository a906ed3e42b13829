package ide

import (
	"context"
	"fmt"
	"github.com/switchboard-hub/switchboard/internal/agentic"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/internal/agentic/protocol"
	"github.com/switchboard-hub/switchboard/mcp/tool"
)

// defaultActivityLimit keeps an unbounded ide_dashboard_activity answer readable.
const defaultActivityLimit = 50

// DashboardOverviewInput are the arguments of ide_dashboard_overview (none).
type DashboardOverviewInput struct{}

// DashboardOverviewOutput is the result of ide_dashboard_overview.
type DashboardOverviewOutput struct {
	Overview     agentic.DashboardOverview `json:"overview" jsonschema:"platform summary"`
	BridgeOnline bool                      `json:"bridgeOnline" jsonschema:"whether the bridge to the agentic backend is connected; when false the answer is the state last received"`
	Warning      string                    `json:"warning,omitempty" jsonschema:"why the answer may be stale: the bridge is offline, the backend refused or did not answer the refresh"`
}

// DashboardActivityInput are the arguments of ide_dashboard_activity.
type DashboardActivityInput struct {
	Limit int `json:"limit,omitempty" jsonschema:"maximum number of events to return, newest first; default 50"`
}

// DashboardActivityOutput is the result of ide_dashboard_activity.
type DashboardActivityOutput struct {
	Events       []ActivityEvent `json:"events" jsonschema:"activity events, newest first"`
	BridgeOnline bool            `json:"bridgeOnline" jsonschema:"whether the bridge to the agentic backend is connected; when false the answer is the state last received"`
	Warning      string          `json:"warning,omitempty" jsonschema:"why the answer may be stale: the bridge is offline, the backend refused or did not answer the refresh"`
}

// DashboardMetricsInput are the arguments of ide_dashboard_metrics.
type DashboardMetricsInput struct {
	Period string `json:"period,omitempty" jsonschema:"time period: 1h, 24h or 7d; default 24h"`
}

// DashboardMetricsOutput is the result of ide_dashboard_metrics.
type DashboardMetricsOutput struct {
	Period       string                   `json:"period" jsonschema:"echoed period"`
	Metrics      agentic.DashboardMetrics `json:"metrics" jsonschema:"aggregate metrics"`
	BridgeOnline bool                     `json:"bridgeOnline" jsonschema:"whether the bridge to the agentic backend is connected; when false the answer is the state last received"`
	Warning      string                   `json:"warning,omitempty" jsonschema:"why the answer may be stale: the bridge is offline, the backend refused or did not answer the refresh"`
}

// dashboardTools declares the group's tools of this file, bound to a *Subsystem.
func dashboardTools() []tool.Tool {
	return []tool.Tool{
		tool.Func(mcp.Tool{
			Name:        "ide_dashboard_overview",
			Description: "Get a high-level overview of the agentic platform: repositories, services, active sessions, recent builds and whether the IDE bridge is online.",
			Annotations: readOnly(),
		}, (*Subsystem).dashboardOverview),
		tool.Func(mcp.Tool{
			Name:        "ide_dashboard_activity",
			Description: "Get the recent activity feed of the agentic platform, newest first.",
			Annotations: readOnly(),
		}, (*Subsystem).dashboardActivity),
		tool.Func(mcp.Tool{
			Name:        "ide_dashboard_metrics",
			Description: "Get aggregate build and agent metrics for a period (1h, 24h or 7d), computed from what the bridge has observed.",
			Annotations: readOnly(),
		}, (*Subsystem).dashboardMetrics),
	}
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
	if !agentic.ValidPeriod(period) {
		return nil, DashboardMetricsOutput{}, fmt.Errorf(`period: %q is not supported; use "1h", "24h" or "7d"`, in.Period)
	}
	_, err := s.ask(ctx, protocol.TypeDashboardMetrics, "", protocol.MetricsRequest{Period: period})
	online, warning := s.freshness(err)
	return nil, DashboardMetricsOutput{Period: period, Metrics: s.store.Metrics(period), BridgeOnline: online, Warning: warning}, nil
}

package ide

import (
	"context"
	"errors"
	"fmt"
	"github.com/switchboard-hub/switchboard/internal/agentic"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/internal/agentic/protocol"
	"github.com/switchboard-hub/switchboard/mcp/tool"
)

// defaultBuildListLimit keeps an unbounded ide_build_list answer readable.
const defaultBuildListLimit = 50

// BuildStatusInput are the arguments of ide_build_status.
type BuildStatusInput struct {
	BuildID string `json:"buildId" jsonschema:"build identifier (see ide_build_list)"`
}

// BuildStatusOutput is the result of ide_build_status.
type BuildStatusOutput struct {
	Build        BuildInfo `json:"build" jsonschema:"build record"`
	BridgeOnline bool      `json:"bridgeOnline" jsonschema:"whether the bridge to the agentic backend is connected; when false the answer is the state last received"`
	Warning      string    `json:"warning,omitempty" jsonschema:"why the answer may be stale: the bridge is offline, the backend refused or did not answer the refresh"`
}

// BuildListInput are the arguments of ide_build_list.
type BuildListInput struct {
	Repo  string `json:"repo,omitempty" jsonschema:"only builds of this repository name"`
	Limit int    `json:"limit,omitempty" jsonschema:"maximum number of builds to return, newest first; default 50"`
}

// BuildListOutput is the result of ide_build_list.
type BuildListOutput struct {
	Builds       []BuildInfo `json:"builds" jsonschema:"build records, newest start first"`
	BridgeOnline bool        `json:"bridgeOnline" jsonschema:"whether the bridge to the agentic backend is connected; when false the answer is the state last received"`
	Warning      string      `json:"warning,omitempty" jsonschema:"why the answer may be stale: the bridge is offline, the backend refused or did not answer the refresh"`
}

// BuildLogsInput are the arguments of ide_build_logs.
type BuildLogsInput struct {
	BuildID string `json:"buildId" jsonschema:"build identifier (see ide_build_list)"`
	Tail    int    `json:"tail,omitempty" jsonschema:"return only the last N lines; 0 or absent returns all kept lines (up to 5000)"`
}

// BuildLogsOutput is the result of ide_build_logs.
type BuildLogsOutput struct {
	BuildID      string   `json:"buildId" jsonschema:"echoed build identifier"`
	Lines        []string `json:"lines" jsonschema:"log lines, oldest first"`
	BridgeOnline bool     `json:"bridgeOnline" jsonschema:"whether the bridge to the agentic backend is connected; when false the answer is the state last received"`
	Warning      string   `json:"warning,omitempty" jsonschema:"why the answer may be stale: the bridge is offline, the backend refused or did not answer the refresh"`
}

// buildTools declares the group's tools of this file, bound to a *Subsystem.
func buildTools() []tool.Tool {
	return []tool.Tool{
		tool.Func(mcp.Tool{
			Name:        "ide_build_status",
			Description: "Get the status of a CI build reported by the agentic backend (refreshed from the backend when it is connected).",
			Annotations: readOnly(),
		}, (*Subsystem).buildStatus),
		tool.Func(mcp.Tool{
			Name:        "ide_build_list",
			Description: "List recent CI builds, newest first, optionally filtered by repository.",
			Annotations: readOnly(),
		}, (*Subsystem).buildList),
		tool.Func(mcp.Tool{
			Name:        "ide_build_logs",
			Description: "Retrieve the log output of a CI build; lines missed while the bridge was offline are fetched from the backend.",
			Annotations: readOnly(),
		}, (*Subsystem).buildLogs),
	}
}

// unknownBuild explains a build id the store does not hold.
func (s *Subsystem) unknownBuild(id string, askErr error) error {
	var refused *agentic.BackendError
	switch {
	case errors.As(askErr, &refused):
		return fmt.Errorf("buildId %q: %w; call ide_build_list to see known builds", id, refused)
	case errors.Is(askErr, agentic.ErrNotConnected):
		return fmt.Errorf("buildId: no build %q is known and the bridge is offline, so the backend could not be asked; call ide_build_list to see known builds", id)
	default:
		return fmt.Errorf("buildId: no build %q is known; call ide_build_list to see known builds", id)
	}
}

func (s *Subsystem) buildStatus(ctx context.Context, _ *mcp.CallToolRequest, in BuildStatusInput) (*mcp.CallToolResult, BuildStatusOutput, error) {
	if in.BuildID == "" {
		return nil, BuildStatusOutput{}, errors.New("buildId: required; call ide_build_list to see build IDs")
	}
	_, err := s.ask(ctx, protocol.TypeBuildStatus, "", protocol.BuildStatusRequest{BuildID: in.BuildID})
	b, ok := s.store.Build(in.BuildID)
	if !ok {
		return nil, BuildStatusOutput{}, s.unknownBuild(in.BuildID, err)
	}
	online, warning := s.freshness(err)
	return nil, BuildStatusOutput{Build: b, BridgeOnline: online, Warning: warning}, nil
}

func (s *Subsystem) buildList(ctx context.Context, _ *mcp.CallToolRequest, in BuildListInput) (*mcp.CallToolResult, BuildListOutput, error) {
	if in.Limit < 0 {
		return nil, BuildListOutput{}, fmt.Errorf("limit: %d is negative; use a positive count (default %d)", in.Limit, defaultBuildListLimit)
	}
	limit := in.Limit
	if limit == 0 {
		limit = defaultBuildListLimit
	}
	_, err := s.ask(ctx, protocol.TypeBuildList, "", protocol.BuildListRequest{Repo: in.Repo, Limit: limit})
	online, warning := s.freshness(err)
	return nil, BuildListOutput{Builds: s.store.Builds(in.Repo, limit), BridgeOnline: online, Warning: warning}, nil
}

func (s *Subsystem) buildLogs(ctx context.Context, _ *mcp.CallToolRequest, in BuildLogsInput) (*mcp.CallToolResult, BuildLogsOutput, error) {
	if in.BuildID == "" {
		return nil, BuildLogsOutput{}, errors.New("buildId: required; call ide_build_list to see build IDs")
	}
	if in.Tail < 0 {
		return nil, BuildLogsOutput{}, fmt.Errorf("tail: %d is negative; use 0 (all) or a positive line count", in.Tail)
	}
	// Ask only for the lines the store lacks; the answer is appended in place.
	_, err := s.ask(ctx, protocol.TypeBuildLogs, "", protocol.BuildLogsRequest{
		BuildID: in.BuildID, From: s.store.LogTotal(in.BuildID),
	})
	lines, _, ok := s.store.Logs(in.BuildID, in.Tail)
	if !ok {
		return nil, BuildLogsOutput{}, s.unknownBuild(in.BuildID, err)
	}
	if lines == nil {
		lines = []string{}
	}
	online, warning := s.freshness(err)
	return nil, BuildLogsOutput{BuildID: in.BuildID, Lines: lines, BridgeOnline: online, Warning: warning}, nil
}

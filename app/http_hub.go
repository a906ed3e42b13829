package app

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/switchboard-hub/switchboard/internal/config"
	"github.com/switchboard-hub/switchboard/mcp"
)

// RunHTTPHub runs a normal hub (every toolset, Switchboard's HTTP transport with its token, Host
// and Origin checks, the audit middleware, tool.Add) with extra options, over Streamable HTTP
// only, until ctx ends. Development tools build on it (cmd/switchboard-dev conformance adds the MCP
// conformance suite's fixtures), so the fixtures stay out of the product binary.
func RunHTTPHub(ctx context.Context, cfg config.Config, version, addr, token string, extra ...mcp.Option) error {
	if token == "" {
		return errors.New("--token: required; the HTTP transport never runs without a bearer token")
	}
	cfg.HTTP.Addr, cfg.HTTP.Token = addr, token
	cfg.Toolsets = []string{"all"}
	ctx, stop := SignalContext(ctx)
	defer stop()
	st, err := BuildStack(cfg, version, StackOptions{LogSink: os.Stderr, Quiet: true, WithHub: true, Extra: extra})
	if err != nil {
		return err
	}
	defer st.CloseBounded()
	if err := st.Transports.Start(mcp.TransportHTTP); err != nil {
		return err
	}
	for _, s := range st.Transports.Status() {
		if s.Name == mcp.TransportHTTP {
			fmt.Fprintf(os.Stderr, "switchboard: http listening on %s\n", s.URL)
		}
	}
	<-ctx.Done()
	return nil
}

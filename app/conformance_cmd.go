package app

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/switchboard-hub/switchboard/internal/config"
	"github.com/switchboard-hub/switchboard/mcp"
	"github.com/switchboard-hub/switchboard/mcp/conformance"
)

// newConformanceCommand serves a normal hub (every toolset, Switchboard's HTTP transport with its
// token, Host and Origin checks, the audit middleware, tool.Add) plus the fixture tools, prompts
// and resources of the MCP conformance suite, so `npx @modelcontextprotocol/conformance server`
// tests Switchboard's own call path. test/node/conformance.mjs drives it.
func newConformanceCommand(g *globalFlags, version string) *cobra.Command {
	var addr, token string
	cmd := &cobra.Command{
		Use:   "conformance",
		Short: "Serve the hub with the MCP conformance suite's fixtures over Streamable HTTP (for testing)",
		Example: `  switchboard dev conformance --http 127.0.0.1:9300 --token secret
  npx @modelcontextprotocol/conformance server --url http://127.0.0.1:9300/mcp  # through a proxy adding the token`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if token == "" {
				return errors.New("--token: required; the HTTP transport never runs without a bearer token")
			}
			cfg, err := g.load()
			if err != nil {
				return err
			}
			cfg.HTTP.Addr, cfg.HTTP.Token = addr, token
			cfg.Toolsets = []string{"all"}
			ctx, stop := signalContext(cmd.Context())
			defer stop()
			st, err := BuildStack(cfg, version, stackOptions{logSink: os.Stderr, quiet: true, withHub: true,
				extra: []mcp.Option{mcp.WithSubsystem(conformance.Fixtures{}), mcp.WithServerOptions(conformance.ServerOptions)}})
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
		},
	}
	cmd.Flags().StringVar(&addr, "http", config.DefaultHTTPAddr, "Streamable HTTP address (path /mcp)")
	cmd.Flags().StringVar(&token, "token", "", "bearer token clients must send (required)")
	return cmd
}

// Command switchboard-dev holds Switchboard's development tools, kept out of the shipped binary:
// the agentic-backend simulator (for demos and the dashboard's end-to-end tests) and a hub with
// the MCP conformance suite's fixtures (for test/node/conformance.mjs).
//
//	go run ./cmd/switchboard-dev agentic-sim [--addr 127.0.0.1:9876] [--demo]
//	go run ./cmd/switchboard-dev conformance --http 127.0.0.1:9300 --token secret
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/switchboard-hub/switchboard/app"
	"github.com/switchboard-hub/switchboard/internal/config"
	"github.com/switchboard-hub/switchboard/mcp"
	"github.com/switchboard-hub/switchboard/mcp/conformance"
	"github.com/switchboard-hub/switchboard/mcp/ide/agenticsim"
)

var version = "dev"

func main() {
	root := &cobra.Command{Use: "switchboard-dev", Short: "Switchboard's development tools (not part of the shipped binary)", SilenceUsage: true}
	root.AddCommand(simCommand(), conformanceCommand())
	if err := root.Execute(); err != nil {
		os.Exit(1)
	}
}

func simCommand() *cobra.Command {
	var addr, token string
	var demo bool
	var demoInterval, lineInterval time.Duration
	sim := &cobra.Command{
		Use:   "agentic-sim",
		Short: "Run a local simulator of the agentic backend (sessions, streamed chat, builds, plans)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			fmt.Fprintf(os.Stderr, "switchboard-dev: agentic backend simulator on ws://%s/ws\n", addr)
			return agenticsim.Run(ctx, addr, agenticsim.Options{Token: token, Demo: demo, DemoInterval: demoInterval, LineInterval: lineInterval})
		},
	}
	sim.Flags().StringVar(&addr, "addr", "127.0.0.1:9876", "listen address")
	sim.Flags().StringVar(&token, "token", "", "require this bearer token")
	sim.Flags().BoolVar(&demo, "demo", false, "generate sessions, chat, builds and activity on a timer (for demos)")
	sim.Flags().DurationVar(&demoInterval, "demo-interval", 0, "with --demo: time between generated builds (default 20s)")
	sim.Flags().DurationVar(&lineInterval, "line-interval", 0, "pause before each build log line (default 20ms)")
	return sim
}

// conformanceCommand serves a normal hub plus the fixture tools, prompts and resources of the MCP
// conformance suite, so `npx @modelcontextprotocol/conformance server` tests Switchboard's own
// call path.
func conformanceCommand() *cobra.Command {
	var addr, token, configFile, workspace string
	cmd := &cobra.Command{
		Use:   "conformance",
		Short: "Serve the hub with the MCP conformance suite's fixtures over Streamable HTTP (for testing)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := config.Load(configFile)
			if err != nil {
				return err
			}
			if workspace != "" {
				cfg.Workspace = workspace
			}
			return app.RunHTTPHub(context.Background(), cfg, version, addr, token,
				mcp.WithSubsystem(conformance.Fixtures{}), mcp.WithServerOptions(conformance.ServerOptions),
				mcp.WithServerSetup(conformance.AddPromptsAndResources))
		},
	}
	cmd.Flags().StringVar(&addr, "http", config.DefaultHTTPAddr, "Streamable HTTP address (path /mcp)")
	cmd.Flags().StringVar(&token, "token", "", "bearer token clients must send (required)")
	cmd.Flags().StringVar(&configFile, "config", "", "config file (default: "+config.DefaultPath()+")")
	cmd.Flags().StringVar(&workspace, "workspace", "", "workspace directory (default: the current directory)")
	return cmd
}

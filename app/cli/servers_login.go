package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/switchboard-hub/switchboard/app"
	"github.com/switchboard-hub/switchboard/internal/upstream"
)

// `switchboard servers login|logout NAME`: signing the hub in to a remote server (OAuth). The
// sign-in runs here, in this process (its loopback listener receives the browser's redirect),
// and stores the grant in the keyring, where the running hub finds it; the hub is then told.

func newServersLoginCommand(g *globalFlags) *cobra.Command {
	var noBrowser bool
	cmd := &cobra.Command{
		Use:   "login NAME",
		Short: "Sign the hub in to a remote server (OAuth): prints the page to sign in on and opens it in your browser",
		Long: `login signs the hub in to a remote server that asks for authorization (OAuth, the MCP
authorization spec): it finds the server's authorization server, registers the hub there when it
has to (or uses the oauth table's client_id), prints the page to sign in on and opens it in your
browser, then waits (at most 5 minutes) for the browser to come back to a listener on 127.0.0.1.
The tokens go to the keyring, never to a file; the hub refreshes them. The server's command must
be approved first: nothing is sent to a server before that.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := g.load()
			if err != nil {
				return err
			}
			name, out := args[0], cmd.OutOrStdout()
			spec, err := configuredSpec(cfg, name)
			if err != nil {
				return err
			}
			conn := g.runningHub(cmd, cfg)
			if conn != nil {
				defer conn.Close()
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), 6*time.Minute)
			defer cancel()
			approved := false
			if conn != nil {
				var list app.ServerList
				if err := app.HubControl(ctx, conn, "servers.list", nil, &list); err != nil {
					return err
				}
				for _, st := range list.Servers {
					approved = approved || st.Name == name && st.CommandApproved && st.CommandHash == spec.CommandHash()
				}
			} else if approved, err = upstream.CommandApproved(app.ApprovalsFile(cfg), spec); err != nil {
				return err
			}
			if !approved {
				return fmt.Errorf("server %q: its command (%s) is not approved; approve it first (`switchboard servers approve %s`), then sign in", name, spec.CommandLine(), name)
			}
			flow, err := upstream.LoginFlow(spec, app.UpstreamOptions(cfg), func(u string) error {
				fmt.Fprintf(out, "Sign in to %s in your browser:\n\n  %s\n\n", name, u)
				if !noBrowser {
					if err := app.OpenInBrowser(u); err != nil {
						fmt.Fprintf(cmd.ErrOrStderr(), "Could not open a browser (%v): open the address above yourself.\n", err)
					}
				}
				fmt.Fprintln(out, "Waiting for the browser (5 minutes at most)…")
				return nil
			})
			if err != nil {
				return err
			}
			g2, err := flow.Run(ctx)
			if err != nil {
				return fmt.Errorf("server %q: sign-in: %w", name, err)
			}
			fmt.Fprintf(out, "Signed in to %s with %s; the tokens are in the keyring.\n", name, g2.Issuer)
			if conn != nil {
				var st upstream.Status
				if err := app.HubControl(ctx, conn, "servers.signed-in", map[string]any{"name": name}, &st); err != nil {
					return err
				}
				fmt.Fprintf(out, "%s: %s\n", st.Name, st.State)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&noBrowser, "no-browser", false, "only print the page to sign in on (open it yourself, on this machine)")
	return cmd
}

func newServersLogoutCommand(g *globalFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "logout NAME",
		Short: "Forget the hub's sign-in to a remote server (revoked where the server allows)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := g.load()
			if err != nil {
				return err
			}
			name, out := args[0], cmd.OutOrStdout()
			spec, err := configuredSpec(cfg, name)
			if err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), time.Minute)
			defer cancel()
			if conn := g.runningHub(cmd, cfg); conn != nil {
				defer conn.Close()
				var st upstream.Status
				if err := app.HubControl(ctx, conn, "servers.logout", map[string]any{"name": name}, &st); err != nil {
					return err
				}
				fmt.Fprintf(out, "Signed out of %s: %s\n", name, st.State)
				return nil
			}
			if err := upstream.Logout(ctx, spec, app.UpstreamOptions(cfg)); err != nil {
				return err
			}
			fmt.Fprintf(out, "Signed out of %s.\n", name)
			return nil
		},
	}
}

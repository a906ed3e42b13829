package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/switchboard-hub/switchboard/app"
	"github.com/switchboard-hub/switchboard/internal/config"
	mcptransport "github.com/switchboard-hub/switchboard/mcp/transport"
)

func newTokenCommand(g *globalFlags) *cobra.Command {
	var rotate, revoke bool
	var client string
	cmd := &cobra.Command{
		Use:   "token [--client NAME [--revoke]]",
		Short: "Print the client token (HTTP bearer token and TCP handshake token); --rotate replaces it",
		Long: `Print the client token kept in ` + config.TokenPath() + ` (mode 0600), creating it
on first use. MCP clients send it as "Authorization: Bearer <token>" over Streamable HTTP, and as the
switchboard/auth handshake over TCP. --rotate writes a new token: clients must be updated, and a
running hub keeps the old token until it restarts. A token set in the config file or the
environment (SWITCHBOARD_TOKEN, SWITCHBOARD_TCP_TOKEN) takes precedence over this file.

--client NAME asks the running hub for a token of that client's own (replacing the one it had)
and prints it, the only time it is shown: over Streamable HTTP it names the client, the identity
a 2026-07-28 client without a session is known by (Sessions view, approvals, todos). --revoke
revokes it instead. The dashboard's Settings › Client tokens does the same.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := g.load()
			if err != nil {
				return err
			}
			if revoke && client == "" {
				return errors.New("--revoke: name the client with --client NAME")
			}
			if client != "" {
				const noHub = "; client tokens are kept by the hub: start it (switchboard, or switchboard serve --http ADDR) and run this again"
				if revoke {
					var out app.ClientTokenList
					if err := g.askHub(cmd, cfg, "clients.revoke-token", map[string]any{"name": client}, &out, noHub); err != nil {
						return err
					}
					fmt.Fprintf(cmd.ErrOrStderr(), "switchboard: the token of %s is revoked\n", client)
					return nil
				}
				var out app.IssuedClientToken
				if err := g.askHub(cmd, cfg, "clients.token", map[string]any{"name": client}, &out, noHub); err != nil {
					return err
				}
				fmt.Fprintln(cmd.OutOrStdout(), out.Token)
				fmt.Fprintf(cmd.ErrOrStderr(), "switchboard: %s's own token; put it in its config as Authorization: Bearer <token> (it is not shown again)\n", client)
				return nil
			}
			path := config.TokenPath()
			var t string
			if rotate {
				t, err = config.RotateToken(path)
			} else {
				t, _, err = config.LoadOrCreateToken(path)
			}
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), t)
			if cfg.HTTP.Token != "" && cfg.HTTP.Token != t {
				fmt.Fprintln(cmd.ErrOrStderr(), "switchboard: note: HTTP uses the token from the config file or SWITCHBOARD_TOKEN, not this one")
			}
			if rotate {
				fmt.Fprintln(cmd.ErrOrStderr(), "switchboard: token replaced; restart the hub and update your clients")
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&rotate, "rotate", false, "replace the token with a new random one")
	cmd.Flags().StringVar(&client, "client", "", "issue a token of this client's own on the running hub (names it over HTTP)")
	cmd.Flags().BoolVar(&revoke, "revoke", false, "with --client: revoke that client's token")
	return cmd
}

// tcpToken is the token `switchboard connect --tcp` presents: the configured TCP token, else the
// stored client token if there is one.
func tcpToken(cfg config.Config) (string, error) {
	if cfg.TCP.Token != "" {
		return cfg.TCP.Token, nil
	}
	b, err := os.ReadFile(config.TokenPath())
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}

// authLine is the switchboard/auth handshake, a notification (the hub sends no reply to it).
func authLine(token string) []byte {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": mcptransport.AuthMethod, "params": map[string]string{"token": token}})
	return append(b, '\n')
}

// tokenCheck is the doctor's view of the client token file.
func tokenCheck() check {
	path := config.TokenPath()
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return check{name: "client token", ok: true, detail: path + " not created yet (`switchboard token`, `serve --http/--tcp` or the app create it)"}
	case err != nil:
		return check{name: "client token", detail: err.Error(), fix: "make " + path + " readable by you, or `switchboard token --rotate`"}
	case fi.Mode().Perm()&0o077 != 0:
		return check{name: "client token", detail: fmt.Sprintf("%s is readable by others (mode %v)", path, fi.Mode().Perm()), fix: "chmod 600 " + path + ", then `switchboard token --rotate` (it may have leaked)"}
	}
	return check{name: "client token", ok: true, detail: path + " (mode 0600; `switchboard token` prints it)"}
}

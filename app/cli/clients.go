package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/switchboard-hub/switchboard/app"
	"github.com/switchboard-hub/switchboard/internal/clientconf"
	"github.com/switchboard-hub/switchboard/internal/clienttokens"
	"github.com/switchboard-hub/switchboard/internal/config"
	"github.com/switchboard-hub/switchboard/mcp"
)

func newClientsCommand(g *globalFlags) *cobra.Command {
	var socket, toolsMode string
	entryFor := func(c clientconf.Client) (clientconf.Entry, error) {
		cfg, err := g.load()
		if err != nil {
			return clientconf.Entry{}, err
		}
		if toolsMode != "" {
			if _, err := mcp.ParseToolsMode(toolsMode); err != nil {
				return clientconf.Entry{}, fmt.Errorf("--tools-mode: %w", err)
			}
		}
		return app.RelayEntry(cfg, socket, c, toolsMode)
	}
	list := &cobra.Command{
		Use:   "list",
		Short: "Show each MCP client and whether it is set up to reach this hub",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			env, err := clientconf.OSEnv(config.ReadEnv().Value)
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "CLIENT\tSCOPE\tSTATE\tFILE")
			for _, c := range clientconf.Clients() {
				want, err := entryFor(c)
				if err != nil {
					return err
				}
				for _, scope := range c.Scopes() {
					st := c.Check(env, scope, want)
					if scope == clientconf.ScopeProject && st.State == clientconf.NotSetUp {
						if _, err := os.Stat(st.Path); err != nil {
							continue // no project file here: nothing to say
						}
					}
					state := string(st.State)
					if st.ToolsMode != "" {
						state += ", tools mode " + st.ToolsMode
					}
					if st.Detail != "" {
						state += " (" + st.Detail + ")"
					}
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", c.Name, scope, state, st.Path)
				}
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), "\nswitchboard clients connect NAME adds this hub to a client (--dry-run shows the change first).")
			return nil
		},
	}
	edit := func(connect bool) *cobra.Command {
		var scope string
		var dryRun, yes, all bool
		verb, short := "disconnect", "Remove Switchboard's entry from a client's own config file (backup kept)"
		if connect {
			verb, short = "connect", "Add this hub to a client's own config file: shows the diff, keeps a backup"
		}
		cmd := &cobra.Command{
			Use:   verb + " NAME",
			Short: short,
			Example: "  switchboard clients " + verb + " claude-code --dry-run\n" +
				"  switchboard clients " + verb + " vscode --scope project --yes",
			Args: cobra.RangeArgs(0, 1),
			RunE: func(cmd *cobra.Command, pos []string) error {
				if all {
					if connect || len(pos) > 0 {
						return errors.New("--all: disconnect takes it instead of a client's name (switchboard clients disconnect --all)")
					}
					return disconnectAll(cmd, g, socket, clientconf.Scope(scope), dryRun)
				}
				if len(pos) != 1 {
					return fmt.Errorf("name the client (one of %s)", strings.Join(clientNames(), ", "))
				}
				c, err := clientconf.Lookup(pos[0])
				if err != nil {
					return err
				}
				env, err := g.clientEnv()
				if err != nil {
					return err
				}
				var e *clientconf.Entry
				if connect {
					want, err := entryFor(c)
					if err != nil {
						return err
					}
					want = app.WithClientToken(want, clientconf.Scope(scope), app.TokenPending)
					e = &want
				}
				ch, err := c.Plan(env, clientconf.Scope(scope), e)
				if err != nil {
					return err
				}
				out := cmd.OutOrStdout()
				if ch.Empty() {
					if connect {
						fmt.Fprintf(out, "%s is already connected to this hub (%s): nothing to change.\n", c.Display, ch.Path)
					} else {
						if clientconf.Scope(scope) == clientconf.ScopeUser {
							if err := revokeClientToken(cmd, g, socket, c.Name); err != nil {
								return err
							}
						}
						fmt.Fprintf(out, "%s has no switchboard entry in %s: nothing to change.\n", c.Display, ch.Path)
					}
					return nil
				}
				fmt.Fprint(out, ch.Diff())
				if dryRun {
					fmt.Fprintln(out, "\n--dry-run: nothing written.")
					return nil
				}
				if !yes && isTerminal(os.Stdin) {
					ok, err := confirm(cmd.InOrStdin(), out, fmt.Sprintf("Write %s?", ch.Path))
					if err != nil {
						return err
					}
					if !ok {
						return errors.New("not written")
					}
				}
				if connect && e.Env != nil {
					// Issued now that the file is written (a dry run or a "no" issues none); it
					// replaces the client's previous token, which the relay presented until now.
					token, err := issueClientToken(cmd, g, socket, c.Name)
					if err != nil {
						return err
					}
					e.Env = app.WithClientToken(*e, clientconf.Scope(scope), token).Env
					if ch, err = c.Plan(env, clientconf.Scope(scope), e); err != nil {
						return err
					}
				}
				backup, err := ch.Apply(time.Now())
				if err != nil {
					return err
				}
				if !connect && clientconf.Scope(scope) == clientconf.ScopeUser {
					if err := revokeClientToken(cmd, g, socket, c.Name); err != nil {
						return fmt.Errorf("the entry is removed but %s's token is not revoked: %w; run `switchboard token --client %s --revoke`", c.Name, err, c.Name)
					}
				}
				if backup != "" {
					fmt.Fprintf(out, "Wrote %s (the previous version is in %s).\n", ch.Path, backup)
				} else {
					fmt.Fprintf(out, "Wrote %s.\n", ch.Path)
				}
				if connect {
					fmt.Fprintf(out, "Restart %s (or reload its MCP servers) to connect; `switchboard clients disconnect %s` undoes this.\n", c.Display, c.Name)
				}
				return nil
			},
		}
		cmd.Flags().StringVar(&scope, "scope", string(clientconf.ScopeUser), "user (the client's own settings) or project (the client's file in the current directory, for clients that have one)")
		cmd.Flags().BoolVar(&dryRun, "dry-run", false, "show the change as a diff and stop")
		cmd.Flags().BoolVarP(&yes, "yes", "y", false, "do not ask before writing (runs without a terminal never ask)")
		if connect {
			cmd.Flags().StringVar(&toolsMode, "tools-mode", "", "this client's tools mode, whatever the hub's (the relay tells the hub): full, search or script")
		}
		if !connect {
			cmd.Flags().BoolVar(&all, "all", false, "remove Switchboard's entry from every client that has one (before uninstalling)")
		}
		return cmd
	}
	names := clientNames()
	root := &cobra.Command{
		Use:   "clients",
		Short: "Set up MCP clients (Claude, Cursor, VS Code, Zed, Gemini CLI, Codex, ...) to reach this hub",
		Long: `clients lists the MCP clients found for this user and writes, or removes, Switchboard's entry
in each client's own configuration file: the stdio relay ` + "`switchboard connect`" + ` to the running hub.
Every write shows a diff first, keeps a backup (FILE.switchboard-backup-TIMESTAMP) and changes
nothing else in the file (other servers, comments, order, formatting).

Clients: ` + strings.Join(names, ", ") + `.`,
		Args: cobra.NoArgs,
		RunE: list.RunE,
	}
	root.PersistentFlags().StringVar(&socket, "socket", "", "hub socket the entry names (default: the configured one, "+config.DefaultSocketPath()+")")
	root.AddCommand(list, edit(true), edit(false))
	return root
}

func isTerminal(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }

func confirm(in io.Reader, out io.Writer, question string) (bool, error) {
	fmt.Fprintf(out, "%s [y/N] ", question)
	line, err := bufio.NewReader(in).ReadString('\n')
	if err != nil && line == "" {
		return false, err
	}
	a := strings.ToLower(strings.TrimSpace(line))
	return a == "y" || a == "yes", nil
}

func clientNames() []string {
	var names []string
	for _, c := range clientconf.Clients() {
		names = append(names, c.Name)
	}
	return names
}

// disconnectAll removes Switchboard's entry from every client file of scope that has one, each
// with its diff and a backup, without asking (what an uninstall needs).
func disconnectAll(cmd *cobra.Command, g *globalFlags, socket string, scope clientconf.Scope, dryRun bool) error {
	env, err := g.clientEnv()
	if err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	var errs []error
	changed := 0
	for _, c := range clientconf.Clients() {
		ch, err := c.Plan(env, scope, nil)
		if err != nil || ch.Empty() {
			continue // no file, no entry, or a scope the client lacks
		}
		fmt.Fprint(out, ch.Diff())
		changed++
		if dryRun {
			continue
		}
		if _, err := ch.Apply(time.Now()); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", c.Name, err))
			continue
		}
		if scope == clientconf.ScopeUser {
			if err := revokeClientToken(cmd, g, socket, c.Name); err != nil {
				errs = append(errs, fmt.Errorf("%s: its token: %w", c.Name, err))
			}
		}
		fmt.Fprintf(out, "Removed Switchboard from %s (%s).\n", c.Display, ch.Path)
	}
	switch {
	case changed == 0:
		fmt.Fprintln(out, "No client has a switchboard entry: nothing to change.")
	case dryRun:
		fmt.Fprintln(out, "\n--dry-run: nothing written.")
	}
	return errors.Join(errs...)
}

// clientEnv is where this user's client files are, with project-scope backups kept in the hub's
// data directory (never in the repository).
func (g *globalFlags) clientEnv() (clientconf.Env, error) {
	env, err := clientconf.OSEnv(config.ReadEnv().Value)
	if err != nil {
		return env, err
	}
	cfg, err := g.load()
	if err != nil {
		return env, err
	}
	env.ProjectBackups = app.ClientBackupDir(cfg)
	return env, nil
}

// hubOn is a connection to the hub answering on socket (the entry's: --socket, else the
// configured one), nil when none does.
func hubOn(cfg config.Config, socket string) net.Conn {
	if socket == "" {
		socket = cfg.Unix.Path
	}
	if socket == "" {
		return nil
	}
	conn, err := net.DialTimeout("unix", socket, 2*time.Second)
	if err != nil {
		return nil
	}
	return conn
}

// issueClientToken issues client's own token, replacing the one it had: on the hub the entry's
// relay reaches (socket) when it runs, since its store is the one in force, else in the hub's
// token file, read when it starts.
func issueClientToken(cmd *cobra.Command, g *globalFlags, socket, client string) (string, error) {
	cfg, err := g.load()
	if err != nil {
		return "", err
	}
	if conn := hubOn(cfg, socket); conn != nil {
		defer conn.Close()
		ctx, cancel := context.WithTimeout(cmd.Context(), 10*time.Second)
		defer cancel()
		var out app.IssuedClientToken
		if err := app.HubControl(ctx, conn, "clients.token", map[string]any{"name": client}, &out); err != nil {
			return "", fmt.Errorf("client token for %s: %w", client, err)
		}
		return out.Token, nil
	}
	store, err := clienttokens.Open(app.ClientTokensFile(cfg))
	if err != nil {
		return "", err
	}
	return store.Issue(client)
}

// revokeClientToken revokes client's token (none is no error), as issueClientToken issues it.
func revokeClientToken(cmd *cobra.Command, g *globalFlags, socket, client string) error {
	cfg, err := g.load()
	if err != nil {
		return err
	}
	if conn := hubOn(cfg, socket); conn != nil {
		defer conn.Close()
		ctx, cancel := context.WithTimeout(cmd.Context(), 10*time.Second)
		defer cancel()
		var out app.ClientTokenList
		return app.HubControl(ctx, conn, "clients.drop-token", map[string]any{"name": client}, &out)
	}
	store, err := clienttokens.Open(app.ClientTokensFile(cfg))
	if err != nil {
		return err
	}
	_, err = store.Revoke(client)
	return err
}

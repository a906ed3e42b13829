package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/switchboard-hub/switchboard/app"
	"github.com/switchboard-hub/switchboard/internal/config"
	"github.com/switchboard-hub/switchboard/internal/upstream"
	"github.com/switchboard-hub/switchboard/internal/upstream/importer"
)

// `switchboard servers list|approve|logs|restart`: these read or change the running hub's state,
// so they ask the hub on its Unix socket (mcptransport.ControlMethod). Without a running hub, list shows
// the config file and approve starts the server in a private hub to read and pin its tools.

// askHub sends one control request to the running hub; without one, it fails saying why the verb
// needs it (noHub).
func (g *globalFlags) askHub(cmd *cobra.Command, cfg config.Config, action string, params map[string]any, out any, noHub string) error {
	conn := g.runningHub(cmd, cfg)
	if conn == nil {
		return fmt.Errorf("no hub is running on %s%s", cfg.Unix.Path, noHub)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(cmd.Context(), 10*time.Second)
	defer cancel()
	return app.HubControl(ctx, conn, action, params, out)
}

func newServersListCommand(g *globalFlags) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the configured servers: state, approval, tools (held ones marked)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := g.load()
			if err != nil {
				return err
			}
			var list app.ServerList
			if conn := g.runningHub(cmd, cfg); conn != nil {
				defer conn.Close()
				ctx, cancel := context.WithTimeout(cmd.Context(), 10*time.Second)
				defer cancel()
				if err := app.HubControl(ctx, conn, "servers.list", nil, &list); err != nil {
					return err
				}
			} else {
				list = offlineServerList(cfg)
			}
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(list)
			}
			printServerList(cmd.OutOrStdout(), list)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the list as JSON")
	return cmd
}

// offlineServerList is what the config file and the approvals say when no hub runs.
func offlineServerList(cfg config.Config) app.ServerList {
	approved, _ := upstream.ApprovedServers(app.ApprovalsFile(cfg))
	list := app.ServerList{ConfigPath: cfg.Path, Servers: []upstream.Status{}}
	for _, sp := range cfg.Servers {
		cmdOK, _ := upstream.CommandApproved(app.ApprovalsFile(cfg), sp)
		st := upstream.Status{Name: sp.Name, Transport: sp.Kind(), Command: sp.CommandLine(), Enabled: sp.IsEnabled(),
			Start: sp.StartMode(), State: "no hub running", Approved: approved[sp.Name], Tools: []upstream.ToolStatus{},
			CommandApproved: cmdOK, CommandHash: sp.CommandHash()}
		if !cmdOK {
			st.State = upstream.StateUnapproved
		}
		if !sp.IsEnabled() {
			st.State = upstream.StateDisabled
		}
		list.Servers = append(list.Servers, st)
	}
	return list
}

func printServerList(w io.Writer, list app.ServerList) {
	if len(list.Servers) == 0 {
		fmt.Fprintf(w, "No servers configured in %s.\nAdd one with `switchboard servers add NAME --command CMD`, or bring the ones your clients have with `switchboard servers import`.\n", list.ConfigPath)
		return
	}
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSTATE\tAPPROVED\tTOOLS\tRESTARTS\tCOMMAND")
	for _, s := range list.Servers {
		approved := "no (quarantined)"
		switch {
		case !s.CommandApproved:
			approved = "command not approved"
		case s.Approved:
			approved = "yes"
		}
		tools := fmt.Sprint(len(s.Tools))
		if s.Held > 0 {
			tools += fmt.Sprintf(" (%d held)", s.Held)
		}
		command := s.Command
		if s.Hub != nil {
			command += " (" + s.Hub.Label() + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\n", s.Name, s.State, approved, tools, s.Restarts, command)
	}
	tw.Flush()
	for _, s := range list.Servers {
		if !s.CommandApproved {
			fmt.Fprintf(w, "\n%s: command not approved: %s\n  Nothing of it runs until you approve it: `switchboard servers approve %s`\n", s.Name, s.Command, s.Name)
		} else if s.Sandbox.Mode == upstream.SandboxOff || s.Sandbox.Mode == upstream.SandboxUnconfined {
			fmt.Fprintf(w, "\n%s: not sandboxed (%s): %s\n", s.Name, s.Sandbox.Mode, s.Sandbox.Detail)
		}
		if s.LastError != "" && s.State != upstream.StateRunning {
			fmt.Fprintf(w, "\n%s: %s\n", s.Name, s.LastError)
		}
		for _, t := range s.Tools {
			if t.State == upstream.ToolApproved || t.State == upstream.ToolQuarantined && len(t.Flags) == 0 {
				continue
			}
			fmt.Fprintf(w, "\n%s: tool %s is %s", s.Name, t.Name, t.State)
			if len(t.Flags) > 0 {
				fmt.Fprintf(w, "; flagged: %s", strings.Join(t.Flags, "; "))
			}
			fmt.Fprintln(w)
			if t.Diff != "" {
				fmt.Fprintln(w, indent(t.Diff, "    "))
			}
		}
		if !s.Approved && len(s.Tools) > 0 {
			fmt.Fprintf(w, "\n%s is quarantined: its %s reach no client until you approve it: `switchboard servers approve %s`\n", s.Name, countOf(len(s.Tools), "tool"), s.Name)
		}
	}
}

func indent(s, pre string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = pre + l
	}
	return strings.Join(lines, "\n")
}

func newServersApproveCommand(g *globalFlags) *cobra.Command {
	var yes bool
	cmd := &cobra.Command{
		Use:   "approve NAME [TOOL...]",
		Short: "Approve a server: its command (what runs), then its tools (what agents see, pinned)",
		Long: `approve takes a server through its two approvals. First its command: what runs on this
machine (command, arguments, directory, environment, sandbox) or where its requests and
credentials go (URL, headers). Nothing of a server runs, no secret is resolved and no header is
sent before you approve its command; a change of it (a hand edit, an agent's edit, a pulled
repository) needs your approval again. approve shows the command and asks (without a terminal
it needs --yes). The server then starts, and its tools are pinned: each by the hash of its
definition, so a tool that later changes, or a new one, is held until you approve it by name.
Review the tools and their flags first: ` + "`switchboard servers list`" + `.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := g.load()
			if err != nil {
				return err
			}
			name, tools := args[0], args[1:]
			out := cmd.OutOrStdout()
			ctx, cancel := context.WithTimeout(cmd.Context(), 2*time.Minute)
			defer cancel()
			conn := g.runningHub(cmd, cfg)
			if conn != nil {
				defer conn.Close()
			}
			spec, err := configuredSpec(cfg, name)
			if err != nil {
				return err
			}
			var cmdOK bool
			if conn != nil {
				var list app.ServerList
				if err := app.HubControl(ctx, conn, "servers.list", nil, &list); err != nil {
					return err
				}
				for _, st := range list.Servers {
					if st.Name == name {
						cmdOK = st.CommandApproved
						if st.CommandHash != spec.CommandHash() {
							return fmt.Errorf("server %q: the running hub has another command for it than %s says; wait for it to read the file (or `switchboard servers reload`) and try again", name, cfg.Path)
						}
					}
				}
			} else if cmdOK, err = upstream.CommandApproved(app.ApprovalsFile(cfg), spec); err != nil {
				return err
			}
			if !cmdOK {
				showCommand(out, spec)
				switch {
				case yes:
				case isTerminal(os.Stdin):
					ok, err := confirm(cmd.InOrStdin(), out, "Approve this command, so the hub runs it?")
					if err != nil {
						return err
					}
					if !ok {
						return errors.New("not approved: nothing changed")
					}
				default:
					return fmt.Errorf("server %q: its command is not approved, and there is no terminal to confirm it: read the command above and run again with --yes", name)
				}
				if conn != nil {
					var st upstream.Status
					if err := app.HubControl(ctx, conn, "servers.approve-command", map[string]any{"name": name, "hash": spec.CommandHash()}, &st); err != nil {
						return err
					}
				} else if err := upstream.ApproveCommandFile(app.ApprovalsFile(cfg), spec); err != nil {
					return err
				}
				fmt.Fprintf(out, "Approved the command of %s.\n", name)
			}
			var st upstream.Status
			if conn != nil {
				if err := app.HubControl(ctx, conn, "servers.approve", map[string]any{"name": name, "tools": tools}, &st); err != nil {
					return err
				}
			} else {
				if st, err = approveOffline(ctx, cfg, name, tools); err != nil {
					return err
				}
			}
			fmt.Fprintf(out, "Approved %s: ", name)
			var pinned []string
			for _, t := range st.Tools {
				if t.State == upstream.ToolApproved {
					pinned = append(pinned, t.Exposed)
				}
			}
			fmt.Fprintf(out, "%s offered to clients: %s\n", countOf(len(pinned), "tool"), strings.Join(pinned, ", "))
			for _, t := range st.Tools {
				if len(t.Flags) > 0 {
					fmt.Fprintf(out, "warning: %s is flagged: %s\n", t.Name, strings.Join(t.Flags, "; "))
				}
			}
			if st.Sandbox.Mode != "" {
				fmt.Fprintf(out, "Sandbox: %s (%s)\n", st.Sandbox.Mode, st.Sandbox.Detail)
			}
			return nil
		},
	}
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "approve the command shown without asking (it is printed first)")
	return cmd
}

// configuredSpec finds a server's entry in the config file.
func configuredSpec(cfg config.Config, name string) (upstream.Spec, error) {
	for _, sp := range cfg.Servers {
		if sp.Name == name {
			return sp, nil
		}
	}
	return upstream.Spec{}, fmt.Errorf("server %q is not in %s; `switchboard servers list` shows the configured ones", name, cfg.Path)
}

// showCommand prints what approving a server's command lets run, or where it lets requests go.
func showCommand(out io.Writer, s upstream.Spec) {
	if s.Kind() != upstream.TransportStdio {
		fmt.Fprintf(out, "%s connects to %s (%s)\n", s.Name, s.URL, s.Kind())
	} else {
		fmt.Fprintf(out, "%s runs: %s\n", s.Name, s.CommandLine())
		if s.Cwd != "" {
			fmt.Fprintf(out, "  in: %s\n", s.Cwd)
		}
		switch sb := s.Sandbox; {
		case sb != nil && sb.Off:
			fmt.Fprintln(out, "  sandbox: OFF: it can reach everything you can")
		case sb != nil:
			fmt.Fprintf(out, "  sandbox widened: read %v, write %v, network %t\n", sb.Read, sb.Write, sb.NetworkAllowed())
		}
		if len(s.EnvPassthrough) > 0 {
			fmt.Fprintf(out, "  passes on from your environment: %s\n", strings.Join(s.EnvPassthrough, ", "))
		}
	}
	if names := append(mapKeys(s.Env), mapKeys(s.Headers)...); len(names) > 0 {
		fmt.Fprintln(out, "  with:")
		for k, v := range s.Env {
			fmt.Fprintf(out, "    env %s = %s\n", k, redactValue(k, v))
		}
		for k, v := range s.Headers {
			fmt.Fprintf(out, "    header %s = %s\n", k, redactValue(k, v))
		}
	}
}

// redactValue shows a configured value as written when it only refers to variables or
// secrets, and hides a literal (it may be a token written in the file).
func redactValue(k, v string) string {
	if importer.LooksSecret(k, v) {
		return "<literal value hidden>"
	}
	return v
}

func mapKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// approveOffline starts the one server in a private manager, pins its tools and stops it.
func approveOffline(ctx context.Context, cfg config.Config, name string, tools []string) (upstream.Status, error) {
	var spec *upstream.Spec
	for i := range cfg.Servers {
		if cfg.Servers[i].Name == name {
			spec = &cfg.Servers[i]
		}
	}
	if spec == nil {
		return upstream.Status{}, fmt.Errorf("server %q is not in %s; `switchboard servers list` shows the configured ones", name, cfg.Path)
	}
	workspace := cfg.Workspace
	opts := app.UpstreamOptions(cfg)
	opts.Workspace = workspace
	m, err := upstream.New(opts)
	if err != nil {
		return upstream.Status{}, err
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = m.Shutdown(sctx)
	}()
	one := *spec
	one.Start = upstream.StartOnDemand
	if err := m.Sync([]upstream.Spec{one}); err != nil {
		return upstream.Status{}, err
	}
	return m.Approve(ctx, name, tools...)
}

func newServersLogsCommand(g *globalFlags) *cobra.Command {
	var lines int
	cmd := &cobra.Command{
		Use:   "logs NAME",
		Short: "Print a server's log (its stderr and the hub's events about it) from the running hub",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := g.load()
			if err != nil {
				return err
			}
			var log app.ServerLog
			if err := g.askHub(cmd, cfg, "servers.logs", map[string]any{"name": args[0], "lines": lines}, &log,
				": a server's log lives in the hub that runs it; start Switchboard first"); err != nil {
				return err
			}
			for _, l := range log.Lines {
				fmt.Fprintf(cmd.OutOrStdout(), "%s %-6s %s\n", l.Time, l.Stream, l.Text)
			}
			return nil
		},
	}
	cmd.Flags().IntVarP(&lines, "lines", "n", 200, "how many of the last lines (0: all the hub keeps)")
	return cmd
}

func newServersRestartCommand(g *globalFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "restart NAME",
		Short: "Restart a server in the running hub",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := g.load()
			if err != nil {
				return err
			}
			var st upstream.Status
			if err := g.askHub(cmd, cfg, "servers.restart", map[string]any{"name": args[0]}, &st, "; the server starts with the hub"); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s: %s\n", st.Name, st.State)
			return nil
		},
	}
}

package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/switchboard-hub/switchboard/app"
	"github.com/switchboard-hub/switchboard/internal/config"
	"github.com/switchboard-hub/switchboard/internal/upstream"
	"github.com/switchboard-hub/switchboard/mcp"
)

// `switchboard servers list|approve|logs|restart`: these read or change the running hub's state,
// so they ask the hub on its Unix socket (mcp.ControlMethod). Without a running hub, list shows
// the config file and approve starts the server in a private hub to read and pin its tools.

// hubControl sends one control request to the hub on conn and decodes its result into out.
func hubControl(ctx context.Context, conn net.Conn, action string, params map[string]any, out any) error {
	if params == nil {
		params = map[string]any{}
	}
	params["action"] = action
	req, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": mcp.ControlMethod, "params": params})
	if err != nil {
		return err
	}
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	if _, err := conn.Write(append(req, '\n')); err != nil {
		return fmt.Errorf("hub: %w", err)
	}
	line, err := bufio.NewReaderSize(conn, 1<<20).ReadBytes('\n')
	if err != nil && !(errors.Is(err, io.EOF) && len(line) > 0) {
		return fmt.Errorf("hub: no answer: %w", err)
	}
	var resp struct {
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(line, &resp); err != nil {
		return fmt.Errorf("hub: %w", err)
	}
	if resp.Error != nil {
		return errors.New(resp.Error.Message)
	}
	return json.Unmarshal(resp.Result, out)
}

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
	return hubControl(ctx, conn, action, params, out)
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
				if err := hubControl(ctx, conn, "servers.list", nil, &list); err != nil {
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
	approved, _ := upstream.ApprovedServers(approvalsFile(cfg))
	list := app.ServerList{ConfigPath: cfg.Path, Servers: []upstream.Status{}}
	for _, sp := range cfg.Servers {
		st := upstream.Status{Name: sp.Name, Transport: sp.Kind(), Command: sp.CommandLine(), Enabled: sp.IsEnabled(),
			Start: sp.StartMode(), State: "no hub running", Approved: approved[sp.Name], Tools: []upstream.ToolStatus{}}
		if !sp.IsEnabled() {
			st.State = upstream.StateDisabled
		}
		list.Servers = append(list.Servers, st)
	}
	return list
}

func approvalsFile(cfg config.Config) string {
	return filepath.Join(cfg.DataDir, "servers", "approvals.json")
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
		if s.Approved {
			approved = "yes"
		}
		tools := fmt.Sprint(len(s.Tools))
		if s.Held > 0 {
			tools += fmt.Sprintf(" (%d held)", s.Held)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\n", s.Name, s.State, approved, tools, s.Restarts, s.Command)
	}
	tw.Flush()
	for _, s := range list.Servers {
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
			fmt.Fprintf(w, "\n%s is quarantined: its %d tools reach no client until you approve it: `switchboard servers approve %s`\n", s.Name, len(s.Tools), s.Name)
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
	return &cobra.Command{
		Use:   "approve NAME [TOOL...]",
		Short: "Approve a server (offer its tools to clients, pinned as they are now), or held tools of it",
		Long: `approve takes a server out of quarantine: its tools are offered to clients, each pinned by the
hash of its definition. A tool whose definition later changes, or a new tool, is held until you
approve it by name. Review the tools and their flags first: ` + "`switchboard servers list`" + `.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := g.load()
			if err != nil {
				return err
			}
			name, tools := args[0], args[1:]
			ctx, cancel := context.WithTimeout(cmd.Context(), 2*time.Minute)
			defer cancel()
			var st upstream.Status
			if conn := g.runningHub(cmd, cfg); conn != nil {
				defer conn.Close()
				if err := hubControl(ctx, conn, "servers.approve", map[string]any{"name": name, "tools": tools}, &st); err != nil {
					return err
				}
			} else {
				if st, err = approveOffline(ctx, cfg, name, tools); err != nil {
					return err
				}
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "Approved %s: ", name)
			var pinned []string
			for _, t := range st.Tools {
				if t.State == upstream.ToolApproved {
					pinned = append(pinned, t.Exposed)
				}
			}
			fmt.Fprintf(out, "%d tool(s) offered to clients: %s\n", len(pinned), strings.Join(pinned, ", "))
			for _, t := range st.Tools {
				if len(t.Flags) > 0 {
					fmt.Fprintf(out, "warning: %s is flagged: %s\n", t.Name, strings.Join(t.Flags, "; "))
				}
			}
			return nil
		},
	}
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
	m, err := upstream.New(upstream.Options{ApprovalsFile: approvalsFile(cfg), Workspace: workspace, Secret: app.KeyringLookup(cfg.Env), Getenv: cfg.Env.Lookup, Reserved: mcp.ToolsetNames()})
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

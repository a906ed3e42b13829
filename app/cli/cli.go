// Package cli is Switchboard's command line (cobra): serve, connect, call, tools, doctor, token,
// policy, clients, servers, secret and version, each building or reaching a hub of package app.
// With no sub-command it starts a front end: the desktop app (app/desktop) when the binary has
// the desktop UI and a display is reachable, else headless mode (app/dashboard).
package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/switchboard-hub/switchboard/app"
	"github.com/switchboard-hub/switchboard/internal/clientconf"
	"github.com/switchboard-hub/switchboard/internal/config"
	"github.com/switchboard-hub/switchboard/mcp"
	mcptransport "github.com/switchboard-hub/switchboard/mcp/transport"
)

// Execute runs the command line and returns the process exit code.
func Execute(version string) int {
	root := NewRootCommand(version)
	if err := root.Execute(); err != nil {
		var ee exitError
		if errors.As(err, &ee) {
			return ee.code
		}
		fmt.Fprintln(os.Stderr, "switchboard:", err)
		return 1
	}
	return 0
}

type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit %d", e.code) }

type globalFlags struct {
	workspace  string
	configFile string
	toolsets   []string
}

// load reads the config and applies the global flags (flags override file and environment).
func (g *globalFlags) load() (config.Config, error) {
	cfg, err := config.Load(g.configFile)
	if err != nil {
		return cfg, err
	}
	if g.workspace != "" {
		cfg.Workspace = g.workspace
		cfg.SetByFlag("--workspace", "workspace", g.workspace)
	}
	if len(g.toolsets) > 0 {
		cfg.Toolsets = g.toolsets
		cfg.SetByFlag("--toolsets", "toolsets", strings.Join(g.toolsets, ","))
	}
	return cfg, nil
}

// NewRootCommand builds the command tree.
func NewRootCommand(version string) *cobra.Command {
	g := &globalFlags{}
	var lo launchOptions
	root := &cobra.Command{
		Use:   "switchboard",
		Short: "A desktop MCP hub: one set of tools shared by every AI client",
		Long: `Switchboard hosts an MCP hub that AI clients reach over stdio, a Unix socket, TCP or
Streamable HTTP. With no sub-command it starts the desktop app (tray + dashboard); without a
display it runs headless and serves the dashboard over loopback HTTP. The desktop app runs once per
session: launching it again shows the running one's window and exits.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := g.load()
			if err != nil {
				return err
			}
			lo.workspaceFrom = app.WorkspaceSource(cfg, g.workspace)
			return runApp(cmd.Context(), cfg, version, lo)
		},
	}
	root.Flags().BoolVar(&lo.hidden, "hidden", false, "start in the tray with the window hidden (shown anyway when no tray host shows the icon); the login autostart entry uses it")
	root.PersistentFlags().StringVar(&g.workspace, "workspace", "", "workspace root the file and process tools are confined to (default: current directory; the desktop app started from the home directory or / uses the project folder chosen in its window)")
	root.PersistentFlags().StringVar(&g.configFile, "config", "", "config file (default: "+config.DefaultPath()+")")
	root.PersistentFlags().StringSliceVar(&g.toolsets, "toolsets", nil, "toolsets to serve, comma-separated: all, "+strings.Join(mcp.ToolsetNames(), ", ")+", or a configured server's name (default: all but ide, which needs a configured IDE backend URL, and every server)")
	root.AddCommand(newServeCommand(g, version), newConnectCommand(g, version), newCallCommand(g, version),
		newToolsCommand(g, version), newDoctorCommand(g, version), newVersionCommand(version),
		newTokenCommand(g), newPolicyCommand(g), newClientsCommand(g), newServersCommand(g), newSecretCommand())
	return root
}

func newServeCommand(g *globalFlags, version string) *cobra.Command {
	var (
		stdio             bool
		tcpAddr, unixPath string
		httpAddr, token   string
		readOnly, noHub   bool
		ws                bool
		toolsMode         string
	)
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the hub headless on the chosen transports (default: stdio, or TCP when MCP_ADDR is set)",
		Example: `  switchboard serve --stdio
  switchboard serve --unix /run/user/1000/switchboard/mcp.sock --http 127.0.0.1:9101
  MCP_ADDR=127.0.0.1:9100 switchboard serve`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := g.load()
			if err != nil {
				return err
			}
			if readOnly {
				cfg.ReadOnly = true
				cfg.SetByFlag("--read-only", "read_only", "true")
			}
			if err := setToolsMode(&cfg, toolsMode); err != nil {
				return err
			}
			fl := cmd.Flags()
			if !stdio && !fl.Changed("tcp") && !fl.Changed("unix") && !fl.Changed("http") {
				if cfg.Env.MCPAddr != "" {
					tcpAddr = cfg.TCP.Addr
				} else {
					stdio = true
				}
			}
			if fl.Changed("tcp") || tcpAddr != "" {
				cfg.TCP.Addr = orString(tcpAddr, cfg.TCP.Addr)
				if fl.Changed("tcp") && tcpAddr != "" {
					cfg.SetByFlag("--tcp", "tcp.addr", tcpAddr)
				}
			}
			if fl.Changed("unix") {
				cfg.Unix.Path = orString(unixPath, cfg.Unix.Path)
				if unixPath != "" {
					cfg.SetByFlag("--unix", "unix.path", unixPath)
				}
			}
			if fl.Changed("http") {
				cfg.HTTP.Addr = orString(httpAddr, cfg.HTTP.Addr)
				if httpAddr != "" {
					cfg.SetByFlag("--http", "http.addr", httpAddr)
				}
				if token != "" {
					cfg.HTTP.Token = token
					cfg.SetByFlag("--token", "http.token", "")
				}
			}
			if fl.Changed("http") || tcpAddr != "" {
				if err := app.ResolveClientToken(&cfg); err != nil {
					return err
				}
			}
			if ws && noHub {
				return errors.New("--ws and --no-hub: pick one (--ws starts the WebSocket hub, --no-hub leaves it out)")
			}
			ctx, stop := app.SignalContext(cmd.Context())
			defer stop()
			// On stdio the client shows stderr as errors: only warnings go there, audit lines
			// only to the audit file.
			st, err := app.BuildStack(cfg, version, app.StackOptions{LogSink: os.Stderr, Quiet: stdio, AuditEcho: !stdio, WithHub: !noHub, StartIDE: !noHub, EagerServers: true,
				ProjectSource: app.WorkspaceSource(cfg, g.workspace)})
			if err != nil {
				return err
			}
			defer st.CloseBounded()
			start := func(name string) error {
				if err := st.Transports.Start(name); err != nil {
					return err
				}
				for _, s := range st.Transports.Status() {
					if s.Name == name && !stdio {
						fmt.Fprintf(os.Stderr, "switchboard: %s listening on %s\n", name, s.URL)
					}
				}
				return nil
			}
			// The WebSocket hub starts only when asked: --ws here, or the ws_start tool.
			if ws {
				if err := start(mcp.TransportWS); err != nil {
					return err
				}
				if !stdio {
					fmt.Fprintf(os.Stderr, "switchboard: websocket hub token: %s\n", st.WSHub.Token())
				}
			}
			if fl.Changed("unix") {
				if err := start(mcp.TransportUnix); err != nil {
					return err
				}
			}
			if tcpAddr != "" {
				if err := start(mcp.TransportTCP); err != nil {
					return err
				}
			}
			if fl.Changed("http") {
				if err := start(mcp.TransportHTTP); err != nil {
					return err
				}
			}
			app.ReleaseStartupMemory()
			if stdio {
				// stdout belongs to the protocol from here on; all logging goes to stderr.
				err := st.Service.ServeStdio(ctx)
				stop()
				return err
			}
			<-ctx.Done()
			return nil
		},
	}
	f := cmd.Flags()
	f.BoolVar(&stdio, "stdio", false, "serve one client over stdin/stdout")
	f.StringVar(&tcpAddr, "tcp", "", "listen for MCP over TCP at ADDR, e.g. "+config.DefaultTCPAddr+" (beyond loopback clients must present the client token)")
	f.StringVar(&unixPath, "unix", "", "listen for MCP on a Unix socket at PATH, e.g. "+config.DefaultSocketPath())
	f.StringVar(&httpAddr, "http", "", "serve Streamable HTTP at ADDR, path /mcp, e.g. "+config.DefaultHTTPAddr)
	f.StringVar(&token, "token", "", "bearer token for --http (default: $SWITCHBOARD_TOKEN, else the client token kept in the config dir; `switchboard token` prints it)")
	f.BoolVar(&readOnly, "read-only", false, "register only read-only tools")
	f.StringVar(&toolsMode, "tools-mode", "", toolsModeUsage)
	f.BoolVar(&ws, "ws", false, "start the WebSocket hub (dashboard feeds) now; otherwise a client starts it with ws_start")
	f.BoolVar(&noHub, "no-hub", false, "leave out the WebSocket hub (and its ws_* tools) and the IDE bridge")
	return cmd
}

func orString(v, d string) string {
	if v == "" {
		return d
	}
	return v
}

func newConnectCommand(g *globalFlags, version string) *cobra.Command {
	var socket, tcpAddr, toolsMode string
	cmd := &cobra.Command{
		Use:   "connect",
		Short: "Relay stdio to a running hub's Unix socket (or --tcp port), so stdio-only clients share its state (no hub: serve a private one)",
		Long: `connect relays a stdio client to the hub listening on the Unix socket (or, with --tcp, on a
TCP port, sending the client token), so every client shares one workspace, process table and
dashboard. When no hub is running on the socket it serves a private in-process hub over stdio
instead (saying so once on stderr). If the hub goes away mid-session, connect says so on stderr and
exits with status 1, so the client reports the lost server.`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := g.load()
			if err != nil {
				return err
			}
			// The mode is this client's: the relay tells the hub (RelayHello); a private hub
			// serves only this client, so it takes it as its own.
			if err := setToolsMode(&cfg, toolsMode); err != nil {
				return err
			}
			if tcpAddr != "" {
				token, err := tcpToken(cfg)
				if err != nil {
					return err
				}
				app.ReleaseStartupMemory()
				return relay(cmd.Context(), "tcp", tcpAddr, token, relayClientToken(), toolsMode, os.Stdin, os.Stdout)
			}
			path := orString(socket, cfg.Unix.Path)
			// A relay is one per client and lives as long as the client: give back what start-up
			// touched (the binary's pages, the init garbage), which is most of its memory.
			app.ReleaseStartupMemory()
			err = relay(cmd.Context(), "unix", path, "", relayClientToken(), toolsMode, os.Stdin, os.Stdout)
			var nh errNoHub
			if !errors.As(err, &nh) {
				return err
			}
			fmt.Fprintf(os.Stderr, "switchboard: no hub at %s (%v); serving a private hub for this session: its processes and state are not shared with other clients (start `switchboard` to share them)\n", path, nh.err)
			return servePrivate(cmd.Context(), cfg, version, app.WorkspaceSource(cfg, g.workspace))
		},
	}
	cmd.Flags().StringVar(&socket, "socket", "", "hub socket (default "+config.DefaultSocketPath()+")")
	cmd.Flags().StringVar(&tcpAddr, "tcp", "", "relay to a hub's TCP port at ADDR instead, sending the TCP token ([tcp] token, SWITCHBOARD_TCP_TOKEN or `switchboard token`)")
	cmd.Flags().StringVar(&toolsMode, "tools-mode", "", "this client's tools mode, whatever the hub's: "+toolsModeUsage)
	return cmd
}

// errNoHub: nothing accepts connections on the hub socket.
type errNoHub struct{ err error }

func (e errNoHub) Error() string { return "no hub: " + e.err.Error() }

// servePrivate serves an in-process hub over stdio, as quietly as `serve --stdio`.
// workspaceFrom is where cfg.Workspace came from (app.WorkspaceSource).
func servePrivate(parent context.Context, cfg config.Config, version, workspaceFrom string) error {
	ctx, stop := app.SignalContext(parent)
	defer stop()
	st, err := app.BuildStack(cfg, version, app.StackOptions{LogSink: os.Stderr, Quiet: true, WithHub: true, StartIDE: true, EagerServers: true, ProjectSource: workspaceFrom})
	if err != nil {
		return err
	}
	defer st.CloseBounded()
	app.ReleaseStartupMemory()
	err = st.Service.ServeStdio(ctx)
	stop()
	return err
}

// relay copies in → the hub's socket (Unix, or TCP with the TCP token) and the hub → out. It
// first tells the hub the directory it was started in (mcptransport.RelayMethod), which becomes the
// client's workspace where the hub's rules allow, and the client's own token (clientToken, from
// the entry `switchboard clients connect` wrote), which names the client. When in ends it
// half-closes the socket, so the hub sees EOF, delivers the replies it can within its grace and
// closes; relay returns then. If the hub closes first (stopped or crashed while the client is
// still talking) relay returns an error.
func relay(ctx context.Context, network, addr, token, clientToken, toolsMode string, in io.Reader, out io.Writer) error {
	var d net.Dialer
	conn, err := d.DialContext(ctx, network, addr)
	if err != nil {
		if network == "unix" && (errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ENOENT)) {
			return errNoHub{err: err}
		}
		if network == "tcp" {
			return fmt.Errorf("connect to hub at tcp %s: %w; start it with `switchboard serve --tcp %s`", addr, err, addr)
		}
		return fmt.Errorf("connect to hub at %s: %w; start it with `switchboard` or `switchboard serve --unix`", addr, err)
	}
	type halfCloser interface {
		net.Conn
		CloseWrite() error
	}
	hc := conn.(halfCloser)
	defer hc.Close()
	var hello []byte
	if token != "" {
		hello = authLine(token)
	}
	hello = append(hello, relayLine(toolsMode, clientToken)...)
	if _, err := hc.Write(hello); err != nil {
		return fmt.Errorf("hub at %s: %w", addr, err)
	}
	var fromHub io.Reader = hc
	if clientToken != "" {
		// The hello carrying a token is a request: the client must not start talking to a hub
		// that refuses its identity, so wait for the answer first.
		br := bufio.NewReader(hc)
		if err := awaitRelayAck(hc, br); err != nil {
			return fmt.Errorf("hub at %s: %w", addr, err)
		}
		fromHub = br
	}
	inDone := make(chan struct{})
	go func() { // owned by relay: ends when in ends or the connection closes
		_, _ = io.Copy(hc, in)
		close(inDone)
		_ = hc.CloseWrite()
	}()
	_, err = io.Copy(out, fromHub)
	select {
	case <-inDone:
		return err
	default:
	}
	if err == nil {
		err = errors.New("connection closed")
	}
	return fmt.Errorf("the hub at %s went away mid-session (%v): it was stopped or crashed; restart it (`switchboard`) and reconnect the client", addr, err)
}

// relayHelloID is the id of the relay's hello when it is a request (it carries a client token).
const relayHelloID = "switchboard-relay"

// relayAckTimeout bounds the wait for the hub's answer to the relay's hello.
const relayAckTimeout = 10 * time.Second

// awaitRelayAck reads the hub's answer to the relay's hello: its empty result, or the error that
// refused the connection (a wrong TCP token, a client token unknown or revoked).
func awaitRelayAck(conn net.Conn, br *bufio.Reader) error {
	_ = conn.SetReadDeadline(time.Now().Add(relayAckTimeout))
	defer func() { _ = conn.SetReadDeadline(time.Time{}) }()
	line, err := br.ReadBytes('\n')
	if err != nil {
		return fmt.Errorf("no answer to the relay's hello (%v): the hub may be older than this switchboard; restart it", err)
	}
	var reply struct {
		ID    json.RawMessage `json:"id"`
		Error *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(line, &reply); err != nil {
		return fmt.Errorf("unreadable answer to the relay's hello: %v", err)
	}
	if reply.Error != nil {
		return errors.New(reply.Error.Message)
	}
	if string(reply.ID) != strconv.Quote(relayHelloID) {
		return fmt.Errorf("unexpected answer to the relay's hello: %s", bytes.TrimSpace(line))
	}
	return nil
}

// relayClientToken is the client's own token from its entry's environment
// (clientconf.TokenEnv, written by `switchboard clients connect`), "" when it has none.
func relayClientToken() string {
	return strings.TrimSpace(config.ReadEnv().Value(clientconf.TokenEnv))
}

// relayLine is the mcptransport.RelayMethod message naming the relay's working directory, the
// tools mode its client asked for ("" for the hub's) and the client's own token: a request when
// it carries a token (awaitRelayAck reads the answer), else a notification.
func relayLine(toolsMode, clientToken string) []byte {
	wd, _ := os.Getwd()
	if wd == "" && toolsMode == "" && clientToken == "" {
		return nil
	}
	msg := map[string]any{"jsonrpc": "2.0", "method": mcptransport.RelayMethod, "params": mcptransport.RelayHello{Cwd: wd, ToolsMode: toolsMode, ClientToken: clientToken}}
	if clientToken != "" {
		msg["id"] = relayHelloID
	}
	b, _ := json.Marshal(msg)
	return append(b, '\n')
}

const toolsModeUsage = "how much of the catalogue clients list: full (every tool), search (a core, tools_search and tools_call) or script (a core, tools_search and script_run); default: the tools_mode key, else full"

// setToolsMode applies --tools-mode (when given) to cfg.
func setToolsMode(cfg *config.Config, mode string) error {
	if mode == "" {
		return nil
	}
	m, err := mcp.ParseToolsMode(mode)
	if err != nil {
		return fmt.Errorf("--tools-mode: %w", err)
	}
	cfg.ToolsMode = m
	cfg.SetByFlag("--tools-mode", "tools_mode", m)
	return nil
}

func newCallCommand(g *globalFlags, version string) *cobra.Command {
	var args, socket string
	cmd := &cobra.Command{
		Use:   "call TOOL",
		Short: "Call one tool and print its result as JSON (on the running hub when there is one, else in-process)",
		Long: `call calls one tool and prints its result. When a hub answers on its Unix socket (the config's
[unix] path, default ` + config.DefaultSocketPath() + `) the call goes through that hub, so
it sees and changes the same processes and state as every other client; --socket names another
socket. With no hub running, call builds a private in-process hub for this one call. --workspace
and --toolsets configure a hub, so with either of them call always uses a private one.`,
		Example: `  switchboard call file_read --args '{"path":"README.md"}'
  switchboard call process_list --socket $XDG_RUNTIME_DIR/switchboard/mcp.sock`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, pos []string) error {
			var arguments map[string]any
			if args != "" {
				if err := json.Unmarshal([]byte(args), &arguments); err != nil {
					return fmt.Errorf("--args: not a JSON object (%v); e.g. --args '{\"path\":\"README.md\"}'", err)
				}
			}
			ctx := cmd.Context()
			var cs *sdk.ClientSession
			client := sdk.NewClient(&sdk.Implementation{Name: "switchboard-call", Version: version}, nil)
			var conn net.Conn
			if socket != "" {
				c, err := net.Dial("unix", socket)
				if err != nil {
					return fmt.Errorf("--socket %s: %w", socket, err)
				}
				conn = c
			}
			var cfg config.Config
			if conn == nil {
				var err error
				if cfg, err = g.load(); err != nil {
					return err
				}
				conn = g.runningHub(cmd, cfg)
			}
			if conn != nil {
				var err error
				cs, err = client.Connect(ctx, &sdk.IOTransport{Reader: conn, Writer: conn}, nil)
				if err != nil {
					return err
				}
			} else {
				// The same tool set as `switchboard tools` and a running hub (the hub is created,
				// not started: ws_start starts it, for the lifetime of this call).
				st, err := app.BuildStack(cfg, version, app.StackOptions{WithHub: true})
				if err != nil {
					return err
				}
				defer st.Close(context.Background())
				if i := slices.IndexFunc(st.Service.Tools(), func(t *sdk.Tool) bool { return t.Name == pos[0] }); i >= 0 {
					set := mcp.ToolsetOf(st.Service.Tools()[i])
					if set != "" && !slices.ContainsFunc(st.Service.ActiveTools(), func(t *sdk.Tool) bool { return t.Name == pos[0] }) {
						return fmt.Errorf("%s: its toolset %q is off; pass --toolsets %s (or all)", pos[0], set, set)
					}
				}
				ct, srvT := sdk.NewInMemoryTransports()
				if _, err := st.Service.Server().Connect(ctx, srvT, nil); err != nil {
					return err
				}
				if cs, err = client.Connect(ctx, ct, nil); err != nil {
					return err
				}
			}
			defer cs.Close()
			res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: pos[0], Arguments: arguments})
			if err != nil {
				return err
			}
			if res, err = awaitTask(ctx, cs, res); err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if res.IsError {
				for _, c := range res.Content {
					if t, ok := c.(*sdk.TextContent); ok {
						fmt.Fprintln(cmd.ErrOrStderr(), "error:", t.Text)
					}
				}
				return exitError{code: 2}
			}
			if res.StructuredContent != nil {
				b, _ := json.MarshalIndent(res.StructuredContent, "", "  ")
				fmt.Fprintln(out, string(b))
				return nil
			}
			for _, c := range res.Content {
				if t, ok := c.(*sdk.TextContent); ok {
					fmt.Fprintln(out, t.Text)
				}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&args, "args", "", "tool arguments as a JSON object")
	cmd.Flags().StringVar(&socket, "socket", "", "call through the hub on this Unix socket (an error when none answers there)")
	return cmd
}

func newToolsCommand(g *globalFlags, version string) *cobra.Command {
	var markdown bool
	cmd := &cobra.Command{
		Use:   "tools",
		Short: "List the tools (of the running hub when there is one; --markdown: the reference as in docs/tools.md)",
		Long: `tools lists the tools the running hub serves when a hub answers on its Unix socket (the
config's [unix] path), including its upstream servers' tools; otherwise the tools this binary
registers, with the toolsets that are off marked. --markdown always prints the reference of every
registered tool, as in docs/tools.md.`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := g.load()
			if err != nil {
				return err
			}
			if !markdown {
				if conn := g.runningHub(cmd, cfg); conn != nil {
					return listHubTools(cmd, conn, version)
				}
			}
			if markdown {
				// The reference is made from the declarations alone: no hub is built.
				fmt.Fprint(cmd.OutOrStdout(), mcp.ToolsMarkdown(app.Catalogue()))
				return nil
			}
			st, err := app.BuildStack(cfg, version, app.StackOptions{WithHub: true})
			if err != nil {
				return err
			}
			defer st.Close(context.Background())
			served := map[string]bool{}
			for _, t := range st.Service.ActiveTools() {
				served[t.Name] = true
			}
			for _, t := range st.Service.Tools() {
				ro := ""
				if t.Annotations != nil && t.Annotations.ReadOnlyHint {
					ro = " (read-only)"
				}
				set := mcp.ToolsetOf(t)
				if !served[t.Name] {
					set += ", off"
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%-24s [%s] %s%s\n", t.Name, set, firstSentence(t.Description), ro)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&markdown, "markdown", false, "print the Markdown tool reference")
	return cmd
}

// runningHub connects to the hub on the config's Unix socket when one answers there, else
// returns nil (then the caller builds a private hub). The global --workspace and --toolsets
// describe a hub of the caller's own, which a running hub cannot honour: with either set it
// returns nil.
func (g *globalFlags) runningHub(cmd *cobra.Command, cfg config.Config) net.Conn {
	if f := cmd.Flags(); f.Changed("workspace") || f.Changed("toolsets") {
		return nil
	}
	if cfg.Unix.Path == "" {
		return nil
	}
	conn, err := net.DialTimeout("unix", cfg.Unix.Path, 2*time.Second)
	if err != nil {
		return nil
	}
	return conn
}

// listHubTools prints the tools the hub on conn serves, in the format of `switchboard tools`.
func listHubTools(cmd *cobra.Command, conn net.Conn, version string) error {
	ctx := cmd.Context()
	client := sdk.NewClient(&sdk.Implementation{Name: "switchboard-tools", Version: version}, nil)
	cs, err := client.Connect(ctx, &sdk.IOTransport{Reader: conn, Writer: conn}, nil)
	if err != nil {
		return err
	}
	defer cs.Close()
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return err
		}
		ro := ""
		if t.Annotations != nil && t.Annotations.ReadOnlyHint {
			ro = " (read-only)"
		}
		set := mcp.ToolsetOf(t)
		if set == "" {
			set = "upstream"
		}
		fmt.Fprintf(cmd.OutOrStdout(), "%-24s [%s] %s%s\n", t.Name, set, firstSentence(t.Description), ro)
	}
	return nil
}

func firstSentence(s string) string {
	if i := strings.Index(s, ". "); i > 0 {
		return s[:i+1]
	}
	return s
}

func newVersionCommand(version string) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Run:   func(cmd *cobra.Command, _ []string) { fmt.Fprintln(cmd.OutOrStdout(), "switchboard", version) },
	}
}

// countOf says a count with its noun in the right number: "1 rule", "3 rules" (the dashboard's
// countOf, frontend/src/lib/format.ts).
func countOf(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

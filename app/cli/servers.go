package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/switchboard-hub/switchboard/app"
	"github.com/switchboard-hub/switchboard/internal/clientconf"
	"github.com/switchboard-hub/switchboard/internal/config"
	"github.com/switchboard-hub/switchboard/internal/tomledit"
	"github.com/switchboard-hub/switchboard/internal/upstream"
	"github.com/switchboard-hub/switchboard/internal/upstream/importer"
)

// newServersCommand is `switchboard servers`: the user's other MCP servers ([[servers]] in the
// config file). The verbs here edit the file (add, remove, enable, disable, import); verbs that
// talk to the running hub (list, approve, logs) are added to the same command.
func newServersCommand(g *globalFlags) *cobra.Command {
	root := &cobra.Command{
		Use:   "servers",
		Short: "Configure the MCP servers the hub runs for every client ([[servers]] in the config file)",
		Long: `servers manages the user's other MCP servers: configured once in Switchboard's config file as
[[servers]] tables, run by the hub (one instance shared by every client) and offered to clients as
<name>__<tool>. A new server is quarantined: the hub offers its tools only once you approve it.

add, remove, enable, disable and import edit the config file: each prints the change as a diff and
writes the file atomically, changing nothing else in it (comments, order, other sections).
--dry-run shows the change and writes nothing. A running hub applies the change within a second.

list, approve, logs and restart ask the running hub (on its Unix socket); without one, list
reads the config file and approve starts the server on its own to read and pin its tools.
login signs the hub in to a remote server that asks for it (OAuth); logout forgets that.`,
		Args: cobra.NoArgs,
	}
	root.AddCommand(newServersAddCommand(g), newServersRemoveCommand(g),
		newServersEnableCommand(g, true), newServersEnableCommand(g, false), newServersImportCommand(g),
		newServersListCommand(g), newServersApproveCommand(g), newServersLogsCommand(g), newServersRestartCommand(g),
		newServersLoginCommand(g), newServersLogoutCommand(g))
	return root
}

// configPath is the config file the edit verbs change: --config, else the default path.
func (g *globalFlags) configPath() string {
	if g.configFile != "" {
		return g.configFile
	}
	return config.DefaultPath()
}

// editConfig applies edit to the config file, prints the change as a diff and writes it (not with
// dryRun). It reports whether the file changed.
func editConfig(out io.Writer, path string, dryRun bool, edit func([]byte) ([]byte, error)) (bool, error) {
	data, err := os.ReadFile(path)
	exists := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, err
	}
	next, err := edit(data)
	if err == nil {
		// Every edit here is of [[servers]]; the toolsets key names servers too.
		next, err = config.ToolsetsFollowServers(data, next)
	}
	if err != nil {
		return false, fmt.Errorf("config %s: %w", path, err)
	}
	if string(next) == string(data) {
		return false, nil
	}
	fmt.Fprint(out, clientconf.Change{Path: path, Old: data, New: next, Exists: exists}.Diff())
	if dryRun {
		fmt.Fprintln(out, "\n--dry-run: nothing written.")
		return true, nil
	}
	if err := tomledit.WriteFile(path, next); err != nil {
		return false, err
	}
	fmt.Fprintf(out, "Wrote %s.\n", path)
	return true, nil
}

// checkServerName refuses an invalid NAME with a valid one to use instead.
func checkServerName(name string) error {
	if err := (upstream.Spec{Name: name, Command: "x"}).Validate(upstream.ReservedNames()); err != nil {
		_, why, _ := strings.Cut(err.Error(), "name: ")
		suggest := importer.SanitizeName(name)
		if suggest == name {
			suggest += "-mcp"
		}
		return fmt.Errorf("NAME %q: %s; e.g. %q", name, why, suggest)
	}
	return nil
}

// pairs parses repeated KEY=VALUE flags.
func pairs(flag string, list []string, example string) (map[string]string, error) {
	if len(list) == 0 {
		return nil, nil
	}
	m := make(map[string]string, len(list))
	for _, kv := range list {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, fmt.Errorf("%s %q: write KEY=VALUE, e.g. %s %s", flag, kv, flag, example)
		}
		if _, dup := m[k]; dup {
			return nil, fmt.Errorf("%s %s: given twice; give each key once", flag, k)
		}
		m[k] = v
	}
	return m, nil
}

// specFieldRE finds the field a Spec.Validate error names: `servers: "NAME": FIELD: ...`.
var specFieldRE = regexp.MustCompile(`^servers: "[^"]*": ([a-z_]+): `)

// asFlagError rewrites a Spec.Validate error about a field in terms of the flag that sets it.
func asFlagError(err error) error {
	flags := map[string]string{"command": "--command", "url": "--url", "env": "--env", "headers": "--header",
		"transport": "--transport", "start": "--on-demand", "name": "NAME", "oauth": "--oauth-client-id/--oauth-client-secret/--oauth-scope",
		"tls_fingerprint": "--tls-fingerprint"}
	m := specFieldRE.FindStringSubmatchIndex(err.Error())
	if m == nil {
		return err
	}
	msg := err.Error()
	field := msg[m[2]:m[3]]
	if flag, ok := flags[field]; ok {
		return fmt.Errorf("%s: %s", flag, msg[m[1]:])
	}
	return err
}

func newServersAddCommand(g *globalFlags) *cobra.Command {
	var command, cwd, url, transport, oauthID, oauthSecret, pin string
	var args, envs, headers, oauthScopes []string
	var onDemand, disabled, dryRun bool
	cmd := &cobra.Command{
		Use:   "add NAME (--command CMD [--arg A]... [--env K=V]... [--cwd DIR] | --url URL [--header K=V]... [--transport sse])",
		Short: "Add a server to the config file (quarantined until approved)",
		Long: `add writes a [[servers]] entry. NAME is lower-case letters, digits and '-' (at most 32): the
server's tools appear to clients as NAME__<tool>.

A local server is a command the hub starts (stdio); a remote one a URL it connects to (Streamable
HTTP, or SSE with --transport sse). In --env and --header values, ${VAR} is read from the hub's
environment and ${secret:NAME} from the desktop keyring when the server starts: keep tokens out of
the file that way (quote the value so the shell leaves it alone).`,
		Example: `  switchboard servers add everything --command npx --arg -y --arg @modelcontextprotocol/server-everything
  switchboard servers add github --command docker --arg run --arg -i --arg --rm --arg -e --arg GITHUB_PERSONAL_ACCESS_TOKEN \
      --arg ghcr.io/github/github-mcp-server --env 'GITHUB_PERSONAL_ACCESS_TOKEN=${secret:github-token}'
  switchboard servers add remote --url https://example.test/mcp --header 'Authorization=Bearer ${REMOTE_TOKEN}' --on-demand
  switchboard servers add workstation --url https://workstation:9101/mcp --tls-fingerprint 'sha256:3F:A1:…'`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, pos []string) error {
			name := pos[0]
			if err := checkServerName(name); err != nil {
				return err
			}
			switch {
			case command != "" && url != "":
				return errors.New("--command and --url: give one, --command CMD for a local (stdio) server or --url URL for a remote one")
			case command == "" && url == "":
				return errors.New("give --command CMD for a local (stdio) server or --url URL for a remote one")
			case url != "" && (len(args) > 0 || len(envs) > 0 || cwd != ""):
				return errors.New("--arg, --env and --cwd are for a local server (--command); a remote one (--url) takes --header")
			case command != "" && (len(headers) > 0 || transport != ""):
				return errors.New("--header and --transport are for a remote server (--url); a local one (--command) takes --env")
			}
			switch transport {
			case "", upstream.TransportHTTP, upstream.TransportSSE:
			default:
				return fmt.Errorf("--transport %q: use http (Streamable HTTP, the default) or sse (the older HTTP+SSE transport)", transport)
			}
			env, err := pairs("--env", envs, "API_KEY='${secret:api-key}'")
			if err != nil {
				return err
			}
			hdr, err := pairs("--header", headers, "'Authorization=Bearer ${secret:api-token}'")
			if err != nil {
				return err
			}
			s := upstream.Spec{Name: name, Command: command, Args: args, Env: env, Cwd: cwd, URL: url, Headers: hdr, Transport: transport, TLSFingerprint: pin}
			if transport == upstream.TransportHTTP {
				s.Transport = "" // the default for a URL: the file stays minimal
			}
			if oauthID != "" || oauthSecret != "" || len(oauthScopes) > 0 {
				s.OAuth = &upstream.OAuth{ClientID: oauthID, ClientSecret: oauthSecret, Scopes: oauthScopes}
			}
			if onDemand {
				s.Start = upstream.StartOnDemand
			}
			if disabled {
				s.Enabled = new(false)
			}
			if err := s.Validate(upstream.ReservedNames()); err != nil {
				return asFlagError(err)
			}
			out := cmd.OutOrStdout()
			path := g.configPath()
			if _, err := editConfig(out, path, dryRun, func(data []byte) ([]byte, error) { return upstream.AddServer(data, s) }); err != nil {
				return err
			}
			warnLiteralSecrets(out, "--env", env, path)
			warnLiteralSecrets(out, "--header", hdr, path)
			if dryRun {
				return nil
			}
			// Typed at a terminal, the command is the user's own: approved as written. From a
			// script (or an agent's shell) it waits for the user's approval.
			if isTerminal(os.Stdin) {
				if err := g.approveCommands(cmd, []upstream.Spec{s}); err != nil {
					return fmt.Errorf("added %s, but approving its command: %w", name, err)
				}
				fmt.Fprintf(out, "Added %s and approved its command. Its tools reach clients once you approve them: `switchboard servers approve %s`.\n", name, name)
				return nil
			}
			fmt.Fprintf(out, "Added %s. Its command is not approved (no terminal): nothing of it runs until you approve it with `switchboard servers approve %s`.\n", name, name)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&command, "command", "", "the command that starts a local (stdio) server")
	f.StringArrayVar(&args, "arg", nil, "an argument of --command (repeat for each, in order)")
	f.StringArrayVar(&envs, "env", nil, "KEY=VALUE added to the server's environment (repeatable); VALUE may hold ${VAR} or ${secret:NAME}")
	f.StringVar(&cwd, "cwd", "", "the local server's working directory (default: the hub's workspace)")
	f.StringVar(&url, "url", "", "the http(s) URL of a remote server")
	f.StringArrayVar(&headers, "header", nil, "NAME=VALUE sent with every request to --url (repeatable); VALUE may hold ${VAR} or ${secret:NAME}")
	f.StringVar(&transport, "transport", "", "http (Streamable HTTP, the default) or sse, for --url")
	f.StringVar(&oauthID, "oauth-client-id", "", "for --url: the client registered for Switchboard with the server's authorization server (oauth.client_id)")
	f.StringVar(&oauthSecret, "oauth-client-secret", "", "for --url: its secret, as ${secret:NAME} (oauth.client_secret)")
	f.StringArrayVar(&oauthScopes, "oauth-scope", nil, "for --url: a scope to ask for when signing in (repeatable; oauth.scopes)")
	f.StringVar(&pin, "tls-fingerprint", "", "for an https --url: trust exactly the certificate with this SHA-256 fingerprint, \"sha256:AB:CD:…\" (another Switchboard hub's own certificate, as its Settings show it; tls_fingerprint)")
	f.BoolVar(&onDemand, "on-demand", false, "start the server at the first call that needs it, not with the hub")
	f.BoolVar(&disabled, "disabled", false, "write the entry switched off (enabled = false)")
	f.BoolVar(&dryRun, "dry-run", false, "show the change and stop")
	return cmd
}

// warnLiteralSecrets points at values that look like credentials written in plain text.
func warnLiteralSecrets(out io.Writer, flag string, m map[string]string, path string) {
	for k, v := range m {
		if importer.LooksSecret(k, v) {
			fmt.Fprintf(out, "note: %s %s looks like a secret and is now in %s in plain text; store it in the keyring and write ${secret:NAME} instead.\n", flag, k, path)
		}
	}
}

func newServersRemoveCommand(g *globalFlags) *cobra.Command {
	var dryRun bool
	cmd := &cobra.Command{
		Use:   "remove NAME",
		Short: "Remove a server's [[servers]] entry from the config file",
		Long: `remove deletes the server's entry: its [[servers]] header, its keys and sub-tables (such as
[servers.env]) and the comments after them; a comment directly above a table header (this entry's
or the next one's) stays.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, pos []string) error {
			out := cmd.OutOrStdout()
			if _, err := editConfig(out, g.configPath(), dryRun, func(data []byte) ([]byte, error) {
				return upstream.RemoveServer(data, pos[0])
			}); err != nil {
				return err
			}
			if !dryRun {
				fmt.Fprintf(out, "Removed %s.\n", pos[0])
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "show the change and stop")
	return cmd
}

func newServersEnableCommand(g *globalFlags, on bool) *cobra.Command {
	var dryRun bool
	verb, short := "disable", "Switch a server off (enabled = false in its entry); its configuration stays"
	if on {
		verb, short = "enable", "Switch a server back on (removes enabled = false from its entry)"
	}
	cmd := &cobra.Command{
		Use:   verb + " NAME",
		Short: short,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, pos []string) error {
			out := cmd.OutOrStdout()
			path := g.configPath()
			changed, err := editConfig(out, path, dryRun, func(data []byte) ([]byte, error) {
				return upstream.SetServerEnabled(data, pos[0], on)
			})
			if err != nil {
				return err
			}
			if !changed {
				fmt.Fprintf(out, "%s is %sd already in %s: nothing to change.\n", pos[0], verb, path)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "show the change and stop")
	return cmd
}

func newServersImportCommand(g *globalFlags) *cobra.Command {
	var dryRun, yes, project bool
	cmd := &cobra.Command{
		Use:   "import",
		Short: "Add the servers configured in your MCP clients' own files (Claude, Cursor, VS Code, Zed, ...)",
		Long: `import reads the servers configured in your MCP clients' own files (each user file that
exists; ` + "`switchboard clients list`" + ` shows them) and adds those not configured here yet, so one
hub runs them for every client. Each is listed with its command, the client it came from and
what did not carry over as it was (the notes): a rename, keys not imported, a literal token to
move to the keyring. The same server in several clients is added once; one switched off in its
client is added switched off. Switchboard's own entry is left out, and so are servers this config
has already (same name, command or URL).

A repository's own files (.mcp.json, .vscode/mcp.json, .cursor/, .gemini/, ... in the current
directory) are read only with --project: whoever wrote the repository wrote those commands.

At a terminal, import asks for each server: yes adds it and approves its command, so it starts.
Without a terminal it needs --yes, and then adds every server with its command not approved:
nothing of it runs until you approve it (` + "`switchboard servers approve NAME`" + `). Either way
its tools stay quarantined until you approve them. The clients' files are not changed: once a
server runs in the hub, remove it from the client yourself.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			out := cmd.OutOrStdout()
			env, err := clientconf.OSEnv(config.ReadEnv().Value)
			if err != nil {
				return err
			}
			found, ierr := importer.Import(env, project)
			if ierr != nil {
				for _, line := range strings.Split(ierr.Error(), "\n") {
					fmt.Fprintf(cmd.ErrOrStderr(), "warning: skipped a client's file: %s\n", line)
				}
			}
			path := g.configPath()
			data, err := os.ReadFile(path)
			if err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
			existing, err := upstream.ReadSpecs(data)
			if err != nil {
				return fmt.Errorf("config %s: %w", path, err)
			}
			add, skipped := importer.MergeImports(existing, found)
			printImports(out, found, add, skipped)
			if !project {
				if files := importer.ProjectFiles(env); len(files) > 0 {
					fmt.Fprintf(out, "Not read: this repository's own files (%s); they come with %s, not from you. Run with --project to import them after reading them.\n", strings.Join(files, ", "), env.Project)
				}
			}
			if len(add) == 0 {
				fmt.Fprintln(out, "Nothing to import.")
				return nil
			}
			fmt.Fprintln(out)
			interactive := !yes && !dryRun && isTerminal(os.Stdin)
			if !yes && !dryRun && !interactive {
				return errors.New("import adds commands the hub will run: there is no terminal to ask about each, so read the list above and run again with --yes (they are added with their commands not approved), or with --dry-run")
			}
			var approve []upstream.Spec
			if interactive {
				var keep []upstream.Spec
				for _, s := range add {
					showCommand(out, s)
					ok, err := confirm(cmd.InOrStdin(), out, fmt.Sprintf("Add %s and approve its command?", s.Name))
					if err != nil {
						return err
					}
					if ok {
						keep = append(keep, s)
					}
				}
				add, approve = keep, keep
				if len(add) == 0 {
					fmt.Fprintln(out, "Nothing imported.")
					return nil
				}
			}
			if _, err := editConfig(out, path, dryRun, func(data []byte) ([]byte, error) {
				for _, s := range add {
					if data, err = upstream.AddServer(data, s); err != nil {
						return nil, err
					}
				}
				return data, nil
			}); err != nil {
				return err
			}
			if dryRun {
				return nil
			}
			if len(approve) > 0 {
				if err := g.approveCommands(cmd, approve); err != nil {
					return fmt.Errorf("imported, but approving their commands: %w", err)
				}
				fmt.Fprintf(out, "Imported %s and approved their commands. Their tools reach clients only once you approve each server: `switchboard servers approve NAME`.\n", countOf(len(add), "server"))
				return nil
			}
			fmt.Fprintf(out, "Imported %s with their commands not approved: nothing of them runs until you approve each one: `switchboard servers approve NAME`.\n", countOf(len(add), "server"))
			return nil
		},
	}
	f := cmd.Flags()
	f.BoolVar(&dryRun, "dry-run", false, "list what would be added and show the change; write nothing")
	f.BoolVarP(&yes, "yes", "y", false, "without a terminal: add every server listed, its command not approved")
	f.BoolVar(&project, "project", false, "also read this repository's own client files (.mcp.json, .vscode/, .cursor/, ...)")
	return cmd
}

// approveCommands approves specs' commands, just written to the config file: in the running
// hub once it has read the file, else in the approvals file.
func (g *globalFlags) approveCommands(cmd *cobra.Command, specs []upstream.Spec) error {
	cfg, err := g.load()
	if err != nil {
		return err
	}
	conn := g.runningHub(cmd, cfg)
	if conn == nil {
		for _, s := range specs {
			if err := upstream.ApproveCommandFile(app.ApprovalsFile(cfg), s); err != nil {
				return err
			}
		}
		return nil
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(cmd.Context(), 30*time.Second)
	defer cancel()
	var list app.ServerList
	// Read the file now, so the hub knows the servers whose commands it is to approve.
	if err := app.HubControl(ctx, conn, "servers.reload", nil, &list); err != nil {
		return err
	}
	for _, s := range specs {
		var st upstream.Status
		if err := app.HubControl(ctx, conn, "servers.approve-command", map[string]any{"name": s.Name, "hash": s.CommandHash()}, &st); err != nil {
			return err
		}
	}
	return nil
}

// printImports lists the servers to add, where each came from and its notes, then those left out.
func printImports(out io.Writer, found []importer.Found, add []upstream.Spec, skipped []string) {
	adding := map[string]bool{}
	for _, s := range add {
		adding[s.Name] = true
	}
	if len(add) > 0 {
		fmt.Fprintf(out, "To add (%d):\n", len(add))
	}
	for _, f := range found {
		if !adding[f.Spec.Name] {
			continue
		}
		state := ""
		if !f.Spec.IsEnabled() {
			state = " (disabled, as in the client)"
		}
		fmt.Fprintf(out, "  %s%s: %s\n", f.Spec.Name, state, f.Spec.CommandLine())
		from := fmt.Sprintf("%s (%s) %q", f.Client, f.Scope, f.Original)
		if f.Scope == "project" {
			from += " in " + f.Path + ", a file of the repository"
		}
		for _, a := range f.Also {
			from += fmt.Sprintf(", %s (%s) %q", a.Client, a.Scope, a.Original)
		}
		fmt.Fprintf(out, "      from %s\n", from)
		if f.Note != "" {
			for _, n := range strings.Split(f.Note, "; ") {
				fmt.Fprintf(out, "      note: %s\n", n)
			}
		}
	}
	if len(skipped) > 0 {
		fmt.Fprintf(out, "Not imported (%d):\n", len(skipped))
		for _, s := range skipped {
			fmt.Fprintf(out, "  %s\n", s)
		}
	}
}

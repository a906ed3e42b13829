package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/switchboard-hub/switchboard/app"
	"github.com/switchboard-hub/switchboard/internal/config"
	"github.com/switchboard-hub/switchboard/internal/upstream"
)

// serverChecks checks each configured upstream server: as the running hub sees it when one
// runs, else by starting it here (all at once), waiting for its tool list and stopping it.
func (g *globalFlags) serverChecks(cmd *cobra.Command, cfg config.Config) []check {
	if len(cfg.Servers) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(cmd.Context(), 90*time.Second)
	defer cancel()
	var statuses []upstream.Status
	where := "in the running hub"
	if conn := g.runningHub(cmd, cfg); conn != nil {
		defer conn.Close()
		var list app.ServerList
		if err := app.HubControl(ctx, conn, "servers.list", nil, &list); err != nil {
			return []check{{name: "servers", detail: "the running hub did not answer: " + err.Error(), fix: "restart Switchboard"}}
		}
		statuses = list.Servers
	} else {
		where = "started by doctor"
		statuses = startServersOnce(ctx, cfg)
	}
	out := make([]check, 0, len(statuses))
	for _, st := range statuses {
		out = append(out, serverCheck(st, where))
	}
	return out
}

// startServersOnce starts every enabled server in a private manager, waits until each runs or
// fails once, and stops them.
func startServersOnce(ctx context.Context, cfg config.Config) []upstream.Status {
	opts := app.UpstreamOptions(cfg)
	opts.Backoff = upstream.Backoff{Min: time.Hour}
	m, err := upstream.New(opts)
	if err != nil {
		return []upstream.Status{{Name: "servers", State: upstream.StateFailed, LastError: err.Error()}}
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = m.Shutdown(sctx)
	}()
	specs := make([]upstream.Spec, len(cfg.Servers))
	for i, sp := range cfg.Servers {
		sp.Start = upstream.StartEager
		specs[i] = sp
	}
	if err := m.Sync(specs); err != nil {
		return []upstream.Status{{Name: "servers", State: upstream.StateFailed, LastError: err.Error()}}
	}
	// Until each has run or failed once; past ctx, the statuses as they stand.
	_ = m.Await(ctx, func() bool {
		for _, st := range m.Statuses() {
			if st.State == upstream.StateStarting || st.State == upstream.StateIdle {
				return false
			}
		}
		return true
	})
	return m.Statuses()
}

func serverCheck(st upstream.Status, where string) check {
	c := check{name: "server " + st.Name}
	switch st.State {
	case upstream.StateDisabled:
		c.ok, c.detail = true, "disabled (enabled = false)"
		return c
	case upstream.StateRunning:
	case upstream.StateIdle:
		c.ok, c.detail = true, "on demand: starts at its first call; "+sandboxText(st.Sandbox)
		return c
	case upstream.StateUnapproved:
		c.optional = true
		c.detail = "command not approved: " + st.Command + "; nothing runs until you approve it"
		c.fix = "review the command and approve it: `switchboard servers approve " + st.Name + "`"
		return c
	case upstream.StateSignin:
		c.optional = true
		c.detail = "needs you to sign in (OAuth) to " + st.Command + "; its tools answer with how until you do"
		c.fix = "sign in: `switchboard servers login " + st.Name + "`, or Sign in on the dashboard's Servers view or in the tray"
		return c
	default:
		c.detail = fmt.Sprintf("%s (%s): %s", st.State, where, st.LastError)
		c.fix = "check the command, its arguments and environment with `switchboard servers logs " + st.Name + "`; fix the [[servers]] entry"
		return c
	}
	c.ok = true
	info := st.ServerInfo
	if st.Hub != nil {
		info += ", " + st.Hub.Label()
	}
	c.detail = fmt.Sprintf("running %s (%s): %s, %s, %s; %s", info, where, countOf(len(st.Tools), "tool"), countOf(st.Resources, "resource"), countOf(st.Prompts, "prompt"), sandboxText(st.Sandbox))
	switch {
	case !st.Approved:
		c.ok, c.optional = false, true
		c.detail += "; quarantined: no client sees its tools"
		c.fix = "review its tools (`switchboard servers list`) and approve: `switchboard servers approve " + st.Name + "`"
	case st.Held > 0:
		c.ok, c.optional = false, true
		c.detail += fmt.Sprintf("; %s held: new or changed since approval", countOf(st.Held, "tool"))
		c.fix = "review the diff on the dashboard's Servers view or `switchboard servers list`, then approve them by name"
	}
	if st.Sandbox.Mode == upstream.SandboxOff || st.Sandbox.Mode == upstream.SandboxUnconfined {
		c.ok, c.optional = false, true
		if c.fix == "" {
			c.fix = "it can reach everything you can: remove sandbox = \"off\" from its entry (or use a kernel with Landlock)"
		}
	}
	if st.Flagged > 0 {
		c.ok, c.optional = false, true
		c.detail += fmt.Sprintf("; %s flagged as possible hidden instructions", countOf(st.Flagged, "tool"))
		if c.fix == "" {
			c.fix = "read the flags in `switchboard servers list` before trusting this server"
		}
	}
	return c
}

// sandboxText says how a server is confined, for a check's detail.
func sandboxText(sb upstream.SandboxStatus) string {
	switch sb.Mode {
	case upstream.SandboxConfined:
		return "sandboxed (" + sb.Detail + ")"
	case "":
		return "sandbox unknown"
	}
	return "sandbox " + sb.Mode + ": " + sb.Detail
}

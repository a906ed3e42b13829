package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/switchboard-hub/switchboard/app"
	"github.com/switchboard-hub/switchboard/internal/config"
	"github.com/switchboard-hub/switchboard/internal/policy"
)

func newPolicyCommand(g *globalFlags) *cobra.Command {
	pol := &cobra.Command{Use: "policy", Short: "Inspect the trust policy ([policy] and [roots] in the config file)"}
	var args, client string
	check := &cobra.Command{
		Use:   "check TOOL",
		Short: "Print what the policy decides for a call, and the rule that decides it",
		Example: `  switchboard policy check file_delete --args '{"path":"notes.txt"}'
  switchboard policy check exec --args '{"command":"rm","args":["-rf","build"]}' --client claude-code`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, pos []string) error {
			raw, err := app.CallArgs(args)
			if err != nil {
				return fmt.Errorf("--%v; e.g. --args '{\"path\":\"README.md\"}'", err)
			}
			cfg, err := g.load()
			if err != nil {
				return err
			}
			p, err := cfg.CompilePolicy()
			if err != nil {
				return fmt.Errorf("config %s: %w", cfg.Path, err)
			}
			d := p.Decide(pos[0], client, raw)
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "decision: %s\n", d.Action)
			fmt.Fprintf(out, "rule:     %s\n", d.RuleName())
			fmt.Fprintf(out, "policy:   %s\n", policySummary(cfg, p))
			for _, w := range app.PolicyWarnings(p, pos[0]) {
				fmt.Fprintf(out, "warning:  %s\n", w)
			}
			return nil
		},
	}
	check.Flags().StringVar(&args, "args", "", "the call's arguments as a JSON object")
	check.Flags().StringVar(&client, "client", "", "the calling client's name (clientInfo.name), for rules with a client glob")
	pol.AddCommand(check)
	return pol
}

func policySummary(cfg config.Config, p *policy.Policy) string {
	path := cfg.Path
	if path == "" {
		path = config.DefaultPath()
	}
	s := fmt.Sprintf("%s (default %s, ask_timeout %s, %s", path, p.Default, p.AskTimeout, countOf(len(p.Rules), "rule"))
	if len(p.RootsAllow) > 0 {
		s += ", roots allowed under " + strings.Join(p.RootsAllow, ", ")
	}
	return s + ")"
}

// policyCheck is doctor's view of the policy: the file's rules must compile. A running hub
// keeps its last good policy while the file is invalid, so this is where a typo shows.
func policyCheck(cfg config.Config) check {
	p, err := cfg.CompilePolicy()
	if err != nil {
		return check{name: "policy", detail: err.Error() + " (a running hub keeps its last good policy until this is fixed)",
			fix: "correct the [policy]/[roots] keys named above in " + cfg.Path + " (docs/policy.md)"}
	}
	detail := policySummary(cfg, p)
	for _, w := range p.Warnings {
		detail += "; warning: " + w
	}
	return check{name: "policy", ok: true, detail: detail}
}

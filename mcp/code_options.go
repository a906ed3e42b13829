package mcp

import (
	"encoding/json"
	"fmt"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/internal/code"
	"github.com/switchboard-hub/switchboard/internal/policy"
	"github.com/switchboard-hub/switchboard/mcp/tools"
	mcptransport "github.com/switchboard-hub/switchboard/mcp/transport"
)

// Code intelligence (mcp/tools/code.go): the code_* and project_* tools over the app's
// language-server pool, and the writing tools' diagnostics after an edit.

// WithCode enables the code toolset on pool (created and closed by the caller: app.Stack).
// file_write, file_edit and file_patch then tell the pool of their changes and list the
// diagnostics a change introduced when a server runs for the file's language.
func WithCode(pool *code.Pool) Option {
	return func(s *Service) error {
		if pool != nil {
			s.code = tools.NewCodeState(pool, 0)
		}
		return nil
	}
}

// codeEdits is what the writing tools tell of their changes: nil without WithCode.
func (s *Service) codeEdits() tools.CodeEdits {
	if s.code == nil {
		return nil
	}
	return s.code
}

// CodeFeed is the Code view's state now (the "code" channel's snapshot), empty without
// WithCode.
func (s *Service) CodeFeed() tools.CodeFeed {
	if s.code == nil {
		return tools.CodeFeed{Servers: []tools.CodeServer{}, Files: []tools.CodeFileDiagnostics{}, Runs: []tools.ProjectRunSummary{}}
	}
	return s.code.Feed()
}

// execRules holds project_run's command line to the policy's rules for exec, so it is no way
// around them: the command as the shell runs it (sh -c LINE) and as its first word and the rest
// (go, [test ./...]) are each decided as an exec call. A rule that denies either refuses it. A
// rule that asks makes project_run run it as that very exec call through the hub's chain
// (CallInner), so the user answers the question exec would have put to them: about sh -c LINE,
// or about the plain command when only that form is asked about — which project_run can make
// only when the line has no shell syntax (it then runs without sh, as exec would). The default
// action does not count here: project_run's own rules and the default decided the call.
func (s *Service) execRules() tools.ExecRules {
	st := s.opts.policy
	if st == nil {
		return nil
	}
	return func(req *sdk.CallToolRequest, line string) (*tools.ExecAsk, error) {
		pol := st.Policy()
		if pol == nil {
			return nil, nil
		}
		var client string
		if req != nil {
			client = mcptransport.ClientName(req.Session)
		}
		words := strings.Fields(line)
		forms := []tools.ExecAsk{{Command: "sh", Args: []string{"-c", line}}}
		if len(words) > 0 {
			forms = append(forms, tools.ExecAsk{Command: words[0], Args: words[1:]})
		}
		var ask *tools.ExecAsk
		for i, f := range forms {
			cmd, _ := json.Marshal(f.Command)
			args, _ := json.Marshal(f.Args)
			d := pol.DecideMembers("exec", client, func() map[string]json.RawMessage {
				return map[string]json.RawMessage{"command": cmd, "args": args}
			})
			switch {
			case d.Rule == nil || d.Action == policy.Allow:
				continue
			case d.Action == policy.Ask:
				if ask == nil {
					f.Rule = d.RuleName()
					if i > 0 && !plainCommand(words) {
						return nil, fmt.Errorf("command: %q is held by %s for exec in the policy of %s (ask) as the command %s; project_run can ask about that call only for a plain command without shell syntax (quotes, $, |, ;, redirections, globs): run it with exec, or add a rule for project_run above it", line, d.RuleName(), st.Path(), f.Command)
					}
					ask = &f
				}
				continue
			}
			return nil, fmt.Errorf("command: %q is held by %s for exec in the policy of %s (%s); project_run does not run what exec may not: run it with exec, or add a rule for project_run above it", line, d.RuleName(), st.Path(), d.Action)
		}
		return ask, nil
	}
}

// plainCommand reports whether words (a line split at blanks) are exactly the words sh would
// run: no quoting, expansion, globbing, redirection, operator or leading assignment.
func plainCommand(words []string) bool {
	if len(words) == 0 || strings.Contains(words[0], "=") {
		return false
	}
	for _, w := range words {
		for _, r := range w {
			switch {
			case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
			case strings.ContainsRune("-_./:,=+@%", r):
			default:
				return false
			}
		}
	}
	return true
}

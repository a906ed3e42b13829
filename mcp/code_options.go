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
// (go, [test ./...]) are each decided as an exec call; a rule that denies or asks refuses it
// (project_run cannot ask in exec's place: the user answers for exec calls they can read). The
// default action does not count here: project_run's own rules and the default decided the call.
func (s *Service) execRules() func(req *sdk.CallToolRequest, line string) error {
	st := s.opts.policy
	if st == nil {
		return nil
	}
	return func(req *sdk.CallToolRequest, line string) error {
		pol := st.Policy()
		if pol == nil {
			return nil
		}
		var client string
		if req != nil {
			client = mcptransport.ClientName(req.Session)
		}
		words := strings.Fields(line)
		forms := [][]any{{"sh", []string{"-c", line}}}
		if len(words) > 0 {
			forms = append(forms, []any{words[0], words[1:]})
		}
		for _, f := range forms {
			cmd, _ := json.Marshal(f[0])
			args, _ := json.Marshal(f[1])
			d := pol.DecideMembers("exec", client, func() map[string]json.RawMessage {
				return map[string]json.RawMessage{"command": cmd, "args": args}
			})
			if d.Rule == nil || d.Action == policy.Allow {
				continue
			}
			return fmt.Errorf("command: %q is held by %s for exec in the policy of %s (%s); project_run does not run what exec may not: run it with exec, or add a rule for project_run above it", line, d.RuleName(), st.Path(), d.Action)
		}
		return nil
	}
}

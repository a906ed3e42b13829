package mcp

import (
	"github.com/switchboard-hub/switchboard/internal/code"
	"github.com/switchboard-hub/switchboard/mcp/tools"
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

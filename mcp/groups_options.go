package mcp

import (
	"context"
	"errors"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/internal/fetch"
	"github.com/switchboard-hub/switchboard/internal/ml"
	"github.com/switchboard-hub/switchboard/internal/notes"
	"github.com/switchboard-hub/switchboard/internal/rag"
	"github.com/switchboard-hub/switchboard/mcp/tools"
)

// The options that configure the tool groups of mcp/tools, and the dashboard's entry points
// into them.

// hubSessions is the hub's record of client sessions as the tool groups see it
// (tools.Sessions).
type hubSessions struct{ s *Service }

func (h hubSessions) SessionID(ctx context.Context, req sdk.Request) (id, transport string) {
	return h.s.sessionID(ctx, req)
}

func (h hubSessions) LogTo(ss *sdk.ServerSession, level sdk.LoggingLevel, format string, args ...any) {
	h.s.logTo(ss, level, format, args...)
}

func (h hubSessions) OwnProcess(id string, ss *sdk.ServerSession) { h.s.ownProcess(id, ss) }

// WithGit enables the git_* tools. They run the system git; without it installed, each call
// says so.
func WithGit() Option {
	return func(s *Service) error { s.opts.gitOn = true; return nil }
}

// WithSearch enables file_grep and file_glob.
func WithSearch() Option {
	return func(s *Service) error { s.opts.searchOn = true; return nil }
}

// WithPatch enables file_patch.
func WithPatch() Option {
	return func(s *Service) error { s.opts.patchOn = true; return nil }
}

// WithWebFetch enables web_fetch with the given fetcher (allow-list, time limit).
func WithWebFetch(f *fetch.Fetcher) Option {
	return func(s *Service) error { s.opts.fetcher = f; return nil }
}

// WithNotes enables memory_* and todo_* tools; memory notes live under dataDir.
func WithNotes(dataDir string) Option {
	return func(s *Service) error {
		st, err := tools.NewNotesState(dataDir)
		if err != nil {
			return err
		}
		s.notes = st
		return nil
	}
}

// Todos returns the todo lists (nil without WithNotes).
func (s *Service) Todos() *notes.Todos {
	if s.notes == nil {
		return nil
	}
	return s.notes.Todos()
}

// RAG returns the RAG engines' holder, or nil.
func (s *Service) RAG() *rag.Live { return s.rag }

// RAGQuery runs rag_query for the dashboard, without a client call (an error without RAG).
func (s *Service) RAGQuery(ctx context.Context, in tools.RAGQueryInput) (tools.RAGQueryOutput, error) {
	return tools.RAGQuery(ctx, s.rag, in)
}

// RAGCollections runs rag_collections for the dashboard, without a client call.
func (s *Service) RAGCollections(ctx context.Context, stats bool) (tools.RAGCollectionsOutput, error) {
	return tools.RAGCollections(ctx, s.rag, stats)
}

// WithML enables the ml_* tools on the given backend registry (tools.NewMLTools validates it).
func WithML(reg *ml.Registry, o tools.MLOptions) Option {
	return func(s *Service) error {
		m, err := tools.NewMLTools(reg, o)
		if err != nil {
			return err
		}
		s.subsystems = append(s.subsystems, m)
		return nil
	}
}

// SetML replaces the running hub's inference backends and ML options (tools.MLTools.Set: calls
// in flight finish on the registry they started with; on error nothing changes).
func (s *Service) SetML(reg *ml.Registry, o tools.MLOptions) error {
	for _, sub := range s.subsystems {
		if m, ok := sub.(*tools.MLTools); ok {
			return m.Set(reg, o)
		}
	}
	return errors.New("ml: this hub was built without the ML tools")
}

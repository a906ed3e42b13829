package tools

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/internal/search"
	"github.com/switchboard-hub/switchboard/internal/workspace"
	"github.com/switchboard-hub/switchboard/mcp/tool"
)

// Search tools: file_grep and file_glob, ripgrep's rules (internal/search) inside the workspace.

// GrepInput is file_grep's arguments: a pattern searched line by line under a path of the
// workspace, with ripgrep's file selection.
type GrepInput struct {
	Pattern        string `json:"pattern" jsonschema:"regular expression (RE2 syntax, as ripgrep) or, with literal, a plain string; matched line by line"`
	Path           string `json:"path,omitempty" jsonschema:"file or directory to search, relative to the workspace root (default \".\")" workspace:"path"`
	Glob           string `json:"glob,omitempty" jsonschema:"only search files matching this glob: without a slash it matches the file name (\"*.go\"), with one the path relative to path (\"cmd/**/*.go\")"`
	Literal        bool   `json:"literal,omitempty" jsonschema:"treat pattern as a plain string (fast path)"`
	IgnoreCase     bool   `json:"ignore_case,omitempty" jsonschema:"case-insensitive match"`
	Context        int    `json:"context,omitempty" jsonschema:"lines of context before and after each match (0-10)"`
	MaxResults     int    `json:"max_results,omitempty" jsonschema:"maximum matches returned (default 200, at most 10000)"`
	IncludeIgnored bool   `json:"include_ignored,omitempty" jsonschema:"also search files excluded by .gitignore/.ignore and hidden files (.git itself never)"`
}

// GrepMatch is one matching line in file_grep's result, with its context lines.
type GrepMatch struct {
	Path   string   `json:"path" jsonschema:"file path relative to the workspace root"`
	Line   int      `json:"line" jsonschema:"1-based line number"`
	Column int      `json:"column" jsonschema:"1-based byte column of the first match in the line"`
	Text   string   `json:"text" jsonschema:"the line (long lines cut to a window around the match)"`
	Before []string `json:"before,omitempty" jsonschema:"context lines before the match, oldest first"`
	After  []string `json:"after,omitempty" jsonschema:"context lines after the match"`
}

// GrepOutput is file_grep's result.
type GrepOutput struct {
	Matches       []GrepMatch `json:"matches" jsonschema:"matching lines, by path then line"`
	FilesSearched int         `json:"files_searched" jsonschema:"number of files searched"`
	Truncated     bool        `json:"truncated" jsonschema:"more matches exist than max_results"`
}

// GlobInput is file_glob's arguments: a glob matched under a directory of the workspace.
type GlobInput struct {
	Pattern        string `json:"pattern" jsonschema:"glob relative to path: * ? [abc] {a,b} and ** for any number of directories, e.g. \"**/*.go\""`
	Path           string `json:"path,omitempty" jsonschema:"directory to match under, relative to the workspace root (default \".\")" workspace:"path"`
	IncludeIgnored bool   `json:"include_ignored,omitempty" jsonschema:"also list files excluded by .gitignore/.ignore and hidden files"`
}

// GlobOutput is file_glob's result: the matching files (at most 1000).
type GlobOutput struct {
	Paths     []string `json:"paths" jsonschema:"matching files relative to the workspace root, sorted"`
	Truncated bool     `json:"truncated" jsonschema:"more than 1000 files matched; narrow the pattern"`
}

// SearchTools are file_grep and file_glob (WithSearch).
type SearchTools struct{ Workspaces }

// NewSearchTools is the group's dependencies.
func NewSearchTools(w Workspaces) *SearchTools { return &SearchTools{Workspaces: w} }

// SearchGroup declares the group's tools (toolset files) as values that need no hub;
// NewSearchTools builds the dependencies they are bound to.
func SearchGroup() tool.Group {
	return tool.NewGroup("files",
		tool.Func(sdk.Tool{Name: "file_grep", Annotations: tool.ReadOnly("Search file contents"),
			Description: "Search file contents for a regular expression or literal string, like ripgrep: .gitignore/.ignore rules are honoured, hidden and binary files skipped (include_ignored to search them), results sorted by path and line with 1-based line and column. Default 200 matches; truncated says when there are more."}, (*SearchTools).fileGrep),
		tool.Func(sdk.Tool{Name: "file_glob", Annotations: tool.ReadOnly("Find files by pattern"),
			Description: "List files whose path matches a glob (** for any directories), skipping what .gitignore/.ignore exclude and hidden files. Sorted; at most 1000."}, (*SearchTools).fileGlob),
	)
}

// searchStart resolves p inside the workspace and opens it for a walk: the directory's root
// handle, the file name when p is a file, and p's slash path relative to the workspace root.
func searchStart(ws *workspace.Root, field, p string) (root *os.Root, file, rel string, err error) {
	if p == "" {
		p = "."
	}
	real, err := ws.Resolve(p)
	if err != nil {
		return nil, "", "", fmt.Errorf("%s: %w", field, err)
	}
	rel = "."
	if real != ws.Dir() {
		rel = filepath.ToSlash(strings.TrimPrefix(real, ws.Dir()+string(filepath.Separator)))
	}
	st, err := os.Stat(real)
	if err != nil {
		return nil, "", "", fmt.Errorf("%s: %w", field, err)
	}
	dir := real
	if !st.IsDir() {
		if !st.Mode().IsRegular() {
			// The early answer; Grep decides again on the handle it opens (the stat is by name).
			return nil, "", "", fmt.Errorf("%s: %w", field, workspace.NotRegular("search", p, st.Mode()))
		}
		dir, file = filepath.Dir(real), filepath.Base(real)
	}
	// Not os.OpenRoot: it would hang on a directory swapped for a FIFO since the stat.
	root, err = workspace.OpenRootPath(dir)
	if err != nil {
		return nil, "", "", fmt.Errorf("%s: %w", field, err)
	}
	return root, file, rel, nil
}

// joinRel prefixes a path relative to the search start with the start's workspace path.
func joinRel(start, p string) string {
	if start == "." || start == "" {
		return p
	}
	return path.Join(start, p)
}

// progressInterval is how often a long search reports progress (tests shorten it).
var progressInterval = time.Second

// progressLoop reports n() every progressInterval while a long call runs, when the client
// asked for progress. The returned stop function ends it and sends a final report, so a client
// that asked always hears at least once.
func progressLoop(ctx context.Context, req *sdk.CallToolRequest, what string, n func() int64) func() {
	tok := req.Params.GetProgressToken()
	if tok == nil || req.Session == nil {
		return func() {}
	}
	loopCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(progressInterval)
		defer t.Stop()
		for {
			select {
			case <-loopCtx.Done():
				return
			case <-t.C:
				v := n()
				_ = req.Session.NotifyProgress(loopCtx, &sdk.ProgressNotificationParams{ProgressToken: tok, Progress: float64(v), Message: fmt.Sprintf("%d %s", v, what)})
			}
		}
	}()
	return func() {
		cancel()
		<-done
		v := n()
		_ = req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: tok, Progress: float64(v), Total: float64(v), Message: fmt.Sprintf("done: %d %s", v, what)})
	}
}

func fieldErr(err error) error {
	var fe *search.FieldError
	if errors.As(err, &fe) {
		return fe
	}
	return err
}

func (g *SearchTools) fileGrep(ctx context.Context, req *sdk.CallToolRequest, in GrepInput) (*sdk.CallToolResult, GrepOutput, error) {
	ws, err := g.WorkspaceFor(ctx, req)
	if err != nil {
		return nil, GrepOutput{}, err
	}
	root, file, rel, err := searchStart(ws, "path", in.Path)
	if err != nil {
		return nil, GrepOutput{}, err
	}
	defer root.Close()
	opts := search.GrepOptions{Pattern: in.Pattern, Literal: in.Literal, IgnoreCase: in.IgnoreCase,
		Context: in.Context, MaxResults: in.MaxResults, Glob: in.Glob, File: file, IncludeIgnored: in.IncludeIgnored,
		Skip: g.WalkSkip(req, ws)}
	base := rel
	if file != "" {
		base = path.Dir(rel)
	}
	opts.Base, opts.Parents = search.LoadParents(ws.FS(), base)
	var searched atomic.Int64
	opts.Searched = &searched
	stop := progressLoop(ctx, req, "files searched", searched.Load)
	res, err := search.Grep(ctx, root, opts)
	stop()
	if nr := (*workspace.NotRegularError)(nil); errors.As(err, &nr) {
		nr.Op, nr.Path = "search", in.Path // Grep knows only the name within its directory
	}
	if err != nil {
		return nil, GrepOutput{}, fieldErr(err)
	}
	out := GrepOutput{Matches: make([]GrepMatch, len(res.Matches)), FilesSearched: res.FilesSearched, Truncated: res.Truncated}
	for i, m := range res.Matches {
		out.Matches[i] = GrepMatch{Path: joinRel(base, m.Path), Line: m.Line, Column: m.Column, Text: m.Text, Before: m.Before, After: m.After}
	}
	return nil, out, nil
}

func (g *SearchTools) fileGlob(ctx context.Context, req *sdk.CallToolRequest, in GlobInput) (*sdk.CallToolResult, GlobOutput, error) {
	if err := search.ValidateGlob("pattern", in.Pattern); err != nil {
		return nil, GlobOutput{}, err
	}
	ws, err := g.WorkspaceFor(ctx, req)
	if err != nil {
		return nil, GlobOutput{}, err
	}
	root, file, rel, err := searchStart(ws, "path", in.Path)
	if err != nil {
		return nil, GlobOutput{}, err
	}
	defer root.Close()
	if file != "" {
		return nil, GlobOutput{}, fmt.Errorf("path: %q is a file; give the directory to match under", in.Path)
	}
	opts := search.GlobOptions{Pattern: in.Pattern, IncludeIgnored: in.IncludeIgnored, Skip: g.WalkSkip(req, ws)}
	opts.Base, opts.Parents = search.LoadParents(ws.FS(), rel)
	res, err := search.Glob(ctx, root, opts)
	if err != nil {
		return nil, GlobOutput{}, fieldErr(err)
	}
	out := GlobOutput{Paths: make([]string, len(res.Paths)), Truncated: res.Truncated}
	for i, p := range res.Paths {
		out.Paths[i] = joinRel(rel, p)
	}
	return nil, out, nil
}

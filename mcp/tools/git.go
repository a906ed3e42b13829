package tools

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/internal/git"
	"github.com/switchboard-hub/switchboard/mcp/tool"
)

// Git tools: the system git through internal/git (argument vectors, validated refs, paths
// after "--", no hub secrets in its environment). The repository may have been written by an
// agent: git.Runner.Open confines it to the workspace and runs git with the hub's own
// configuration, so nothing in .git/config, attributes or hooks runs a program.

// GitStatusInput is git_status's arguments: which repository in the workspace.
type GitStatusInput struct {
	Path string `json:"path,omitempty" jsonschema:"repository directory relative to the workspace root (default \".\"); git does not look above the workspace" workspace:"path"`
}

// GitFileStatus is one changed, staged or untracked file, in git_status's and git_add's results,
// with git's porcelain index and work-tree letters.
type GitFileStatus struct {
	Path     string `json:"path" jsonschema:"path relative to the repository root"`
	OrigPath string `json:"orig_path,omitempty" jsonschema:"previous path of a rename or copy"`
	Index    string `json:"index" jsonschema:"staged state: M modified, A added, D deleted, R renamed, C copied, U conflict, ? untracked, . unchanged"`
	Worktree string `json:"worktree" jsonschema:"working-tree state, same letters"`
	Status   string `json:"status" jsonschema:"modified, added, deleted, renamed, copied, type changed, conflicted or untracked"`
}

// GitStatusOutput is git_status's result: the branch and HEAD, how far it is from its upstream, and
// the changed files.
type GitStatusOutput struct {
	Branch   string          `json:"branch" jsonschema:"current branch; empty when HEAD is detached"`
	Commit   string          `json:"commit" jsonschema:"HEAD commit hash; empty before the first commit"`
	Upstream string          `json:"upstream,omitempty" jsonschema:"upstream branch"`
	Ahead    int             `json:"ahead" jsonschema:"commits ahead of upstream"`
	Behind   int             `json:"behind" jsonschema:"commits behind upstream"`
	Files    []GitFileStatus `json:"files" jsonschema:"changed, staged and untracked files"`
	Clean    bool            `json:"clean" jsonschema:"no changes at all"`
}

// GitDiffInput is git_diff's arguments: the working tree against the index by default, the index
// against HEAD with staged, or a revision or range with ref.
type GitDiffInput struct {
	Path   string   `json:"path,omitempty" jsonschema:"repository directory relative to the workspace root (default \".\"); git does not look above the workspace" workspace:"path"`
	Staged bool     `json:"staged,omitempty" jsonschema:"diff the index against HEAD (what git_commit would record) instead of the working tree against the index"`
	Ref    string   `json:"ref,omitempty" jsonschema:"compare with this revision or range: HEAD~1, main, main...feature, a1b2c3d..HEAD"`
	Paths  []string `json:"paths,omitempty" jsonschema:"limit to these files or directories (relative to the repository)"`
}

// GitFileChange is one file of a diff with its line counts, in git_diff's and git_show's results.
type GitFileChange struct {
	Path    string `json:"path" jsonschema:"file path"`
	Added   int    `json:"added" jsonschema:"lines added"`
	Removed int    `json:"removed" jsonschema:"lines removed"`
	Binary  bool   `json:"binary,omitempty" jsonschema:"binary file (no line counts)"`
}

// GitDiffOutput is git_diff's result: the unified diff (cut at 512 KiB) and per-file line counts.
type GitDiffOutput struct {
	Diff      string          `json:"diff" jsonschema:"unified diff"`
	Files     []GitFileChange `json:"files" jsonschema:"changed files with line counts"`
	Truncated bool            `json:"truncated" jsonschema:"the diff was cut at 512 KiB; narrow it with paths"`
}

// GitLogInput is git_log's arguments: where to start, how many commits, and which paths they must
// touch.
type GitLogInput struct {
	Path     string   `json:"path,omitempty" jsonschema:"repository directory relative to the workspace root (default \".\"); git does not look above the workspace" workspace:"path"`
	MaxCount int      `json:"max_count,omitempty" jsonschema:"commits to return (default 20, at most 500)"`
	Ref      string   `json:"ref,omitempty" jsonschema:"start from this revision or range instead of HEAD (main, v1.0..HEAD)"`
	Paths    []string `json:"paths,omitempty" jsonschema:"only commits touching these paths"`
}

// GitCommit is one commit: an entry of git_log's result, or git_show's commit with its body.
type GitCommit struct {
	Hash    string `json:"hash" jsonschema:"full commit hash"`
	Author  string `json:"author" jsonschema:"author name"`
	Email   string `json:"email" jsonschema:"author email"`
	Date    string `json:"date" jsonschema:"author date, ISO 8601"`
	Subject string `json:"subject" jsonschema:"first line of the message"`
	Body    string `json:"body,omitempty" jsonschema:"rest of the message (git_show only)"`
}

// GitLogOutput is git_log's result.
type GitLogOutput struct {
	Commits []GitCommit `json:"commits" jsonschema:"commits, newest first"`
}

// GitShowInput is git_show's arguments: the repository and the commit to show.
type GitShowInput struct {
	Path string `json:"path,omitempty" jsonschema:"repository directory relative to the workspace root (default \".\"); git does not look above the workspace" workspace:"path"`
	Ref  string `json:"ref" jsonschema:"commit to show: a hash, branch, tag or HEAD~N"`
}

// GitShowOutput is git_show's result: the commit, its patch (cut at 512 KiB) and the files it
// changed.
type GitShowOutput struct {
	Commit    GitCommit       `json:"commit" jsonschema:"the commit"`
	Diff      string          `json:"diff" jsonschema:"its patch"`
	Files     []GitFileChange `json:"files" jsonschema:"files it changed with line counts"`
	Truncated bool            `json:"truncated" jsonschema:"the diff was cut at 512 KiB"`
}

// GitBranchInput is git_branch's arguments: with neither create nor checkout it only lists the
// local branches.
type GitBranchInput struct {
	Path     string `json:"path,omitempty" jsonschema:"repository directory relative to the workspace root (default \".\"); git does not look above the workspace" workspace:"path"`
	Create   string `json:"create,omitempty" jsonschema:"create a branch with this name at HEAD"`
	Checkout string `json:"checkout,omitempty" jsonschema:"switch to this branch (or commit; after create, the new branch); refuses when local changes would be overwritten"`
}

// GitBranch is one local branch in git_branch's result.
type GitBranch struct {
	Name     string `json:"name" jsonschema:"branch name"`
	Commit   string `json:"commit" jsonschema:"commit it points at"`
	Upstream string `json:"upstream,omitempty" jsonschema:"upstream branch"`
	Current  bool   `json:"current" jsonschema:"checked out"`
}

// GitBranchOutput is git_branch's result: the local branches after the call and what the call
// created or switched to.
type GitBranchOutput struct {
	Current    string      `json:"current" jsonschema:"current branch after the call; empty when detached"`
	Branches   []GitBranch `json:"branches" jsonschema:"local branches"`
	Created    string      `json:"created,omitempty" jsonschema:"branch created by this call"`
	CheckedOut string      `json:"checked_out,omitempty" jsonschema:"what this call switched to"`
}

// GitAddInput is git_add's arguments: the literal paths to stage.
type GitAddInput struct {
	Path  string   `json:"path,omitempty" jsonschema:"repository directory relative to the workspace root (default \".\"); git does not look above the workspace" workspace:"path"`
	Paths []string `json:"paths" jsonschema:"files or directories to stage, relative to the repository; [\".\"] for everything (literal paths, no globs)"`
}

// GitAddOutput is git_add's result: everything staged after the call, so the agent sees what
// git_commit will record.
type GitAddOutput struct {
	Staged []GitFileStatus `json:"staged" jsonschema:"files now staged"`
}

// GitCommitInput is git_commit's arguments: the message for what is staged.
type GitCommitInput struct {
	Path    string `json:"path,omitempty" jsonschema:"repository directory relative to the workspace root (default \".\"); git does not look above the workspace" workspace:"path"`
	Message string `json:"message" jsonschema:"commit message: subject line, blank line, body"`
}

// GitCommitOutput is git_commit's result: the new commit and the branch it is on.
type GitCommitOutput struct {
	Hash    string `json:"hash" jsonschema:"new commit hash"`
	Branch  string `json:"branch" jsonschema:"branch it was recorded on"`
	Subject string `json:"subject" jsonschema:"first line of the message"`
	Files   int    `json:"files" jsonschema:"files changed by the commit"`
}

// GitTools are the git_* tools (WithGit), on the system git.
type GitTools struct{ Workspaces }

// NewGitTools is the group's dependencies.
func NewGitTools(w Workspaces) *GitTools { return &GitTools{Workspaces: w} }

// GitGroup declares the group's tools (toolset git) as values that need no hub;
// NewGitTools builds the dependencies they are bound to.
func GitGroup() tool.Group {
	return tool.NewGroup("git",
		tool.Func(sdk.Tool{Name: "git_status", Annotations: tool.ReadOnly("Git status"),
			Description: "Show the branch, upstream ahead/behind and every changed, staged and untracked file of a repository in the workspace."}, (*GitTools).gitStatus),
		tool.Func(sdk.Tool{Name: "git_diff", Annotations: tool.ReadOnly("Git diff"),
			Description: "Show changes as a unified diff with per-file line counts: working tree vs index (default), index vs HEAD (staged), or against a revision or range (ref)."}, (*GitTools).gitDiff),
		tool.Func(sdk.Tool{Name: "git_log", Annotations: tool.ReadOnly("Git log"),
			Description: "List commits (hash, author, date, subject), newest first, optionally from a ref and limited to paths."}, (*GitTools).gitLog),
		tool.Func(sdk.Tool{Name: "git_show", Annotations: tool.ReadOnly("Git show"),
			Description: "Show one commit: metadata, full message, patch and per-file line counts."}, (*GitTools).gitShow),
		tool.Func(sdk.Tool{Name: "git_branch", Annotations: tool.Write("Git branch", false, false),
			Description: "List local branches; create a branch at HEAD (create) and/or switch to one (checkout)."}, (*GitTools).gitBranch),
		tool.Func(sdk.Tool{Name: "git_add", Annotations: tool.Write("Git add", false, true),
			Description: "Stage files for the next commit. Submodules are left out (staging one would run git inside it under the submodule's own configuration)."}, (*GitTools).gitAdd),
		tool.Func(sdk.Tool{Name: "git_commit", Annotations: tool.Write("Git commit", false, false),
			Description: "Record the staged changes as a commit with the given message (hooks do not run)."}, (*GitTools).gitCommit),
	)
}

// gitRepo opens the repository of a call, located and verified inside the caller's
// workspace, and returns it with the workspace root. The caller closes the repository.
func (g *GitTools) gitRepo(ctx context.Context, req *sdk.CallToolRequest, p string) (*git.Repo, string, error) {
	ws, err := g.WorkspaceFor(ctx, req)
	if err != nil {
		return nil, "", err
	}
	if p == "" {
		p = "."
	}
	dir, err := ws.Resolve(p)
	if err != nil {
		return nil, "", fmt.Errorf("path: %w", err)
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return nil, "", fmt.Errorf("path: %q is not a directory; give the repository directory", p)
	}
	r, err := git.New(ws.Dir())
	if err != nil {
		return nil, "", err
	}
	repo, err := r.Open(ctx, dir)
	if err != nil {
		return nil, "", gitErr(err)
	}
	return repo, ws.Dir(), nil
}

// gitSkip is walkSkip for a repository's files: it takes paths relative to the repository at
// dir and says whether the policy (or the hub's own state) keeps them from this call. nil when
// nothing is kept back.
func (g *GitTools) gitSkip(ctx context.Context, req *sdk.CallToolRequest, dir string) func(repoRel string) bool {
	ws, err := g.ResolveWorkspace(ctx, req, false)
	if err != nil {
		return nil
	}
	skip := g.WalkSkip(req, ws)
	if skip == nil {
		return nil
	}
	prefix, err := filepath.Rel(ws.Dir(), dir)
	if err != nil || strings.HasPrefix(prefix, "..") {
		return nil
	}
	return func(repoRel string) bool {
		return skip(path.Clean(path.Join(filepath.ToSlash(prefix), repoRel)), false)
	}
}

// withoutSkipped drops the sections of a unified diff (and the per-file counts) of files the
// call may not see, so git_diff and git_show do not print what file_read would refuse.
func withoutSkipped(diff string, files []git.FileChange, skip func(string) bool) (string, []git.FileChange) {
	if skip == nil {
		return diff, files
	}
	kept := files[:0:0]
	for _, f := range files {
		if !skip(f.Path) {
			kept = append(kept, f)
		}
	}
	var b strings.Builder
	keep := true
	for _, line := range strings.SplitAfter(diff, "\n") {
		if rest, ok := strings.CutPrefix(line, "diff --git "); ok {
			keep = true
			for _, f := range strings.Fields(strings.TrimSpace(rest)) {
				if p, ok := strings.CutPrefix(f, "a/"); ok && skip(p) {
					keep = false
				}
				if p, ok := strings.CutPrefix(f, "b/"); ok && skip(p) {
					keep = false
				}
			}
		}
		if keep {
			b.WriteString(line)
		}
	}
	return b.String(), kept
}

func gitErr(err error) error {
	var fe *git.FieldError
	if errors.As(err, &fe) {
		return fe
	}
	return err
}

func fileStatuses(in []git.FileStatus) []GitFileStatus {
	out := make([]GitFileStatus, len(in))
	for i, f := range in {
		out[i] = GitFileStatus(f)
	}
	return out
}

func fileChanges(in []git.FileChange) []GitFileChange {
	out := make([]GitFileChange, len(in))
	for i, f := range in {
		out[i] = GitFileChange(f)
	}
	return out
}

func (g *GitTools) gitStatus(ctx context.Context, req *sdk.CallToolRequest, in GitStatusInput) (*sdk.CallToolResult, GitStatusOutput, error) {
	repo, _, err := g.gitRepo(ctx, req, in.Path)
	if err != nil {
		return nil, GitStatusOutput{}, err
	}
	defer repo.Close()
	st, err := repo.Status(ctx)
	if err != nil {
		return nil, GitStatusOutput{}, gitErr(err)
	}
	if skip := g.gitSkip(ctx, req, repo.Dir); skip != nil {
		st.Files = slices.DeleteFunc(st.Files, func(f git.FileStatus) bool { return skip(f.Path) || (f.OrigPath != "" && skip(f.OrigPath)) })
	}
	return nil, GitStatusOutput{Branch: st.Branch, Commit: st.Commit, Upstream: st.Upstream, Ahead: st.Ahead, Behind: st.Behind, Files: fileStatuses(st.Files), Clean: st.Clean}, nil
}

func (g *GitTools) gitDiff(ctx context.Context, req *sdk.CallToolRequest, in GitDiffInput) (*sdk.CallToolResult, GitDiffOutput, error) {
	repo, root, err := g.gitRepo(ctx, req, in.Path)
	if err != nil {
		return nil, GitDiffOutput{}, err
	}
	defer repo.Close()
	if err := git.CheckPaths("paths", in.Paths, root, repo.Dir); err != nil {
		return nil, GitDiffOutput{}, err
	}
	d, err := repo.Diff(ctx, git.DiffOptions{Staged: in.Staged, Ref: in.Ref, Paths: in.Paths})
	if err != nil {
		return nil, GitDiffOutput{}, gitErr(err)
	}
	d.Diff, d.Files = withoutSkipped(d.Diff, d.Files, g.gitSkip(ctx, req, repo.Dir))
	return nil, GitDiffOutput{Diff: d.Diff, Files: fileChanges(d.Files), Truncated: d.Truncated}, nil
}

func commits(in []git.Commit) []GitCommit {
	out := make([]GitCommit, len(in))
	for i, c := range in {
		out[i] = GitCommit(c)
	}
	return out
}

func (g *GitTools) gitLog(ctx context.Context, req *sdk.CallToolRequest, in GitLogInput) (*sdk.CallToolResult, GitLogOutput, error) {
	repo, root, err := g.gitRepo(ctx, req, in.Path)
	if err != nil {
		return nil, GitLogOutput{}, err
	}
	defer repo.Close()
	if in.MaxCount < 0 {
		return nil, GitLogOutput{}, errors.New("max_count: must be positive")
	}
	if err := git.CheckPaths("paths", in.Paths, root, repo.Dir); err != nil {
		return nil, GitLogOutput{}, err
	}
	cs, err := repo.Log(ctx, git.LogOptions{MaxCount: in.MaxCount, Ref: in.Ref, Paths: in.Paths})
	if err != nil {
		return nil, GitLogOutput{}, gitErr(err)
	}
	return nil, GitLogOutput{Commits: commits(cs)}, nil
}

func (g *GitTools) gitShow(ctx context.Context, req *sdk.CallToolRequest, in GitShowInput) (*sdk.CallToolResult, GitShowOutput, error) {
	repo, _, err := g.gitRepo(ctx, req, in.Path)
	if err != nil {
		return nil, GitShowOutput{}, err
	}
	defer repo.Close()
	if in.Ref == "" {
		return nil, GitShowOutput{}, errors.New("ref: empty; give a commit such as HEAD or a hash from git_log")
	}
	res, err := repo.Show(ctx, in.Ref)
	if err != nil {
		return nil, GitShowOutput{}, gitErr(err)
	}
	res.Diff, res.Files = withoutSkipped(res.Diff, res.Files, g.gitSkip(ctx, req, repo.Dir))
	return nil, GitShowOutput{Commit: GitCommit(res.Commit), Diff: res.Diff, Files: fileChanges(res.Files), Truncated: res.Truncated}, nil
}

func (g *GitTools) gitBranch(ctx context.Context, req *sdk.CallToolRequest, in GitBranchInput) (*sdk.CallToolResult, GitBranchOutput, error) {
	repo, _, err := g.gitRepo(ctx, req, in.Path)
	if err != nil {
		return nil, GitBranchOutput{}, err
	}
	defer repo.Close()
	var out GitBranchOutput
	if in.Create != "" {
		if err := repo.CreateBranch(ctx, in.Create); err != nil {
			return nil, GitBranchOutput{}, gitErr(err)
		}
		out.Created = in.Create
	}
	if in.Checkout != "" {
		if err := repo.Checkout(ctx, in.Checkout); err != nil {
			return nil, GitBranchOutput{}, gitErr(err)
		}
		out.CheckedOut = in.Checkout
	}
	bs, err := repo.Branches(ctx)
	if err != nil {
		return nil, GitBranchOutput{}, gitErr(err)
	}
	out.Branches = make([]GitBranch, len(bs))
	for i, b := range bs {
		out.Branches[i] = GitBranch(b)
		if b.Current {
			out.Current = b.Name
		}
	}
	return nil, out, nil
}

func (g *GitTools) gitAdd(ctx context.Context, req *sdk.CallToolRequest, in GitAddInput) (*sdk.CallToolResult, GitAddOutput, error) {
	repo, root, err := g.gitRepo(ctx, req, in.Path)
	if err != nil {
		return nil, GitAddOutput{}, err
	}
	defer repo.Close()
	if err := git.CheckPaths("paths", in.Paths, root, repo.Dir); err != nil {
		return nil, GitAddOutput{}, err
	}
	paths := in.Paths
	filtered := false
	if skip := g.gitSkip(ctx, req, repo.Dir); skip != nil && len(in.Paths) > 0 {
		// Stage what the paths cover file by file, leaving out what the policy keeps from this
		// call: `git add .` must not stage a file that file_read would refuse.
		if paths, err = g.gitAddable(ctx, repo, in.Paths, skip); err != nil {
			return nil, GitAddOutput{}, err
		}
		filtered = true
	}
	if !filtered || len(paths) > 0 {
		if err := repo.Add(ctx, paths); err != nil {
			return nil, GitAddOutput{}, gitErr(err)
		}
	}
	st, err := repo.Status(ctx)
	if err != nil {
		return nil, GitAddOutput{}, gitErr(err)
	}
	out := GitAddOutput{Staged: []GitFileStatus{}}
	for _, f := range st.Files {
		if f.Index != "." && f.Index != "?" {
			out.Staged = append(out.Staged, GitFileStatus(f))
		}
	}
	return nil, out, nil
}

// gitAddable expands the paths of a git_add into the changed files they cover, without those
// skip keeps back. A path named exactly that skip keeps back is an error.
func (g *GitTools) gitAddable(ctx context.Context, repo *git.Repo, paths []string, skip func(string) bool) ([]string, error) {
	st, err := repo.Status(ctx)
	if err != nil {
		return nil, gitErr(err)
	}
	var out []string
	for _, p := range paths {
		clean := path.Clean(filepath.ToSlash(p))
		if clean != "." && skip(clean) {
			return nil, fmt.Errorf("paths: %s: the policy in %s does not allow git_add to reach this file; edit the path rule to allow it", p, g.PolicyFile())
		}
		for _, f := range st.Files {
			if (clean == "." || f.Path == clean || strings.HasPrefix(f.Path, clean+"/")) && !skip(f.Path) && !slices.Contains(out, f.Path) {
				out = append(out, f.Path)
			}
		}
	}
	return out, nil
}

func (g *GitTools) gitCommit(ctx context.Context, req *sdk.CallToolRequest, in GitCommitInput) (*sdk.CallToolResult, GitCommitOutput, error) {
	repo, _, err := g.gitRepo(ctx, req, in.Path)
	if err != nil {
		return nil, GitCommitOutput{}, err
	}
	defer repo.Close()
	c, err := repo.Commit(ctx, in.Message)
	if err != nil {
		return nil, GitCommitOutput{}, gitErr(err)
	}
	return nil, GitCommitOutput(c), nil
}

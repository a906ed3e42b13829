package tools

import (
	"context"
	"errors"
	"fmt"
	"os"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/internal/patch"
	"github.com/switchboard-hub/switchboard/mcp/tool"
)

// file_patch: unified diffs applied atomically inside the workspace (internal/patch).

// PatchInput is file_patch's arguments: a unified diff to apply to the workspace, or only check
// with dry_run.
type PatchInput struct {
	tool.InWorkspace `json:"-"`
	Patch            string `json:"patch" jsonschema:"unified diff (as git diff or diff -u prints) for one or more files; a/ b/ prefixes, /dev/null for new and deleted files"`
	DryRun           bool   `json:"dry_run,omitempty" jsonschema:"only check that every hunk applies and report what would change"`
}

// PatchFile is what a patch does to one file, in file_patch's result.
type PatchFile struct {
	Path    string `json:"path" jsonschema:"file path relative to the workspace root"`
	OldPath string `json:"old_path,omitempty" jsonschema:"previous path, for renames"`
	Action  string `json:"action" jsonschema:"create, modify, delete or rename"`
	Hunks   int    `json:"hunks" jsonschema:"number of hunks"`
	Added   int    `json:"added" jsonschema:"lines added"`
	Removed int    `json:"removed" jsonschema:"lines removed"`
	Offsets []int  `json:"offsets,omitempty" jsonschema:"per hunk, how many lines from its header's position it applied (only when some moved)"`
}

// PatchRisk is file_patch's assessment of how risky a patch is, so an agent or a reviewing user can
// look closer before applying it.
type PatchRisk struct {
	Level   string   `json:"level" jsonschema:"low, medium or high"`
	Reasons []string `json:"reasons" jsonschema:"why: size, deletions, sensitive paths (.git/, secrets, CI config, lock files)"`
}

// PatchOutput is file_patch's result: the files affected, the risk assessment and whether anything
// was changed.
type PatchOutput struct {
	Files   []PatchFile `json:"files" jsonschema:"what the patch does to each file"`
	Risk    PatchRisk   `json:"risk" jsonschema:"risk assessment of the patch"`
	Applied bool        `json:"applied" jsonschema:"whether files were changed (false for dry_run)"`
	DryRun  bool        `json:"dry_run" jsonschema:"echoed dry_run"`
	// Diagnostics: with a language server running in the workspace for the files' languages.
	Diagnostics []CodeDiagnostic `json:"diagnostics,omitempty" jsonschema:"problems the patch introduced, from the workspace's running language servers (omitted when none, or no server runs for the files' languages)"`
}

// PatchTools is file_patch (WithPatch).
type PatchTools struct {
	Workspaces
	edits CodeEdits // the language servers told of changes (nil without code intelligence)
}

// NewPatchTools is the group's dependencies: the workspaces, and the language-server pool
// file_patch tells of its changes (nil: none).
func NewPatchTools(w Workspaces, edits CodeEdits) *PatchTools {
	return &PatchTools{Workspaces: w, edits: edits}
}

// PatchGroup declares the group's tools (toolset files) as values that need no hub;
// NewPatchTools builds the dependencies they are bound to.
func PatchGroup() tool.Group {
	return tool.NewGroup("files",
		tool.Func(sdk.Tool{Name: "file_patch", Annotations: tool.Write("Apply patch", true, false),
			Description: "Apply a unified diff to workspace files, all or nothing: every file is staged, then all are swapped in; a hunk that does not apply is an error naming it and no file changes. Hunks apply where their context matches even when line numbers have shifted. Creates, deletes and renames files (git-style headers). Returns per-file counts and a risk assessment; dry_run checks without writing."}, (*PatchTools).filePatch),
	)
}

func (g *PatchTools) filePatch(ctx context.Context, req *sdk.CallToolRequest, in PatchInput) (*sdk.CallToolResult, PatchOutput, error) {
	files, err := patch.Parse(in.Patch)
	if err != nil {
		var pe *patch.ParseError
		if errors.As(err, &pe) {
			return nil, PatchOutput{}, fmt.Errorf("patch: does not parse at line %d: %s", pe.Line, pe.Msg)
		}
		return nil, PatchOutput{}, fmt.Errorf("patch: %w", err)
	}
	ws, err := g.WorkspaceFor(ctx, req)
	if err != nil {
		return nil, PatchOutput{}, err
	}
	// Every file the patch touches is held to what a file tool naming it would be: the hub's
	// own state is off limits and the policy's path rules apply to each (a patch is a way of
	// reaching many files in one call).
	skip := g.WalkSkip(req, ws)
	for _, f := range files {
		for _, p := range []string{f.OldPath, f.NewPath} {
			if p == "" {
				continue
			}
			c, err := ws.Canonical(p)
			if err != nil {
				return nil, PatchOutput{}, fmt.Errorf("patch: %w", err)
			}
			if skip != nil && skip(c, false) {
				return nil, PatchOutput{}, fmt.Errorf("patch: %s: the policy in %s does not allow %s to change this file; edit the path rule to allow it", p, g.PolicyFile(), req.Params.Name)
			}
		}
	}
	root, err := os.OpenRoot(ws.Dir())
	if err != nil {
		return nil, PatchOutput{}, fmt.Errorf("workspace: %w", err)
	}
	defer root.Close()
	res, err := patch.Apply(root, files, in.DryRun)
	if err != nil {
		return nil, PatchOutput{}, err
	}
	out := PatchOutput{Files: make([]PatchFile, len(res.Files)), Risk: PatchRisk{Level: res.Risk.Level, Reasons: res.Risk.Reasons},
		Applied: res.Applied, DryRun: in.DryRun}
	var changed []string
	for i, f := range res.Files {
		out.Files[i] = PatchFile{Path: f.Path, OldPath: f.OldPath, Action: f.Action, Hunks: f.Hunks, Added: f.Added, Removed: f.Removed, Offsets: f.Offsets}
		changed = append(changed, f.Path)
		if f.OldPath != "" && f.OldPath != f.Path {
			changed = append(changed, f.OldPath)
		}
	}
	if res.Applied {
		out.Diagnostics = edited(ctx, g.edits, ws, skip, changed...)
	}
	return nil, out, nil
}

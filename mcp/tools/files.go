package tools

import (
	"context"
	"errors"
	"fmt"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/mcp/tool"

	"github.com/switchboard-hub/switchboard/internal/lang"
	"github.com/switchboard-hub/switchboard/internal/workspace"
)

// File, directory and language tools: the 10 built-ins (docs/tools.md). Every path goes through
// the workspace sandbox (internal/workspace), which refuses anything outside the root.

// ReadFileInput is file_read's arguments: a path in the workspace, read whole or as a window of
// lines (offset, limit) or of bytes (byte_offset, max_bytes) for files too large to read at once.
type ReadFileInput struct {
	Path   string `json:"path" jsonschema:"path to the file, relative to the workspace root" workspace:"path"`
	Offset int    `json:"offset,omitempty" jsonschema:"first line to return (0-based); with offset or limit the file is read as a window of lines"`
	Limit  int    `json:"limit,omitempty" jsonschema:"maximum number of lines to return; use with offset for files above the whole-read size limit"`
	// A byte window, for files whose lines are too long for line windows (minified code, data).
	ByteOffset int64 `json:"byte_offset,omitempty" jsonschema:"read a window of bytes starting here instead of lines (for files with very long lines); continue from the returned nextByteOffset"`
	MaxBytes   int   `json:"max_bytes,omitempty" jsonschema:"size of the byte window, at most 4194304 (4 MiB, the default); setting it alone reads from byte 0"`
}

// ReadFileOutput is file_read's result: the content with its detected language, and for a windowed
// read the totals and where the next window starts.
type ReadFileOutput struct {
	Content    string `json:"content" jsonschema:"file contents (or the requested window of lines)"`
	Language   string `json:"language" jsonschema:"detected language ID, plaintext when unknown"`
	Path       string `json:"path" jsonschema:"echoed input path"`
	TotalLines int    `json:"totalLines,omitempty" jsonschema:"number of lines in the file (windowed reads only)"`
	Truncated  bool   `json:"truncated,omitempty" jsonschema:"more lines (or bytes) follow the window (windowed reads only)"`
	// Byte windows only.
	TotalBytes     int64 `json:"totalBytes,omitempty" jsonschema:"size of the file in bytes (byte windows only)"`
	NextByteOffset int64 `json:"nextByteOffset,omitempty" jsonschema:"byte_offset to pass to continue after this window (byte windows only); never splits a UTF-8 character"`
}

// WriteFileInput is file_write's arguments: the path and the whole new content, which replaces the
// file atomically.
type WriteFileInput struct {
	Path    string `json:"path" jsonschema:"destination path, relative to the workspace root; parents are created" workspace:"path"`
	Content string `json:"content" jsonschema:"content to write; replaces the file atomically"`
}

// WriteFileOutput is file_write's result.
type WriteFileOutput struct {
	Success bool   `json:"success" jsonschema:"whether the write succeeded"`
	Path    string `json:"path" jsonschema:"echoed input path"`
	// Diagnostics: with a language server running for the file's language in the workspace.
	Diagnostics []CodeDiagnostic `json:"diagnostics,omitempty" jsonschema:"problems the write introduced, from the workspace's running language server (omitted when none, or no server runs for the file's language)"`
}

// EditFileInput is file_edit's arguments: an exact string to find in an existing file and its
// replacement, for small changes without rewriting the whole file.
type EditFileInput struct {
	Path       string `json:"path" jsonschema:"path to an existing file" workspace:"path"`
	OldString  string `json:"old_string" jsonschema:"exact text to find; must not be empty"`
	NewString  string `json:"new_string" jsonschema:"replacement text (may be empty to delete)"`
	ReplaceAll bool   `json:"replace_all,omitempty" jsonschema:"replace every occurrence; default replaces the first only"`
}

// EditFileOutput is file_edit's result, with how many occurrences were replaced.
type EditFileOutput struct {
	Path         string `json:"path" jsonschema:"echoed input path"`
	Success      bool   `json:"success" jsonschema:"whether the edit succeeded"`
	Replacements int    `json:"replacements" jsonschema:"number of occurrences replaced"`
	// Diagnostics: with a language server running for the file's language in the workspace.
	Diagnostics []CodeDiagnostic `json:"diagnostics,omitempty" jsonschema:"problems the edit introduced, from the workspace's running language server (omitted when none, or no server runs for the file's language)"`
}

// DeleteFileInput is file_delete's arguments: a file or an empty directory.
type DeleteFileInput struct {
	Path string `json:"path" jsonschema:"file or empty directory to delete" workspace:"path"`
}

// DeleteFileOutput is file_delete's result.
type DeleteFileOutput struct {
	Success bool   `json:"success" jsonschema:"whether the deletion succeeded"`
	Path    string `json:"path" jsonschema:"echoed input path"`
}

// RenameFileInput is file_rename's arguments: both paths are in the workspace.
type RenameFileInput struct {
	OldPath string `json:"oldPath" jsonschema:"current path" workspace:"path"`
	NewPath string `json:"newPath" jsonschema:"destination path; parents are created" workspace:"path"`
}

// RenameFileOutput is file_rename's result.
type RenameFileOutput struct {
	Success bool   `json:"success" jsonschema:"whether the rename succeeded"`
	OldPath string `json:"oldPath" jsonschema:"echoed source path"`
	NewPath string `json:"newPath" jsonschema:"echoed destination path"`
}

// FileExistsInput is file_exists's arguments.
type FileExistsInput struct {
	Path string `json:"path" jsonschema:"path to check" workspace:"path"`
}

// FileExistsOutput is file_exists's result: whether the path exists and whether it is a directory.
type FileExistsOutput struct {
	Exists bool   `json:"exists" jsonschema:"whether the path exists"`
	IsDir  bool   `json:"isDir" jsonschema:"whether the path is a directory"`
	Path   string `json:"path" jsonschema:"echoed input path"`
}

// ListDirectoryInput is dir_list's arguments.
type ListDirectoryInput struct {
	Path string `json:"path" jsonschema:"directory path, relative to the workspace root (\".\" for the root)" workspace:"path"`
}

// DirectoryEntry is one child of a directory in dir_list's result.
type DirectoryEntry struct {
	Name  string `json:"name" jsonschema:"entry name (file name only)"`
	Path  string `json:"path" jsonschema:"entry path (joined with the input path)"`
	IsDir bool   `json:"isDir" jsonschema:"whether the entry is a directory"`
	Size  int64  `json:"size" jsonschema:"file size in bytes; 0 for directories"`
}

// ListDirectoryOutput is dir_list's result: the directory's immediate children (not recursive).
type ListDirectoryOutput struct {
	Entries []DirectoryEntry `json:"entries" jsonschema:"immediate children, sorted by name"`
	Path    string           `json:"path" jsonschema:"echoed input path"`
}

// CreateDirectoryInput is dir_create's arguments; missing parents are created too.
type CreateDirectoryInput struct {
	Path string `json:"path" jsonschema:"directory path to create (like mkdir -p)" workspace:"path"`
}

// CreateDirectoryOutput is dir_create's result.
type CreateDirectoryOutput struct {
	Success bool   `json:"success" jsonschema:"whether the directory exists now"`
	Path    string `json:"path" jsonschema:"echoed input path"`
}

// DetectLanguageInput is lang_detect's arguments: a file name, which need not exist.
type DetectLanguageInput struct {
	Path string `json:"path" jsonschema:"file path; only the name is inspected, the file need not exist"`
}

// DetectLanguageOutput is lang_detect's result: the language ID internal/lang derives from the
// name.
type DetectLanguageOutput struct {
	Language string `json:"language" jsonschema:"detected language ID, plaintext when unknown"`
	Path     string `json:"path" jsonschema:"echoed input path"`
}

// GetSupportedLanguagesInput is lang_list's arguments: none.
type GetSupportedLanguagesInput struct{}

// GetSupportedLanguagesOutput is lang_list's result: every language lang_detect can report.
type GetSupportedLanguagesOutput struct {
	Languages []lang.Info `json:"languages" jsonschema:"supported language entries"`
}

// FileTools are the file, directory and language tools.
type FileTools struct {
	Workspaces
	edits CodeEdits // the language servers told of writes, deletes and renames (nil without code intelligence)
}

// NewFileTools is the file tools' dependencies: the workspaces, and the language-server pool
// file_write and file_edit tell of their changes (nil: none).
func NewFileTools(w Workspaces, edits CodeEdits) *FileTools {
	return &FileTools{Workspaces: w, edits: edits}
}

// walkSkip is WalkSkip when there is a pool to ask (it costs a policy read otherwise).
func (g *FileTools) walkSkip(req *sdk.CallToolRequest, ws *workspace.Root) func(string, bool) bool {
	if g.edits == nil {
		return nil
	}
	return g.WalkSkip(req, ws)
}

// edited tells the language servers of ws that paths changed and returns the diagnostics the
// change introduced (nil without a pool, or without a running server for their language),
// without those in files skip leaves out (the hub's own, paths the policy hides).
func edited(ctx context.Context, edits CodeEdits, ws *workspace.Root, skip func(string, bool) bool, paths ...string) []CodeDiagnostic {
	if edits == nil {
		return nil
	}
	rels := make([]string, 0, len(paths))
	for _, p := range paths {
		if c, err := ws.Canonical(p); err == nil {
			rels = append(rels, c)
		}
	}
	ds := edits.Edited(ctx, ws.Dir(), rels)
	if skip == nil {
		return ds
	}
	out := ds[:0]
	for _, d := range ds {
		if !skip(d.Path, false) {
			out = append(out, d)
		}
	}
	return out
}

// FileGroup declares the group's tools (toolset files) as values that need no hub;
// NewFileTools builds the dependencies they are bound to.
func FileGroup() tool.Group {
	return tool.NewGroup("files",
		tool.Func(sdk.Tool{Name: "file_read", Annotations: tool.ReadOnly("Read file"),
			Description: "Read a file in the workspace. Returns its content and detected language. Files above the 4 MiB limit must be read in windows: offset/limit (lines), or byte_offset/max_bytes for files with very long lines (a window never returns nothing silently: a line too long for it, or an offset past the end, is an error that says so)."}, (*FileTools).fileRead),
		tool.Func(sdk.Tool{Name: "file_write", Annotations: tool.Write("Write file", true, true),
			Description: "Write content to a file, creating it and any parent directories. Overwrites an existing file atomically (temp file, fsync, rename) and keeps its permissions."}, (*FileTools).fileWrite),
		tool.Func(sdk.Tool{Name: "file_delete", Annotations: tool.Write("Delete file", true, false),
			Description: "Delete a file, a symlink (never its target) or an empty directory."}, (*FileTools).fileDelete),
		tool.Func(sdk.Tool{Name: "file_rename", Annotations: tool.Write("Rename file", true, false),
			Description: "Rename or move a file or directory within the workspace. A move after which a relative symlink would point outside the workspace is refused."}, (*FileTools).fileRename),
		tool.Func(sdk.Tool{Name: "file_exists", Annotations: tool.ReadOnly("File exists"),
			Description: "Check whether a path exists and whether it is a file or a directory."}, (*FileTools).fileExists),
		tool.Func(sdk.Tool{Name: "file_edit", Annotations: tool.Write("Edit file", true, false),
			Description: "Replace the first (or every) occurrence of old_string with new_string in an existing file."}, (*FileTools).fileEdit),
		tool.Func(sdk.Tool{Name: "dir_list", Annotations: tool.ReadOnly("List directory"),
			Description: "List the immediate children of a directory."}, (*FileTools).dirList),
		tool.Func(sdk.Tool{Name: "dir_create", Annotations: tool.Write("Create directory", false, true),
			Description: "Create a directory and any missing parents; an existing directory is not an error."}, (*FileTools).dirCreate),
		tool.Func(sdk.Tool{Name: "lang_detect", Annotations: tool.ReadOnly("Detect language"),
			Description: "Detect the programming language of a file from its name or extension."}, (*FileTools).langDetect),
		tool.Func(sdk.Tool{Name: "lang_list", Annotations: tool.ReadOnly("List languages"),
			Description: "List the supported programming languages with their extensions."}, (*FileTools).langList),
	)
}

// requirePath gives the one error every path tool shares for a missing path.
func requirePath(field, p string) error {
	if p == "" {
		return errors.New(field + ": required; give a path relative to the workspace root, e.g. \"src/main.go\"")
	}
	return nil
}

func (g *FileTools) fileRead(ctx context.Context, req *sdk.CallToolRequest, in ReadFileInput) (*sdk.CallToolResult, ReadFileOutput, error) {
	if err := requirePath("path", in.Path); err != nil {
		return nil, ReadFileOutput{}, err
	}
	if in.Offset < 0 || in.Limit < 0 {
		return nil, ReadFileOutput{}, errors.New("offset and limit: must be zero or positive line counts")
	}
	if in.ByteOffset < 0 || in.MaxBytes < 0 || in.MaxBytes > workspace.DefaultMaxReadBytes {
		return nil, ReadFileOutput{}, fmt.Errorf("byte_offset and max_bytes: byte_offset must be >= 0 and max_bytes 1 to %d", workspace.DefaultMaxReadBytes)
	}
	out := ReadFileOutput{Path: in.Path, Language: lang.Detect(in.Path)}
	ws, err := g.WorkspaceFor(ctx, req)
	if err != nil {
		return nil, ReadFileOutput{}, err
	}
	if in.ByteOffset > 0 || in.MaxBytes > 0 {
		if in.Offset > 0 || in.Limit > 0 {
			return nil, ReadFileOutput{}, errors.New("byte_offset: a read is either a line window (offset, limit) or a byte window (byte_offset, max_bytes); pass one pair")
		}
		w, err := ws.ReadBytes(in.Path, in.ByteOffset, in.MaxBytes)
		if err != nil {
			return nil, ReadFileOutput{}, err
		}
		out.Content, out.TotalBytes, out.NextByteOffset, out.Truncated = w.Content, w.TotalBytes, w.Next, w.Next < w.TotalBytes
		return nil, out, nil
	}
	if in.Offset > 0 || in.Limit > 0 {
		res, err := ws.ReadLines(in.Path, in.Offset, in.Limit)
		if err != nil {
			return nil, ReadFileOutput{}, err
		}
		out.Content, out.TotalLines, out.Truncated = res.Content, res.TotalLines, res.Truncated
		return nil, out, nil
	}
	content, err := ws.ReadFile(in.Path)
	if err != nil {
		return nil, ReadFileOutput{}, err
	}
	out.Content = content
	return nil, out, nil
}

func (g *FileTools) fileWrite(ctx context.Context, req *sdk.CallToolRequest, in WriteFileInput) (*sdk.CallToolResult, WriteFileOutput, error) {
	if err := requirePath("path", in.Path); err != nil {
		return nil, WriteFileOutput{}, err
	}
	ws, err := g.WorkspaceFor(ctx, req)
	if err != nil {
		return nil, WriteFileOutput{}, err
	}
	if err := ws.WriteFile(in.Path, []byte(in.Content)); err != nil {
		return nil, WriteFileOutput{}, err
	}
	return nil, WriteFileOutput{Success: true, Path: in.Path, Diagnostics: edited(ctx, g.edits, ws, g.walkSkip(req, ws), in.Path)}, nil
}

func (g *FileTools) fileEdit(ctx context.Context, req *sdk.CallToolRequest, in EditFileInput) (*sdk.CallToolResult, EditFileOutput, error) {
	if err := requirePath("path", in.Path); err != nil {
		return nil, EditFileOutput{}, err
	}
	ws, err := g.WorkspaceFor(ctx, req)
	if err != nil {
		return nil, EditFileOutput{}, err
	}
	res, err := ws.Edit(in.Path, in.OldString, in.NewString, in.ReplaceAll)
	if err != nil {
		return nil, EditFileOutput{}, err
	}
	return nil, EditFileOutput{Path: in.Path, Success: true, Replacements: res.Replacements, Diagnostics: edited(ctx, g.edits, ws, g.walkSkip(req, ws), in.Path)}, nil
}

func (g *FileTools) fileDelete(ctx context.Context, req *sdk.CallToolRequest, in DeleteFileInput) (*sdk.CallToolResult, DeleteFileOutput, error) {
	if err := requirePath("path", in.Path); err != nil {
		return nil, DeleteFileOutput{}, err
	}
	ws, err := g.WorkspaceFor(ctx, req)
	if err != nil {
		return nil, DeleteFileOutput{}, err
	}
	rel, _ := ws.Canonical(in.Path)
	if err := ws.Delete(in.Path); err != nil {
		return nil, DeleteFileOutput{}, err
	}
	if g.edits != nil && rel != "" {
		g.edits.Changed(ws.Dir(), rel)
	}
	return nil, DeleteFileOutput{Success: true, Path: in.Path}, nil
}

func (g *FileTools) fileRename(ctx context.Context, req *sdk.CallToolRequest, in RenameFileInput) (*sdk.CallToolResult, RenameFileOutput, error) {
	if err := requirePath("oldPath", in.OldPath); err != nil {
		return nil, RenameFileOutput{}, err
	}
	if err := requirePath("newPath", in.NewPath); err != nil {
		return nil, RenameFileOutput{}, err
	}
	ws, err := g.WorkspaceFor(ctx, req)
	if err != nil {
		return nil, RenameFileOutput{}, err
	}
	oldRel, _ := ws.Canonical(in.OldPath)
	if err := ws.Rename(in.OldPath, in.NewPath); err != nil {
		return nil, RenameFileOutput{}, err
	}
	if g.edits != nil {
		if newRel, err := ws.Canonical(in.NewPath); err == nil && oldRel != "" {
			g.edits.Changed(ws.Dir(), oldRel, newRel)
		}
	}
	return nil, RenameFileOutput{Success: true, OldPath: in.OldPath, NewPath: in.NewPath}, nil
}

func (g *FileTools) fileExists(ctx context.Context, req *sdk.CallToolRequest, in FileExistsInput) (*sdk.CallToolResult, FileExistsOutput, error) {
	if err := requirePath("path", in.Path); err != nil {
		return nil, FileExistsOutput{}, err
	}
	ws, err := g.WorkspaceFor(ctx, req)
	if err != nil {
		return nil, FileExistsOutput{}, err
	}
	exists, isDir, err := ws.Exists(in.Path)
	if err != nil {
		return nil, FileExistsOutput{}, err
	}
	return nil, FileExistsOutput{Exists: exists, IsDir: isDir, Path: in.Path}, nil
}

func (g *FileTools) dirList(ctx context.Context, req *sdk.CallToolRequest, in ListDirectoryInput) (*sdk.CallToolResult, ListDirectoryOutput, error) {
	if err := requirePath("path", in.Path); err != nil {
		return nil, ListDirectoryOutput{}, err
	}
	ws, err := g.WorkspaceFor(ctx, req)
	if err != nil {
		return nil, ListDirectoryOutput{}, err
	}
	entries, err := ws.List(in.Path)
	if err != nil {
		return nil, ListDirectoryOutput{}, err
	}
	out := ListDirectoryOutput{Path: in.Path, Entries: make([]DirectoryEntry, len(entries))}
	for i, e := range entries {
		out.Entries[i] = DirectoryEntry{Name: e.Name, Path: e.Path, IsDir: e.IsDir, Size: e.Size}
	}
	return nil, out, nil
}

func (g *FileTools) dirCreate(ctx context.Context, req *sdk.CallToolRequest, in CreateDirectoryInput) (*sdk.CallToolResult, CreateDirectoryOutput, error) {
	if err := requirePath("path", in.Path); err != nil {
		return nil, CreateDirectoryOutput{}, err
	}
	ws, err := g.WorkspaceFor(ctx, req)
	if err != nil {
		return nil, CreateDirectoryOutput{}, err
	}
	if err := ws.Mkdir(in.Path); err != nil {
		return nil, CreateDirectoryOutput{}, err
	}
	return nil, CreateDirectoryOutput{Success: true, Path: in.Path}, nil
}

func (g *FileTools) langDetect(_ context.Context, _ *sdk.CallToolRequest, in DetectLanguageInput) (*sdk.CallToolResult, DetectLanguageOutput, error) {
	if err := requirePath("path", in.Path); err != nil {
		return nil, DetectLanguageOutput{}, err
	}
	return nil, DetectLanguageOutput{Language: lang.Detect(in.Path), Path: in.Path}, nil
}

func (g *FileTools) langList(context.Context, *sdk.CallToolRequest, GetSupportedLanguagesInput) (*sdk.CallToolResult, GetSupportedLanguagesOutput, error) {
	return nil, GetSupportedLanguagesOutput{Languages: lang.List()}, nil
}

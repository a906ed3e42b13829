// Package patch parses unified diffs (plain or git-style) and applies them to a directory tree
// atomically: every file's result is staged first, then all are renamed into place; if
// anything fails, every file is left as it was. It imports nothing from MCP.
package patch

import (
	"fmt"
	"path"
	"strconv"
	"strings"
)

// Line kinds in a hunk.
const (
	Context = ' '
	Delete  = '-'
	Add     = '+'
)

// Line is one line of a hunk body, without its line terminator.
type Line struct {
	Kind byte
	Text string
}

// Hunk is one "@@ -a,b +c,d @@" section.
type Hunk struct {
	OldStart, OldLines int
	NewStart, NewLines int
	Header             string // the @@ line, for error messages
	Lines              []Line
	// NoNewlineOld/New: the hunk's last old/new line is the end of the file without a newline.
	NoNewlineOld, NoNewlineNew bool
	patchLine                  int // 1-based line of the @@ header in the patch
}

// File is the diff of one file.
type File struct {
	OldPath, NewPath string // "" for /dev/null
	Hunks            []Hunk
	patchLine        int
}

// Path is the file the diff is about: the new path, or the old one for a deletion.
func (f *File) Path() string {
	if f.NewPath != "" {
		return f.NewPath
	}
	return f.OldPath
}

// Action names what the diff does: create, delete, rename or modify.
func (f *File) Action() string {
	switch {
	case f.OldPath == "":
		return "create"
	case f.NewPath == "":
		return "delete"
	case f.OldPath != f.NewPath:
		return "rename"
	}
	return "modify"
}

// Counts returns lines added and removed.
func (f *File) Counts() (added, removed int) {
	for _, h := range f.Hunks {
		for _, l := range h.Lines {
			switch l.Kind {
			case Add:
				added++
			case Delete:
				removed++
			}
		}
	}
	return
}

// ParseError says where a patch does not parse.
type ParseError struct {
	Line int // 1-based line in the patch
	Msg  string
}

// Error names the line of the patch that does not parse.
func (e *ParseError) Error() string {
	return fmt.Sprintf("patch: line %d: %s", e.Line, e.Msg)
}

// MaxPatchBytes bounds the input.
const MaxPatchBytes = 8 << 20

// Parse reads a unified diff with one or more files. Text before the first file header (a
// commit message, "diff --git" lines, index lines) is skipped; git's a/ and b/ prefixes are
// removed. A patch with no file in it is an error.
func Parse(text string) ([]File, error) {
	if len(text) > MaxPatchBytes {
		return nil, &ParseError{1, fmt.Sprintf("%d bytes is over the %d byte limit; split the patch", len(text), MaxPatchBytes)}
	}
	if strings.IndexByte(text, 0) >= 0 {
		return nil, &ParseError{1, "contains a NUL byte; binary patches are not supported"}
	}
	lines := strings.SplitAfter(text, "\n")
	if n := len(lines); n > 0 && lines[n-1] == "" {
		lines = lines[:n-1]
	}
	p := &parser{lines: lines}
	return p.parse()
}

type parser struct {
	lines []string
	i     int
}

func trimEOL(s string) string {
	s = strings.TrimSuffix(s, "\n")
	return strings.TrimSuffix(s, "\r")
}

func (p *parser) parse() ([]File, error) {
	var files []File
	var git struct {
		active           bool
		oldPath, newPath string
		renameFrom       string
		renameTo         string
		newFile, deleted bool
		line             int
	}
	flushGit := func() {
		// A git header without ---/+++ lines: a pure rename, mode change or empty new file.
		if git.active && (git.renameFrom != "" || git.newFile || git.deleted) {
			f := File{OldPath: git.oldPath, NewPath: git.newPath, patchLine: git.line}
			if git.renameFrom != "" {
				f.OldPath, f.NewPath = git.renameFrom, git.renameTo
			}
			if git.newFile {
				f.OldPath = ""
			}
			if git.deleted {
				f.NewPath = ""
			}
			files = append(files, f)
		}
		git.active = false
	}
	for p.i < len(p.lines) {
		raw := p.lines[p.i]
		line := trimEOL(raw)
		n := p.i + 1
		switch {
		case strings.HasPrefix(line, "diff --git "):
			flushGit()
			git.active, git.line = true, n
			git.renameFrom, git.renameTo, git.newFile, git.deleted = "", "", false, false
			git.oldPath, git.newPath = splitGitHeader(strings.TrimPrefix(line, "diff --git "))
			p.i++
		case git.active && strings.HasPrefix(line, "rename from "):
			git.renameFrom = stripPrefix(strings.TrimPrefix(line, "rename from "), false)
			p.i++
		case git.active && strings.HasPrefix(line, "rename to "):
			git.renameTo = stripPrefix(strings.TrimPrefix(line, "rename to "), false)
			p.i++
		case git.active && strings.HasPrefix(line, "new file mode"):
			git.newFile = true
			p.i++
		case git.active && strings.HasPrefix(line, "deleted file mode"):
			git.deleted = true
			p.i++
		case strings.HasPrefix(line, "GIT binary patch") || (strings.HasPrefix(line, "Binary files ") && strings.HasSuffix(line, " differ")):
			return nil, &ParseError{n, "binary patches are not supported; write the file with file_write instead"}
		case strings.HasPrefix(line, "--- ") && p.i+1 < len(p.lines) && strings.HasPrefix(p.lines[p.i+1], "+++ "):
			f, err := p.file(git.active)
			if err != nil {
				return nil, err
			}
			if git.active && git.renameFrom != "" && f.OldPath != "" && f.NewPath != "" {
				f.OldPath, f.NewPath = git.renameFrom, git.renameTo
			}
			git.active = false
			files = append(files, f)
		case strings.HasPrefix(line, "@@ "):
			return nil, &ParseError{n, "hunk header before any file header; start each file with --- a/path and +++ b/path lines"}
		default:
			p.i++ // preamble, index lines, mode lines, "similarity index", commit text
		}
	}
	flushGit()
	if len(files) == 0 {
		return nil, &ParseError{1, "no file diffs found; give a unified diff with --- a/path, +++ b/path and @@ hunk lines (as git diff prints)"}
	}
	for _, f := range files {
		for _, p := range []string{f.OldPath, f.NewPath} {
			if p == "" {
				continue
			}
			if err := checkPath(p); err != nil {
				return nil, &ParseError{f.patchLine, err.Error()}
			}
		}
	}
	return files, nil
}

// splitGitHeader splits "a/x b/y" (paths without spaces, or the common case of equal halves).
func splitGitHeader(s string) (string, string) {
	if strings.HasPrefix(s, "a/") {
		// Equal halves: "a/p b/p".
		if n := len(s); n%2 == 1 {
			h := (n - 1) / 2
			if s[h] == ' ' && s[2:h] == s[h+3:] {
				return s[2:h], s[h+3:]
			}
		}
	}
	if i := strings.Index(s, " b/"); i > 0 {
		return stripPrefix(s[:i], true), s[i+3:]
	}
	return "", ""
}

// stripPrefix removes a git a/ or b/ prefix and a trailing "\t<timestamp>", and unquotes a
// C-quoted name.
func stripPrefix(s string, git bool) string {
	if i := strings.IndexByte(s, '\t'); i >= 0 {
		s = s[:i]
	}
	if strings.HasPrefix(s, `"`) {
		if u, err := strconv.Unquote(s); err == nil {
			s = u
		}
	}
	if git && (strings.HasPrefix(s, "a/") || strings.HasPrefix(s, "b/")) {
		s = s[2:]
	}
	return s
}

func checkPath(p string) error {
	switch {
	case strings.IndexByte(p, 0) >= 0:
		return fmt.Errorf("path %q contains a NUL byte", p)
	case strings.HasPrefix(p, "/"):
		return fmt.Errorf("path %q is absolute; paths in a patch are relative to the workspace root", p)
	case p == ".." || strings.HasPrefix(p, "../") || strings.Contains(p, "/../") || strings.HasSuffix(p, "/.."):
		return fmt.Errorf("path %q climbs out of the workspace with ..", p)
	case path.Clean(p) == ".":
		return fmt.Errorf("path %q names no file", p)
	}
	return nil
}

// headerPath reads the path of a ---/+++ line; "" for /dev/null.
func headerPath(s string, git bool) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\t'); i >= 0 {
		s = s[:i]
	}
	if s == "/dev/null" {
		return ""
	}
	return stripPrefix(s, git)
}

func (p *parser) file(git bool) (File, error) {
	oldRaw := strings.TrimPrefix(trimEOL(p.lines[p.i]), "--- ")
	newRaw := strings.TrimPrefix(trimEOL(p.lines[p.i+1]), "+++ ")
	// Strip a/ b/ when the patch is git-style or both sides carry the prefixes.
	strip := git || ((strings.HasPrefix(oldRaw, "a/") || oldRaw == "/dev/null") && (strings.HasPrefix(newRaw, "b/") || newRaw == "/dev/null"))
	f := File{OldPath: headerPath(oldRaw, strip), NewPath: headerPath(newRaw, strip), patchLine: p.i + 1}
	if f.OldPath == "" && f.NewPath == "" {
		return f, &ParseError{p.i + 1, "both sides are /dev/null"}
	}
	p.i += 2
	for p.i < len(p.lines) {
		line := trimEOL(p.lines[p.i])
		if !strings.HasPrefix(line, "@@") {
			break
		}
		h, err := p.hunk(f.Path(), len(f.Hunks)+1)
		if err != nil {
			return f, err
		}
		f.Hunks = append(f.Hunks, h)
	}
	if len(f.Hunks) == 0 && !(f.OldPath == "" || f.NewPath == "") {
		return f, &ParseError{f.patchLine, fmt.Sprintf("file %s has no @@ hunks", f.Path())}
	}
	return f, nil
}

// parseRange reads "a,b" or "a" (count 1).
func parseRange(s string) (start, count int, ok bool) {
	a, b, has := strings.Cut(s, ",")
	start, err := strconv.Atoi(a)
	if err != nil || start < 0 {
		return 0, 0, false
	}
	count = 1
	if has {
		count, err = strconv.Atoi(b)
		if err != nil || count < 0 {
			return 0, 0, false
		}
	}
	return start, count, start < 1<<30 && count < 1<<30
}

func (p *parser) hunk(file string, num int) (Hunk, error) {
	hdr := trimEOL(p.lines[p.i])
	at := p.i + 1
	bad := func(msg string) error {
		return &ParseError{at, fmt.Sprintf("hunk %d of %s (%s): %s", num, file, hdr, msg)}
	}
	// @@ -a,b +c,d @@ optional section heading
	rest, ok := strings.CutPrefix(hdr, "@@ -")
	end := strings.Index(rest, " @@")
	if !ok || end < 0 {
		return Hunk{}, bad("malformed header; write it as @@ -start,count +start,count @@")
	}
	oldR, newR, ok := strings.Cut(rest[:end], " +")
	if !ok {
		return Hunk{}, bad("malformed header; write it as @@ -start,count +start,count @@")
	}
	h := Hunk{Header: hdr, patchLine: at}
	var ok1, ok2 bool
	h.OldStart, h.OldLines, ok1 = parseRange(oldR)
	h.NewStart, h.NewLines, ok2 = parseRange(newR)
	if !ok1 || !ok2 {
		return Hunk{}, bad("line numbers are not numbers")
	}
	p.i++
	oldN, newN := 0, 0
	for p.i < len(p.lines) && (oldN < h.OldLines || newN < h.NewLines) {
		raw := p.lines[p.i]
		line := trimEOL(raw)
		var kind byte
		text := ""
		switch {
		case line == "":
			kind = Context // an empty context line whose leading space was lost (editors strip it)
		case line[0] == ' ' || line[0] == '-' || line[0] == '+':
			kind, text = line[0], line[1:]
		case line[0] == '\\':
			p.i++
			continue
		default:
			return Hunk{}, bad(fmt.Sprintf("line %d of the patch (%q) is not a context, - or + line, and the hunk still needs %d old and %d new lines; fix the counts in the @@ header", p.i+1, short(line), h.OldLines-oldN, h.NewLines-newN))
		}
		switch kind {
		case Context:
			oldN++
			newN++
		case Delete:
			oldN++
		case Add:
			newN++
		}
		if oldN > h.OldLines || newN > h.NewLines {
			return Hunk{}, bad(fmt.Sprintf("has more lines than its header says (%d old, %d new); fix the counts", h.OldLines, h.NewLines))
		}
		h.Lines = append(h.Lines, Line{Kind: kind, Text: text})
		p.i++
		// "\ No newline at end of file" after a line marks that side's last line.
		if p.i < len(p.lines) && strings.HasPrefix(p.lines[p.i], `\`) {
			if kind != Add {
				h.NoNewlineOld = true
			}
			if kind != Delete {
				h.NoNewlineNew = true
			}
			p.i++
		}
	}
	if oldN < h.OldLines || newN < h.NewLines {
		return Hunk{}, bad(fmt.Sprintf("ends early: the header promises %d old and %d new lines, the body has %d and %d", h.OldLines, h.NewLines, oldN, newN))
	}
	return h, nil
}

func short(s string) string {
	if len(s) > 60 {
		return s[:60] + "…"
	}
	return s
}

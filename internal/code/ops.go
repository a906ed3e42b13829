package code

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/switchboard-hub/switchboard/internal/lsp"
)

// Target is where an operation looks: a position (Path, Line, Column: 1-based, the column in
// UTF-8 bytes) or a symbol name (Name, Type.Method, pkg.Func). Language picks the server for a
// symbol without a path; empty, the workspace's languages are searched.
type Target struct {
	Path     string `json:"path,omitempty"`
	Line     int    `json:"line,omitempty"`
	Column   int    `json:"column,omitempty"`
	Symbol   string `json:"symbol,omitempty"`
	Language string `json:"language,omitempty"`
}

// Location is a place in a file: path relative to the workspace (absolute outside it, e.g. the
// standard library), 1-based line and UTF-8 byte column, and the line's text.
type Location struct {
	Path    string `json:"path"`
	Line    int    `json:"line"`
	Column  int    `json:"column"`
	Preview string `json:"preview"`
}

// LocationsResult answers definition and implementations.
type LocationsResult struct {
	Locations []Location `json:"locations"`
}

// ReferencesResult answers references. Count is the number of references; Locations lists
// the first MaxReferences of them (by path, line, column).
type ReferencesResult struct {
	Locations []Location `json:"locations"`
	Count     int        `json:"count"`
}

// MaxReferences bounds the locations one references answer lists.
const MaxReferences = 1000

// CallItem is one call: for incoming calls the caller's name and where it makes the call, for
// outgoing calls the callee's name and where it is declared.
type CallItem struct {
	Name   string `json:"name"`
	Path   string `json:"path"`
	Line   int    `json:"line"`
	Column int    `json:"column"`
}

// CallsResult answers calls.
type CallsResult struct {
	Calls []CallItem `json:"calls"`
}

// HoverResult answers hover: the signature and documentation the server shows (Markdown).
type HoverResult struct {
	Contents string `json:"contents"`
}

// Symbol is one declaration: a file's outline entry or a workspace search hit.
type Symbol struct {
	Name      string `json:"name"`
	Kind      string `json:"kind"`
	Path      string `json:"path"`
	Line      int    `json:"line"`
	Column    int    `json:"column"`
	EndLine   int    `json:"endLine"`
	Container string `json:"container,omitempty"`
}

// SymbolsResult answers symbols.
type SymbolsResult struct {
	Symbols []Symbol `json:"symbols"`
}

// Diagnostic is one problem a server reports. Severity is error, warning, information or hint.
type Diagnostic struct {
	Path     string `json:"path"`
	Line     int    `json:"line"`
	Column   int    `json:"column"`
	Severity string `json:"severity"`
	Message  string `json:"message"`
	Source   string `json:"source,omitempty"`
}

// DiagnosticsResult answers diagnostics.
type DiagnosticsResult struct {
	Diagnostics []Diagnostic `json:"diagnostics"`
	// Pending lists files whose server had not reported on the latest text within the wait
	// (DiagnosticsAfter only): their diagnostics may still change.
	Pending []string `json:"pending,omitempty"`
}

// RenameResult answers rename: every file it changes (or would), the unified diff, and
// whether it was applied.
type RenameResult struct {
	Files   []string `json:"files"`
	Diff    string   `json:"diff"`
	Applied bool     `json:"applied"`
}

// maxDocumentBytes is the largest file sent to a server.
const maxDocumentBytes = 8 << 20

// workspaceRoot cleans a workspace directory and resolves its symlinks (servers report real
// paths).
func workspaceRoot(root string) (string, error) {
	if root == "" || !filepath.IsAbs(root) {
		return "", fmt.Errorf("workspace: %q is not an absolute directory", root)
	}
	real, err := filepath.EvalSymlinks(filepath.Clean(root))
	if err != nil {
		return "", fmt.Errorf("workspace: %w", err)
	}
	fi, err := os.Stat(real)
	if err != nil || !fi.IsDir() {
		return "", fmt.Errorf("workspace: %s is not a directory", root)
	}
	return real, nil
}

// inRoot resolves a user's path (relative to root, or absolute inside it) to a cleaned
// absolute path and the relative one; escapes are refused.
func inRoot(root, p string) (abs, rel string, err error) {
	if p == "" {
		return "", "", errors.New("path: empty")
	}
	if strings.ContainsRune(p, 0) {
		return "", "", errors.New("path: contains a NUL byte")
	}
	if filepath.IsAbs(p) {
		r, err := filepath.Rel(root, filepath.Clean(p))
		if err != nil || !filepath.IsLocal(r) {
			return "", "", fmt.Errorf("path: %s is outside the workspace %s", p, root)
		}
		p = r
	}
	p = filepath.Clean(p)
	if !filepath.IsLocal(p) {
		return "", "", fmt.Errorf("path: %s leads outside the workspace", p)
	}
	return filepath.Join(root, p), filepath.ToSlash(p), nil
}

// readDocument reads a workspace file for a server: through an os.Root on the workspace (no
// symlink or .. escapes), a regular file, at most maxDocumentBytes, text (no NUL byte, UTF-8).
func readDocument(root, abs string) (string, error) {
	r, err := os.OpenRoot(root)
	if err != nil {
		return "", err
	}
	defer r.Close()
	t, _, err := readDocumentIn(r, root, abs)
	return t, err
}

// readDocumentIn is readDocument through r, an os.Root already open on root: a call that reads
// the many files of one answer opens the workspace once (call.read). fi is the file as opened,
// before its text was read (textCache keys the text by it).
func readDocumentIn(r *os.Root, root, abs string) (text string, fi os.FileInfo, err error) {
	rel, err := filepath.Rel(root, abs)
	if err != nil || !filepath.IsLocal(rel) {
		return "", nil, fmt.Errorf("%s is outside the workspace", abs)
	}
	f, err := r.OpenFile(rel, os.O_RDONLY|syscallNonblock, 0)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", nil, fmt.Errorf("path: %s does not exist in the workspace", filepath.ToSlash(rel))
		}
		return "", nil, fmt.Errorf("path: %w", err)
	}
	defer f.Close()
	fi, err = f.Stat()
	if err != nil {
		return "", nil, err
	}
	if !fi.Mode().IsRegular() {
		return "", nil, fmt.Errorf("path: %s is not a regular file", filepath.ToSlash(rel))
	}
	if fi.Size() > maxDocumentBytes {
		return "", nil, fmt.Errorf("path: %s is %d bytes, more than the %d a language server is given", filepath.ToSlash(rel), fi.Size(), maxDocumentBytes)
	}
	// Read into a buffer of the file's size (one read, no regrowth); a file that grew since
	// the Stat is still read whole, up to the limit.
	buf := bytes.NewBuffer(make([]byte, 0, fi.Size()+bytes.MinRead))
	if _, err := buf.ReadFrom(io.LimitReader(f, maxDocumentBytes+1)); err != nil {
		return "", nil, err
	}
	b := buf.Bytes()
	if bytes.IndexByte(b, 0) >= 0 {
		return "", nil, fmt.Errorf("path: %s is a binary file, not source code", filepath.ToSlash(rel))
	}
	if !utf8.Valid(b) {
		return "", nil, fmt.Errorf("path: %s is not UTF-8 text", filepath.ToSlash(rel))
	}
	return string(b), fi, nil
}

// call is one operation's state: the workspace, and the texts of files it read (for
// positions and previews).
type call struct {
	p     *Pool
	root  string
	texts map[string]string
	lines map[string][]string // texts split, for the many positions of one answer in a file
	fsys  *os.Root            // the workspace, opened by the call's first read; closed by close
}

// read is readDocument through the call's own os.Root on the workspace, opened once for all the
// files the call reads (an answer of 50 references reads some 20 files).
func (c *call) read(abs string) (string, error) {
	t, _, err := c.readStat(abs)
	return t, err
}

func (c *call) readStat(abs string) (string, os.FileInfo, error) {
	r, err := c.fs()
	if err != nil {
		return "", nil, err
	}
	return readDocumentIn(r, c.root, abs)
}

// fs is the call's os.Root on the workspace, opened on first use.
func (c *call) fs() (*os.Root, error) {
	if c.fsys == nil {
		r, err := os.OpenRoot(c.root)
		if err != nil {
			return nil, err
		}
		c.fsys = r
	}
	return c.fsys, nil
}

// close releases what the call holds (its os.Root). Every newCall is paired with a close.
func (c *call) close() {
	if c.fsys != nil {
		_ = c.fsys.Close()
		c.fsys = nil
	}
}

func (p *Pool) newCall(root string) (*call, error) {
	r, err := workspaceRoot(root)
	if err != nil {
		return nil, err
	}
	return &call{p: p, root: r, texts: map[string]string{}, lines: map[string][]string{}}, nil
}

// current is a workspace file's text as it is now, with the errors reading it gives: the pool's
// cached copy when the file is unchanged since it was read (textCache), else read and cached.
func (c *call) current(abs string) (string, error) {
	if ct, ok := c.p.texts.get(c.root, abs); ok {
		c.texts[abs], c.lines[abs] = ct.text, ct.lines
		return ct.text, nil
	}
	t, fi, err := c.readStat(abs)
	if err != nil {
		return "", err
	}
	c.texts[abs], c.lines[abs] = t, c.p.texts.put(abs, fi, t)
	return t, nil
}

// text is a file's text for positions and previews: a workspace file, or a file outside the
// workspace that servers point into (the toolchains: GOROOT, the module cache, /usr); other
// places are not read ("", false).
func (c *call) text(abs string) (string, bool) {
	if t, ok := c.texts[abs]; ok {
		return t, true
	}
	var t string
	var err error
	if rel, rerr := filepath.Rel(c.root, abs); rerr == nil && filepath.IsLocal(rel) {
		// A file an earlier answer read, unchanged since: its text and lines from the pool's
		// cache (one stat); else read, and cached with its lines.
		t, err := c.current(abs)
		return t, err == nil
	} else if toolchainPath(abs) {
		var b []byte
		b, err = os.ReadFile(abs)
		if err == nil && (len(b) > maxDocumentBytes || !utf8.Valid(b)) {
			err = errors.New("not text")
		}
		t = string(b)
	} else {
		return "", false
	}
	if err != nil {
		return "", false
	}
	c.texts[abs] = t
	return t, true
}

// toolchainPath reports whether abs lies in a toolchain's files (read for previews of
// definitions outside the workspace).
func toolchainPath(abs string) bool {
	dirs := append([]string{"/usr/include/", "/usr/lib/", "/usr/local/lib/", "/usr/local/go/"}, goDirs()...)
	if home, err := os.UserHomeDir(); err == nil && home != "" {
		for _, d := range []string{"go", ".cargo", ".rustup", ".nvm"} {
			dirs = append(dirs, filepath.Join(home, d))
		}
	}
	for _, d := range dirs {
		d = strings.TrimSuffix(d, "/") + "/"
		if strings.HasPrefix(abs, d) {
			return true
		}
	}
	return strings.Contains(abs, "/node_modules/typescript/lib/")
}

// textLines is text(abs) split into lines, split once per call.
func (c *call) textLines(abs string) ([]string, bool) {
	if ls, ok := c.lines[abs]; ok {
		return ls, true
	}
	t, ok := c.text(abs)
	if !ok {
		return nil, false
	}
	if ls, ok := c.lines[abs]; ok { // text took them from the pool's cache with the text
		return ls, true
	}
	ls := lsp.Lines(t)
	c.lines[abs] = ls
	return ls, true
}

// display is the path shown for abs: relative to the workspace inside it, else absolute.
func (c *call) display(abs string) string {
	if rel, err := filepath.Rel(c.root, abs); err == nil && filepath.IsLocal(rel) {
		return filepath.ToSlash(rel)
	}
	return abs
}

// point converts an LSP position in abs to a 1-based line and UTF-8 byte column, with the
// line's text.
func (c *call) point(abs string, p lsp.Position) (line, col int, preview string) {
	line, col = p.Line+1, p.Character+1
	lines, ok := c.textLines(abs)
	if !ok {
		return line, col, ""
	}
	if p.Line >= len(lines) {
		return line, col, ""
	}
	l := lines[p.Line]
	col = lsp.ByteOffset(l, p.Character) + 1
	preview = strings.TrimSpace(l)
	if len(preview) > 200 {
		preview = preview[:200] + "…"
	}
	return line, col, preview
}

func (c *call) location(l lsp.Location) Location {
	abs := lsp.Path(l.URI)
	if abs == "" {
		return Location{Path: l.URI, Line: l.Range.Start.Line + 1, Column: l.Range.Start.Character + 1}
	}
	line, col, prev := c.point(abs, l.Range.Start)
	return Location{Path: c.display(abs), Line: line, Column: col, Preview: prev}
}

func (c *call) locations(ls []lsp.Location) []Location {
	out := make([]Location, 0, len(ls))
	seen := map[Location]bool{}
	for _, l := range ls {
		loc := c.location(l)
		if !seen[loc] {
			seen[loc] = true
			out = append(out, loc)
		}
	}
	slices.SortStableFunc(out, func(a, b Location) int {
		if a.Path != b.Path {
			return strings.Compare(a.Path, b.Path)
		}
		if a.Line != b.Line {
			return a.Line - b.Line
		}
		return a.Column - b.Column
	})
	return out
}

// open gives server s the current text of abs and returns its URI.
func (c *call) open(ctx context.Context, s *server, abs string) (string, error) {
	t, err := c.current(abs)
	if err != nil {
		return "", err
	}
	return c.openText(ctx, s, abs, t)
}

// openText is open with the text the call has just read (resolve reads it to check the
// position first).
func (c *call) openText(ctx context.Context, s *server, abs, t string) (string, error) {
	if old, ok := c.texts[abs]; !ok || old != t {
		c.texts[abs] = t
		delete(c.lines, abs)
	}
	uri := lsp.URI(abs)
	if _, _, err := s.client.Sync(ctx, uri, languageID(s.key.lang, abs), t); err != nil {
		return "", err
	}
	return uri, nil
}

// resolved is a target resolved to a server, a document and an LSP position.
type resolved struct {
	s   *server
	uri string
	abs string
	pos lsp.Position
}

// resolve finds the server, document and position of t. The caller releases r.s.
func (c *call) resolve(ctx context.Context, t Target) (resolved, error) {
	switch {
	case t.Path != "" && t.Symbol != "" && (t.Line != 0 || t.Column != 0):
		return resolved{}, errors.New("give path with line and column, or symbol (with path: declared in that file), not both")
	case t.Path != "" && t.Symbol != "":
		return c.resolveSymbolInFile(ctx, t.Path, t.Symbol, t.Language)
	case t.Symbol != "":
		return c.resolveSymbol(ctx, t.Symbol, t.Language)
	case t.Path == "":
		return resolved{}, errors.New("give a position (path, line, column) or a symbol name")
	}
	abs, rel, err := inRoot(c.root, t.Path)
	if err != nil {
		return resolved{}, err
	}
	lang, err := c.languageFor(rel, t.Language)
	if err != nil {
		return resolved{}, err
	}
	// The file as it is now: from the pool's cache when unchanged since an earlier answer read
	// it (with its lines), else read; the same text is what the server is synced to below.
	text, err := c.current(abs)
	if err != nil {
		return resolved{}, err
	}
	lines, _ := c.textLines(abs)
	pos, err := position(rel, lines, t.Line, t.Column)
	if err != nil {
		return resolved{}, err
	}
	s, err := c.p.get(ctx, c.root, lang)
	if err != nil {
		return resolved{}, err
	}
	uri, err := c.openText(ctx, s, abs, text)
	if err != nil {
		s.release()
		return resolved{}, err
	}
	return resolved{s: s, uri: uri, abs: abs, pos: pos}, nil
}

// languageFor is the language of a workspace file (an explicit language must agree).
func (c *call) languageFor(rel, explicit string) (string, error) {
	lang := LanguageOf(rel)
	if explicit != "" {
		if _, err := defFor(explicit); err != nil {
			return "", err
		}
		if lang != "" && lang != explicit {
			return "", fmt.Errorf("language: %s is a %s file, not %s", rel, lang, explicit)
		}
		return explicit, nil
	}
	if lang == "" {
		ext := filepath.Ext(rel)
		if ext == "" {
			ext = "(no extension)"
		}
		return "", fmt.Errorf("path: no language server for %s files like %s; supported: %s", ext, rel, supportedExts())
	}
	return lang, nil
}

func supportedExts() string {
	var out []string
	for _, d := range defs {
		var exts []string
		for e := range d.exts {
			exts = append(exts, e)
		}
		slices.Sort(exts)
		out = append(out, d.lang+" ("+strings.Join(exts, " ")+")")
	}
	return strings.Join(out, ", ")
}

// position checks a 1-based line and UTF-8 byte column against a file's lines (lsp.Lines) and
// converts them to the protocol's 0-based line and UTF-16 character.
func position(rel string, lines []string, line, col int) (lsp.Position, error) {
	n := len(lines)
	if n > 0 && lines[n-1] == "" {
		n-- // the empty "line" after the final newline
	}
	if line < 1 || col < 1 {
		return lsp.Position{}, fmt.Errorf("line and column are 1-based: got line %d, column %d", line, col)
	}
	if line > max(n, 1) {
		return lsp.Position{}, fmt.Errorf("line: %d is past the end of %s (%d lines)", line, rel, n)
	}
	l := lines[line-1]
	if col > len(l)+1 {
		return lsp.Position{}, fmt.Errorf("column: %d is past the end of line %d of %s (%d bytes; columns count UTF-8 bytes)", col, line, rel, len(l))
	}
	return lsp.Position{Line: line - 1, Character: lsp.UTF16Offset(l, col-1)}, nil
}

// withTarget runs fn on t's resolved position, again on a fresh server (twice at most) when
// the server's connection ended during the call (it crashed or was killed).
func (p *Pool) withTarget(ctx context.Context, root string, t Target, fn func(c *call, r resolved) error) error {
	const retries = 2
	for attempt := 0; ; attempt++ {
		c, err := p.newCall(root)
		if err != nil {
			return err
		}
		r, err := c.resolve(ctx, t)
		if err != nil {
			c.close()
			if attempt < retries && errors.Is(err, lsp.ErrClosed) {
				continue
			}
			return err
		}
		err = fn(c, r)
		r.s.release()
		c.close()
		if attempt < retries && errors.Is(err, lsp.ErrClosed) {
			continue
		}
		return err
	}
}

// Definition is where the symbol at t is declared.
func (p *Pool) Definition(ctx context.Context, root string, t Target) (LocationsResult, error) {
	var out LocationsResult
	err := p.withTarget(ctx, root, t, func(c *call, r resolved) error {
		ls, err := r.s.client.Definition(ctx, r.uri, r.pos)
		if err != nil {
			return err
		}
		out.Locations = c.locations(ls)
		return nil
	})
	return out, err
}

// References are the uses of the symbol at t (with its declaration when includeDeclaration);
// past MaxReferences only counted.
func (p *Pool) References(ctx context.Context, root string, t Target, includeDeclaration bool) (ReferencesResult, error) {
	var out ReferencesResult
	err := p.withTarget(ctx, root, t, func(c *call, r resolved) error {
		ls, err := r.s.client.References(ctx, r.uri, r.pos, includeDeclaration)
		if err != nil {
			return err
		}
		out.Locations = c.locations(ls)
		out.Count = len(out.Locations)
		if len(out.Locations) > MaxReferences {
			out.Locations = out.Locations[:MaxReferences]
		}
		return nil
	})
	return out, err
}

// Implementations are the types that implement the interface at t, or the interfaces the
// type at t implements, or a method's implementations (as the server answers).
func (p *Pool) Implementations(ctx context.Context, root string, t Target) (LocationsResult, error) {
	var out LocationsResult
	err := p.withTarget(ctx, root, t, func(c *call, r resolved) error {
		ls, err := r.s.client.Implementation(ctx, r.uri, r.pos)
		if err != nil {
			return err
		}
		out.Locations = c.locations(ls)
		return nil
	})
	return out, err
}

// Calls are the callers (direction "incoming", the default) or callees ("outgoing") of the
// function at t.
func (p *Pool) Calls(ctx context.Context, root string, t Target, direction string) (CallsResult, error) {
	switch direction {
	case "":
		direction = "incoming"
	case "incoming", "outgoing":
	default:
		return CallsResult{}, fmt.Errorf("direction: %q is not incoming or outgoing", direction)
	}
	out := CallsResult{Calls: []CallItem{}}
	err := p.withTarget(ctx, root, t, func(c *call, r resolved) error {
		items, err := r.s.client.PrepareCallHierarchy(ctx, r.uri, r.pos)
		if err != nil {
			return err
		}
		if len(items) == 0 {
			return errors.New("position: no function or method there to list calls of")
		}
		out.Calls = out.Calls[:0]
		for _, it := range items {
			var calls []lsp.Call
			if direction == "incoming" {
				calls, err = r.s.client.IncomingCalls(ctx, it)
			} else {
				calls, err = r.s.client.OutgoingCalls(ctx, it)
			}
			if err != nil {
				return err
			}
			for _, cl := range calls {
				uri, at := cl.Item.URI, cl.Item.SelectionRange.Start
				if direction == "incoming" && len(cl.FromRanges) > 0 {
					at = cl.FromRanges[0].Start
				} else if direction == "outgoing" && cl.Item.URI == "" {
					uri = it.URI
				}
				loc := c.location(lsp.Location{URI: uri, Range: lsp.Range{Start: at, End: at}})
				out.Calls = append(out.Calls, CallItem{Name: cl.Item.Name, Path: loc.Path, Line: loc.Line, Column: loc.Column})
			}
		}
		return nil
	})
	return out, err
}

// Hover is the signature and documentation of the symbol at t.
func (p *Pool) Hover(ctx context.Context, root string, t Target) (HoverResult, error) {
	var out HoverResult
	err := p.withTarget(ctx, root, t, func(c *call, r resolved) error {
		h, err := r.s.client.Hover(ctx, r.uri, r.pos)
		out.Contents = h
		return err
	})
	return out, err
}

// SymbolsQuery asks for a file's outline (Path) or searches the workspace (Query; Language
// picks the server, else every language of the workspace is searched).
type SymbolsQuery struct {
	Path     string `json:"path,omitempty"`
	Query    string `json:"query,omitempty"`
	Language string `json:"language,omitempty"`
}

// Symbols is a file's outline or a workspace symbol search.
func (p *Pool) Symbols(ctx context.Context, root string, q SymbolsQuery) (SymbolsResult, error) {
	c, err := p.newCall(root)
	if err != nil {
		return SymbolsResult{}, err
	}
	defer c.close()
	out := SymbolsResult{Symbols: []Symbol{}}
	switch {
	case q.Path != "" && q.Query != "":
		return out, errors.New("give path (a file's outline) or query (a workspace search), not both")
	case q.Path != "":
		err := p.withDocument(ctx, c, q.Path, q.Language, func(s *server, abs, uri string) error {
			ds, err := s.client.DocumentSymbols(ctx, uri)
			if err != nil {
				return err
			}
			out.Symbols = c.outline(abs, ds, "", out.Symbols[:0])
			return nil
		})
		return out, err
	case q.Query != "":
		langs, err := c.searchLanguages(q.Language)
		if err != nil {
			return out, err
		}
		for _, lang := range langs {
			err := p.retry(func() error {
				s, err := p.get(ctx, c.root, lang)
				if err != nil {
					return err
				}
				defer s.release()
				syms, err := s.client.WorkspaceSymbols(ctx, q.Query)
				if err != nil {
					return err
				}
				for _, si := range syms {
					abs := lsp.Path(si.Location.URI)
					if rel, err := filepath.Rel(c.root, abs); err != nil || !filepath.IsLocal(rel) {
						continue // outside the workspace (dependencies, the standard library)
					}
					line, col, _ := c.point(abs, si.Location.Range.Start)
					line, col = c.identifier(abs, si.Name, si.Location.Range, line, col)
					out.Symbols = append(out.Symbols, Symbol{Name: si.Name, Kind: si.Kind.String(), Path: c.display(abs),
						Line: line, Column: col, EndLine: si.Location.Range.End.Line + 1, Container: si.ContainerName})
				}
				return nil
			})
			if err != nil && !(q.Language == "" && errors.Is(err, ErrNoServer)) {
				return out, err
			}
		}
		return out, nil
	}
	return out, errors.New("give path (a file's outline) or query (a workspace search)")
}

// retry runs fn again (twice at most) when the server's connection ended during the run.
// withDocument runs fn with path (relative to the call's workspace, or absolute inside it) open
// on the server of its language (explicit, when given), the server started if need be; like
// every request it is retried once on a server that died meanwhile (retry). abs is the file's
// absolute path, uri its document URI.
func (p *Pool) withDocument(ctx context.Context, c *call, path, explicit string, fn func(s *server, abs, uri string) error) error {
	abs, rel, err := inRoot(c.root, path)
	if err != nil {
		return err
	}
	lang, err := c.languageFor(rel, explicit)
	if err != nil {
		return err
	}
	return p.retry(func() error {
		s, err := p.get(ctx, c.root, lang)
		if err != nil {
			return err
		}
		defer s.release()
		uri, err := c.open(ctx, s, abs)
		if err != nil {
			return err
		}
		return fn(s, abs, uri)
	})
}

func (p *Pool) retry(fn func() error) error {
	err := fn()
	for i := 0; i < 2 && errors.Is(err, lsp.ErrClosed); i++ {
		err = fn()
	}
	return err
}

func (c *call) outline(abs string, ds []lsp.DocumentSymbol, container string, out []Symbol) []Symbol {
	for _, d := range ds {
		line, col, _ := c.point(abs, d.SelectionRange.Start)
		out = append(out, Symbol{Name: d.Name, Kind: d.Kind.String(), Path: c.display(abs), Line: line, Column: col,
			EndLine: d.Range.End.Line + 1, Container: container})
		if len(d.Children) > 0 {
			out = c.outline(abs, d.Children, d.Name, out)
		}
	}
	return out
}

// identifier moves a symbol's position from the start of its declaration's range to its name
// (servers differ: some give the name's range, some the whole declaration's).
func (c *call) identifier(abs, name string, r lsp.Range, line, col int) (int, int) {
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		name = name[i+1:]
	}
	if i := strings.IndexAny(name, "( "); i > 0 {
		name = name[:i]
	}
	lines, ok := c.textLines(abs)
	if !ok || name == "" {
		return line, col
	}
	for ln := r.Start.Line; ln <= r.End.Line && ln < len(lines); ln++ {
		from := 0
		if ln == r.Start.Line {
			from = min(col-1, len(lines[ln]))
		}
		for i := from; i < len(lines[ln]); {
			j := strings.Index(lines[ln][i:], name)
			if j < 0 {
				break
			}
			at := i + j
			if isIdentBoundary(lines[ln], at, len(name)) {
				return ln + 1, at + 1
			}
			i = at + 1
		}
	}
	return line, col
}

func isIdentBoundary(s string, at, n int) bool {
	word := func(b byte) bool {
		return b == '_' || b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= 0x80
	}
	if at > 0 && word(s[at-1]) {
		return false
	}
	return at+n >= len(s) || !word(s[at+n])
}

// searchLanguages are the languages a search without a path goes to: the one given, or the
// workspace's own (from its files) whose servers are installed.
func (c *call) searchLanguages(explicit string) ([]string, error) {
	if explicit != "" {
		if _, err := defFor(explicit); err != nil {
			return nil, err
		}
		return []string{explicit}, nil
	}
	langs := detectLanguages(c.root)
	var out, missing []string
	for _, l := range langs {
		if _, err := Locate(l, c.p.command(l), c.p.opts.SearchDirs); err == nil {
			out = append(out, l)
		} else {
			missing = append(missing, l)
		}
	}
	if len(out) == 0 {
		if len(missing) > 0 {
			_, err := Locate(missing[0], c.p.command(missing[0]), c.p.opts.SearchDirs)
			return nil, err
		}
		return nil, fmt.Errorf("language: the workspace has no source files of a language with a server (%s); give language", strings.Join(Languages(), ", "))
	}
	return out, nil
}

// resolveSymbol finds the one declaration named name (Name, Type.Method, pkg.Func).
func (c *call) resolveSymbol(ctx context.Context, name, language string) (resolved, error) {
	if strings.TrimSpace(name) == "" || strings.ContainsAny(name, " \t\n") {
		return resolved{}, fmt.Errorf("symbol: %q is not a name like Name, Type.Method or pkg.Func", name)
	}
	langs, err := c.searchLanguages(language)
	if err != nil {
		return resolved{}, err
	}
	parts := strings.Split(name, ".")
	last, qual := parts[len(parts)-1], strings.Join(parts[:len(parts)-1], ".")
	type cand struct {
		lang string
		si   lsp.SymbolInformation
		abs  string
	}
	var cands []cand
	for _, lang := range langs {
		err := c.p.retry(func() error {
			s, err := c.p.get(ctx, c.root, lang)
			if err != nil {
				return err
			}
			defer s.release()
			syms, err := s.client.WorkspaceSymbols(ctx, last)
			if err != nil {
				return err
			}
			for _, si := range syms {
				abs := lsp.Path(si.Location.URI)
				if rel, err := filepath.Rel(c.root, abs); err != nil || !filepath.IsLocal(rel) {
					continue
				}
				if symbolMatches(si, last, qual, name) || qual != "" && moduleMatches(c.display(abs), qual) && symbolMatches(si, last, "", name) {
					cands = append(cands, cand{lang, si, abs})
				}
			}
			return nil
		})
		if err != nil && !(language == "" && errors.Is(err, ErrNoServer)) {
			return resolved{}, err
		}
	}
	// One declaration may be reported twice (e.g. a TypeScript class and its constructor
	// share a name); keep one per place.
	seen := map[string]bool{}
	uniq := cands[:0]
	for _, cd := range cands {
		k := fmt.Sprintf("%s:%d", cd.abs, cd.si.Location.Range.Start.Line)
		if !seen[k] {
			seen[k] = true
			uniq = append(uniq, cd)
		}
	}
	cands = uniq
	switch len(cands) {
	case 0:
		return resolved{}, fmt.Errorf("symbol: %q not found in the workspace; symbols lists what there is (query)", name)
	case 1:
	default:
		var list []string
		for _, cd := range cands {
			line, col, _ := c.point(cd.abs, cd.si.Location.Range.Start)
			line, col = c.identifier(cd.abs, cd.si.Name, cd.si.Location.Range, line, col)
			what := cd.si.Name
			if cd.si.ContainerName != "" {
				what = cd.si.ContainerName + " " + what
			}
			list = append(list, fmt.Sprintf("%s (%s) at %s:%d:%d", what, cd.si.Kind, c.display(cd.abs), line, col))
		}
		slices.Sort(list)
		return resolved{}, fmt.Errorf("symbol: %q is ambiguous, %d candidates: %s; qualify it (Type.Method, pkg.Func) or give path, line and column", name, len(cands), strings.Join(list, "; "))
	}
	cd := cands[0]
	line, col, _ := c.point(cd.abs, cd.si.Location.Range.Start)
	line, col = c.identifier(cd.abs, cd.si.Name, cd.si.Location.Range, line, col)
	s, err := c.p.get(ctx, c.root, cd.lang)
	if err != nil {
		return resolved{}, err
	}
	uri, err := c.open(ctx, s, cd.abs)
	if err != nil {
		s.release()
		return resolved{}, err
	}
	lines, _ := c.textLines(cd.abs)
	pos, err := position(c.display(cd.abs), lines, line, col)
	if err != nil {
		s.release()
		return resolved{}, err
	}
	return resolved{s: s, uri: uri, abs: cd.abs, pos: pos}, nil
}

// moduleMatches: the qualifier names the file's module (Python's app.calc or calc for
// app/calc.py, TypeScript's and C's file name).
func moduleMatches(rel, qual string) bool {
	mod := strings.TrimSuffix(rel, filepath.Ext(rel))
	q := strings.ReplaceAll(qual, ".", "/")
	return mod == q || strings.HasSuffix(mod, "/"+q)
}

// symbolMatches: the symbol's own name is last (servers may prefix it with its type:
// "Type.Method"), and the qualifier, if any, names its type, class or package.
// resolveSymbolInFile finds a symbol declared in one file from the file's outline
// (documentSymbol): what an agent that has just read the file asks, answered without a
// workspace-wide search. The caller releases r.s.
func (c *call) resolveSymbolInFile(ctx context.Context, path, name, language string) (resolved, error) {
	if strings.TrimSpace(name) == "" || strings.ContainsAny(name, " \t\n") {
		return resolved{}, fmt.Errorf("symbol: %q is not a name like Name, Type.Method or pkg.Func", name)
	}
	parts := strings.Split(name, ".")
	last, qual := parts[len(parts)-1], strings.Join(parts[:len(parts)-1], ".")
	var r resolved
	err := c.p.withDocument(ctx, c, path, language, func(s *server, abs, uri string) error {
		ds, err := s.client.DocumentSymbols(ctx, uri)
		if err != nil {
			return err
		}
		var hits []Symbol
		for _, sym := range c.outline(abs, ds, "", nil) {
			// gopls names a method "(*T).M"; others nest it under its type (container T).
			n := strings.NewReplacer("(*", "", "(", "", ")", "").Replace(sym.Name)
			if i := strings.IndexByte(n, '('); i > 0 {
				n = n[:i]
			}
			bare, recv := n, ""
			if i := strings.LastIndexByte(n, '.'); i >= 0 {
				bare, recv = n[i+1:], n[:i]
			}
			if recv == "" {
				recv = sym.Container
			}
			// A qualifier names the type (Type.Method); on a top-level name it is the package
			// (pkg.Func), which the file's path already fixed.
			if bare == last && (qual == "" || recv == qual || strings.HasSuffix(recv, "."+qual) || recv == "" && !strings.Contains(qual, ".")) {
				hits = append(hits, sym)
			}
		}
		switch len(hits) {
		case 0:
			return fmt.Errorf("symbol: %q is not declared in %s; code_symbols with path lists what it declares", name, c.display(abs))
		case 1:
		default:
			var list []string
			for _, h := range hits {
				list = append(list, strings.TrimSpace(fmt.Sprintf("%s %s (%s) at line %d", h.Container, h.Name, h.Kind, h.Line)))
			}
			return fmt.Errorf("symbol: %q is ambiguous in %s, %d candidates: %s; qualify it (Type.Method) or give line and column", name, c.display(abs), len(hits), strings.Join(list, "; "))
		}
		lines, _ := c.textLines(abs)
		h := hits[0]
		if h.Line < 1 || h.Line > len(lines) {
			return fmt.Errorf("symbol: %q: the server placed it at line %d, past the end of %s", name, h.Line, c.display(abs))
		}
		s.acquire() // held for the caller, like resolve's other paths
		r = resolved{s: s, uri: uri, abs: abs, pos: lsp.Position{Line: h.Line - 1, Character: lsp.UTF16Offset(lines[h.Line-1], h.Column-1)}}
		return nil
	})
	return r, err
}

func symbolMatches(si lsp.SymbolInformation, last, qual, full string) bool {
	n := si.Name
	if i := strings.IndexByte(n, '('); i > 0 {
		n = n[:i] // "method(x)" forms
	}
	bare := n
	if i := strings.LastIndexByte(n, '.'); i >= 0 {
		bare = n[i+1:]
	}
	if bare != last {
		return false
	}
	if qual == "" {
		return true
	}
	if n == full {
		return true
	}
	cn := si.ContainerName
	if cn == qual || strings.HasSuffix(cn, "/"+qual) || strings.HasSuffix(cn, "."+qual) {
		return true
	}
	// gopls names a method "Type.Method" and contains it in the package: pkg.Type.Method
	if prefix, ok := strings.CutSuffix(full, "."+n); ok && (cn == prefix || strings.HasSuffix(cn, "/"+prefix)) {
		return true
	}
	return false
}

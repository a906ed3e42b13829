package code

import (
	"context"
	"errors"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/switchboard-hub/switchboard/internal/lsp"
	"github.com/switchboard-hub/switchboard/internal/search"
)

// MapNode is a file or directory of the project map.
type MapNode struct {
	Name string `json:"name"`
	Path string `json:"path"`
	Type string `json:"type"` // file or dir
	// Size is a file's bytes, or a directory's total over the files beneath it.
	Size int64 `json:"size"`
	// Files counts a directory's files beneath it.
	Files    int    `json:"files,omitempty"`
	Language string `json:"language,omitempty"`
	// Symbols counts a source file's declarations (its server's outline, nested ones
	// included); absent where no server counted them.
	Symbols *int `json:"symbols,omitempty"`
	// Truncated: a directory below maxDepth, its entries not listed (still counted).
	Truncated bool       `json:"truncated,omitempty"`
	Children  []*MapNode `json:"children,omitempty"`
}

// MapResult answers project map.
type MapResult struct {
	Tree  *MapNode `json:"tree"`
	Files int      `json:"files"`
	Dirs  int      `json:"dirs"`
	// Note says what was left out (files past the limit, symbols not counted).
	Note string `json:"note,omitempty"`
}

// Map limits.
const (
	DefaultMapDepth   = 3
	maxMapEntries     = 5000
	maxMapSymbolFiles = 300
)

// Map is the workspace's tree down to maxDepth (0: DefaultMapDepth) levels, as file_grep sees
// it (.gitignore, .ignore and hidden names honoured), with sizes, and the number of symbols of
// each listed source file whose language server is installed (started if need be).
func (p *Pool) Map(ctx context.Context, root string, maxDepth int) (MapResult, error) {
	if maxDepth <= 0 {
		maxDepth = DefaultMapDepth
	}
	c, err := p.newCall(root)
	if err != nil {
		return MapResult{}, err
	}
	defer c.close()
	r, err := os.OpenRoot(c.root)
	if err != nil {
		return MapResult{}, err
	}
	defer r.Close()
	top := &MapNode{Name: path.Base(c.root), Path: ".", Type: "dir"}
	dirs := map[string]*MapNode{"": top}
	res := MapResult{Tree: top}
	var listed []*MapNode
	var notes []string
	err = search.Walk(ctx, r, search.WalkOptions{}, func(rel string, dir *os.Root, name string, isDir bool) error {
		parentRel := path.Dir(rel)
		if parentRel == "." {
			parentRel = ""
		}
		depth := strings.Count(rel, "/") + 1
		// the nearest listed ancestor
		anc := parentRel
		for dirs[anc] == nil {
			anc = path.Dir(anc)
			if anc == "." {
				anc = ""
			}
		}
		if isDir {
			res.Dirs++
			if depth <= maxDepth {
				n := &MapNode{Name: name, Path: rel, Type: "dir", Truncated: depth == maxDepth}
				dirs[rel] = n
				dirs[anc].Children = append(dirs[anc].Children, n)
			}
			return nil
		}
		if res.Files++; res.Files > maxMapEntries {
			notes = append(notes, "stopped after 5000 files")
			return search.ErrStop
		}
		var size int64
		if fi, err := dir.Lstat(name); err == nil {
			size = fi.Size()
		}
		for a := parentRel; ; a = path.Dir(a) {
			if a == "." {
				a = ""
			}
			if d := dirs[a]; d != nil {
				d.Size += size
				d.Files++
			}
			if a == "" {
				break
			}
		}
		if depth <= maxDepth && dirs[parentRel] != nil {
			n := &MapNode{Name: name, Path: rel, Type: "file", Size: size, Language: LanguageOf(name)}
			dirs[parentRel].Children = append(dirs[parentRel].Children, n)
			listed = append(listed, n)
		}
		return nil
	})
	if err != nil {
		return res, err
	}
	for _, d := range dirs {
		if d.Truncated && len(d.Children) > 0 {
			d.Children = nil
		}
	}
	// Symbols: one server per language, only installed ones.
	counted, skipped := 0, 0
	servers := map[string]*server{}
	defer func() {
		for _, s := range servers {
			if s != nil {
				s.release()
			}
		}
	}()
	for _, n := range listed {
		if n.Language == "" {
			continue
		}
		if counted >= maxMapSymbolFiles {
			skipped++
			continue
		}
		s, ok := servers[n.Language]
		if !ok {
			if _, err := Locate(n.Language, p.command(n.Language), p.opts.SearchDirs); err == nil {
				got, err := p.get(ctx, c.root, n.Language)
				if err != nil && ctx.Err() != nil {
					return res, err
				}
				s = got // nil when it failed to start: no counts for that language
			}
			servers[n.Language] = s
		}
		if s == nil {
			continue
		}
		k, err := c.countSymbols(ctx, s, filepath.Join(c.root, filepath.FromSlash(n.Path)))
		if err != nil {
			if errors.Is(err, lsp.ErrClosed) || ctx.Err() != nil {
				return res, err
			}
			continue
		}
		n.Symbols = &k
		counted++
	}
	if skipped > 0 {
		notes = append(notes, "symbols counted for the first 300 source files only")
	}
	res.Note = strings.Join(notes, "; ")
	return res, nil
}

// countSymbols counts a file's symbols on s, closing it again if it was not open.
func (c *call) countSymbols(ctx context.Context, s *server, abs string) (int, error) {
	uri := lsp.URI(abs)
	wasOpen := s.client.IsOpen(uri)
	if _, err := c.open(ctx, s, abs); err != nil {
		return 0, err
	}
	ds, err := s.client.DocumentSymbols(ctx, uri)
	if !wasOpen {
		_ = s.client.CloseDocument(ctx, uri)
	}
	if err != nil {
		return 0, err
	}
	var count func([]lsp.DocumentSymbol) int
	count = func(ds []lsp.DocumentSymbol) int {
		n := len(ds)
		for _, d := range ds {
			n += count(d.Children)
		}
		return n
	}
	return count(ds), nil
}

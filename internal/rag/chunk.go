package rag

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path"
	"strings"
)

// Chunk is one retrievable piece of a source.
type Chunk struct {
	Source     string // workspace-relative path, slash-separated
	Section    string // heading path ("Install > Linux"), Go declaration ("func (*Server) Serve"), or ""
	Category   string // "markdown", "go" or "text"
	ChunkIndex int    // position within the source, from 0
	Content    string
}

// MaxChunkChars bounds a chunk's size; longer sections are split at blank lines, then at lines.
const MaxChunkChars = 2000

// minMergeChars: blank-line blocks shorter than this are merged with their neighbours.
const minMergeChars = 600

// ChunkFile splits one source by its kind: markdown by headings, Go by top-level declarations,
// everything else by blank-line blocks.
func ChunkFile(source string, content string) []Chunk {
	var chunks []Chunk
	switch ext := strings.ToLower(path.Ext(source)); ext {
	case ".md", ".markdown", ".mdx":
		chunks = chunkMarkdown(content)
	case ".go":
		chunks = chunkGo(source, content)
	default:
		chunks = chunkBlocks(content, "", "text")
	}
	out := chunks[:0]
	for _, c := range chunks {
		if strings.TrimSpace(c.Content) == "" {
			continue
		}
		c.Source = source
		c.ChunkIndex = len(out)
		out = append(out, c)
	}
	return out
}

func chunkMarkdown(content string) []Chunk {
	var chunks []Chunk
	var heads []string // heading path by level
	var body strings.Builder
	section := ""
	flush := func() {
		chunks = appendBlocks(chunks, body.String(), section, "markdown")
		body.Reset()
	}
	inFence := false
	for _, line := range strings.SplitAfter(content, "\n") {
		trim := strings.TrimSpace(line)
		if strings.HasPrefix(trim, "```") || strings.HasPrefix(trim, "~~~") {
			inFence = !inFence
		}
		if !inFence && strings.HasPrefix(trim, "#") {
			level := len(trim) - len(strings.TrimLeft(trim, "#"))
			title := strings.TrimSpace(strings.Trim(trim[level:], "# "))
			if level <= 6 && title != "" && (len(trim) == level || trim[level] == ' ') {
				flush()
				if level > len(heads) {
					for len(heads) < level-1 {
						heads = append(heads, "")
					}
					heads = append(heads, title)
				} else {
					heads = append(heads[:level-1], title)
				}
				var parts []string
				for _, h := range heads {
					if h != "" {
						parts = append(parts, h)
					}
				}
				section = strings.Join(parts, " > ")
			}
		}
		body.WriteString(line)
	}
	flush()
	return chunks
}

// chunkGo makes one chunk per top-level declaration (with its doc comment); the package clause
// and imports form the first chunk. Files that do not parse fall back to blank-line blocks.
func chunkGo(source, content string) []Chunk {
	if chunks, ok := chunkGoScan(content); ok {
		return chunks
	}
	return chunkGoParsed(source, content)
}

// chunkGoParsed is chunkGo with go/parser (the reference the scanner is tested against, and the
// fallback for files without a package clause).
func chunkGoParsed(source, content string) []Chunk {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, source, content, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return chunkBlocks(content, "", "go")
	}
	off := func(p token.Pos) int { return fset.Position(p).Offset }
	var chunks []Chunk
	prev := 0
	pkgSection := "package " + f.Name.Name
	for i, d := range f.Decls {
		start := off(d.Pos())
		var doc *ast.CommentGroup
		var section string
		switch d := d.(type) {
		case *ast.FuncDecl:
			doc = d.Doc
			section = "func " + d.Name.Name
			if d.Recv != nil && len(d.Recv.List) > 0 {
				section = "func (" + exprString(d.Recv.List[0].Type) + ") " + d.Name.Name
			}
		case *ast.GenDecl:
			doc = d.Doc
			section = genDeclName(d)
		}
		if doc != nil {
			start = off(doc.Pos())
		}
		if i == 0 && start > 0 {
			chunks = appendBlocks(chunks, content[:start], pkgSection, "go")
		} else if start > prev && strings.TrimSpace(content[prev:start]) != "" && i > 0 {
			// free-floating comments between declarations belong to the previous chunk's tail
			chunks = appendBlocks(chunks, content[prev:start], pkgSection, "go")
		}
		end := off(d.End())
		if end < start || end > len(content) {
			continue
		}
		chunks = appendBlocks(chunks, content[start:end], section, "go")
		prev = end
	}
	if len(f.Decls) == 0 {
		return chunkBlocks(content, pkgSection, "go")
	}
	if prev < len(content) && strings.TrimSpace(content[prev:]) != "" {
		chunks = appendBlocks(chunks, content[prev:], pkgSection, "go")
	}
	return chunks
}

func genDeclName(d *ast.GenDecl) string {
	kind := d.Tok.String()
	var names []string
	for _, s := range d.Specs {
		switch s := s.(type) {
		case *ast.TypeSpec:
			names = append(names, s.Name.Name)
		case *ast.ValueSpec:
			for _, n := range s.Names {
				names = append(names, n.Name)
			}
		case *ast.ImportSpec:
			return "import"
		}
	}
	if len(names) > 3 {
		names = append(names[:3], "…")
	}
	return kind + " " + strings.Join(names, ", ")
}

func exprString(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.StarExpr:
		return "*" + exprString(e.X)
	case *ast.IndexExpr:
		return exprString(e.X)
	case *ast.IndexListExpr:
		return exprString(e.X)
	case *ast.SelectorExpr:
		return exprString(e.X) + "." + e.Sel.Name
	}
	return "?"
}

// chunkBlocks splits text at blank lines and packs consecutive blocks into chunks of at most
// MaxChunkChars, merging small ones; a block larger than the bound is cut at line ends.
func chunkBlocks(text, section, category string) []Chunk {
	return appendBlocks(nil, text, section, category)
}

// appendBlocks appends chunkBlocks(text, section, category) to chunks. The Go chunker calls it
// once per declaration: collecting each declaration's chunks in a slice of their own and copying
// them over made ~30 MB of garbage on GOROOT/src.
func appendBlocks(chunks []Chunk, text, section, category string) []Chunk {
	if len(text) <= MaxChunkChars {
		if strings.TrimSpace(text) == "" {
			return chunks
		}
		return append(chunks, Chunk{Section: section, Category: category, Content: strings.TrimRight(text, "\n")})
	}
	// The chunk being packed is text[lo:hi]: the blocks are consecutive pieces of text, so a chunk
	// is a substring of the source and packing copies nothing.
	lo, hi := 0, 0
	emit := func() {
		if cur := text[lo:hi]; strings.TrimSpace(cur) != "" {
			chunks = append(chunks, Chunk{Section: section, Category: category, Content: strings.TrimRight(cur, "\n")})
		}
		lo = hi
	}
	for _, block := range splitBlankLines(text) {
		if hi > lo && hi-lo+len(block) > MaxChunkChars {
			emit()
		}
		for len(block) > MaxChunkChars {
			cut := strings.LastIndexByte(block[:MaxChunkChars], '\n')
			if cut <= 0 {
				cut = MaxChunkChars
				for cut > 0 && !isRuneStart(block[cut]) {
					cut--
				}
			} else {
				cut++
			}
			hi += cut
			emit()
			block = block[cut:]
		}
		hi += len(block)
		if hi-lo >= minMergeChars*2 {
			emit()
		}
	}
	emit()
	return chunks
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

// splitBlankLines returns the text's blocks, each keeping its trailing blank line(s): consecutive
// pieces of text, which concatenated give text back (chunkBlocks relies on it).
func splitBlankLines(text string) []string {
	var blocks []string
	start := 0
	for i := 0; i < len(text); {
		j := strings.IndexByte(text[i:], '\n')
		if j < 0 {
			break
		}
		i += j + 1
		// a blank (whitespace-only) line ends a block
		k := i
		for k < len(text) && (text[k] == ' ' || text[k] == '\t' || text[k] == '\r') {
			k++
		}
		if k < len(text) && text[k] == '\n' {
			i = k + 1
			blocks = append(blocks, text[start:i])
			start = i
		}
	}
	if start < len(text) {
		blocks = append(blocks, text[start:])
	}
	return blocks
}

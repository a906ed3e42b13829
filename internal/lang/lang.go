// Package lang maps file names to language identifiers by extension.
//
// Detection is purely name-based (the file need not exist), which keeps it free of I/O and lets
// file_read label content without a second read.
package lang

import (
	"path/filepath"
	"strings"
)

// Plaintext is the identifier returned for names that match no language.
const Plaintext = "plaintext"

// Info describes one language.
type Info struct {
	ID         string   `json:"id" jsonschema:"language identifier used throughout the API"`
	Name       string   `json:"name" jsonschema:"human-readable display name"`
	Extensions []string `json:"extensions" jsonschema:"file extensions that map to this language"`
}

// listed are the languages lang_list enumerates, in the order it returns them.
var listed = []Info{
	{"typescript", "TypeScript", []string{".ts", ".tsx", ".mts", ".cts"}},
	{"javascript", "JavaScript", []string{".js", ".jsx", ".mjs", ".cjs"}},
	{"go", "Go", []string{".go"}},
	{"python", "Python", []string{".py", ".pyw", ".pyi"}},
	{"rust", "Rust", []string{".rs"}},
	{"java", "Java", []string{".java"}},
	{"php", "PHP", []string{".php"}},
	{"ruby", "Ruby", []string{".rb"}},
	{"html", "HTML", []string{".html", ".htm"}},
	{"css", "CSS", []string{".css"}},
	{"json", "JSON", []string{".json"}},
	{"yaml", "YAML", []string{".yaml", ".yml"}},
	{"markdown", "Markdown", []string{".md", ".markdown"}},
	{"sql", "SQL", []string{".sql"}},
	{"shell", "Shell", []string{".sh", ".bash", ".zsh"}},
}

// extra are detected by Detect but deliberately not enumerated by List.
var extra = []Info{
	{"c", "C", []string{".c", ".h"}},
	{"cpp", "C++", []string{".cpp", ".cc", ".cxx", ".hpp", ".hh", ".hxx"}},
	{"csharp", "C#", []string{".cs"}},
	{"scss", "SCSS", []string{".scss"}},
	{"xml", "XML", []string{".xml"}},
	{"swift", "Swift", []string{".swift"}},
	{"kotlin", "Kotlin", []string{".kt", ".kts"}},
}

var byExt = func() map[string]string {
	m := make(map[string]string)
	for _, group := range [][]Info{listed, extra} {
		for _, l := range group {
			for _, e := range l.Extensions {
				m[e] = l.ID
			}
		}
	}
	return m
}()

// Detect returns the language ID for a path, or Plaintext.
func Detect(path string) string {
	base := filepath.Base(path)
	if base == "Dockerfile" || strings.HasPrefix(base, "Dockerfile.") {
		return "dockerfile"
	}
	if id, ok := byExt[strings.ToLower(filepath.Ext(base))]; ok {
		return id
	}
	return Plaintext
}

// List returns the enumerated languages (a copy: callers may not change the registry).
func List() []Info {
	out := make([]Info, len(listed))
	for i, l := range listed {
		out[i] = Info{ID: l.ID, Name: l.Name, Extensions: append([]string(nil), l.Extensions...)}
	}
	return out
}

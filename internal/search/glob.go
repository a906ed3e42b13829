package search

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// DefaultMaxGlob is how many paths Glob returns at most.
const DefaultMaxGlob = 1000

// GlobOptions describe one Glob.
type GlobOptions struct {
	Pattern        string // doublestar pattern matched against the path relative to the root
	IncludeIgnored bool
	Base           []string // see WalkOptions
	Parents        []IgnoreFile
	Max            int                               // default DefaultMaxGlob
	Skip           func(rel string, isDir bool) bool // see WalkOptions
}

// GlobResult lists matching files, sorted.
type GlobResult struct {
	Paths     []string
	Truncated bool
}

// ValidateGlob checks a pattern, naming field in the error.
func ValidateGlob(field, pattern string) error {
	if pattern == "" {
		return &FieldError{field, `empty; give a pattern such as "**/*.go" or "cmd/*/main.go"`}
	}
	if strings.HasPrefix(pattern, "/") || pattern == ".." || strings.HasPrefix(pattern, "../") || strings.Contains(pattern, "/../") {
		return &FieldError{field, fmt.Sprintf("%q leaves the search directory; patterns are relative to path", pattern)}
	}
	if !doublestar.ValidatePattern(pattern) {
		return &FieldError{field, fmt.Sprintf("invalid glob %q (unbalanced [ ] or { }); use * ? [abc] {a,b} and ** for any directories", pattern)}
	}
	return nil
}

// Glob lists the files under root whose relative path matches the pattern, skipping what ignore
// rules exclude and hidden names (unless IncludeIgnored). Paths are sorted.
func Glob(ctx context.Context, root *os.Root, opts GlobOptions) (GlobResult, error) {
	if err := ValidateGlob("pattern", opts.Pattern); err != nil {
		return GlobResult{}, err
	}
	if opts.Max <= 0 {
		opts.Max = DefaultMaxGlob
	}
	pattern := strings.TrimPrefix(opts.Pattern, "./")
	var res GlobResult
	err := Walk(ctx, root, WalkOptions{IncludeIgnored: opts.IncludeIgnored, Base: opts.Base, Parents: opts.Parents, Skip: opts.Skip},
		func(rel string, _ *os.Root, _ string, isDir bool) error {
			if isDir {
				return nil
			}
			if ok, _ := doublestar.Match(pattern, rel); ok {
				if len(res.Paths) == opts.Max {
					res.Truncated = true
					return ErrStop
				}
				res.Paths = append(res.Paths, rel)
			}
			return nil
		})
	// The walk visits directories in sorted order depth-first, which is not the same as a sort
	// of the full paths ("a/b" vs "a.go"); sort so callers get plain byte order.
	sortStrings(res.Paths)
	return res, err
}

func sortStrings(s []string) { slices.Sort(s) }

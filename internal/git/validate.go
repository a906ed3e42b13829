package git

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
)

// FieldError is an error about one input field; Field is the JSON key.
type FieldError struct {
	Field string
	Msg   string
}

// Error reports the field by its JSON key, so the agent knows which argument to fix.
func (e *FieldError) Error() string { return e.Field + ": " + e.Msg }

// CheckRefName applies git check-ref-format's rules to a branch or ref name (as written by a
// user, e.g. "feature/x" or "refs/heads/x"), and refuses names that start with "-".
func CheckRefName(field, name string) error {
	bad := func(why string) error {
		return &FieldError{field, fmt.Sprintf("%q is not a valid ref name: %s", name, why)}
	}
	switch {
	case name == "":
		return &FieldError{field, "empty; give a branch name such as feature/login"}
	case len(name) > 255:
		return bad("longer than 255 characters")
	case strings.HasPrefix(name, "-"):
		return bad(`it starts with "-" (it would be read as an option)`)
	case name == "@":
		return bad(`"@" alone is reserved`)
	case strings.Contains(name, ".."):
		return bad(`it contains ".."`)
	case strings.Contains(name, "@{"):
		return bad(`it contains "@{"`)
	case strings.Contains(name, "//"):
		return bad(`it contains "//"`)
	case strings.HasSuffix(name, "/") || strings.HasPrefix(name, "/"):
		return bad(`it starts or ends with "/"`)
	case strings.HasSuffix(name, "."):
		return bad(`it ends with "."`)
	}
	for _, r := range name {
		// git's rules forbid control characters, space and ~ ^ : ? * [ \; on top of them only
		// letters, digits and . _ / - + @ , = are allowed (no shell or terminal metacharacters
		// reach git, its output or a log line).
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._/-+@,=", r)) {
			return bad(fmt.Sprintf("it contains %q; use letters, digits and . _ / - + @ , =", r))
		}
	}
	for _, c := range strings.Split(name, "/") {
		if strings.HasPrefix(c, ".") {
			return bad(`a component starts with "."`)
		}
		if strings.HasSuffix(c, ".lock") {
			return bad(`a component ends with ".lock"`)
		}
	}
	return nil
}

// suffix of a revision: ~N, ^N, @{N}, @{upstream}/@{u}/@{push}, ^{commit}/^{tree}.
var revSuffix = regexp.MustCompile(`^(?:~[0-9]{0,6}|\^\{(?:commit|tree)?\}|\^[0-9]{0,3}|@\{(?:[0-9]{1,6}|upstream|u|push)\})`)

var hexRev = regexp.MustCompile(`^[0-9a-fA-F]{4,64}$`)

// CheckRevision allows what a git revision commonly is and nothing that could be an option or
// run code: a ref name (check-ref-format rules), HEAD, @, a hex object name, each followed by
// ~N, ^N, @{N}, @{upstream}, ^{commit}; with allowRange, A..B and A...B of those. Paths
// (rev:path), searches (:/text, ^{/re}) and dates (@{yesterday}) are not accepted.
func CheckRevision(field, rev string, allowRange bool) error {
	if rev == "" {
		return &FieldError{field, "empty; give a branch, tag or commit such as HEAD~1 or main"}
	}
	if strings.HasPrefix(rev, "-") {
		return &FieldError{field, fmt.Sprintf("%q starts with \"-\"; options cannot be passed through %s", rev, field)}
	}
	if len(rev) > 512 {
		return &FieldError{field, "longer than 512 characters"}
	}
	if allowRange {
		for _, sep := range []string{"...", ".."} {
			if a, b, ok := strings.Cut(rev, sep); ok {
				for _, side := range []string{a, b} {
					if side == "" {
						continue // "A.." means "A..HEAD"
					}
					if err := checkOneRev(field, side); err != nil {
						return err
					}
				}
				if a == "" && b == "" {
					return &FieldError{field, fmt.Sprintf("%q names no revision", rev)}
				}
				return nil
			}
		}
	}
	return checkOneRev(field, rev)
}

func checkOneRev(field, rev string) error {
	base := rev
	// Strip suffixes from the end: find where the name part ends.
	i := strings.IndexAny(rev, "~^")
	if j := strings.Index(rev, "@{"); j >= 0 && (i < 0 || j < i) {
		i = j
	}
	if i >= 0 {
		base = rev[:i]
		rest := rev[i:]
		for rest != "" {
			m := revSuffix.FindString(rest)
			if m == "" {
				return &FieldError{field, fmt.Sprintf("%q: unsupported revision syntax at %q; use names, hashes, ~N, ^N, @{N} or @{upstream}", rev, rest)}
			}
			rest = rest[len(m):]
		}
	}
	switch {
	case base == "" && strings.HasPrefix(rev, "@{"):
		return nil // @{upstream}, @{1}: relative to the current branch
	case base == "HEAD" || base == "@" || base == "FETCH_HEAD" || base == "ORIG_HEAD" || base == "MERGE_HEAD":
		return nil
	case hexRev.MatchString(base):
		return nil
	}
	if err := CheckRefName(field, base); err != nil {
		return err
	}
	return nil
}

// CheckPaths refuses pathspecs that would leave the workspace: each path is taken relative to
// repoDir (an absolute directory inside root) and must stay inside root. Paths are passed after
// "--" and as literal pathspecs, so a leading "-" or "*" is just a file name.
func CheckPaths(field string, paths []string, root, repoDir string) error {
	for _, p := range paths {
		if p == "" {
			return &FieldError{field, "contains an empty path"}
		}
		if strings.IndexByte(p, 0) >= 0 {
			return &FieldError{field, fmt.Sprintf("%q contains a NUL byte", p)}
		}
		full := p
		if !filepath.IsAbs(p) {
			full = filepath.Join(repoDir, p)
		}
		full = filepath.Clean(full)
		if full != root && !strings.HasPrefix(full, root+string(filepath.Separator)) {
			return &FieldError{field, fmt.Sprintf("%q is outside the workspace; give paths relative to the repository", p)}
		}
	}
	return nil
}

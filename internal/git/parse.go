package git

import (
	"errors"
	"fmt"
	"strings"
)

// The parsers in this file read files an agent can write (.git files, commondir, alternates)
// and git's own config listing. They mirror git 2.39's readers closely enough that the path
// the hub verifies is the path git would use; anything git would refuse, they refuse too.

// maxPointerFile bounds a .git or commondir file: one path, so a few KiB is plenty, and a
// larger file is not read into memory.
const maxPointerFile = 64 << 10

// parseGitFile reads the content of a ".git" file, "gitdir: <path>" (read_gitfile_gently in
// git's setup.c): the prefix is required, trailing CR and LF are dropped, nothing else is
// trimmed. A relative path is relative to the directory holding the .git file; the caller
// joins it.
func parseGitFile(b []byte) (string, error) {
	if len(b) > maxPointerFile {
		return "", fmt.Errorf("is %d bytes; a .git file holds one line, \"gitdir: <path>\"", len(b))
	}
	s := string(b)
	rest, ok := strings.CutPrefix(s, "gitdir: ")
	if !ok {
		return "", errors.New(`does not start with "gitdir: "`)
	}
	rest = strings.TrimRight(rest, "\r\n")
	if rest == "" {
		return "", errors.New(`names no directory after "gitdir: "`)
	}
	if strings.ContainsAny(rest, "\x00\n") {
		// git reads it as a C string (a NUL ends it) and would not find a repository at a
		// path with a newline in it; neither is a path anyone means.
		return "", errors.New("contains a NUL byte or more than one line")
	}
	return rest, nil
}

// parseCommonDir reads a linked worktree's "commondir" file (get_common_dir_noenv in git's
// setup.c): the whole file with trailing CR and LF dropped, relative to the git dir.
func parseCommonDir(b []byte) (string, error) {
	if len(b) > maxPointerFile {
		return "", fmt.Errorf("is %d bytes; it holds one path", len(b))
	}
	s := strings.TrimRight(string(b), "\r\n")
	if s == "" {
		return "", errors.New("is empty")
	}
	if strings.ContainsAny(s, "\x00\n") {
		return "", errors.New("contains a NUL byte or more than one line")
	}
	return s, nil
}

// parseAlternates reads objects/info/alternates (link_alt_odb_entries in git's
// object-file.c): one object directory per line; empty lines and lines starting with "#" are
// skipped; a line starting with a double quote is C-quoted. Relative entries are relative to
// the objects directory; the caller joins them.
func parseAlternates(b []byte) ([]string, error) {
	var out []string
	for i, line := range strings.Split(string(b), "\n") {
		if line == "" || line[0] == '#' {
			continue
		}
		if line[0] == '"' {
			u, err := unquoteC(line)
			if err != nil {
				return nil, fmt.Errorf("line %d: %w", i+1, err)
			}
			line = u
		}
		if strings.IndexByte(line, 0) >= 0 {
			return nil, fmt.Errorf("line %d contains a NUL byte", i+1)
		}
		if line == "" {
			continue
		}
		out = append(out, line)
	}
	return out, nil
}

// unquoteC undoes git's C-style quoting (quote.c unquote_c_style): a string in double quotes
// with \a \b \f \n \r \t \v \\ \" and three-digit octal escapes. Text after the closing quote
// is an error, as it is for git's alternates reader.
func unquoteC(s string) (string, error) {
	if len(s) < 2 || s[0] != '"' {
		return "", errors.New("not a quoted string")
	}
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch c {
		case '"':
			if i != len(s)-1 {
				return "", errors.New("text after the closing quote")
			}
			return b.String(), nil
		case '\\':
			i++
			if i >= len(s) {
				return "", errors.New("unterminated escape")
			}
			switch e := s[i]; e {
			case 'a':
				b.WriteByte('\a')
			case 'b':
				b.WriteByte('\b')
			case 'f':
				b.WriteByte('\f')
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case 't':
				b.WriteByte('\t')
			case 'v':
				b.WriteByte('\v')
			case '\\', '"':
				b.WriteByte(e)
			case '0', '1', '2', '3':
				if i+2 >= len(s) || !isOctal(s[i+1]) || !isOctal(s[i+2]) {
					return "", errors.New("bad octal escape")
				}
				b.WriteByte((e-'0')<<6 | (s[i+1]-'0')<<3 | (s[i+2] - '0'))
				i += 2
			default:
				return "", fmt.Errorf("unknown escape \\%c", e)
			}
		default:
			b.WriteByte(c)
		}
	}
	return "", errors.New("no closing quote")
}

func isOctal(c byte) bool { return c >= '0' && c <= '7' }

// configEntry is one line of `git config --list --null`.
type configEntry struct {
	Key   string // section[.subsection].name; section and name lower-cased by git
	Value string
	Bare  bool // "[core] bare" with no "=": a boolean true
}

// parseConfigList reads `git config --list --null` output: records end with NUL; a record is
// "key\nvalue", or "key" alone for a valueless boolean.
func parseConfigList(b []byte) []configEntry {
	var out []configEntry
	for _, rec := range strings.Split(string(b), "\x00") {
		if rec == "" {
			continue
		}
		k, v, hasValue := strings.Cut(rec, "\n")
		out = append(out, configEntry{Key: k, Value: v, Bare: !hasValue})
	}
	return out
}

// splitKey splits a config key into section, subsection and name. The subsection is what lies
// between the first and the last dot, and may itself contain dots.
func splitKey(k string) (section, sub, name string, ok bool) {
	i := strings.IndexByte(k, '.')
	j := strings.LastIndexByte(k, '.')
	if i <= 0 || j == len(k)-1 {
		return "", "", "", false
	}
	if i == j {
		return k[:i], "", k[j+1:], true
	}
	return k[:i], k[i+1 : j], k[j+1:], true
}

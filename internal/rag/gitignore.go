package rag

import (
	"path"
	"strings"
)

// ignoreRules is a .gitignore matcher for one directory's file (patterns relative to base).
// Supported: blank lines and # comments, ! negation, trailing / (directories only), a leading or
// inner / anchoring the pattern to base, *, ?, [...] and ** (any number of directories).
type ignoreRules struct {
	base  string // slash path of the directory holding the .gitignore ("" = walk root)
	rules []ignoreRule
}

type ignoreRule struct {
	pattern  string
	negate   bool
	dirOnly  bool
	anchored bool
}

func parseGitignore(base, content string) *ignoreRules {
	ir := &ignoreRules{base: base}
	for _, line := range strings.Split(content, "\n") {
		line = strings.TrimRight(line, "\r")
		if strings.HasSuffix(line, " ") && !strings.HasSuffix(line, "\\ ") {
			line = strings.TrimRight(line, " ")
		}
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		var r ignoreRule
		if strings.HasPrefix(line, "!") {
			r.negate = true
			line = line[1:]
		} else if strings.HasPrefix(line, "\\") {
			line = line[1:]
		}
		if strings.HasSuffix(line, "/") {
			r.dirOnly = true
			line = strings.TrimRight(line, "/")
		}
		if strings.Contains(line, "/") {
			r.anchored = true
			line = strings.TrimPrefix(line, "/")
		}
		if line == "" {
			continue
		}
		r.pattern = line
		ir.rules = append(ir.rules, r)
	}
	return ir
}

// match reports whether rel (slash path relative to the walk root) is ignored by these rules:
// decided (true) and ignored.
func (ir *ignoreRules) match(rel string, isDir bool) (decided, ignored bool) {
	p := rel
	if ir.base != "" {
		if !strings.HasPrefix(rel, ir.base+"/") {
			return false, false
		}
		p = rel[len(ir.base)+1:]
	}
	for i := len(ir.rules) - 1; i >= 0; i-- { // last matching rule wins
		r := ir.rules[i]
		if r.dirOnly && !isDir {
			continue
		}
		var ok bool
		if r.anchored {
			ok = globMatch(r.pattern, p)
		} else {
			ok = globMatch(r.pattern, path.Base(p))
		}
		if ok {
			return true, !r.negate
		}
	}
	return false, false
}

// globMatch matches a slash pattern with ** support against a slash path.
func globMatch(pattern, name string) bool {
	if !strings.Contains(pattern, "**") {
		ok, _ := path.Match(pattern, name)
		return ok
	}
	pp := strings.Split(pattern, "/")
	np := strings.Split(name, "/")
	return matchParts(pp, np)
}

func matchParts(pp, np []string) bool {
	for len(pp) > 0 {
		if pp[0] == "**" {
			if len(pp) == 1 {
				return true
			}
			for k := 0; k <= len(np); k++ {
				if matchParts(pp[1:], np[k:]) {
					return true
				}
			}
			return false
		}
		if len(np) == 0 {
			return false
		}
		if ok, _ := path.Match(pp[0], np[0]); !ok {
			return false
		}
		pp, np = pp[1:], np[1:]
	}
	return len(np) == 0
}

// ignoreStack is the set of .gitignore files in effect while walking.
type ignoreStack []*ignoreRules

func (s ignoreStack) ignored(rel string, isDir bool) bool {
	// deeper files take precedence over shallower ones
	for i := len(s) - 1; i >= 0; i-- {
		if decided, ign := s[i].match(rel, isDir); decided {
			return ign
		}
	}
	return false
}

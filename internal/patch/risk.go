package patch

import (
	"fmt"
	"path"
	"strings"
)

// Risk grades a patch: low, medium or high, with the reasons.
type Risk struct {
	Level   string   `json:"level"`
	Reasons []string `json:"reasons"`
}

// Thresholds for Assess.
const (
	mediumLines = 100 // changed lines (added + removed)
	highLines   = 500
	mediumFiles = 10
	mediumDel   = 50 // removed lines that outweigh the added ones
)

var lockFiles = map[string]bool{
	"go.sum": true, "package-lock.json": true, "npm-shrinkwrap.json": true, "yarn.lock": true,
	"pnpm-lock.yaml": true, "bun.lockb": true, "Cargo.lock": true, "poetry.lock": true, "Pipfile.lock": true,
	"Gemfile.lock": true, "composer.lock": true, "uv.lock": true, "flake.lock": true, "mix.lock": true,
	"pubspec.lock": true, "packages.lock.json": true,
}

var ciFiles = map[string]bool{
	".gitlab-ci.yml": true, ".travis.yml": true, "Jenkinsfile": true, "azure-pipelines.yml": true,
	"bitbucket-pipelines.yml": true, ".drone.yml": true, "cloudbuild.yaml": true, "appveyor.yml": true,
}

var ciDirs = []string{".github/workflows/", ".github/actions/", ".circleci/", ".buildkite/", ".ci/", ".gitlab/"}

// sensitive names: secrets and credentials.
func secretFile(base string) bool {
	b := strings.ToLower(base)
	switch {
	case b == ".env" || strings.HasPrefix(b, ".env."),
		b == ".npmrc" || b == ".pypirc" || b == ".netrc" || b == ".htpasswd",
		strings.HasPrefix(b, "id_rsa") || strings.HasPrefix(b, "id_ed25519") || strings.HasPrefix(b, "id_ecdsa"),
		strings.HasSuffix(b, ".pem") || strings.HasSuffix(b, ".key") || strings.HasSuffix(b, ".p12") || strings.HasSuffix(b, ".pfx"),
		strings.Contains(b, "credentials") || strings.Contains(b, "secret"):
		return true
	}
	return false
}

// Assess grades a parsed patch. High: touches .git/, secrets or CI configuration, deletes a
// file, or changes more than 500 lines. Medium: lock files, more than 100 changed lines, more
// than 10 files, many more lines removed than added, renames. Low otherwise.
func Assess(files []File) Risk {
	level := 0
	var reasons []string
	raise := func(l int, format string, a ...any) {
		level = max(level, l)
		reasons = append(reasons, fmt.Sprintf(format, a...))
	}
	added, removed := 0, 0
	for i := range files {
		f := &files[i]
		a, r := f.Counts()
		added += a
		removed += r
		for _, p := range []string{f.OldPath, f.NewPath} {
			if p == "" {
				continue
			}
			clean := path.Clean(p)
			base := path.Base(clean)
			switch {
			case clean == ".git" || strings.HasPrefix(clean, ".git/") || strings.Contains(clean, "/.git/"):
				raise(2, "%s is inside .git/ (repository internals, hooks run code)", p)
			case secretFile(base):
				raise(2, "%s looks like a secret or credentials file", p)
			case ciFiles[base] || hasAnyPrefix(clean, ciDirs):
				raise(2, "%s is CI configuration (runs with the pipeline's secrets)", p)
			case lockFiles[base]:
				raise(1, "%s is a dependency lock file (regenerate it with the package manager instead)", p)
			}
			if f.OldPath == f.NewPath {
				break // one path, counted once
			}
		}
		switch f.Action() {
		case "delete":
			raise(2, "deletes %s", f.OldPath)
		case "rename":
			raise(1, "renames %s to %s", f.OldPath, f.NewPath)
		}
	}
	switch n := added + removed; {
	case n > highLines:
		raise(2, "large change: %d lines added, %d removed", added, removed)
	case n > mediumLines:
		raise(1, "sizeable change: %d lines added, %d removed", added, removed)
	}
	if removed > mediumDel && removed > 2*added {
		raise(1, "mostly deletions: %d lines removed, %d added", removed, added)
	}
	if len(files) > mediumFiles {
		raise(1, "touches %d files", len(files))
	}
	if len(reasons) == 0 {
		reasons = []string{fmt.Sprintf("%d file(s), %d lines added, %d removed; no sensitive paths", len(files), added, removed)}
	}
	return Risk{Level: [...]string{"low", "medium", "high"}[level], Reasons: dedupe(reasons)}
}

func hasAnyPrefix(p string, prefixes []string) bool {
	for _, pre := range prefixes {
		if strings.HasPrefix(p, pre) || strings.Contains(p, "/"+pre) {
			return true
		}
	}
	return false
}

func dedupe(s []string) []string {
	seen := map[string]bool{}
	out := s[:0]
	for _, x := range s {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

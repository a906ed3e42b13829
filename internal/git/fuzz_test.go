package git

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The parsers read files an agent writes; whatever they accept must be a single clean path.
func FuzzParseGitFile(f *testing.F) {
	for _, s := range []string{"gitdir: ../.git/modules/sm\n", "gitdir: /abs/.git\r\n", "gitdir:", "gitdir: \n", "gitdir: a\x00b", "gitdir: a\nb\n", "x"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := parseGitFile(b)
		if err != nil {
			return
		}
		if p == "" || strings.ContainsAny(p, "\x00\n") || strings.HasSuffix(p, "\r") {
			t.Fatalf("parseGitFile(%q) = %q", b, p)
		}
		if again, err := parseGitFile([]byte("gitdir: " + p + "\n")); err != nil || again != p {
			t.Fatalf("round trip of %q: %q, %v", p, again, err)
		}
		if c, err := parseCommonDir([]byte(p + "\r\n")); err != nil || c != p {
			t.Fatalf("commondir %q: %q, %v", p, c, err)
		}
	})
}

func FuzzParseAlternates(f *testing.F) {
	for _, s := range []string{"/a/objects\n../b/objects\n", "# c\n\n\"/q\\\"uoted\\n\\101\"\n", "\"unterminated\n", "\"a\"tail\n", "\"\\7\"\n"} {
		f.Add([]byte(s), "/plain/path")
	}
	f.Fuzz(func(t *testing.T, b []byte, s string) {
		entries, err := parseAlternates(b)
		if err == nil {
			for _, e := range entries {
				if e == "" || strings.IndexByte(e, 0) >= 0 {
					t.Fatalf("parseAlternates(%q) gave %q", b, e)
				}
			}
		}
		// Any path git writes quoted (quote_c_style) reads back as itself.
		if s == "" || strings.IndexByte(s, 0) >= 0 {
			return
		}
		got, err := parseAlternates([]byte(quoteC(s) + "\n"))
		if err != nil || len(got) != 1 || got[0] != s {
			t.Fatalf("quoted %q read back as %q, %v", s, got, err)
		}
	})
}

// quoteC quotes like git's quote_c_style: named escapes for the usual control characters,
// octal for the other bytes below 0x20 and above 0x7e.
func quoteC(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\a':
			b.WriteString(`\a`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\v':
			b.WriteString(`\v`)
		case '\\', '"':
			b.WriteByte('\\')
			b.WriteByte(c)
		default:
			if c < 0x20 || c > 0x7e {
				fmt.Fprintf(&b, "\\%03o", c)
			} else {
				b.WriteByte(c)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}

// Whatever a config file lists, only allow-listed keys with well-formed names come out.
func FuzzAllowedConfig(f *testing.F) {
	for _, s := range []string{
		"user.name\nAda\x00filter.x.clean\nrm -rf /\x00core.fsmonitor\nx\x00",
		"branch.main.remote\norigin\x00branch.a\nb.merge\nrefs/heads/x\x00remote.o.fetch\n+refs/heads/*:refs/remotes/o/*\x00",
		"core.excludesfile\n/etc/shadow\x00core.filemode\x00include.path\nx\x00",
	} {
		f.Add([]byte(s), false)
	}
	f.Fuzz(func(t *testing.T, b []byte, global bool) {
		for _, kv := range allowedConfig(parseConfigList(b), global) {
			sec, sub, name, ok := splitKey(kv[0])
			rule, allowed := configAllow[sec+"."+name]
			if !ok || !allowed || rule.globalOnly && !global {
				t.Fatalf("key %q passed the allow-list", kv[0])
			}
			if strings.ContainsAny(kv[0], "\n\x00") || strings.ContainsAny(sub, " \t\"\\") {
				t.Fatalf("malformed key %q passed", kv[0])
			}
			if strings.IndexByte(kv[1], 0) >= 0 {
				t.Fatalf("value with NUL for %q", kv[0])
			}
		}
	})
}

// resolve never returns a path outside the root, and where it succeeds it agrees with the
// kernel's (here EvalSymlinks') reading of the same path.
func FuzzConfineResolve(f *testing.F) {
	root, err := filepath.EvalSymlinks(f.TempDir())
	if err != nil {
		f.Fatal(err)
	}
	outside, err := filepath.EvalSymlinks(f.TempDir())
	if err != nil {
		f.Fatal(err)
	}
	os.MkdirAll(filepath.Join(root, "a", "b"), 0o755)
	os.MkdirAll(filepath.Join(outside, "o"), 0o755)
	os.WriteFile(filepath.Join(root, "a", "file"), []byte("x"), 0o644)
	links := map[string]string{
		"in":          "a",
		"in/deep":     "b",
		"abs-in":      filepath.Join(root, "a"),
		"out":         outside,
		"rel-out":     "../..",
		"up":          "..",
		"loop":        "loop",
		"a/b/back":    "../../a",
		"a/b/outrel":  "../../../" + filepath.Base(outside),
		"a/dangling":  "nope",
		"a/to-file":   "file",
		"a/self-out":  "../out/o",
		"a/parentdot": "../a/../in",
	}
	for name, target := range links {
		os.Symlink(target, filepath.Join(root, name))
	}
	for _, s := range []string{"a", "in/b", "out/o", "rel-out", "a/b/back/b", "a/b/outrel", "in/../out", "a/to-file/x", "loop", "a/parentdot/b", "up/x", "in/deep/.."} {
		f.Add(s)
	}
	c := confine{dir: root}
	f.Fuzz(func(t *testing.T, rel string) {
		if strings.IndexByte(rel, 0) >= 0 || len(rel) > 512 {
			return
		}
		p := root + string(filepath.Separator) + rel
		got, err := c.resolve(p)
		if err != nil {
			return
		}
		if _, ok := c.below(got); !ok {
			t.Fatalf("resolve(%q) = %q, outside %s", rel, got, root)
		}
		want, err := filepath.EvalSymlinks(p)
		if err != nil {
			t.Fatalf("resolve(%q) = %q but EvalSymlinks fails: %v", rel, got, err)
		}
		if want != got {
			t.Fatalf("resolve(%q) = %q, EvalSymlinks = %q", rel, got, want)
		}
	})
}

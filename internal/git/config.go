package git

import (
	"fmt"
	"os"
	"regexp"
	"strings"
)

// Configuration: git never reads a configuration file an agent can write. The repository's
// config (and whatever it includes), config.worktree, the user's ~/.gitconfig and the system
// config are all switched off; git reads one config file the hub writes (see shadow in
// repo.go) plus GIT_CONFIG_COUNT pairs the hub sets. Keys are copied from the repository's
// and the user's config only when this allow-list names them: they change how git reads and
// writes the repository and who commits, never which program runs. Everything else — filter,
// diff and merge drivers, textconv, hooks, fsmonitor, pagers, editors, credential, ssh and
// gpg programs, aliases, transport settings, includes, and any key git adds in the future —
// is simply absent, so an attacker-chosen name (filter.<driver>.clean selected by
// .gitattributes) finds no definition.

// hubConfig is set last, so it wins over anything copied. Most entries restate git's
// defaults: they document the intent and keep holding if git's defaults change.
var hubConfig = [][2]string{
	{"core.pager", "cat"},
	{"core.fsmonitor", "false"},
	{"core.hooksPath", os.DevNull},       // no hook runs, wherever hooks live
	{"core.attributesFile", os.DevNull},  // the user's global attributes could select a driver
	{"core.untrackedCache", "false"},     // it rewrites the index on reads
	{"color.ui", "false"},                // output is parsed
	{"core.quotePath", "false"},          // paths as they are, not C-quoted
	{"log.showSignature", "false"},       // would run gpg
	{"commit.gpgSign", "false"},          // would run gpg
	{"tag.gpgSign", "false"},             // would run gpg
	{"gc.auto", "0"},                     // commit would start gc in the background
	{"maintenance.auto", "false"},        // commit would start git maintenance
	{"diff.ignoreSubmodules", "dirty"},   // a dirty check runs git inside the submodule, under its own config
	{"status.submoduleSummary", "false"}, // same
	{"submodule.recurse", "false"},       // checkout would run git inside submodules
	{"protocol.allow", "never"},          // no tool fetches; nothing may reach a transport
}

// configRule allows one config key (or a family with a subsection) to be copied.
type configRule struct {
	// sub is the subsection's syntax check for keys like branch.<name>.merge; nil means
	// the key has no subsection.
	sub   func(string) bool
	value func(string) bool // nil accepts any value
	// globalOnly keys are copied from the user's own config, never the repository's: they
	// name files on the host.
	globalOnly bool
}

var (
	boolValue    = regexp.MustCompile(`^(?i:true|false|yes|no|on|off|1|0|)$`).MatchString
	identValue   = func(v string) bool { return len(v) <= 1024 && !strings.ContainsAny(v, "\n\x00<>") }
	encodingName = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,64}$`).MatchString
	refspec      = func(v string) bool { return len(v) <= 1024 && !strings.ContainsAny(v, "\n\x00 ") }
	remoteName   = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._/-]{0,127}$`).MatchString
	branchName   = func(s string) bool { return CheckRefName("branch", s) == nil }
	oneOf        = func(vs ...string) func(string) bool {
		return func(v string) bool {
			for _, x := range vs {
				if strings.EqualFold(v, x) {
					return true
				}
			}
			return false
		}
	}
)

// configAllow lists the keys copied, by section.name (lower case, as git lists them).
var configAllow = map[string]configRule{
	// Who commits.
	"user.name":          {value: identValue},
	"user.email":         {value: identValue},
	"user.useconfigonly": {value: boolValue},
	"author.name":        {value: identValue},
	"author.email":       {value: identValue},
	"committer.name":     {value: identValue},
	"committer.email":    {value: identValue},
	// How the work tree maps to the index; without them status would report every file of a
	// repository created on another filesystem as changed.
	"core.filemode":               {value: boolValue},
	"core.symlinks":               {value: boolValue},
	"core.ignorecase":             {value: boolValue},
	"core.precomposeunicode":      {value: boolValue},
	"core.trustctime":             {value: boolValue},
	"core.checkstat":              {value: oneOf("default", "minimal")},
	"core.autocrlf":               {value: oneOf("true", "false", "input", "yes", "no", "on", "off", "1", "0")},
	"core.eol":                    {value: oneOf("lf", "crlf", "native")},
	"core.safecrlf":               {value: oneOf("true", "false", "warn", "yes", "no", "on", "off", "1", "0")},
	"core.checkroundtripencoding": {value: encodingList},
	"core.sparsecheckout":         {value: boolValue},
	"core.sparsecheckoutcone":     {value: boolValue},
	"core.logallrefupdates":       {value: oneOf("true", "false", "always", "yes", "no", "on", "off", "1", "0")},
	"core.commentchar":            {value: func(v string) bool { return len(v) == 1 && v != "\n" || v == "auto" }},
	"core.excludesfile":           {globalOnly: true, value: func(v string) bool { return !strings.ContainsAny(v, "\n\x00") }},
	"i18n.commitencoding":         {value: encodingName},
	"i18n.logoutputencoding":      {value: encodingName},
	// Upstream tracking, for ahead/behind and @{upstream}. URLs are not copied: no tool
	// talks to a remote.
	"branch.remote":      {sub: branchName, value: func(v string) bool { return v == "." || remoteName(v) }},
	"branch.merge":       {sub: branchName, value: refspec},
	"branch.pushremote":  {sub: branchName, value: remoteName},
	"remote.fetch":       {sub: remoteName, value: refspec},
	"remote.push":        {sub: remoteName, value: refspec},
	"remote.pushdefault": {value: remoteName},
	"push.default":       {value: oneOf("nothing", "current", "upstream", "tracking", "simple", "matching")},
}

func encodingList(v string) bool {
	for _, e := range strings.Split(v, ",") {
		if !encodingName(strings.TrimSpace(e)) {
			return false
		}
	}
	return true
}

// allowedConfig returns the entries of a config listing that the allow-list accepts, as
// key/value pairs for GIT_CONFIG_COUNT. global says whether the listing is the user's own
// config (~/.gitconfig) rather than the repository's.
func allowedConfig(entries []configEntry, global bool) [][2]string {
	var out [][2]string
	for _, e := range entries {
		sec, sub, name, ok := splitKey(e.Key)
		if !ok {
			continue
		}
		rule, ok := configAllow[sec+"."+name]
		if !ok || rule.globalOnly && !global || (rule.sub == nil) != (sub == "") || rule.sub != nil && !rule.sub(sub) {
			continue
		}
		v := e.Value
		if e.Bare {
			v = "true"
		}
		if rule.value != nil && !rule.value(v) {
			continue
		}
		out = append(out, [2]string{e.Key, v})
	}
	return out
}

// repoFormat is what the hub-written config file carries: git reads the repository format
// and its extensions from that file, not from GIT_CONFIG_COUNT.
type repoFormat struct {
	version      int
	objectFormat string // "" or sha1, sha256
	precious     bool
}

// checkFormat reads core.repositoryformatversion and extensions.* from the repository's
// config. Extensions the hub does not pass on are refused when git would honour them, so a
// repository is never read under a format it does not have.
func checkFormat(entries []configEntry, cfgName string) (repoFormat, error) {
	var f repoFormat
	ext := map[string]string{}
	for _, e := range entries {
		switch {
		case e.Key == "core.repositoryformatversion":
			switch strings.TrimSpace(e.Value) {
			case "0", "":
				f.version = 0
			case "1":
				f.version = 1
			default:
				return f, fmt.Errorf("%s sets core.repositoryformatversion = %q; git 2.39 reads versions 0 and 1 only", cfgName, e.Value)
			}
		case strings.HasPrefix(e.Key, "extensions."):
			v := e.Value
			if e.Bare {
				v = "true"
			}
			ext[strings.TrimPrefix(e.Key, "extensions.")] = v
		}
	}
	if f.version == 0 {
		return f, nil // git ignores extensions in a version 0 repository
	}
	for k, v := range ext {
		switch k {
		case "objectformat":
			if v != "sha1" && v != "sha256" {
				return f, fmt.Errorf("%s sets extensions.objectFormat = %q; only sha1 and sha256 exist", cfgName, v)
			}
			f.objectFormat = v
		case "preciousobjects":
			f.precious = oneOf("true", "yes", "on", "1")(v)
		case "worktreeconfig":
			// config.worktree is a config file the agent can write; it is not read.
		case "partialclone", "noop", "noop-v1":
			// partialclone names a remote to fetch missing objects from; without it git
			// reports a missing object instead of contacting a remote.
		default:
			return f, fmt.Errorf("%s sets extensions.%s, which the git_* tools do not support; use git in a terminal for this repository", cfgName, k)
		}
	}
	return f, nil
}

// file renders the hub's config file. Its values come from checkFormat's fixed sets,
// so nothing in it is copied text.
func (f repoFormat) file(bare bool) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "[core]\n\trepositoryformatversion = %d\n\tbare = %t\n", f.version, bare)
	if f.objectFormat != "" || f.precious {
		b.WriteString("[extensions]\n")
		if f.objectFormat != "" {
			fmt.Fprintf(&b, "\tobjectformat = %s\n", f.objectFormat)
		}
		if f.precious {
			b.WriteString("\tpreciousobjects = true\n")
		}
	}
	return []byte(b.String())
}

// configEnv renders pairs as GIT_CONFIG_COUNT/KEY/VALUE variables: raw values, never parsed
// as config syntax, so a value cannot smuggle in another key.
func configEnv(pairs [][2]string) []string {
	out := make([]string, 0, 2*len(pairs)+1)
	out = append(out, fmt.Sprintf("GIT_CONFIG_COUNT=%d", len(pairs)))
	for i, p := range pairs {
		out = append(out, fmt.Sprintf("GIT_CONFIG_KEY_%d=%s", i, p[0]), fmt.Sprintf("GIT_CONFIG_VALUE_%d=%s", i, p[1]))
	}
	return out
}

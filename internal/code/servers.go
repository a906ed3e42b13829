package code

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Language names a language the pool has a server for.
const (
	Go         = "go"
	TypeScript = "typescript"
	Python     = "python"
	C          = "c"
	Rust       = "rust"
)

// serverDef is how one language's server is found, started and set up.
type serverDef struct {
	lang string
	// candidates are the commands tried in order (the first found on the search path wins).
	candidates [][]string
	// exts maps file extensions to the document's LSP language id.
	exts map[string]string
	// install says how to install a missing server (never a `go run`).
	install string
	// settings answer workspace/configuration by section.
	settings map[string]any
	// initOptions are initialize's initializationOptions.
	initOptions any
	// versionArgs make the server print its version and exit (doctor checks it runs: a
	// rustup proxy without the component is on PATH but is no server); nil: not checked.
	versionArgs []string
	// openAll: the server knows only the files opened on it (clangd without a compilation
	// database listing the sources), so every source file of the workspace (up to
	// maxPrimeFiles) is opened when it starts, for references and renames across files.
	openAll bool
	// openForDiagnostics: the server checks only open files (tsserver), so workspace-wide
	// diagnostics open every source file first (up to maxPrimeFiles).
	openForDiagnostics bool
}

var defs = []serverDef{
	{
		lang:        Go,
		candidates:  [][]string{{"gopls"}},
		versionArgs: []string{"version"},
		exts:        map[string]string{".go": "go"},
		install:     "go install golang.org/x/tools/gopls@v0.23.0 (then put $(go env GOPATH)/bin on PATH), or set [code.servers] go = [\"/path/to/gopls\"]",
		// Diagnostics as soon as a change is type-checked (the default waits a second), so
		// "diagnostics after an edit" needs no long wait.
		settings: map[string]any{"gopls": map[string]any{"diagnosticsDelay": "50ms", "symbolScope": "workspace"}},
	},
	{
		lang:        TypeScript,
		candidates:  [][]string{{"typescript-language-server", "--stdio"}},
		versionArgs: []string{"--version"},
		exts: map[string]string{".ts": "typescript", ".tsx": "typescriptreact", ".mts": "typescript", ".cts": "typescript",
			".js": "javascript", ".jsx": "javascriptreact", ".mjs": "javascript", ".cjs": "javascript"},
		install: "npm install -g typescript-language-server@5.3.0 typescript@5.9.3, or set [code.servers] typescript = [\"/path/to/typescript-language-server\", \"--stdio\"]",
		// One tsserver: with the syntax server ("auto") requests made while the project
		// loads are answered syntactically (a definition stops at the import).
		initOptions:        map[string]any{"tsserver": map[string]any{"useSyntaxServer": "never"}},
		openForDiagnostics: true,
	},
	{
		lang:       Python,
		candidates: [][]string{{"pyright-langserver", "--stdio"}, {"basedpyright-langserver", "--stdio"}},
		exts:       map[string]string{".py": "python", ".pyi": "python"},
		install:    "npm install -g pyright@1.1.414 (or pipx install basedpyright), or set [code.servers] python = [\"/path/to/pyright-langserver\", \"--stdio\"]",
		settings: map[string]any{
			"python":          map[string]any{"analysis": map[string]any{"diagnosticMode": "workspace", "autoSearchPaths": true}},
			"python.analysis": map[string]any{"diagnosticMode": "workspace", "autoSearchPaths": true},
			"basedpyright":    map[string]any{"analysis": map[string]any{"diagnosticMode": "workspace"}},
		},
	},
	{
		lang:        C,
		candidates:  [][]string{{"clangd", "--background-index=false", "--log=error"}},
		versionArgs: []string{"--version"},
		exts: map[string]string{".c": "c", ".h": "c", ".cc": "cpp", ".cpp": "cpp", ".cxx": "cpp", ".hpp": "cpp",
			".hh": "cpp", ".hxx": "cpp"},
		install: "apt-get install clangd, or set [code.servers] c = [\"/path/to/clangd\"]",
		openAll: true,
	},
	{
		lang:        Rust,
		candidates:  [][]string{{"rust-analyzer"}},
		versionArgs: []string{"--version"},
		exts:        map[string]string{".rs": "rust"},
		install:     "rustup component add rust-analyzer, or set [code.servers] rust = [\"/path/to/rust-analyzer\"]",
	},
}

// Languages lists the languages the pool can serve, in a fixed order.
func Languages() []string {
	out := make([]string, len(defs))
	for i, d := range defs {
		out[i] = d.lang
	}
	return out
}

func defFor(lang string) (*serverDef, error) {
	for i := range defs {
		if defs[i].lang == lang {
			return &defs[i], nil
		}
	}
	return nil, fmt.Errorf("language: %q is not one the hub has a language server for; use one of %s", lang, strings.Join(Languages(), ", "))
}

// LanguageOf is the language of a file by its extension ("" when none has a server).
func LanguageOf(path string) string {
	ext := strings.ToLower(filepath.Ext(path))
	for _, d := range defs {
		if _, ok := d.exts[ext]; ok {
			return d.lang
		}
	}
	return ""
}

// languageID is the LSP language id of a file of lang.
func languageID(lang, path string) string {
	d, err := defFor(lang)
	if err != nil {
		return lang
	}
	if id, ok := d.exts[strings.ToLower(filepath.Ext(path))]; ok {
		return id
	}
	return lang
}

// ErrNoServer is wrapped by the error for a language whose server is not installed.
var ErrNoServer = errors.New("language server not installed")

// defaultSearchDirs are where servers installed by their own toolchains live when those are not
// on PATH (a desktop session's PATH often lacks them).
func defaultSearchDirs() []string {
	home, _ := os.UserHomeDir()
	var out []string
	if gobin := os.Getenv("GOBIN"); gobin != "" {
		out = append(out, gobin)
	}
	if gp := os.Getenv("GOPATH"); gp != "" {
		for _, p := range filepath.SplitList(gp) {
			out = append(out, filepath.Join(p, "bin"))
		}
	}
	if home != "" {
		out = append(out, filepath.Join(home, "go", "bin"), filepath.Join(home, ".cargo", "bin"), filepath.Join(home, ".local", "bin"))
	}
	return out
}

// Locate finds lang's server: the configured command (override, its program on PATH or by
// path), else the first candidate found on PATH or in dirs and the default install places. It
// returns the command line with its program as an absolute path.
func Locate(lang string, override []string, dirs []string) ([]string, error) {
	d, err := defFor(lang)
	if err != nil {
		return nil, err
	}
	cands := d.candidates
	if len(override) > 0 {
		cands = [][]string{override}
	}
	search := append(slices.Clone(dirs), defaultSearchDirs()...)
	var tried []string
	for _, c := range cands {
		if p, ok := lookPath(c[0], search); ok {
			return append([]string{p}, c[1:]...), nil
		}
		tried = append(tried, c[0])
	}
	where := "on PATH"
	if len(override) > 0 {
		where = "(configured in [code.servers] " + lang + ")"
	}
	return nil, fmt.Errorf("%s: %s not found %s: install it with %s: %w", lang, strings.Join(tried, " or "), where, d.install, ErrNoServer)
}

func lookPath(name string, dirs []string) (string, bool) {
	if strings.Contains(name, "/") {
		if fi, err := os.Stat(name); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			p, _ := filepath.Abs(name)
			return p, true
		}
		return "", false
	}
	if p, err := exec.LookPath(name); err == nil {
		p, _ = filepath.Abs(p)
		return p, true
	}
	for _, d := range dirs {
		p := filepath.Join(d, name)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p, true
		}
	}
	return "", false
}

// Check is doctor's finding for one language server.
type Check struct {
	Language string `json:"language"`
	// Command is the command line found ("" when missing).
	Command string `json:"command,omitempty"`
	OK      bool   `json:"ok"`
	// Detail says what was found or why not; Fix how to install it.
	Detail string `json:"detail"`
	Fix    string `json:"fix,omitempty"`
}

// CheckServers reports, for every language, whether its server is found (commands are the
// [code.servers] overrides).
func CheckServers(commands map[string][]string) []Check {
	langs := Languages()
	out := make([]Check, 0, len(langs))
	for _, l := range langs {
		d, _ := defFor(l)
		argv, err := Locate(l, commands[l], nil)
		if err != nil {
			out = append(out, Check{Language: l, Detail: err.Error(), Fix: d.install})
			continue
		}
		cmdline := strings.Join(argv, " ")
		detail := cmdline
		if len(d.versionArgs) > 0 {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			b, err := exec.CommandContext(ctx, argv[0], d.versionArgs...).CombinedOutput()
			cancel()
			first, _, _ := strings.Cut(strings.TrimSpace(string(b)), "\n")
			if err != nil {
				out = append(out, Check{Language: l, Command: cmdline, Detail: fmt.Sprintf("%s does not run (%v: %s)", argv[0], err, first), Fix: d.install})
				continue
			}
			if first != "" {
				detail += ": " + first
			}
		}
		out = append(out, Check{Language: l, OK: true, Command: cmdline, Detail: detail})
	}
	return out
}

// DefaultCommand is lang's server command line as the pool looks for it when none is configured.
func DefaultCommand(lang string) string {
	d, err := defFor(lang)
	if err != nil {
		return ""
	}
	return strings.Join(d.candidates[0], " ")
}

// InstallHint says how to install lang's server.
func InstallHint(lang string) string {
	d, err := defFor(lang)
	if err != nil {
		return ""
	}
	return d.install
}

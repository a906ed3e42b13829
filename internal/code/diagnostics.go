package code

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/switchboard-hub/switchboard/internal/lsp"
)

// DefaultDiagnosticsWait is how long DiagnosticsAfter waits for a server's new diagnostics.
const DefaultDiagnosticsWait = 2 * time.Second

var severityNames = [...]string{"", "error", "warning", "information", "hint"}

func severity(s int) string {
	if s > 0 && s < len(severityNames) {
		return severityNames[s]
	}
	return "error" // the protocol leaves it to the client; unset counts as the worst
}

func (c *call) diagnostic(abs string, d lsp.Diagnostic) Diagnostic {
	line, col, _ := c.point(abs, d.Range.Start)
	return Diagnostic{Path: c.display(abs), Line: line, Column: col, Severity: severity(d.Severity),
		Message: d.Message, Source: d.Source}
}

func sortDiagnostics(ds []Diagnostic) {
	slices.SortStableFunc(ds, func(a, b Diagnostic) int {
		if a.Path != b.Path {
			return strings.Compare(a.Path, b.Path)
		}
		if a.Line != b.Line {
			return a.Line - b.Line
		}
		return a.Column - b.Column
	})
}

// Diagnostics are the problems the servers report: for one file (path: it is opened and its
// fresh diagnostics waited for, up to DefaultDiagnosticsWait), or, with path "", for the whole
// workspace (what the servers of its languages report once they are done loading; gopls and
// pyright check every file; for typescript-language-server and clangd, which check open files
// only, the workspace's files are opened, up to 300). language narrows the workspace-wide form to one server.
func (p *Pool) Diagnostics(ctx context.Context, root, path, language string) (DiagnosticsResult, error) {
	c, err := p.newCall(root)
	if err != nil {
		return DiagnosticsResult{}, err
	}
	defer c.close()
	out := DiagnosticsResult{Diagnostics: []Diagnostic{}}
	if path != "" {
		err := p.withDocument(ctx, c, path, language, func(s *server, abs, uri string) error {
			_, mark, version, _ := s.client.Baseline(uri)
			if _, published := s.client.Diagnostics(uri); !published || s.client.Busy() {
				wctx, cancel := context.WithTimeout(ctx, DefaultDiagnosticsWait)
				s.client.WaitDiagnostics(wctx, uri, mark, version)
				cancel()
			}
			ds, _ := s.client.Diagnostics(uri)
			out.Diagnostics = out.Diagnostics[:0]
			for _, d := range ds {
				out.Diagnostics = append(out.Diagnostics, c.diagnostic(abs, d))
			}
			return nil
		})
		sortDiagnostics(out.Diagnostics)
		return out, err
	}
	langs, err := c.searchLanguages(language)
	if err != nil {
		return out, err
	}
	for _, lang := range langs {
		err := p.retry(func() error {
			s, err := p.get(ctx, c.root, lang)
			if err != nil {
				return err
			}
			defer s.release()
			if d, _ := defFor(lang); d.openForDiagnostics {
				s.openAll()
			}
			wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			s.client.WaitQuiet(wctx, 300*time.Millisecond)
			cancel()
			for uri, ds := range s.client.AllDiagnostics() {
				abs := lsp.Path(uri)
				if rel, err := filepath.Rel(c.root, abs); err != nil || !filepath.IsLocal(rel) {
					continue
				}
				for _, d := range ds {
					out.Diagnostics = append(out.Diagnostics, c.diagnostic(abs, d))
				}
			}
			return nil
		})
		if err != nil && !(language == "" && errors.Is(err, ErrNoServer)) {
			return out, err
		}
	}
	sortDiagnostics(out.Diagnostics)
	return out, nil
}

// DiagnosticsAfter tells the servers that paths (relative to root) just changed, waits up to
// wait (0: DefaultDiagnosticsWait) for their new diagnostics, and returns the ones the change
// introduced: in the changed files and in any other file the server re-checked meanwhile,
// those not reported before the change (compared by severity, message and source, so a
// problem that only moved is not new). Files in languages without a server are skipped;
// Pending names the files whose server had not answered in time.
func (p *Pool) DiagnosticsAfter(ctx context.Context, root string, paths []string, wait time.Duration) (DiagnosticsResult, error) {
	if wait <= 0 {
		wait = DefaultDiagnosticsWait
	}
	c, err := p.newCall(root)
	if err != nil {
		return DiagnosticsResult{}, err
	}
	defer c.close()
	out := DiagnosticsResult{Diagnostics: []Diagnostic{}}
	byLang := map[string][]string{}
	for _, path := range paths {
		abs, rel, err := inRoot(c.root, path)
		if err != nil {
			return out, err
		}
		if lang := LanguageOf(rel); lang != "" {
			byLang[lang] = append(byLang[lang], abs)
		}
	}
	deadline := time.Now().Add(wait)
	for lang, files := range byLang {
		if _, err := Locate(lang, p.command(lang), p.opts.SearchDirs); err != nil {
			continue
		}
		s, err := p.get(ctx, c.root, lang)
		if err != nil {
			return out, err
		}
		before := s.client.AllDiagnostics()
		start := s.client.Mark()
		type changed struct {
			abs, uri string
			mark     lsp.DiagMark
			version  int
			baseline []lsp.Diagnostic
		}
		var ch []changed
		for _, abs := range files {
			uri := lsp.URI(abs)
			if _, err := os.Stat(abs); err != nil {
				_ = s.client.CloseDocument(ctx, uri)
				continue
			}
			if _, err := c.open(ctx, s, abs); err != nil {
				s.release()
				return out, err
			}
			base, mark, version, _ := s.client.Baseline(uri)
			ch = append(ch, changed{abs, uri, mark, version, base})
			_ = s.client.FilesChanged(ctx, []lsp.FileEvent{{URI: uri, Type: lsp.FileChanged}})
		}
		wctx, cancel := context.WithDeadline(ctx, deadline)
		for _, f := range ch {
			if !s.client.WaitDiagnostics(wctx, f.uri, f.mark, f.version) {
				out.Pending = append(out.Pending, c.display(f.abs))
			}
		}
		// Other files the change affects are re-checked a moment later.
		settle, cancel2 := context.WithTimeout(wctx, 300*time.Millisecond)
		s.client.WaitQuiet(settle, 150*time.Millisecond)
		cancel2()
		cancel()
		baseline := map[string][]lsp.Diagnostic{}
		for uri, ds := range before {
			baseline[uri] = ds
		}
		for _, f := range ch {
			baseline[f.uri] = f.baseline
		}
		uris := s.client.PublishedSince(start)
		for _, f := range ch {
			if !slices.Contains(uris, f.uri) {
				uris = append(uris, f.uri)
			}
		}
		for _, uri := range uris {
			abs := lsp.Path(uri)
			if rel, err := filepath.Rel(c.root, abs); err != nil || !filepath.IsLocal(rel) {
				continue
			}
			now, _ := s.client.Diagnostics(uri)
			for _, d := range introduced(baseline[uri], now) {
				out.Diagnostics = append(out.Diagnostics, c.diagnostic(abs, d))
			}
		}
		s.release()
	}
	sortDiagnostics(out.Diagnostics)
	slices.Sort(out.Pending)
	return out, nil
}

// introduced are the diagnostics of after that before does not have (as a multiset keyed by
// severity, message and source).
func introduced(before, after []lsp.Diagnostic) []lsp.Diagnostic {
	count := map[string]int{}
	k := func(d lsp.Diagnostic) string { return fmt.Sprintf("%d\x00%s\x00%s", d.Severity, d.Message, d.Source) }
	for _, d := range before {
		count[k(d)]++
	}
	var out []lsp.Diagnostic
	for _, d := range after {
		if count[k(d)] > 0 {
			count[k(d)]--
			continue
		}
		out = append(out, d)
	}
	return out
}

// WorkspaceDiagnostics are what one running server last reported for its workspace's files.
type WorkspaceDiagnostics struct {
	Workspace   string       `json:"workspace"`
	Language    string       `json:"language"`
	Diagnostics []Diagnostic `json:"diagnostics"`
}

// Published lists, per running server, the diagnostics it last published for files inside
// its workspace (the dashboard's live view). It starts no server, opens no file and waits for
// nothing.
func (p *Pool) Published() []WorkspaceDiagnostics {
	p.mu.Lock()
	var live []*server
	for _, s := range p.servers {
		live = append(live, s)
	}
	p.mu.Unlock()
	var out []WorkspaceDiagnostics
	for _, s := range live {
		select {
		case <-s.ready:
		default:
			continue
		}
		if s.startErr != nil || s.dead() {
			continue
		}
		c := &call{p: p, root: s.key.root, texts: map[string]string{}, lines: map[string][]string{}}
		wd := WorkspaceDiagnostics{Workspace: s.key.root, Language: s.key.lang, Diagnostics: []Diagnostic{}}
		for uri, ds := range s.client.AllDiagnostics() {
			abs := lsp.Path(uri)
			if rel, err := filepath.Rel(c.root, abs); err != nil || !filepath.IsLocal(rel) {
				continue
			}
			for _, d := range ds {
				wd.Diagnostics = append(wd.Diagnostics, c.diagnostic(abs, d))
			}
		}
		sortDiagnostics(wd.Diagnostics)
		out = append(out, wd)
	}
	slices.SortFunc(out, func(a, b WorkspaceDiagnostics) int {
		return strings.Compare(a.Workspace+"\x00"+a.Language, b.Workspace+"\x00"+b.Language)
	})
	return out
}

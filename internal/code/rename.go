package code

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pmezard/go-difflib/difflib"

	"github.com/switchboard-hub/switchboard/internal/lsp"
	"github.com/switchboard-hub/switchboard/internal/patch"
)

// RenameOptions are a rename's switches.
type RenameOptions struct {
	// DryRun only checks that the edit applies and reports it.
	DryRun bool
	// Check, when set, is asked about every file the rename would change (its slash path
	// relative to the workspace) before anything is written, dry run or not: the tool adapter
	// holds each file to what file_patch holds it to (the hub's own files, the policy's path
	// rules). An error refuses the whole rename.
	Check func(rel string) error
}

// Rename renames the symbol at t to newName everywhere the server knows it is used. The
// server's edit becomes one unified diff that goes through internal/patch, the path file_patch
// takes: with DryRun it is only checked; otherwise every file changes or none does. The
// servers are told of the changed files.
func (p *Pool) Rename(ctx context.Context, root string, t Target, newName string, o RenameOptions) (RenameResult, error) {
	out := RenameResult{Files: []string{}}
	if strings.TrimSpace(newName) == "" {
		return out, errors.New("newName: empty")
	}
	var changed []string
	err := p.withTarget(ctx, root, t, func(c *call, r resolved) error {
		we, err := r.s.client.Rename(ctx, r.uri, r.pos, newName)
		if err != nil {
			return err
		}
		docs, ops, err := we.Flatten()
		if err != nil {
			return fmt.Errorf("rename: the server's edit: %w", err)
		}
		if len(ops) > 0 {
			var names []string
			for _, op := range ops {
				names = append(names, op.Kind+" "+c.display(lsp.Path(op.URI+op.OldURI)))
			}
			return fmt.Errorf("rename: the server's edit also creates, renames or deletes files (%s), which code rename does not do; rename the files with file_rename", strings.Join(names, ", "))
		}
		if len(docs) == 0 {
			return errors.New("rename: the server changes nothing there")
		}
		// One document may come in several parts; merge them per file.
		per := map[string][]lsp.TextEdit{}
		for _, d := range docs {
			per[d.URI] = append(per[d.URI], d.Edits...)
		}
		var diff strings.Builder
		var rels []string
		for uri := range per {
			rels = append(rels, uri)
		}
		slices.Sort(rels)
		for _, uri := range rels {
			abs := lsp.Path(uri)
			rel, err := filepath.Rel(c.root, abs)
			if abs == "" || err != nil || !filepath.IsLocal(rel) {
				return fmt.Errorf("rename: it would change %s, outside the workspace; nothing was changed", abs)
			}
			if o.Check != nil {
				if err := o.Check(filepath.ToSlash(rel)); err != nil {
					return fmt.Errorf("rename: %s: %w; nothing was changed", filepath.ToSlash(rel), err)
				}
			}
			old, err := c.read(abs)
			if err != nil {
				return err
			}
			nu, err := applyEdits(old, per[uri])
			if err != nil {
				return fmt.Errorf("rename: %s: %w", filepath.ToSlash(rel), err)
			}
			if nu == old {
				continue
			}
			diff.WriteString(unifiedDiff(filepath.ToSlash(rel), old, nu))
			out.Files = append(out.Files, filepath.ToSlash(rel))
			changed = append(changed, abs)
		}
		out.Diff = diff.String()
		if len(out.Files) == 0 {
			return nil
		}
		files, err := patch.Parse(out.Diff)
		if err != nil {
			return fmt.Errorf("rename: the diff does not parse (a bug): %w", err)
		}
		wr, err := os.OpenRoot(c.root)
		if err != nil {
			return err
		}
		defer wr.Close()
		res, err := patch.Apply(wr, files, o.DryRun)
		if err != nil {
			return err
		}
		out.Applied = res.Applied
		return nil
	})
	if err != nil {
		return RenameResult{Files: []string{}}, err
	}
	if out.Applied {
		if r, err := workspaceRoot(root); err == nil {
			p.Changed(r, changed...)
		}
	}
	return out, nil
}

// applyEdits applies LSP text edits (UTF-16 positions) to text. Edits must not overlap.
func applyEdits(text string, edits []lsp.TextEdit) (string, error) {
	type span struct {
		from, to int
		s        string
	}
	spans := make([]span, 0, len(edits))
	for _, e := range edits {
		from, err := lsp.Offset(text, e.Range.Start, "utf-16")
		if err != nil {
			return "", err
		}
		to, err := lsp.Offset(text, e.Range.End, "utf-16")
		if err != nil {
			return "", err
		}
		if to < from {
			return "", fmt.Errorf("an edit ends before it starts (%v)", e.Range)
		}
		spans = append(spans, span{from, to, e.NewText})
	}
	slices.SortStableFunc(spans, func(a, b span) int { return a.from - b.from })
	var b strings.Builder
	at := 0
	for _, sp := range spans {
		if sp.from < at {
			return "", errors.New("the server's edits overlap")
		}
		b.WriteString(text[at:sp.from])
		b.WriteString(sp.s)
		at = sp.to
	}
	b.WriteString(text[at:])
	return b.String(), nil
}

// unifiedDiff is the git-style unified diff of one file, three lines of context, with
// "\ No newline at end of file" where a side ends without one.
func unifiedDiff(path, old, nu string) string {
	a, aNL := splitLines(old)
	b, bNL := splitLines(nu)
	m := difflib.NewMatcher(a, b)
	var out strings.Builder
	fmt.Fprintf(&out, "diff --git a/%s b/%s\n--- a/%s\n+++ b/%s\n", path, path, path, path)
	line := func(prefix byte, s string, last, hasNL bool) {
		out.WriteByte(prefix)
		out.WriteString(s)
		out.WriteByte('\n')
		if last && !hasNL {
			out.WriteString("\\ No newline at end of file\n")
		}
	}
	for _, g := range m.GetGroupedOpCodes(3) {
		first, last := g[0], g[len(g)-1]
		fmt.Fprintf(&out, "@@ -%s +%s @@\n", hunkRange(first.I1, last.I2), hunkRange(first.J1, last.J2))
		for _, op := range g {
			switch op.Tag {
			case 'e':
				for i := op.I1; i < op.I2; i++ {
					// A context line that ends one side without a newline but not the other
					// cannot be context; difflib sees equal text, so both sides are written.
					if i == len(a)-1 && aNL != bNL {
						line('-', a[i], true, aNL)
						line('+', b[op.J1+i-op.I1], op.J1+i-op.I1 == len(b)-1, bNL)
						continue
					}
					line(' ', a[i], i == len(a)-1, aNL)
				}
			case 'r', 'd', 'i':
				for i := op.I1; i < op.I2; i++ {
					line('-', a[i], i == len(a)-1, aNL)
				}
				for j := op.J1; j < op.J2; j++ {
					line('+', b[j], j == len(b)-1, bNL)
				}
			}
		}
	}
	return out.String()
}

func splitLines(s string) ([]string, bool) {
	if s == "" {
		return nil, true
	}
	nl := strings.HasSuffix(s, "\n")
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n"), nl
}

func hunkRange(from, to int) string {
	n := to - from
	start := from + 1
	if n == 0 {
		start = from
	}
	if n == 1 {
		return fmt.Sprint(start)
	}
	return fmt.Sprintf("%d,%d", start, n)
}

package patch

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"

	"github.com/switchboard-hub/switchboard/internal/workspace"
)

// MaxFileBytes is the largest file a patch may change.
const MaxFileBytes = 16 << 20

// FileResult is what a patch does to one file.
type FileResult struct {
	Path    string `json:"path"`
	OldPath string `json:"old_path,omitempty"`
	Action  string `json:"action"` // create, modify, delete, rename
	Hunks   int    `json:"hunks"`
	Added   int    `json:"added"`
	Removed int    `json:"removed"`
	// Offset lists, per hunk, how many lines away from its header's position it applied
	// (0 = exactly there).
	Offsets []int `json:"offsets,omitempty"`
}

// Result is the outcome of Apply.
type Result struct {
	Files   []FileResult
	Risk    Risk
	Applied bool
}

// ApplyError is a patch that does not apply; nothing was changed.
type ApplyError struct {
	File string
	Hunk int // 1-based; 0 when about the file as a whole
	Msg  string
}

// Error names the file and hunk that failed and says that no file was changed.
func (e *ApplyError) Error() string {
	if e.Hunk > 0 {
		return fmt.Sprintf("patch: hunk %d of %s %s; no file was changed", e.Hunk, e.File, e.Msg)
	}
	return fmt.Sprintf("patch: %s: %s; no file was changed", e.File, e.Msg)
}

// plan is the computed new state of one file.
type plan struct {
	f       *File
	res     FileResult
	content []byte      // new content (nil for a deletion)
	mode    fs.FileMode // permissions to give the new file
	remove  string      // path to remove (deletion, rename source)
	write   string      // path to write ("" for a deletion)
}

// Apply applies files (from Parse) under root. With dryRun it only checks that every hunk
// applies and reports what would change. Without, it changes all files or none.
func Apply(root *os.Root, files []File, dryRun bool) (Result, error) {
	seen := map[string]bool{}
	var plans []*plan
	for i := range files {
		f := &files[i]
		mine := map[string]bool{}
		for _, p := range []string{f.OldPath, f.NewPath} {
			if p != "" {
				mine[path.Clean(p)] = true
			}
		}
		for p := range mine {
			if seen[p] {
				return Result{}, &ApplyError{File: p, Msg: "appears in more than one file diff; merge them into one"}
			}
			seen[p] = true
		}
		pl, err := prepare(root, f)
		if err != nil {
			return Result{}, err
		}
		plans = append(plans, pl)
	}
	res := Result{}
	for _, pl := range plans {
		res.Files = append(res.Files, pl.res)
	}
	res.Risk = Assess(files)
	if dryRun {
		return res, nil
	}
	if err := commit(root, plans); err != nil {
		return res, err
	}
	res.Applied = true
	return res, nil
}

func readRegular(root *os.Root, p string) ([]byte, fs.FileMode, error) {
	st, err := root.Lstat(p)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, 0, &ApplyError{File: p, Msg: "does not exist in the workspace"}
		}
		return nil, 0, &ApplyError{File: p, Msg: err.Error()}
	}
	if st.Mode()&fs.ModeSymlink != 0 {
		return nil, 0, &ApplyError{File: p, Msg: "is a symlink; patch the file it points to"}
	}
	if !st.Mode().IsRegular() {
		return nil, 0, &ApplyError{File: p, Msg: "is a " + workspace.KindOf(st.Mode()) + ", not a regular file; patches change regular files only"}
	}
	// The Lstat above only gives the early, precise answers; what is read is decided on the
	// opened handle (non-blocking open, fstat), since the file may be swapped for a FIFO between
	// the two and a plain open of a FIFO never returns.
	f, fst, err := workspace.OpenInRoot(root, p)
	if err != nil {
		var nr *workspace.NotRegularError
		if errors.As(err, &nr) {
			return nil, 0, &ApplyError{File: p, Msg: "is a " + workspace.KindOf(nr.Mode) + ", not a regular file; patches change regular files only"}
		}
		return nil, 0, &ApplyError{File: p, Msg: err.Error()}
	}
	defer f.Close()
	if !fst.Mode().IsRegular() {
		return nil, 0, &ApplyError{File: p, Msg: "is a " + workspace.KindOf(fst.Mode()) + ", not a regular file; patches change regular files only"}
	}
	if fst.Size() > MaxFileBytes {
		return nil, 0, &ApplyError{File: p, Msg: fmt.Sprintf("is %d bytes, over the %d byte limit", fst.Size(), MaxFileBytes)}
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, 0, &ApplyError{File: p, Msg: err.Error()}
	}
	if len(b) > MaxFileBytes {
		return nil, 0, &ApplyError{File: p, Msg: fmt.Sprintf("grew over the %d byte limit while being read", MaxFileBytes)}
	}
	return b, fst.Mode().Perm(), nil
}

func mustNotExist(root *os.Root, p string) error {
	if _, err := root.Lstat(p); err == nil {
		return &ApplyError{File: p, Msg: "already exists; a patch that creates a file needs it absent (use --- a/" + p + " to modify it)"}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return &ApplyError{File: p, Msg: err.Error()}
	}
	return nil
}

func prepare(root *os.Root, f *File) (*plan, error) {
	pl := &plan{f: f, mode: 0o644}
	added, removed := f.Counts()
	pl.res = FileResult{Path: f.Path(), Action: f.Action(), Hunks: len(f.Hunks), Added: added, Removed: removed}
	switch f.Action() {
	case "create":
		if err := mustNotExist(root, f.NewPath); err != nil {
			return nil, err
		}
		var lines []string
		finalNL := true
		for _, h := range f.Hunks {
			for _, l := range h.Lines {
				if l.Kind == Delete || l.Kind == Context {
					return nil, &ApplyError{File: f.NewPath, Hunk: 1, Msg: "creates a file but has context or removed lines; a new file's hunk has only + lines"}
				}
				lines = append(lines, l.Text)
			}
			if h.NoNewlineNew {
				finalNL = false
			}
		}
		pl.content = join(lines, finalNL && len(lines) > 0)
		pl.write = f.NewPath
	case "delete":
		old, _, err := readRegular(root, f.OldPath)
		if err != nil {
			return nil, err
		}
		if len(f.Hunks) > 0 {
			lines, _ := split(old)
			var want []string
			for _, h := range f.Hunks {
				for _, l := range h.Lines {
					want = append(want, l.Text)
				}
			}
			if !equalLines(lines, want) {
				return nil, &ApplyError{File: f.OldPath, Hunk: 1, Msg: "deletes the file but its removed lines differ from the file's content; read the file again and regenerate the patch"}
			}
		}
		pl.remove = f.OldPath
	default: // modify, rename
		old, mode, err := readRegular(root, f.OldPath)
		if err != nil {
			return nil, err
		}
		if bytesHasNUL(old) {
			return nil, &ApplyError{File: f.OldPath, Msg: "is a binary file; write it with file_write instead"}
		}
		if f.Action() == "rename" {
			if err := mustNotExist(root, f.NewPath); err != nil {
				return nil, err
			}
			pl.remove = f.OldPath
			pl.res.OldPath = f.OldPath
		}
		out, offsets, err := applyHunks(old, f)
		if err != nil {
			return nil, err
		}
		pl.content, pl.mode, pl.write = out, mode, f.NewPath
		pl.res.Offsets = offsets
		if allZero(offsets) {
			pl.res.Offsets = nil
		}
	}
	return pl, nil
}

func allZero(v []int) bool {
	for _, x := range v {
		if x != 0 {
			return false
		}
	}
	return true
}

func bytesHasNUL(b []byte) bool {
	for _, c := range b {
		if c == 0 {
			return true
		}
	}
	return false
}

// split cuts content into lines without "\n" (a "\r" stays) and says whether it ended in "\n".
func split(b []byte) ([]string, bool) {
	if len(b) == 0 {
		return nil, false
	}
	s := string(b)
	nl := strings.HasSuffix(s, "\n")
	s = strings.TrimSuffix(s, "\n")
	return strings.Split(s, "\n"), nl
}

func join(lines []string, finalNL bool) []byte {
	var b strings.Builder
	for i, l := range lines {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(l)
	}
	if finalNL {
		b.WriteByte('\n')
	}
	return []byte(b.String())
}

func same(fileLine, patchLine string) bool {
	return strings.TrimSuffix(fileLine, "\r") == strings.TrimSuffix(patchLine, "\r")
}

func equalLines(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !same(a[i], b[i]) {
			return false
		}
	}
	return true
}

func matchAt(lines, old []string, pos int) bool {
	if pos < 0 || pos+len(old) > len(lines) {
		return false
	}
	for i, o := range old {
		if !same(lines[pos+i], o) {
			return false
		}
	}
	return true
}

// applyHunks applies f's hunks in order. Each hunk is placed where its context and removed
// lines match, searching outward from the position its header names (line numbers may be
// off when the file changed above it), never before the previous hunk's end.
func applyHunks(old []byte, f *File) ([]byte, []int, error) {
	lines, finalNL := split(old)
	crlf := len(lines) > 0 && strings.HasSuffix(lines[0], "\r")
	var out []string
	cur, delta := 0, 0
	offsets := make([]int, 0, len(f.Hunks))
	for hi, h := range f.Hunks {
		var oldL, newL []string
		for _, l := range h.Lines {
			if l.Kind != Add {
				oldL = append(oldL, l.Text)
			}
			if l.Kind != Delete {
				t := l.Text
				if crlf && !strings.HasSuffix(t, "\r") {
					t += "\r"
				}
				newL = append(newL, t)
			}
		}
		expected := h.OldStart - 1
		if h.OldLines == 0 {
			expected = h.OldStart // insert after line OldStart
		}
		// Start the search where the header says (shifted like the hunks before), clamped to
		// the file: a wild line number must not turn into a long search.
		want := min(max(expected+delta, cur), len(lines))
		pos := -1
		if len(oldL) == 0 {
			pos = min(max(want, cur), len(lines))
		} else {
			for d := 0; pos < 0; d++ {
				lo, hi := want-d, want+d
				if lo < cur && hi > len(lines)-len(oldL) {
					break
				}
				if lo >= cur && matchAt(lines, oldL, lo) {
					pos = lo
				} else if d > 0 && hi >= cur && matchAt(lines, oldL, hi) {
					pos = hi
				}
			}
		}
		if pos < 0 {
			first := ""
			if len(oldL) > 0 {
				first = fmt.Sprintf(" (first expected line: %q)", short(oldL[0]))
			}
			return nil, nil, &ApplyError{File: f.OldPath, Hunk: hi + 1, Msg: fmt.Sprintf("(%s) does not apply: its %d context and removed lines were not found in the file near line %d%s; read the file again and regenerate the patch", h.Header, len(oldL), h.OldStart, first)}
		}
		offsets = append(offsets, pos-expected)
		delta = pos - expected
		out = append(out, lines[cur:pos]...)
		out = append(out, newL...)
		cur = pos + len(oldL)
		if cur == len(lines) {
			if h.NoNewlineNew {
				finalNL = false
			} else if h.NoNewlineOld || (len(lines) == 0 && len(newL) > 0) {
				finalNL = true
			}
		}
	}
	out = append(out, lines[cur:]...)
	return join(out, finalNL && len(out) > 0), offsets, nil
}

// renameFn is os.Root.Rename; tests replace it to make the commit fail half-way.
var renameFn = func(root *os.Root, from, to string) error { return root.Rename(from, to) }

// backupName names the backup of a file the commit replaces or removes: a hard link to
// the original, or the original itself moved aside when linking fails, so it is not a
// workspace temp file (workspace.TempName) that a sweep may delete. Staged new contents are.
func backupName(p string) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	dir, base := path.Split(p)
	return dir + "." + base + ".switchboard-old-" + hex.EncodeToString(b[:])
}

// commit stages every new content in a temp file beside its target, moves every file to be
// replaced or removed aside (a hard link, else a rename), then renames the staged files into
// place. Any failure undoes every step done so far, in reverse.
func commit(root *os.Root, plans []*plan) (err error) {
	var undo []func()
	var temps, baks []string
	defer func() {
		for _, t := range temps {
			_ = root.Remove(t) // staged files not renamed into place
		}
		if err != nil {
			for i := len(undo) - 1; i >= 0; i-- {
				undo[i]()
			}
		}
		for _, b := range baks {
			_ = root.Remove(b)
		}
	}()
	// 1. Stage.
	staged := make([]string, len(plans))
	for i, pl := range plans {
		if pl.write == "" {
			continue
		}
		if dir := path.Dir(pl.write); dir != "." {
			created, err := mkdirAll(root, dir)
			if err != nil {
				return &ApplyError{File: pl.write, Msg: "cannot create its directory: " + err.Error()}
			}
			for _, d := range created {
				undo = append(undo, func() { _ = root.Remove(d) })
			}
		}
		// Named as file_write's temp files: hidden from listings and swept after a kill.
		dir, base := path.Split(pl.write)
		tmp := dir + workspace.TempName(base)
		fh, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, pl.mode)
		if err != nil {
			return &ApplyError{File: pl.write, Msg: "cannot stage: " + err.Error()}
		}
		temps = append(temps, tmp)
		_, werr := fh.Write(pl.content)
		if werr == nil {
			werr = fh.Sync()
		}
		if cerr := fh.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			return &ApplyError{File: pl.write, Msg: "cannot stage: " + werr.Error()}
		}
		_ = root.Chmod(tmp, pl.mode)
		staged[i] = tmp
	}
	// 2. Keep the originals of what is replaced or removed.
	for _, pl := range plans {
		var p string
		switch pl.res.Action {
		case "modify":
			p = pl.write
		case "delete", "rename":
			p = pl.remove
		default:
			continue
		}
		bak := backupName(p)
		if lerr := root.Link(p, bak); lerr == nil {
			baks = append(baks, bak)
			if pl.res.Action != "modify" {
				if err := root.Remove(p); err != nil {
					return &ApplyError{File: p, Msg: "cannot remove: " + err.Error()}
				}
			}
		} else {
			if err := renameFn(root, p, bak); err != nil {
				return &ApplyError{File: p, Msg: "cannot move aside: " + err.Error()}
			}
			baks = append(baks, bak)
		}
		undo = append(undo, func() { _ = renameFn(root, bak, p) })
	}
	// 3. Put the staged files in place.
	for i, pl := range plans {
		if staged[i] == "" {
			continue
		}
		if err := renameFn(root, staged[i], pl.write); err != nil {
			return &ApplyError{File: pl.write, Msg: "cannot put in place: " + err.Error()}
		}
		if w := pl.write; pl.res.Action == "create" || pl.res.Action == "rename" {
			undo = append(undo, func() { _ = root.Remove(w) })
		}
	}
	return nil
}

// mkdirAll creates dir and missing parents, returning those it created, outermost first.
func mkdirAll(root *os.Root, dir string) ([]string, error) {
	var missing []string
	for d := dir; d != "." && d != "/" && d != ""; d = path.Dir(d) {
		st, err := root.Lstat(d)
		if err == nil {
			if !st.IsDir() {
				return nil, fmt.Errorf("%s is not a directory", d)
			}
			break
		}
		missing = append(missing, d)
	}
	var created []string
	for i := len(missing) - 1; i >= 0; i-- {
		if err := root.Mkdir(missing[i], 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			for j := len(created) - 1; j >= 0; j-- {
				_ = root.Remove(created[j])
			}
			return nil, err
		}
		created = append(created, missing[i])
	}
	return created, nil
}

//go:build unix

package mcp

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/internal/notes"
	"github.com/switchboard-hub/switchboard/internal/process"
	"github.com/switchboard-hub/switchboard/internal/rag"
	"github.com/switchboard-hub/switchboard/internal/testutil"
	"github.com/switchboard-hub/switchboard/mcp/tools"
)

// callWithin is call with a deadline: a tool that blocks (on a FIFO, say) fails the test after
// d instead of hanging it. It returns the tool's error text ("" on success).
func callWithin(t *testing.T, cs *sdk.ClientSession, d time.Duration, tool string, args map[string]any, out any) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: args})
	if ctx.Err() != nil {
		// Not t.Fatalf (nor a panic): the test's cleanup closes the server session, which waits
		// for the stuck handler, so the test would only end at -timeout without saying why.
		fmt.Fprintf(os.Stderr, "FAIL: %s: %s(%v) did not return within %v\n", t.Name(), tool, args, d)
		os.Exit(1)
	}
	if err != nil {
		t.Fatalf("%s(%v): protocol error: %v", tool, args, err)
	}
	return resultOf(t, tool, res, out)
}

// mkSocket leaves a Unix socket file at path, held by a real listener until the test ends.
func mkSocket(t *testing.T, path string) {
	t.Helper()
	// sun_path is ~108 bytes and t.TempDir can be longer: bind through a short relative name.
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chdir(filepath.Dir(path)); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("unix", filepath.Base(path))
	if cerr := os.Chdir(wd); cerr != nil {
		t.Fatal(cerr)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
}

// TestHardeningSpecialFiles: every tool that opens a workspace path refuses FIFOs and sockets
// with an error naming the path, within a deadline, where a plain open of a FIFO used to block
// forever; walks over directories holding them (as data files and as ignore files) skip them and
// finish; and rag_ingest works right after the refusals (no collection is left "running").
func TestHardeningSpecialFiles(t *testing.T) {
	data := t.TempDir()
	store, err := rag.OpenEmbedded(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s := newTestService(t, WithSearch(), WithPatch(), WithNotes(data),
		WithRAG(rag.Hold(rag.NewEngine(store, rag.Offline{}))), WithProcessService(process.New(process.Options{})))
	root := s.Workspace().Dir()
	writeTree(t, root, map[string]string{
		"docs/guide.md": guideMD,
		"docs/plain.go": serverGo,
	})
	for _, p := range []string{"docs/pipe.md", "pipe.txt", ".gitignore", "docs/.gitignore"} {
		if err := syscall.Mkfifo(filepath.Join(root, p), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mkSocket(t, filepath.Join(root, "docs", "sock.md"))
	// A note store entry that is a FIFO (an agent's process can reach the hub's data dir too).
	noteDir := notes.WorkspaceDir(data, root)
	if err := os.MkdirAll(noteDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(noteDir, "trap.md"), 0o600); err != nil {
		t.Fatal(err)
	}
	cs := connect(t, s)
	const d = 10 * time.Second

	refused := func(tool string, args map[string]any, path string) {
		t.Helper()
		e := callWithin(t, cs, d, tool, args, nil)
		if e == "" {
			t.Errorf("%s(%v): no error", tool, args)
			return
		}
		if !strings.Contains(e, strconv.Quote(path)) && !strings.Contains(e, path) || !strings.Contains(e, "not a regular file") {
			t.Errorf("%s(%v): %q; want a refusal naming %s and saying it is not a regular file", tool, args, e, path)
		}
	}
	for _, p := range []string{"docs/pipe.md", "pipe.txt", "docs/sock.md"} {
		refused("file_read", map[string]any{"path": p}, p)
		refused("file_read", map[string]any{"path": p, "offset": 1, "limit": 5}, p)
		refused("file_read", map[string]any{"path": p, "byte_offset": 0, "max_bytes": 10}, p)
		refused("file_edit", map[string]any{"path": p, "old_string": "a", "new_string": "b"}, p)
		refused("file_write", map[string]any{"path": p, "content": "x"}, p)
		refused("dir_list", map[string]any{"path": p}, p)
		refused("file_grep", map[string]any{"pattern": "x", "path": p}, p)
		refused("file_glob", map[string]any{"pattern": "*", "path": p}, p)
		refused("rag_ingest", map[string]any{"path": p}, p)
		refused("exec", map[string]any{"command": "true", "dir": p}, p)
		refused("process_start", map[string]any{"command": "true", "dir": p}, p)
		refused("file_patch", map[string]any{"patch": "--- a/" + p + "\n+++ b/" + p + "\n@@ -1 +1 @@\n-a\n+b\n"}, p)
	}
	refused("memory_read", map[string]any{"key": "trap"}, filepath.Join(noteDir, "trap.md"))
	// Nothing replaced the special files.
	for _, p := range []string{"docs/pipe.md", "pipe.txt", "docs/sock.md"} {
		if st, err := os.Lstat(filepath.Join(root, p)); err != nil || st.Mode().IsRegular() {
			t.Errorf("%s after the calls: %v %v", p, st, err)
		}
	}

	// Walks skip them silently, whether they are data files or ignore files.
	var g tools.GrepOutput
	if e := callWithin(t, cs, d, "file_grep", map[string]any{"pattern": "Switchboard", "include_ignored": true}, &g); e != "" {
		t.Fatal(e)
	}
	if len(g.Matches) == 0 || g.Matches[0].Path != "docs/guide.md" {
		t.Errorf("grep over the tree: %+v", g)
	}
	if e := callWithin(t, cs, d, "file_grep", map[string]any{"pattern": "Switchboard", "path": "docs"}, &g); e != "" || len(g.Matches) == 0 {
		t.Errorf("grep of docs: %q %+v", e, g)
	}
	var gl tools.GlobOutput
	if e := callWithin(t, cs, d, "file_glob", map[string]any{"pattern": "**", "include_ignored": true}, &gl); e != "" {
		t.Fatal(e)
	}
	if !slices.Equal(gl.Paths, []string{"docs/guide.md", "docs/plain.go"}) {
		t.Errorf("glob = %v", gl.Paths)
	}
	var ls tools.ListDirectoryOutput
	if e := callWithin(t, cs, d, "dir_list", map[string]any{"path": "docs"}, &ls); e != "" || len(ls.Entries) != 5 {
		t.Errorf("dir_list docs: %q %+v", e, ls) // special files are listed; only opening them is refused
	}
	var ing tools.RAGIngestOutput
	if e := callWithin(t, cs, d, "rag_ingest", map[string]any{"path": "docs"}, &ing); e != "" {
		t.Fatalf("directory ingest: %s", e)
	}
	if !strings.Contains(ing.Message, "2 files") {
		t.Errorf("directory ingest: %s", ing.Message)
	}
	// Right after the refused single-file ingests, the collection takes a new one.
	if e := callWithin(t, cs, d, "rag_ingest", map[string]any{"path": "docs/guide.md"}, &ing); e != "" {
		t.Fatalf("ingest after the refusals: %s", e)
	}
	var q tools.RAGQueryOutput
	if e := callWithin(t, cs, d, "rag_query", map[string]any{"question": "where is the socket path configured?", "topK": 1}, &q); e != "" || len(q.Results) != 1 || q.Results[0].Source != "docs/guide.md" {
		t.Errorf("query: %q %+v", e, q)
	}
	if e := callWithin(t, cs, d, "rag_ingest", map[string]any{"path": "."}, &ing); e != "" {
		t.Errorf("ingest of the root: %s", e)
	}
	// Regular files are unaffected.
	if e := callWithin(t, cs, d, "file_edit", map[string]any{"path": "docs/guide.md", "old_string": "tarball", "new_string": "archive"}, nil); e != "" {
		t.Error(e)
	}
	var rd tools.ReadFileOutput
	if e := callWithin(t, cs, d, "file_read", map[string]any{"path": "docs/guide.md"}, &rd); e != "" || !strings.Contains(rd.Content, "archive") {
		t.Errorf("read after edit: %q %q", e, rd.Content)
	}
}

// TestHardeningTempFilesHidden: a write's temp file in the tree (live, of this hub) is never
// part of dir_list, file_glob, file_grep or rag_ingest results, include_ignored or not.
func TestHardeningTempFilesHidden(t *testing.T) {
	root := t.TempDir()
	// Temp files of this hub's writes, in progress (this PID: the sweep keeps them), and one of
	// PID 1, alive but not a switchboard (a reused PID: the start-up sweep removes it).
	pid := strconv.Itoa(os.Getpid())
	tmp := ".a.txt.switchboard-" + pid + "-99.tmp"
	writeTree(t, root, map[string]string{
		"a.txt":    "needle in a\n",
		"sub/b.md": "# B\n\nneedle in b\n",
		tmp:        "needle in a temp\n",
		"sub/.b.md.switchboard-" + pid + "-7.tmp": "# Half\n\nneedle in a half-written file\n",
		"sub/.c.md.switchboard-1-7.tmp":           "needle of a reused PID\n",
	})
	store, err := rag.OpenEmbedded(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s := newTestService(t, WithWorkspaceRoot(root), WithSearch(), WithRAG(rag.Hold(rag.NewEngine(store, rag.Offline{}))))
	cs := connect(t, s)
	const d = 10 * time.Second
	for _, p := range []string{".", "sub"} {
		var ls tools.ListDirectoryOutput
		if e := callWithin(t, cs, d, "dir_list", map[string]any{"path": p}, &ls); e != "" {
			t.Fatal(e)
		}
		for _, e := range ls.Entries {
			if strings.Contains(e.Name, "switchboard-") {
				t.Errorf("dir_list %s shows %s", p, e.Name)
			}
		}
	}
	for _, ign := range []bool{false, true} {
		var gl tools.GlobOutput
		if e := callWithin(t, cs, d, "file_glob", map[string]any{"pattern": "**", "include_ignored": ign}, &gl); e != "" {
			t.Fatal(e)
		}
		if !slices.Equal(gl.Paths, []string{"a.txt", "sub/b.md"}) {
			t.Errorf("glob (include_ignored %v) = %v", ign, gl.Paths)
		}
		var g tools.GrepOutput
		if e := callWithin(t, cs, d, "file_grep", map[string]any{"pattern": "needle", "include_ignored": ign}, &g); e != "" {
			t.Fatal(e)
		}
		if len(g.Matches) != 2 || g.Matches[0].Path != "a.txt" || g.Matches[1].Path != "sub/b.md" {
			t.Errorf("grep (include_ignored %v) = %+v", ign, g.Matches)
		}
	}
	var ing tools.RAGIngestOutput
	if e := callWithin(t, cs, d, "rag_ingest", map[string]any{"path": "."}, &ing); e != "" {
		t.Fatal(e)
	}
	if !strings.Contains(ing.Message, "2 files") || strings.Contains(ing.Message, "switchboard-") {
		t.Errorf("ingest: %s", ing.Message)
	}
	var q tools.RAGQueryOutput
	if e := callWithin(t, cs, d, "rag_query", map[string]any{"question": "needle half-written temp", "topK": 10}, &q); e != "" {
		t.Fatal(e)
	}
	for _, r := range q.Results {
		if strings.Contains(r.Source, "switchboard-") {
			t.Errorf("a temp file was indexed: %+v", r)
		}
	}
	testutil.Eventually(t, "the sweep of a non-switchboard PID's temp file", func() bool {
		_, err := os.Stat(filepath.Join(root, "sub", ".c.md.switchboard-1-7.tmp"))
		return errors.Is(err, fs.ErrNotExist)
	})
	for _, p := range []string{tmp, "sub/.b.md.switchboard-" + pid + "-7.tmp"} {
		if _, err := os.Stat(filepath.Join(root, p)); err != nil {
			t.Errorf("this hub's temp file was removed: %v", err)
		}
	}
}

// TestHardeningTempFilesSweptOnStart: a new hub on a workspace removes the temp files that a
// killed hub's writes left (PID of a process that has exited), without delaying New.
func TestHardeningTempFilesSweptOnStart(t *testing.T) {
	root := t.TempDir()
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	pid := dead.Process.Pid
	left := filepath.Join(root, "deep", "er", ".report.md.switchboard-"+strconv.Itoa(pid)+"-3.tmp")
	writeTree(t, root, map[string]string{
		"deep/er/report.md": "old content\n",
		"deep/er/.report.md.switchboard-" + strconv.Itoa(pid) + "-3.tmp": "half of the new content",
		"deep/er/.report.md.switchboard-old-0123456789ab":                "a file_patch backup: never swept",
	})
	s := newTestService(t, WithWorkspaceRoot(root))
	testutil.Eventually(t, "the leftover temp file to be swept", func() bool {
		_, err := os.Stat(left)
		return errors.Is(err, fs.ErrNotExist)
	})
	for _, p := range []string{"deep/er/report.md", "deep/er/.report.md.switchboard-old-0123456789ab"} {
		if _, err := os.Stat(filepath.Join(root, p)); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
	// Shutdown stops a sweep still running (none here) and returns.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
}

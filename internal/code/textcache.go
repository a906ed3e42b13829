package code

import (
	"os"
	"path/filepath"
	"sync"

	"github.com/switchboard-hub/switchboard/internal/lsp"
)

// maxCachedText bounds the file texts a pool keeps for answers (textCache); past it the cache
// starts over.
const maxCachedText = 32 << 20

// textCache keeps the workspace files that answers' locations pointed into, split into lines,
// with the identity each was read at (the file, its size and modification time), so the next
// answer that points into an unchanged file does not read, check and split it again: an answer
// of 50 references points into some 20 files, and reading them was most of the pool's own time
// per answer. A cached text is used only after a stat through the call's os.Root (confined to
// the caller's workspace, as the read is) finds the same file with the same size and time.
type textCache struct {
	mu    sync.Mutex
	m     map[string]cachedText // by absolute path
	bytes int
}

type cachedText struct {
	fi    os.FileInfo
	text  string
	lines []string
}

// get is abs's cached text and lines if the file is unchanged since it was read.
func (tc *textCache) get(root, abs string) (cachedText, bool) {
	tc.mu.Lock()
	ct, ok := tc.m[abs]
	tc.mu.Unlock()
	if !ok {
		return cachedText{}, false
	}
	if rel, err := filepath.Rel(root, abs); err != nil || !filepath.IsLocal(rel) {
		return cachedText{}, false
	}
	// The guard is a plain stat of the path (one syscall, ~1.6 µs), not one through the
	// workspace's os.Root (an openat per directory, ~7.7 µs; an answer of 50 references checks
	// some 20 files). It needs no confinement: the text was read through the Root, and a path
	// that now resolves elsewhere (a symlink put in its place) names another file, whose
	// identity differs, so the file is read again, through the Root, which refuses it.
	fi, err := os.Stat(abs)
	if err != nil || !sameVersion(fi, ct.fi) {
		return cachedText{}, false
	}
	return ct, true
}

// sameVersion: the same file (device and inode), size and modification time.
func sameVersion(a, b os.FileInfo) bool {
	return os.SameFile(a, b) && a.Size() == b.Size() && a.ModTime().Equal(b.ModTime())
}

// put caches abs's text as read when the file had identity fi, and returns its lines.
func (tc *textCache) put(abs string, fi os.FileInfo, text string) []string {
	lines := lsp.Lines(text)
	if len(text) > maxCachedText/4 {
		return lines
	}
	tc.mu.Lock()
	defer tc.mu.Unlock()
	if old, ok := tc.m[abs]; ok {
		tc.bytes -= len(old.text)
	}
	if tc.m == nil || tc.bytes+len(text) > maxCachedText {
		tc.m, tc.bytes = map[string]cachedText{}, 0
	}
	tc.m[abs] = cachedText{fi: fi, text: text, lines: lines}
	tc.bytes += len(text)
	return lines
}

// forget drops the cached texts of paths (absolute): every change the pool hears of, from the
// hub's own edits (Changed) or the workspace watcher, goes through forward, which calls this.
// The stat in get is the guard for changes not heard of; this one also covers an edit in place
// of the same length within the file system's timestamp granularity.
func (tc *textCache) forget(paths ...string) {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	for _, p := range paths {
		if old, ok := tc.m[p]; ok {
			tc.bytes -= len(old.text)
			delete(tc.m, p)
		}
	}
}

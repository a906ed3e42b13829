// Package notes keeps what agents write down for later: memory (named notes that persist per
// workspace across restarts, on disk under the data dir) and todo lists (one per client
// session, in memory, published to the dashboard). It imports nothing from MCP.
package notes

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/switchboard-hub/switchboard/internal/workspace"
)

// Limits for memory notes.
const (
	MaxNoteBytes = 256 << 10
	MaxNotes     = 1000
)

// FieldError is an error about one input field; Field is the JSON key.
type FieldError struct {
	Field string
	Msg   string
}

// Error reports the field by its JSON key, so the agent knows which argument to fix.
func (e *FieldError) Error() string { return e.Field + ": " + e.Msg }

// Memory is the note store of one workspace. Safe for concurrent use.
type Memory struct {
	dir string
	mu  sync.Mutex
}

// NoteInfo describes one note.
type NoteInfo struct {
	Key     string    `json:"key"`
	Size    int64     `json:"size"`
	Updated time.Time `json:"updated"`
}

// Note is one note with its content.
type Note struct {
	NoteInfo
	Content string `json:"content"`
}

var keyRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

// CheckKey validates a note key: letters, digits, '.', '_', '-', starting with a letter or digit,
// at most 128 characters; no path separators, so a key is always one file in the store.
func CheckKey(key string) error {
	if key == "" {
		return &FieldError{"key", "empty; give a name such as build-notes or decisions.auth"}
	}
	if !keyRE.MatchString(key) || strings.HasSuffix(key, ".tmp") {
		return &FieldError{"key", fmt.Sprintf("%q is not a valid key; use letters, digits, '.', '_' and '-' (no '/' or '\\'), starting with a letter or digit, at most 128 characters", key)}
	}
	return nil
}

// WorkspaceDir is where the notes of workspace live under dataDir: memory/<hash of the path>,
// so two workspaces never share notes and the path needs no escaping.
func WorkspaceDir(dataDir, workspace string) string {
	sum := sha256.Sum256([]byte(filepath.Clean(workspace)))
	return filepath.Join(dataDir, "memory", hex.EncodeToString(sum[:12]))
}

// OpenMemory opens (creating) the note store of workspace under dataDir.
func OpenMemory(dataDir, workspace string) (*Memory, error) {
	dir := WorkspaceDir(dataDir, workspace)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("memory store %s: %w", dir, err)
	}
	// A note of which workspace this is, for people looking at the data dir.
	_ = os.WriteFile(filepath.Join(dir, ".workspace"), []byte(workspace+"\n"), 0o600)
	return &Memory{dir: dir}, nil
}

// Dir returns the store's directory.
func (m *Memory) Dir() string { return m.dir }

func (m *Memory) path(key string) string { return filepath.Join(m.dir, key+".md") }

// Write stores content under key; empty content deletes the note. It returns whether a note was
// deleted (or, for a write, whether it replaced one).
func (m *Memory) Write(key, content string) (existed bool, err error) {
	if err := CheckKey(key); err != nil {
		return false, err
	}
	if len(content) > MaxNoteBytes {
		return false, &FieldError{"content", fmt.Sprintf("%d bytes is over the %d byte limit; split it into several keys", len(content), MaxNoteBytes)}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	p := m.path(key)
	_, statErr := os.Stat(p)
	existed = statErr == nil
	if content == "" {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return false, err
		}
		return existed, nil
	}
	if !existed {
		list, err := m.listLocked()
		if err != nil {
			return false, err
		}
		if len(list) >= MaxNotes {
			return false, &FieldError{"key", fmt.Sprintf("the store holds %d notes, the limit; delete some (write empty content)", MaxNotes)}
		}
	}
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	tmp := p + "." + hex.EncodeToString(rnd[:]) + ".tmp"
	if err := os.WriteFile(tmp, []byte(content), 0o600); err != nil {
		return false, err
	}
	if err := os.Rename(tmp, p); err != nil {
		os.Remove(tmp)
		return false, err
	}
	return existed, nil
}

// Read returns one note.
func (m *Memory) Read(key string) (Note, error) {
	if err := CheckKey(key); err != nil {
		return Note{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	p := m.path(key)
	// Opened without blocking and checked on the handle: the store is the hub's, but any program
	// on the machine (an agent's process) could put a FIFO there, and a plain open of one would
	// hang memory_read and, through m.mu, every later note call.
	f, st, err := workspace.OpenPath(p)
	if errors.Is(err, fs.ErrNotExist) {
		return Note{}, &FieldError{"key", fmt.Sprintf("no note %q; call memory_read without a key to list them", key)}
	}
	if err != nil {
		return Note{}, fmt.Errorf("memory note %q: %w", key, err)
	}
	defer f.Close()
	if !st.Mode().IsRegular() {
		return Note{}, fmt.Errorf("memory note %q: %s is a %s, not a regular file; remove it from the store", key, p, workspace.KindOf(st.Mode()))
	}
	b, err := io.ReadAll(f)
	if err != nil {
		return Note{}, fmt.Errorf("memory note %q: %w", key, err)
	}
	return Note{NoteInfo: NoteInfo{Key: key, Size: st.Size(), Updated: st.ModTime().UTC()}, Content: string(b)}, nil
}

// List returns every note's key, size and time, sorted by key.
func (m *Memory) List() ([]NoteInfo, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.listLocked()
}

func (m *Memory) listLocked() ([]NoteInfo, error) {
	des, err := os.ReadDir(m.dir)
	if err != nil {
		return nil, err
	}
	out := []NoteInfo{}
	for _, de := range des {
		name := de.Name()
		key, ok := strings.CutSuffix(name, ".md")
		if !ok || !de.Type().IsRegular() || CheckKey(key) != nil {
			continue
		}
		info, err := de.Info()
		if err != nil {
			continue
		}
		out = append(out, NoteInfo{Key: key, Size: info.Size(), Updated: info.ModTime().UTC()})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, nil
}

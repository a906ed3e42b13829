package audit

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Reading the trail back: the dashboard's Logs view pages through the audit file and its rotated
// backups newest first, with filters. The files are read backwards in blocks, so the first page
// costs a few blocks of the newest file however long the trail is; only a filter that matches
// little reads further back.

// Query selects entries from the audit files. The zero value is the newest DefaultLimit entries.
type Query struct {
	// Client is a client's name (as it introduced itself, any case) or a session id; "" = any.
	Client string
	// Tool is a glob (`file_*`, `*__greet`) when it holds *, ? or [, else a prefix; "" = any.
	Tool string
	// Decision is the policy's decision: allow, ask or deny; "" = any.
	Decision string
	// Outcome is ok, error or started (a mutating call on record before it ran, whose outcome
	// line has not been read: still running, or the hub went down with it); "" = any.
	Outcome string
	// Limit is the most entries returned: 0 means DefaultLimit, at most MaxLimit.
	Limit int
	// Before is a previous page's Next: the page continues with older lines.
	Before string
}

// Page limits.
const (
	DefaultLimit = 100
	MaxLimit     = 1000
)

// Page is one page of the trail, newest written first.
type Page struct {
	Entries []Entry `json:"entries"`
	// Next is the cursor (Query.Before) of the page of older lines; "" when the files hold no more.
	Next string `json:"next,omitempty"`
	// Files are the files the trail is kept in, newest first: the live file, then its rotated
	// backups.
	Files []string `json:"files"`
}

// Validate checks q, naming the field at fault and what it takes.
func (q Query) Validate() error {
	switch q.Decision {
	case "", "allow", "ask", "deny":
	default:
		return fmt.Errorf("decision: %q is not a policy decision; use allow, ask or deny (or leave it empty for any)", q.Decision)
	}
	switch q.Outcome {
	case "", "ok", "error", "started":
	default:
		return fmt.Errorf("outcome: %q is not an outcome; use ok, error or started (or leave it empty for any)", q.Outcome)
	}
	if isGlob(q.Tool) {
		if _, err := path.Match(q.Tool, ""); err != nil {
			return fmt.Errorf("tool: %q is not a valid pattern (%v); use * and ? wildcards, e.g. \"file_*\"", q.Tool, err)
		}
	}
	if q.Limit < 0 || q.Limit > MaxLimit {
		return fmt.Errorf("limit: %d is out of range; use 1 to %d (0 for %d) and page with before", q.Limit, MaxLimit, DefaultLimit)
	}
	if q.Before != "" {
		if _, _, err := parseCursor(q.Before); err != nil {
			return err
		}
	}
	return nil
}

func isGlob(s string) bool { return strings.ContainsAny(s, "*?[") }

// Match reports whether e passes q's filters (Before and Limit aside). The dashboard applies the
// same rules to the entries it receives live.
func (q Query) Match(e Entry) bool {
	if q.Client != "" && !strings.EqualFold(e.Client, q.Client) && e.Session != q.Client {
		return false
	}
	if q.Tool != "" {
		if isGlob(q.Tool) {
			if ok, _ := path.Match(q.Tool, e.Tool); !ok {
				return false
			}
		} else if !strings.HasPrefix(e.Tool, q.Tool) {
			return false
		}
	}
	if q.Decision != "" && e.Decision != q.Decision {
		return false
	}
	return q.Outcome == "" || e.Outcome == q.Outcome
}

// Files lists the audit file and its rotated backups (lumberjack's <name>-<time>.<ext>, the time
// in a form that sorts), newest first. A missing file is left out.
func Files(file string) ([]string, error) {
	var out []string
	if _, err := os.Stat(file); err == nil {
		out = append(out, file)
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	dir, base := filepath.Split(file)
	ext := filepath.Ext(base)
	prefix := strings.TrimSuffix(base, ext) + "-"
	entries, err := os.ReadDir(filepath.Clean(dir))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return out, nil
		}
		return nil, err
	}
	var backups []string
	for _, de := range entries {
		n := de.Name()
		if de.Type().IsRegular() && strings.HasPrefix(n, prefix) && strings.HasSuffix(n, ext) {
			if _, err := time.Parse(backupTimeFormat, strings.TrimSuffix(strings.TrimPrefix(n, prefix), ext)); err == nil {
				backups = append(backups, n)
			}
		}
	}
	slices.Sort(backups)
	slices.Reverse(backups)
	for _, n := range backups {
		out = append(out, filepath.Join(dir, n))
	}
	return out, nil
}

// backupTimeFormat is how lumberjack stamps a rotated file's name.
const backupTimeFormat = "2006-01-02T15-04-05.000"

// Read returns one page of the entries in file and its backups, newest written first (the order
// calls finished in). A "started" line is left out when the same read met its call's outcome
// line.
func Read(file string, q Query) (Page, error) {
	if err := q.Validate(); err != nil {
		return Page{}, err
	}
	limit := q.Limit
	if limit == 0 {
		limit = DefaultLimit
	}
	files, err := Files(file)
	if err != nil {
		return Page{}, fmt.Errorf("audit log %s: %w", file, err)
	}
	page := Page{Entries: []Entry{}, Files: files}
	var fromKey string
	var fromOff int64 = -1
	if q.Before != "" {
		fromKey, fromOff, _ = parseCursor(q.Before)
	}
	finished := map[string]bool{} // call ids whose outcome line was read
	resumed := q.Before == ""
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			if errors.Is(err, os.ErrNotExist) { // rotated away or removed meanwhile
				continue
			}
			return page, err
		}
		key, end, err := fileKey(f)
		if err != nil {
			f.Close()
			return page, fmt.Errorf("audit log %s: %w", name, err)
		}
		if !resumed {
			if key != fromKey {
				f.Close()
				continue // newer than the cursor's file
			}
			resumed = true
			end = min(fromOff, end)
		}
		full := false
		err = scanBackward(f, end, func(line []byte, off int64) bool {
			e, ok := parseLine(line)
			if !ok {
				return true
			}
			if e.Outcome == "started" {
				if finished[e.CallID] {
					return true
				}
			} else if e.CallID != "" {
				finished[e.CallID] = true
			}
			if !q.Match(e) {
				return true
			}
			if len(page.Entries) == limit {
				// One more matches: there is an older page, and it starts before this entry's
				// successor — the last one returned.
				full = true
				return false
			}
			page.Entries = append(page.Entries, e)
			page.Next = key + ":" + strconv.FormatInt(off, 10)
			return true
		})
		f.Close()
		if err != nil {
			return page, fmt.Errorf("audit log %s: %w", name, err)
		}
		if full {
			return page, nil
		}
	}
	page.Next = "" // every file read to its start
	return page, nil
}

// fileKey names a file by its first line, which never changes: appends leave it be, and
// rotation renames the file whole. A cursor into the live file stays valid after it was rotated
// into a backup. end is the file's size.
func fileKey(f *os.File) (key string, end int64, err error) {
	fi, err := f.Stat()
	if err != nil {
		return "", 0, err
	}
	buf := make([]byte, 4096)
	n, err := f.ReadAt(buf, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return "", 0, err
	}
	first := buf[:n]
	if i := bytes.IndexByte(first, '\n'); i >= 0 {
		first = first[:i]
	}
	sum := sha256.Sum256(first)
	return hex.EncodeToString(sum[:6]), fi.Size(), nil
}

func parseCursor(s string) (key string, off int64, err error) {
	k, o, ok := strings.Cut(s, ":")
	n, perr := strconv.ParseInt(o, 10, 64)
	if !ok || len(k) != 12 || perr != nil || n < 0 {
		return "", 0, fmt.Errorf("before: %q is not a cursor; pass the \"next\" of the previous page, or nothing for the newest entries", s)
	}
	return k, n, nil
}

// readBlock is how much of a file one backward step reads.
const readBlock = 64 << 10

// scanBackward calls fn with every complete line of f before offset end, last line first, with
// the offset where the line starts, until fn returns false. A line longer than maxLine is skipped
// (no audit line comes near it: values are capped at SummaryCap).
func scanBackward(f *os.File, end int64, fn func(line []byte, off int64) bool) error {
	const maxLine = 4 << 20
	pos := end
	var carry []byte // the start of a line that began before pos, up to the line after it
	skipping := false
	for pos > 0 {
		n := min(int64(readBlock), pos)
		pos -= n
		buf := make([]byte, int(n)+len(carry))
		if _, err := f.ReadAt(buf[:n], pos); err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		copy(buf[n:], carry)
		for {
			i := bytes.LastIndexByte(buf, '\n')
			if i < 0 {
				break
			}
			if line := buf[i+1:]; len(line) > 0 && !skipping {
				if !fn(line, pos+int64(i)+1) {
					return nil
				}
			}
			skipping = false
			buf = buf[:i]
		}
		carry = buf
		if len(carry) > maxLine {
			carry, skipping = nil, true
		}
	}
	if len(carry) > 0 && !skipping {
		fn(carry, 0)
	}
	return nil
}

// fileLine is an audit line as the file holds it (the keys appendLine writes).
type fileLine struct {
	Time       time.Time `json:"time"`
	Level      string    `json:"level"`
	Msg        string    `json:"msg"`
	Call       string    `json:"call"`
	Parent     string    `json:"parent"`
	Actor      string    `json:"actor"`
	Tool       string    `json:"tool"`
	Session    string    `json:"session"`
	Client     string    `json:"client"`
	Protocol   string    `json:"protocol"`
	Transport  string    `json:"transport"`
	User       string    `json:"user"`
	DurationMs float64   `json:"duration_ms"`
	Outcome    string    `json:"outcome"`
	Args       string    `json:"args"`
	Error      string    `json:"error"`
	Decision   string    `json:"decision"`
	Rule       string    `json:"rule"`
	Approval   string    `json:"approval"`
	By         string    `json:"by"`
	Roots      string    `json:"roots"`
}

// parseLine reads one line back into the Entry it was written from; ok is false for anything
// that is not an audit entry (a torn line, another logger's line).
func parseLine(b []byte) (Entry, bool) {
	var l fileLine
	if err := json.Unmarshal(b, &l); err != nil || (l.Msg != "tool call" && l.Msg != "action") || l.Tool == "" {
		return Entry{}, false
	}
	return Entry{Time: l.Time, CallID: l.Call, Parent: l.Parent, Actor: l.Actor, Tool: l.Tool, Session: l.Session, Client: l.Client, Protocol: l.Protocol,
		Transport: l.Transport, User: l.User, Level: l.Level, Outcome: l.Outcome, DurationMs: l.DurationMs, Args: l.Args,
		Error: l.Error, Decision: l.Decision, Rule: l.Rule, Approval: l.Approval, By: l.By, Roots: l.Roots}, true
}

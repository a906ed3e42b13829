package upstream

import (
	"bufio"
	"errors"
	"io"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/switchboard-hub/switchboard/internal/listeners"
)

// logRing keeps a server's last lines of stderr and supervisor events: bounded in lines and in
// line length, so a server that floods stderr costs a fixed amount of memory.
type logRing struct {
	mu    sync.Mutex
	lines []LogLine
	next  int
	full  bool
	subs  listeners.Set[LogLine]
	// masks are the secrets the server was given (${secret:NAME} → value): a line that
	// holds a value shows the reference instead.
	masks []secretMask
}

type secretMask struct{ ref, value string }

// minMasked is the shortest value masked: shorter ones would blot out ordinary text.
const minMasked = 4

// mask makes every later line (and Masked) show ${secret:name} for value.
func (r *logRing) mask(name, value string) {
	if len(value) < minMasked {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, m := range r.masks {
		if m.value == value {
			r.masks[i].ref = "${secret:" + name + "}"
			return
		}
	}
	r.masks = append(r.masks, secretMask{ref: "${secret:" + name + "}", value: value})
	// Longest first, so a secret that contains another is replaced whole.
	slices.SortFunc(r.masks, func(a, b secretMask) int { return len(b.value) - len(a.value) })
}

// masked replaces the secrets in text by their references.
func (r *logRing) masked(text string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.maskedLocked(text)
}

func (r *logRing) maskedLocked(text string) string {
	for _, m := range r.masks {
		if strings.Contains(text, m.value) {
			text = strings.ReplaceAll(text, m.value, m.ref)
		}
	}
	return text
}

const maxLogLine = 4096

func newLogRing(n int) *logRing {
	if n <= 0 {
		n = 1000
	}
	return &logRing{lines: make([]LogLine, n)}
}

func (r *logRing) add(stream, text string) {
	if len(text) > maxLogLine {
		cut := maxLogLine
		for cut > 0 && !utf8.RuneStart(text[cut]) {
			cut--
		}
		text = text[:cut] + "…"
	}
	r.mu.Lock()
	l := LogLine{Time: time.Now().UTC().Format("2006-01-02T15:04:05.000Z07:00"), Stream: stream, Text: strings.ToValidUTF8(r.maskedLocked(text), "\uFFFD")}
	r.lines[r.next] = l
	r.next = (r.next + 1) % len(r.lines)
	if r.next == 0 {
		r.full = true
	}
	r.mu.Unlock()
	r.subs.Notify(l)
}

// tail returns the last n lines (all when n <= 0), oldest first.
func (r *logRing) tail(n int) []LogLine {
	r.mu.Lock()
	defer r.mu.Unlock()
	var all []LogLine
	if r.full {
		all = append(all, r.lines[r.next:]...)
	}
	all = append(all, r.lines[:r.next]...)
	if n > 0 && len(all) > n {
		all = all[len(all)-n:]
	}
	return all
}

// last returns the last stderr line ("" when none), for error messages.
func (r *logRing) lastStderr() string {
	lines := r.tail(20)
	for i := len(lines) - 1; i >= 0; i-- {
		if lines[i].Stream == "stderr" && strings.TrimSpace(lines[i].Text) != "" {
			return lines[i].Text
		}
	}
	return ""
}

func (r *logRing) subscribe(f func(LogLine)) (cancel func()) { return r.subs.Add(f) }

// readLines copies rd into the ring line by line until rd ends. A line longer than the
// scanner's buffer is split rather than stalling the server on a full pipe.
func (r *logRing) readLines(rd io.Reader, stream string) {
	br := bufio.NewReaderSize(rd, 64*1024)
	for {
		b, err := br.ReadSlice('\n')
		if len(b) > 0 {
			r.add(stream, strings.TrimRight(string(b), "\r\n"))
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil {
			return
		}
	}
}

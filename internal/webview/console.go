package webview

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
)

// ConsoleMessage is one captured console call, uncaught exception or browser log entry.
type ConsoleMessage struct {
	Type      string `json:"type" jsonschema:"message level: log, info, warning, error, debug, ... from console calls; exception for an uncaught error; verbose/info/warning/error for browser log entries"`
	Text      string `json:"text" jsonschema:"message content (arguments joined by spaces; an exception's message and stack)"`
	Timestamp string `json:"timestamp" jsonschema:"RFC 3339 timestamp"`
	URL       string `json:"url,omitempty" jsonschema:"source URL, if available"`
	Line      int    `json:"line,omitempty" jsonschema:"source line number (1-based), if available"`
}

const maxConsoleText = 8 << 10

// consoleFrom converts a tab event into a console message.
func consoleFrom(ev any) (ConsoleMessage, bool) {
	switch e := ev.(type) {
	case *runtime.EventConsoleAPICalled:
		parts := make([]string, 0, len(e.Args))
		for _, a := range e.Args {
			parts = append(parts, remoteText(a))
		}
		m := ConsoleMessage{Type: string(e.Type), Text: strings.Join(parts, " "), Timestamp: stamp(float64(e.Timestamp))}
		if e.StackTrace != nil && len(e.StackTrace.CallFrames) > 0 {
			f := e.StackTrace.CallFrames[0]
			m.URL, m.Line = f.URL, int(f.LineNumber)+1
		}
		return clip(m), true
	case *runtime.EventExceptionThrown:
		d := e.ExceptionDetails
		if d == nil {
			return ConsoleMessage{}, false
		}
		text := d.Text
		if d.Exception != nil && d.Exception.Description != "" {
			text = d.Exception.Description
		} else if d.Exception != nil {
			text = strings.TrimSpace(d.Text + " " + remoteText(d.Exception))
		}
		m := ConsoleMessage{Type: "exception", Text: text, Timestamp: stamp(float64(e.Timestamp)), URL: d.URL, Line: int(d.LineNumber) + 1}
		if m.URL == "" && d.StackTrace != nil && len(d.StackTrace.CallFrames) > 0 {
			f := d.StackTrace.CallFrames[0]
			m.URL, m.Line = f.URL, int(f.LineNumber)+1
		}
		return clip(m), true
	case *log.EventEntryAdded:
		en := e.Entry
		if en == nil {
			return ConsoleMessage{}, false
		}
		m := ConsoleMessage{Type: string(en.Level), Text: en.Text, Timestamp: stamp(float64(en.Timestamp)), URL: en.URL}
		if en.LineNumber > 0 {
			m.Line = int(en.LineNumber) + 1
		}
		return clip(m), true
	}
	return ConsoleMessage{}, false
}

func clip(m ConsoleMessage) ConsoleMessage {
	if len(m.Text) > maxConsoleText {
		m.Text = m.Text[:maxConsoleText] + "… (truncated)"
	}
	return m
}

// stamp converts a CDP timestamp (milliseconds since the epoch) to RFC 3339.
func stamp(ms float64) string {
	if ms <= 0 {
		return time.Now().UTC().Format(time.RFC3339Nano)
	}
	return time.UnixMilli(int64(ms)).UTC().Format(time.RFC3339Nano)
}

// remoteText renders a console argument the way DevTools prints it.
func remoteText(o *runtime.RemoteObject) string {
	if o == nil {
		return ""
	}
	if o.UnserializableValue != "" {
		return string(o.UnserializableValue)
	}
	if len(o.Value) > 0 {
		var s string
		if json.Unmarshal(o.Value, &s) == nil {
			return s
		}
		return string(o.Value)
	}
	if o.Description != "" {
		return o.Description
	}
	if o.Type == "undefined" {
		return "undefined"
	}
	return fmt.Sprintf("[%s]", o.Type)
}

func (w *Webview) addConsole(m ConsoleMessage) {
	w.conMu.Lock()
	w.console = append(w.console, m)
	if over := len(w.console) - w.opts.ConsoleLimit; over > 0 {
		w.console = append(w.console[:0], w.console[over:]...)
	}
	w.conMu.Unlock()
	w.emit(Event{Kind: "console", Console: &m})
}

// Console returns the captured messages, oldest first, and empties the buffer when clear is set.
func (w *Webview) Console(clear bool) ([]ConsoleMessage, error) {
	if _, err := w.sess(); err != nil {
		return nil, err
	}
	return w.ConsoleTail(0, clear), nil
}

// ConsoleTail returns the last n messages (all when n <= 0) without needing a connection.
func (w *Webview) ConsoleTail(n int, clear bool) []ConsoleMessage {
	w.conMu.Lock()
	defer w.conMu.Unlock()
	src := w.console
	if n > 0 && len(src) > n {
		src = src[len(src)-n:]
	}
	out := append([]ConsoleMessage{}, src...)
	if clear {
		w.console = nil
	}
	return out
}

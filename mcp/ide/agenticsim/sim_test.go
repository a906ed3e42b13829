package agenticsim

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/switchboard-hub/switchboard/internal/agentic/protocol"
	"github.com/switchboard-hub/switchboard/internal/testutil"
)

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func start(t *testing.T, opts Options) *Server {
	t.Helper()
	opts.Logger = quiet()
	s := New(opts)
	if _, err := s.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// dial connects a raw protocol client.
func dial(t *testing.T, url string, header http.Header) *websocket.Conn {
	t.Helper()
	conn, resp, err := websocket.DefaultDialer.Dial(url, header)
	if err != nil {
		status := 0
		if resp != nil {
			status = resp.StatusCode
		}
		t.Fatalf("dial %s: %v (HTTP %d)", url, err, status)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

func send(t *testing.T, conn *websocket.Conn, msgType, sessionID, requestID string, payload any) {
	t.Helper()
	msg, err := protocol.New(msgType, sessionID, payload)
	if err != nil {
		t.Fatal(err)
	}
	msg.RequestID = requestID
	if err := conn.WriteJSON(msg); err != nil {
		t.Fatal(err)
	}
}

// next reads messages until one satisfies match (others are skipped).
func next(t *testing.T, conn *websocket.Conn, match func(protocol.Message) bool) protocol.Message {
	t.Helper()
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	for {
		var msg protocol.Message
		if err := conn.ReadJSON(&msg); err != nil {
			t.Fatalf("read: %v", err)
		}
		if match(msg) {
			return msg
		}
	}
}

func answer(id string) func(protocol.Message) bool {
	return func(m protocol.Message) bool { return m.RequestID == id }
}

func TestTokenRequired(t *testing.T) {
	s := start(t, Options{Token: "tok"})
	for _, tc := range []struct {
		name   string
		url    string
		header http.Header
		want   int
	}{
		{"no token", s.URL(), nil, http.StatusUnauthorized},
		{"wrong bearer", s.URL(), http.Header{"Authorization": {"Bearer nope"}}, http.StatusUnauthorized},
		{"browser origin elsewhere", s.URL(), http.Header{"Authorization": {"Bearer tok"}, "Origin": {"https://evil.example"}}, http.StatusForbidden},
	} {
		_, resp, err := websocket.DefaultDialer.Dial(tc.url, tc.header)
		if err == nil || resp == nil || resp.StatusCode != tc.want {
			t.Errorf("%s: err %v, resp %v; want HTTP %d", tc.name, err, resp, tc.want)
		}
	}
	dial(t, s.URL(), http.Header{"Authorization": {"Bearer tok"}})
	dial(t, s.URL()+"?token=tok", nil)
	if got := s.AuthHeaders(); len(got) != 5 || got[3] != "Bearer tok" || got[4] != "" {
		t.Errorf("recorded headers = %q", got)
	}
}

func TestChatStreamsThenCompletes(t *testing.T) {
	s := start(t, Options{ReplyDelay: time.Millisecond, Reply: func(_, m string) string { return "you said " + m }})
	conn := dial(t, s.URL(), nil)

	send(t, conn, protocol.TypeSessionCreate, "", "r1", protocol.SessionCreateRequest{Name: "n"})
	var sess protocol.Session
	if err := next(t, conn, answer("r1")).Decode(&sess); err != nil || sess.ID == "" || sess.Status != "active" {
		t.Fatalf("session_create answer = %+v, %v", sess, err)
	}

	send(t, conn, protocol.TypeChatSend, sess.ID, "r2", protocol.ChatSendRequest{MessageID: "m-1", Message: "hi there"})
	echo := next(t, conn, answer("r2"))
	var user protocol.ChatMessage
	if err := echo.Decode(&user); err != nil || echo.Type != protocol.TypeChatMessage || user.ID != "m-1" || user.Role != "user" {
		t.Fatalf("chat_send answer = %+v %+v", echo, user)
	}

	var streamed string
	final := next(t, conn, func(m protocol.Message) bool {
		if m.Type == protocol.TypeChatDelta {
			var d protocol.ChatDelta
			_ = m.Decode(&d)
			streamed += d.Content
		}
		return m.Type == protocol.TypeChatMessage && m.SessionID == sess.ID
	})
	var reply protocol.ChatMessage
	_ = final.Decode(&reply)
	if reply.Role != "assistant" || reply.Content != "you said hi there" || streamed != reply.Content {
		t.Errorf("reply %+v, deltas %q", reply, streamed)
	}
	plan := next(t, conn, func(m protocol.Message) bool { return m.Type == protocol.TypePlan })
	var p protocol.Plan
	_ = plan.Decode(&p)
	if p.Status != "completed" {
		t.Errorf("plan after reply = %+v", p)
	}

	send(t, conn, protocol.TypeChatSend, "nope", "r3", protocol.ChatSendRequest{Message: "x"})
	if e := next(t, conn, answer("r3")); e.Type != protocol.TypeError || !strings.Contains(string(e.Data), "no session") {
		t.Errorf("chat to unknown session = %s %s", e.Type, e.Data)
	}
}

func TestBuildLogIndexesAndOutcome(t *testing.T) {
	s := start(t, Options{LineInterval: time.Millisecond})
	conn := dial(t, s.URL(), nil)
	send(t, conn, protocol.TypeHello, "", "", protocol.HelloRequest{Client: "test"})
	next(t, conn, func(m protocol.Message) bool { return m.Type == protocol.TypeActivityList })

	b := s.StartBuild("repo", "main", 4, false)
	want := 0
	done := next(t, conn, func(m protocol.Message) bool {
		if m.Type == protocol.TypeBuildLog {
			var l protocol.BuildLog
			_ = m.Decode(&l)
			if l.From == nil || *l.From != want || len(l.Lines) != 1 {
				t.Fatalf("log line %d arrived as %+v", want, l)
			}
			want++
		}
		var info protocol.BuildInfo
		return m.Type == protocol.TypeBuild && m.Decode(&info) == nil && info.Status == "failed"
	})
	var info protocol.BuildInfo
	_ = done.Decode(&info)
	if want != 4 || info.ID != b.ID || info.Duration == "" {
		t.Errorf("build %+v after %d lines", info, want)
	}

	send(t, conn, protocol.TypeBuildLogs, "", "r1", protocol.BuildLogsRequest{BuildID: b.ID, From: 2})
	var l protocol.BuildLog
	if err := next(t, conn, answer("r1")).Decode(&l); err != nil || *l.From != 2 || len(l.Lines) != 2 || !strings.Contains(l.Lines[1], "BUILD FAILED") {
		t.Errorf("build_logs from 2 = %+v, %v", l, err)
	}
	send(t, conn, "no_such_request", "", "r2", nil)
	if e := next(t, conn, answer("r2")); e.Type != protocol.TypeError {
		t.Errorf("unknown request answered with %s", e.Type)
	}
	if err := conn.WriteMessage(websocket.TextMessage, []byte("not json")); err != nil {
		t.Fatal(err)
	}
	if e := next(t, conn, func(m protocol.Message) bool { return m.Type == protocol.TypeError }); !strings.Contains(string(e.Data), "bad_frame") {
		t.Errorf("bad frame answer = %s", e.Data)
	}
}

func TestRestartKeepsStateAndAddress(t *testing.T) {
	s := start(t, Options{LineInterval: 5 * time.Millisecond})
	url := s.URL()
	conn := dial(t, url, nil)
	sess := s.CreateSession("kept")
	b := s.StartBuild("r", "main", 20, true)

	s.Stop()
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	for {
		if _, _, err := conn.ReadMessage(); err != nil {
			break // the connection was closed by Stop
		}
	}
	if _, err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	if s.URL() != url {
		t.Fatalf("restart moved from %s to %s", url, s.URL())
	}
	conn2 := dial(t, url, nil)
	send(t, conn2, protocol.TypeSessionList, "", "r1", struct{}{})
	var list protocol.SessionList
	if err := next(t, conn2, answer("r1")).Decode(&list); err != nil || len(list.Sessions) != 1 || list.Sessions[0].ID != sess.ID {
		t.Errorf("sessions after restart = %+v, %v", list, err)
	}
	// The build ran on while the socket was down.
	testutil.Eventually(t, "the build to finish", func() bool { info, _ := s.Build(b.ID); return info.Status == "success" })
	if n := len(s.BuildLines(b.ID)); n != 20 {
		t.Errorf("build has %d lines, want 20", n)
	}
}

func TestRunStopsWithContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	urls := make(chan string, 1)
	go func() {
		errc <- Run(ctx, "127.0.0.1:0", Options{Demo: true, DemoInterval: 10 * time.Millisecond, Logger: slog.New(urlHandler(urls))})
	}()
	// Cancel while the demo runs builds: a client on the URL Run announces sees one go by.
	conn := dial(t, testutil.Receive(t, urls, "Run to announce its URL"), nil)
	next(t, conn, func(m protocol.Message) bool { return m.Type == protocol.TypeBuild })
	conn.Close()
	cancel()
	select {
	case err := <-errc:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
	if err := Run(context.Background(), "256.0.0.1:1", Options{Logger: quiet()}); err == nil {
		t.Error("Run on an invalid address returned nil")
	}
}

func TestCloseIsFinal(t *testing.T) {
	s := New(Options{Logger: quiet()})
	if _, err := s.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Start("127.0.0.1:0"); err == nil || !strings.Contains(err.Error(), "already listening") {
		t.Errorf("second Start: %v", err)
	}
	s.StartBuild("r", "b", 1000, true) // long build: Close must end it, not wait it out
	start := time.Now()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if time.Since(start) > 2*time.Second {
		t.Errorf("Close took %v", time.Since(start))
	}
	if _, err := s.Start("127.0.0.1:0"); err == nil {
		t.Error("Start after Close succeeded")
	}
}

// urlHandler is a slog handler that passes on the "url" of the records it gets.
type urlHandler chan<- string

func (h urlHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h urlHandler) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h urlHandler) WithGroup(string) slog.Handler            { return h }
func (h urlHandler) Handle(_ context.Context, r slog.Record) error {
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "url" {
			select {
			case h <- a.Value.String():
			default:
			}
		}
		return true
	})
	return nil
}

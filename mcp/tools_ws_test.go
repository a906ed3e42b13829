package mcp

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/switchboard-hub/switchboard/internal/process"
	"github.com/switchboard-hub/switchboard/internal/wshub"
	"github.com/switchboard-hub/switchboard/mcp/channel"
	"github.com/switchboard-hub/switchboard/mcp/tools"
)

func newHubService(t *testing.T) (*Service, *wshub.Hub) {
	t.Helper()
	h := wshub.New(wshub.Options{})
	return newTestService(t, WithWSHub(h)), h
}

func TestWSToolsStartInfoAndRealClient(t *testing.T) {
	s, h := newHubService(t)
	cs := connect(t, s)

	var info tools.WSInfoOutput
	mustCall(t, cs, "ws_info", map[string]any{}, &info)
	if info.Running || info.Clients != 0 || info.Channels != 0 || info.URL != "" {
		t.Fatalf("ws_info before start = %+v", info)
	}

	var start tools.WSStartOutput
	mustCall(t, cs, "ws_start", map[string]any{"addr": "127.0.0.1:0"}, &start)
	if !start.Success || !strings.HasPrefix(start.Addr, "127.0.0.1:") || strings.HasSuffix(start.Addr, ":0") {
		t.Fatalf("ws_start = %+v", start)
	}
	url := "ws://" + start.Addr + "/ws"
	if !strings.Contains(start.Message, url) {
		t.Fatalf("ws_start message %q lacks the URL %s", start.Message, url)
	}

	var again tools.WSStartOutput
	mustCall(t, cs, "ws_start", map[string]any{"addr": "127.0.0.1:0"}, &again)
	if !again.Success || again.Addr != start.Addr || !strings.Contains(again.Message, "already running") || !strings.Contains(again.Message, url) {
		t.Fatalf("second ws_start = %+v, want the same address, already running", again)
	}

	// A real WebSocket client through the listener ws_start opened, with the token ws_start
	// returned (an agent has no other tool to get it); without it the hub refuses.
	if start.Token == "" || start.Token == h.Token() || !strings.Contains(start.Message, "token field") {
		t.Fatalf("ws_start must return this client's own token (not the dashboard's): %+v", start)
	}
	if c, _, err := (&websocket.Dialer{HandshakeTimeout: 5 * time.Second}).Dial(url, nil); err == nil {
		c.Close()
		t.Fatal("the hub accepted a client without the token")
	}
	conn, _, err := (&websocket.Dialer{HandshakeTimeout: 5 * time.Second}).Dial(url, http.Header{"Authorization": {"Bearer " + start.Token}})
	if err != nil {
		t.Fatalf("dial %s: %v", url, err)
	}
	t.Cleanup(func() { conn.Close() })
	if err := conn.WriteMessage(websocket.TextMessage, []byte(`{"type":"subscribe","channel":"processes"}`)); err != nil {
		t.Fatal(err)
	}
	var m wshub.Message
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	if err := conn.ReadJSON(&m); err != nil || m.Type != wshub.TypeSubscribed {
		t.Fatalf("subscribe reply %+v, %v", m, err)
	}

	mustCall(t, cs, "ws_info", map[string]any{}, &info)
	if !info.Running || info.Clients != 1 || info.Channels != 1 || info.Addr != start.Addr || info.URL != url {
		t.Fatalf("ws_info with one subscriber = %+v", info)
	}
}

func TestWSStartDefaultsToLoopback(t *testing.T) {
	for _, addr := range []string{"", ":0"} {
		t.Run(fmt.Sprintf("addr=%q", addr), func(t *testing.T) {
			s, _ := newHubService(t)
			cs := connect(t, s)
			args := map[string]any{}
			if addr != "" {
				args["addr"] = addr
			} else if busy := listenerOn(t, tools.DefaultWSAddr); busy {
				// The documented default port is taken on this machine; the error must say so.
				got := call(t, cs, "ws_start", args, nil)
				if !strings.Contains(got, "addr: 127.0.0.1:8080 is already in use") {
					t.Fatalf("ws_start on a busy default port: %q", got)
				}
				return
			}
			var out tools.WSStartOutput
			mustCall(t, cs, "ws_start", args, &out)
			host, _, _ := net.SplitHostPort(out.Addr)
			if host != "127.0.0.1" || !strings.Contains(out.Message, "loopback") || !strings.Contains(out.Message, "ws://"+out.Addr+"/ws") {
				t.Fatalf("ws_start(%q) = %+v, want a loopback bind that the message explains", addr, out)
			}
			if addr == "" && !strings.HasSuffix(out.Addr, ":8080") {
				t.Fatalf("default ws_start bound %s, want port 8080", out.Addr)
			}
		})
	}
}

// listenerOn reports whether addr is already taken (by another program or test).
func listenerOn(t *testing.T, addr string) bool {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return true
	}
	ln.Close()
	return false
}

func TestWSStartErrorsNameFieldAndFix(t *testing.T) {
	s, _ := newHubService(t)
	cs := connect(t, s)
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { busy.Close() })
	cases := []struct {
		addr string
		want []string
	}{
		{"8080", []string{"addr", "not host:port", ":8080"}},
		{"localhost:http", []string{"addr", "port \"http\"", "0 to 65535"}},
		{"127.0.0.1:70000", []string{"addr", "0 to 65535"}},
		{busy.Addr().String(), []string{"addr", busy.Addr().String(), "already in use", "127.0.0.1:0"}},
		{"192.0.2.1:0", []string{"addr", "not an address of this machine"}},
	}
	for _, c := range cases {
		got := call(t, cs, "ws_start", map[string]any{"addr": c.addr}, nil)
		if got == "" {
			t.Errorf("ws_start(%q) succeeded, want an error", c.addr)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("ws_start(%q): error %q lacks %q", c.addr, got, w)
			}
		}
	}
	var info tools.WSInfoOutput
	mustCall(t, cs, "ws_info", map[string]any{}, &info)
	if info.Running {
		t.Fatalf("failed starts left a listener running: %+v", info)
	}
}

func TestWSToolsNeedAHub(t *testing.T) {
	s := newTestService(t)
	cs := connect(t, s)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range res.Tools {
		if strings.HasPrefix(tool.Name, "ws_") {
			t.Fatalf("%s registered without a hub", tool.Name)
		}
	}
}

// TestWSTokenScopedToTheSession: the token ws_start hands a client streams the processes it
// started and the shared channels, never other sessions' calls, approvals or processes; the
// dashboard's (hub) token still reaches everything.
func TestWSTokenScopedToTheSession(t *testing.T) {
	h := wshub.New(wshub.Options{})
	s := newTestService(t, WithWSHub(h), WithProcessService(process.New(process.Options{})))
	mine, other := connect(t, s), connect(t, s)
	var start tools.WSStartOutput
	mustCall(t, mine, "ws_start", map[string]any{"addr": "127.0.0.1:0"}, &start)
	var again tools.WSStartOutput
	mustCall(t, mine, "ws_start", map[string]any{"addr": "127.0.0.1:0"}, &again)
	if again.Token != start.Token {
		t.Error("a second ws_start of the same session gave another token")
	}
	var p1, p2 tools.ProcessStartOutput
	mustCall(t, mine, "process_start", map[string]any{"command": "sleep", "args": []string{"5"}}, &p1)
	mustCall(t, other, "process_start", map[string]any{"command": "sleep", "args": []string{"5"}}, &p2)

	url := "ws://" + start.Addr + "/ws"
	try := func(token, channel string) string {
		t.Helper()
		conn, _, err := (&websocket.Dialer{HandshakeTimeout: 5 * time.Second}).Dial(url, http.Header{"Authorization": {"Bearer " + token}})
		if err != nil {
			t.Fatalf("dial: %v", err)
		}
		defer conn.Close()
		if err := conn.WriteMessage(websocket.TextMessage, []byte(`{"type":"subscribe","channel":"`+channel+`"}`)); err != nil {
			t.Fatal(err)
		}
		var m wshub.Message
		_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		if err := conn.ReadJSON(&m); err != nil {
			t.Fatalf("%s: %v", channel, err)
		}
		if m.Type == wshub.TypeError {
			return fmt.Sprint(m.Data)
		}
		return m.Type
	}
	for ch, want := range map[string]string{
		"processes": wshub.TypeSubscribed, channel.ProcessPrefix + p1.ID: wshub.TypeSubscribed,
		channel.ProcessPrefix + p2.ID: "not open to this token", channel.Activity: "not open to this token",
		channel.Approvals: "not open to this token", channel.Sessions: "not open to this token", channel.Todos: "not open to this token",
	} {
		if got := try(start.Token, ch); !strings.Contains(got, want) {
			t.Errorf("client token, %s: %q, want %q", ch, got, want)
		}
	}
	if got := try(h.Token(), channel.Activity); got != wshub.TypeSubscribed {
		t.Errorf("dashboard token, activity: %q", got)
	}
}

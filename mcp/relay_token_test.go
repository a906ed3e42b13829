//go:build unix

package mcp

import (
	"bufio"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-hub/switchboard/internal/clienttokens"
	"github.com/switchboard-hub/switchboard/internal/testutil"
	mcptransport "github.com/switchboard-hub/switchboard/mcp/transport"
)

// relayLines sends lines on a new connection to network/addr and returns the connection and a
// reader of the hub's lines.
func relayLines(t *testing.T, network, addr string, lines ...string) (net.Conn, *bufio.Scanner) {
	t.Helper()
	conn, err := net.Dial(network, addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	for _, l := range lines {
		if _, err := conn.Write([]byte(l + "\n")); err != nil {
			break // the hub refused an earlier line and closed: what it said is still to be read
		}
	}
	_ = conn.SetReadDeadline(time.Now().Add(testutil.Patience))
	sc := bufio.NewScanner(conn)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	return conn, sc
}

func nextLine(t *testing.T, sc *bufio.Scanner) map[string]any {
	t.Helper()
	if !sc.Scan() {
		t.Fatalf("the hub closed the connection: %v", sc.Err())
	}
	var m map[string]any
	if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
		t.Fatalf("%v: %s", err, sc.Bytes())
	}
	return m
}

func helloLine(id, token string) string {
	m := map[string]any{"jsonrpc": "2.0", "method": mcptransport.RelayMethod, "params": map[string]any{"cwd": "/tmp", "client_token": token}}
	if id != "" {
		m["id"] = id
	}
	b, _ := json.Marshal(m)
	return string(b)
}

// TestRelayClientTokenOverTCPAndSocket: the relay's hello carries a client token over TCP (after
// the TCP handshake) and the Unix socket; the hub names the connection's Sessions entry after it.
// Hostile hellos are refused and the connection closed: a token the hub never issued (as a
// request and as a notification), a token presented after the first request, a revoked one.
// Revoking a token ends the connection it opened.
func TestRelayClientTokenOverTCPAndSocket(t *testing.T) {
	s := newTestService(t)
	store, err := clienttokens.Open(filepath.Join(t.TempDir(), "client-tokens.json"))
	if err != nil {
		t.Fatal(err)
	}
	codex, _ := store.Issue("codex")
	dir, err := os.MkdirTemp("", "sb-relay-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock := filepath.Join(dir, "mcp.sock")
	tr := s.NewTransports(TransportConfig{UnixPath: sock, TCPAddr: "127.0.0.1:0", TCPToken: "tcp-secret", TCPRequireToken: true, HTTPClientTokens: store})
	for _, n := range []string{TransportUnix, TransportTCP} {
		if err := tr.Start(n); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { tr.StopAll(t.Context()) })
	tcp := tr.Addr(TransportTCP)
	auth := `{"jsonrpc":"2.0","method":"switchboard/auth","params":{"token":"tcp-secret"}}`
	init := strings.Split(strings.TrimSpace(initLine), "\n")

	identityOn := func(transport string) bool {
		for _, si := range s.Sessions().List() {
			if si.Identity == "codex" && si.Transport == transport {
				return true
			}
		}
		return false
	}
	// TCP: the handshake, then the hello with the client's token, then MCP. A second hello, with
	// another client's token or none, does not change whose connection it is.
	gemini, _ := store.Issue("gemini")
	_, sc := relayLines(t, "tcp", tcp, append([]string{auth, helloLine("h", codex), helloLine("h2", gemini), helloLine("", "")}, init...)...)
	for _, id := range []string{"h", "h2"} {
		if m := nextLine(t, sc); m["id"] != id || m["error"] != nil {
			t.Fatalf("the hello %s over TCP: %v", id, m)
		}
	}
	if m := nextLine(t, sc); m["id"] != float64(0) || m["result"] == nil {
		t.Fatalf("initialize after the hello: %v", m)
	}
	testutil.Eventually(t, "the TCP session named codex", func() bool { return identityOn("tcp") })
	for _, si := range s.Sessions().List() {
		if si.Identity == "gemini" {
			t.Errorf("a second hello renamed the connection: %+v", si)
		}
	}

	refused := func(what string, sc *bufio.Scanner, wantID any, want string) {
		t.Helper()
		m := nextLine(t, sc)
		e, _ := m["error"].(map[string]any)
		if m["id"] != wantID || e == nil || e["code"] != float64(mcptransport.CodeUnauthorized) || !strings.Contains(e["message"].(string), want) {
			t.Errorf("%s: %v, want error %d with %q", what, m, mcptransport.CodeUnauthorized, want)
		}
		if sc.Scan() {
			t.Errorf("%s: the connection goes on: %s", what, sc.Bytes())
		}
	}
	bogus := "sbc_" + strings.Repeat("0", 64)
	_, sc = relayLines(t, "unix", sock, append([]string{helloLine("h", bogus)}, init...)...)
	refused("a token never issued", sc, "h", "run `switchboard clients connect NAME` again")
	_, sc = relayLines(t, "unix", sock, append([]string{helloLine("", "not-a-token\x00"+strings.Repeat("x", 1<<16))}, init...)...)
	refused("a hostile token in a notification", sc, nil, "client token refused")
	conn, sc := relayLines(t, "unix", sock, init...)
	nextLine(t, sc) // initialize's reply, before the late hello: the refusal closes the connection
	if _, err := conn.Write([]byte(helloLine("h", codex) + "\n")); err != nil {
		t.Fatal(err)
	}
	refused("a token after the first request", sc, "h", "counts only before the connection's first request")

	// The Unix socket: the hello names the session; revoking the token ends the connection.
	_, sc = relayLines(t, "unix", sock, append([]string{helloLine("h", codex)}, init...)...)
	if m := nextLine(t, sc); m["id"] != "h" || m["error"] != nil {
		t.Fatalf("the hello over the socket: %v", m)
	}
	nextLine(t, sc)
	testutil.Eventually(t, "the socket session named codex", func() bool { return identityOn("unix") })
	if _, err := store.Revoke("codex"); err != nil {
		t.Fatal(err)
	}
	if sc.Scan() {
		t.Fatalf("after the revocation the connection goes on: %s", sc.Bytes())
	}
	_, sc = relayLines(t, "unix", sock, append([]string{helloLine("h", codex)}, init...)...)
	refused("a revoked token", sc, "h", "client token refused")
}

package ide

import (
	"crypto/tls"
	"crypto/x509"
	"github.com/switchboard-hub/switchboard/internal/agentic"
	"io"
	"log"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/gorilla/websocket"

	"github.com/switchboard-hub/switchboard/internal/agentic/protocol"
	"github.com/switchboard-hub/switchboard/internal/testutil"
)

func TestPlaintextTokenWarning(t *testing.T) {
	for _, c := range []struct {
		url, token string
		warn       bool
	}{
		{"ws://localhost:9876/ws", "t", false},
		{"ws://127.0.0.1:9876/ws", "t", false},
		{"ws://[::1]:9876/ws", "t", false},
		{"ws://backend.example.com/ws", "t", true},
		{"ws://10.0.0.5:9876/ws", "t", true},
		{"WS://10.0.0.5:9876/ws", "t", true},
		{"ws://10.0.0.5:9876/ws", "", false}, // no token, nothing to leak
		{"wss://backend.example.com/ws", "t", false},
	} {
		if got := agentic.PlaintextTokenWarning(c.url, c.token); (got != "") != c.warn {
			t.Errorf("PlaintextTokenWarning(%q, %q) = %q, want warning %v", c.url, c.token, got, c.warn)
		}
	}
}

// A token bound for a non-loopback host over ws:// is warned about when the bridge starts.
func TestBridgeWarnsAboutPlaintextToken(t *testing.T) {
	var logs testutil.SyncBuffer
	startSubsystem(t, nil, "ws://192.0.2.1:9/ws", WithToken("secret"), WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	if !strings.Contains(logs.String(), "clear text over ws://") || !strings.Contains(logs.String(), "wss://") {
		t.Fatalf("no plaintext-token warning in the log:\n%s", logs.String())
	}
}

// wss:// works: the bridge dials a TLS backend, presents its token inside TLS and is online.
func TestBridgeOverWSS(t *testing.T) {
	var mu sync.Mutex
	var auth []string
	var sawTLS bool
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auth = append(auth, r.Header.Get("Authorization"))
		sawTLS = r.TLS != nil
		mu.Unlock()
		conn, err := (&websocket.Upgrader{}).Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer conn.Close()
		for {
			var m protocol.Message
			if err := conn.ReadJSON(&m); err != nil {
				return
			}
			if m.Type == protocol.TypeSessionList {
				reply, _ := protocol.New(protocol.TypeSessionList, "", protocol.SessionList{Sessions: []protocol.Session{{ID: "s-tls", Name: "over tls", Status: "active"}}})
				reply.RequestID = m.RequestID
				_ = conn.WriteJSON(reply)
			}
		}
	}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused-certificate dial below is expected
	srv.StartTLS()
	t.Cleanup(srv.Close)
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	url := "wss" + strings.TrimPrefix(srv.URL, "https") + "/ws"
	var logs testutil.SyncBuffer
	sub := startSubsystem(t, nil, url, WithToken("tls-token"), WithTLSConfig(&tls.Config{RootCAs: pool}),
		WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	testutil.Eventually(t, "connected over wss", func() bool { return sub.BridgeStatus().Connected })
	cs := connectTools(t, sub)
	list := callTool[SessionListOutput](t, cs, "ide_session_list", nil)
	if !list.BridgeOnline || list.Warning != "" || len(list.Sessions) != 1 || list.Sessions[0].ID != "s-tls" {
		t.Fatalf("session_list over wss = %+v", list)
	}
	mu.Lock()
	defer mu.Unlock()
	if !sawTLS || len(auth) == 0 || auth[0] != "Bearer tls-token" {
		t.Fatalf("backend saw TLS %v, Authorization %q", sawTLS, auth)
	}
	if strings.Contains(logs.String(), "clear text") {
		t.Fatalf("warned about wss://: %s", logs.String())
	}

	// Without the CA the certificate is refused: TLS is really verified.
	sub2 := startSubsystem(t, nil, url, WithToken("tls-token"))
	testutil.Eventually(t, "a failed dial", func() bool { return sub2.BridgeStatus().Attempts > 0 && sub2.BridgeStatus().LastError != "" })
	if st := sub2.BridgeStatus(); st.Connected || !strings.Contains(st.LastError, "certificate") {
		t.Fatalf("untrusted certificate accepted or not reported: %+v", st)
	}
}

package ide

import (
	"context"
	"github.com/switchboard-hub/switchboard/internal/agentic"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/switchboard-hub/switchboard/internal/agentic/protocol"
	"github.com/switchboard-hub/switchboard/internal/testutil"
)

// TestBridgeContainsAPanicFromABackendMessage: a backend whose message makes the hub's handler
// panic ends that connection with an error; the process lives on and the bridge reconnects.
func TestBridgeContainsAPanicFromABackendMessage(t *testing.T) {
	var dials atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, err := (&websocket.Upgrader{}).Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer conn.Close()
		dials.Add(1)
		_ = conn.WriteJSON(protocol.Message{Type: "poison"})
		_, _, _ = conn.ReadMessage() // until the bridge hangs up
	}))
	defer srv.Close()
	var applied atomic.Int32
	b := agentic.NewBridge(agentic.Config{BackendURL: "ws" + strings.TrimPrefix(srv.URL, "http"), ReconnectInterval: 20 * time.Millisecond,
		MaxReconnectInterval: 50 * time.Millisecond, ResponseWait: time.Second, Logger: quietLogger()},
		agentic.BridgeHooks{OnMessage: func(m protocol.Message) {
			applied.Add(1)
			panic("handler bug on " + m.Type) // what a nil map or pointer reached by a hostile message raises
		}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b.Start(ctx)
	defer b.Stop(context.Background())
	testutil.Eventually(t, "the bridge to reconnect after the panic", func() bool { return dials.Load() >= 2 && applied.Load() >= 2 })
	if st := b.Status(); !strings.Contains(st.LastError, "could not be applied") && st.Connected {
		// Connected again already: the error was recorded before the reconnect.
		t.Logf("status after reconnect: %+v", st)
	}
}

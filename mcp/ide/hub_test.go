package ide

import (
	"context"
	"encoding/json"
	"github.com/switchboard-hub/switchboard/internal/agentic"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/switchboard-hub/switchboard/internal/testutil"
	"github.com/switchboard-hub/switchboard/internal/wshub"
	"github.com/switchboard-hub/switchboard/mcp/ide/agenticsim"
)

// hubClient is a dashboard stand-in: a WebSocket client of the real hub.
type hubClient struct {
	t    *testing.T
	conn *websocket.Conn
}

func (c *hubClient) subscribe(channel string) {
	c.t.Helper()
	if err := c.conn.WriteJSON(map[string]string{"type": "subscribe", "channel": channel}); err != nil {
		c.t.Fatal(err)
	}
}

// until reads frames until match accepts one, returning it.
func (c *hubClient) until(what string, match func(wshub.Message, map[string]any) bool) map[string]any {
	c.t.Helper()
	_ = c.conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	for {
		_, raw, err := c.conn.ReadMessage()
		if err != nil {
			c.t.Fatalf("waiting for %s: %v", what, err)
		}
		var env struct {
			wshub.Message
			Data json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal(raw, &env); err != nil {
			c.t.Fatalf("bad hub frame %s: %v", raw, err)
		}
		var data map[string]any
		_ = json.Unmarshal(env.Data, &data)
		if match(env.Message, data) {
			return data
		}
	}
}

// TestRealHubDelivers wires the subsystem to a real internal/wshub.Hub and
// watches its channels through a WebSocket client, as the dashboard does.
func TestRealHubDelivers(t *testing.T) {
	h := wshub.New(wshub.Options{Token: "hubtok", Logger: quietLogger()})
	if _, _, err := h.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = h.Shutdown(ctx)
	})
	sim := startSim(t, agenticsim.Options{
		ReplyDelay: 2 * time.Millisecond, LineInterval: 2 * time.Millisecond,
		Reply: func(_, m string) string { return "ok: " + m },
	})
	sub := startSubsystem(t, h, sim.URL())
	testutil.Eventually(t, "bridge connected", func() bool { return sub.BridgeStatus().Connected })

	conn, _, err := websocket.DefaultDialer.Dial(h.URL()+"?token=hubtok", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	c := &hubClient{t: t, conn: conn}

	c.subscribe(agentic.ChannelBridge)
	c.until("ide:bridge snapshot", func(m wshub.Message, d map[string]any) bool {
		return m.Type == wshub.TypeSnapshot && m.Channel == agentic.ChannelBridge && d["connected"] == true
	})

	c.subscribe(agentic.ChannelSessions)
	c.until("ide:sessions snapshot", func(m wshub.Message, d map[string]any) bool {
		return m.Type == wshub.TypeSnapshot && m.Channel == agentic.ChannelSessions
	})
	sess := sim.CreateSession("via hub")
	c.until("session event", func(m wshub.Message, d map[string]any) bool {
		s, _ := d["session"].(map[string]any)
		return m.Type == wshub.TypeEvent && m.Channel == agentic.ChannelSessions && d["kind"] == "session" && s["id"] == sess.ID
	})

	c.subscribe(agentic.PrefixChat + sess.ID)
	c.until("chat snapshot", func(m wshub.Message, d map[string]any) bool {
		return m.Type == wshub.TypeSnapshot && d["sessionId"] == sess.ID
	})
	if _, err := sub.SendChat(context.Background(), sess.ID, "ping"); err != nil {
		t.Fatal(err)
	}
	var streamed strings.Builder
	final := c.until("final assistant message", func(m wshub.Message, d map[string]any) bool {
		if m.Channel != agentic.PrefixChat+sess.ID || m.Type != wshub.TypeEvent {
			return false
		}
		if d["kind"] == "delta" {
			streamed.WriteString(d["content"].(string))
		}
		msg, _ := d["message"].(map[string]any)
		return d["kind"] == "message" && msg["role"] == "assistant"
	})
	if got := final["message"].(map[string]any)["content"]; got != "ok: ping" || streamed.String() != "ok: ping" {
		t.Errorf("final %v, streamed %q", got, streamed.String())
	}

	c.subscribe(agentic.ChannelBuilds)
	b := sim.StartBuild("repo", "main", 3, true)
	c.until("build event", func(m wshub.Message, d map[string]any) bool {
		bi, _ := d["build"].(map[string]any)
		return m.Channel == agentic.ChannelBuilds && m.Type == wshub.TypeEvent && bi["id"] == b.ID
	})
	testutil.Eventually(t, "build finished in store", func() bool {
		info, _ := sub.Store().Build(b.ID)
		return info.Status == "success"
	})
	c.subscribe(agentic.PrefixBuild + b.ID)
	snap := c.until("build snapshot", func(m wshub.Message, d map[string]any) bool {
		return m.Type == wshub.TypeSnapshot && m.Channel == agentic.PrefixBuild+b.ID
	})
	if lines, _ := snap["lines"].([]any); len(lines) != 3 || snap["total"] != float64(3) {
		t.Errorf("build snapshot = %v", snap)
	}
}

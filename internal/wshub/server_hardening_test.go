package wshub

import (
	"bufio"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

// TestStrangerSlowBodyClosedAtOnce: a request without the token that announces a large body and
// trickles it gets its 401 and a closed connection at once; the hub's own server has read, idle
// and header limits (WebSocket connections are hijacked, and gorilla clears their deadlines).
func TestStrangerSlowBodyClosedAtOnce(t *testing.T) {
	h := newHub(t, Options{})
	u := startHub(t, h)
	addr := strings.TrimSuffix(strings.TrimPrefix(u, "ws://"), "/ws")
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "POST /ws HTTP/1.1\r\nHost: "+addr+"\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n\r\n{")
	go func() { // trickles until the server closes: the slowness is the attack, so it sleeps on purpose
		for i := 0; i < 50; i++ {
			time.Sleep(100 * time.Millisecond)
			if _, err := c.Write([]byte(" ")); err != nil {
				return
			}
		}
	}()
	c.SetReadDeadline(time.Now().Add(4 * time.Second))
	start := time.Now()
	br := bufio.NewReader(c)
	status, _ := br.ReadString('\n')
	_, err = io.ReadAll(br)
	if !strings.Contains(status, "401") || err != nil || time.Since(start) > 2*time.Second {
		t.Errorf("stranger's slow body: %q, then %v after %v; want 401 and a close", status, err, time.Since(start))
	}
	h.srvMu.Lock()
	srv := h.srv
	h.srvMu.Unlock()
	if srv.ReadTimeout == 0 || srv.IdleTimeout == 0 || srv.MaxHeaderBytes == 0 {
		t.Errorf("hub server limits: read %v idle %v header bytes %d", srv.ReadTimeout, srv.IdleTimeout, srv.MaxHeaderBytes)
	}
}

// Package fakecdp is a DevTools endpoint for tests: a real HTTP and websocket server on
// 127.0.0.1 that speaks just enough of the Chrome DevTools Protocol for the hub to connect
// (/json/version, the Target.* commands, a page session) and can send messages a real browser
// never would, to test that a hostile endpoint cannot take the hub down.
package fakecdp

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"

	"github.com/gorilla/websocket"
)

// IDs of the one page the fake browser has.
const (
	TargetID  = "FAKETARGET0000000000000000000000"
	SessionID = "FAKESESSION00000000000000000000"
)

// Inject is a raw message the server sends right after it has answered a command with the
// method After. "{session}" in Message is replaced by the page's session id.
type Inject struct {
	After   string
	Message string
}

// Options shape what the fake browser says beyond the well-formed minimum.
type Options struct {
	// Inject: messages sent after the answers to given commands.
	Inject []Inject
	// Results replace the result of a command (by method) with raw JSON.
	Results map[string]string
}

// Server is a running fake endpoint.
type Server struct {
	// URL is the http://127.0.0.1:port address to give webview_connect.
	URL string

	srv  *http.Server
	ln   net.Listener
	opts Options
	wg   sync.WaitGroup
	mu   sync.Mutex
	hits int
	seen []string
	conn []*websocket.Conn
}

// Start serves on a free loopback port until Close.
func Start(opts Options) (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("fakecdp: listen: %w", err)
	}
	s := &Server{URL: "http://" + ln.Addr().String(), ln: ln, opts: opts}
	mux := http.NewServeMux()
	mux.HandleFunc("/json/version", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"Browser":"FakeChrome/1.0","Protocol-Version":"1.3","webSocketDebuggerUrl":"ws://%s/devtools/browser/fake"}`, r.Host)
	})
	mux.HandleFunc("/devtools/browser/fake", s.serveWS)
	s.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.hits++
		s.mu.Unlock()
		mux.ServeHTTP(w, r)
	})}
	s.wg.Go(func() { _ = s.srv.Serve(ln) })
	return s, nil
}

// Methods lists the commands received so far, in order.
func (s *Server) Methods() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.seen...)
}

// Hits counts the HTTP requests (the websocket handshake included) the server has had.
func (s *Server) Hits() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hits
}

// Close stops the server and drops its connections.
func (s *Server) Close() {
	_ = s.srv.Close()
	s.mu.Lock()
	for _, c := range s.conn {
		_ = c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

var upgrader = websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}

func (s *Server) serveWS(w http.ResponseWriter, r *http.Request) {
	c, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	s.mu.Lock()
	s.conn = append(s.conn, c)
	s.mu.Unlock()
	defer c.Close()
	for {
		var msg struct {
			ID        int64           `json:"id"`
			SessionID string          `json:"sessionId"`
			Method    string          `json:"method"`
			Params    json.RawMessage `json:"params"`
		}
		if err := c.ReadJSON(&msg); err != nil {
			return
		}
		s.mu.Lock()
		s.seen = append(s.seen, msg.Method)
		s.mu.Unlock()
		res, ok := s.opts.Results[msg.Method]
		if !ok {
			res = result(msg.Method)
		}
		reply := map[string]any{"id": msg.ID, "result": json.RawMessage(res)}
		if msg.SessionID != "" {
			reply["sessionId"] = msg.SessionID
		}
		if err := c.WriteJSON(reply); err != nil {
			return
		}
		if msg.Method == "Target.closeTarget" { // as Chrome does, so a disconnect need not wait
			if err := c.WriteMessage(websocket.TextMessage, []byte(`{"method":"Target.targetDestroyed","params":{"targetId":"`+TargetID+`"}}`)); err != nil {
				return
			}
		}
		for _, in := range s.opts.Inject {
			if in.After == msg.Method {
				if err := c.WriteMessage(websocket.TextMessage, []byte(strings.ReplaceAll(in.Message, "{session}", SessionID))); err != nil {
					return
				}
			}
		}
	}
}

// frame is a top-level frame as Chrome describes it.
const frame = `{"id":"` + TargetID + `","loaderId":"LOADER","url":"about:blank","domainAndRegistry":"","securityOrigin":"://","mimeType":"text/html","secureContextType":"InsecureScheme","crossOriginIsolatedContextType":"NotIsolated","gatedAPIFeatures":[]}`

const targetInfo = `{"targetId":"` + TargetID + `","type":"page","title":"about:blank","url":"about:blank","attached":true,"canAccessOpener":false}`

// result is the answer to a command: what Chrome answers for the ones the hub reads, {} else.
func result(method string) string {
	switch method {
	case "Target.createTarget":
		return `{"targetId":"` + TargetID + `"}`
	case "Target.attachToTarget":
		return `{"sessionId":"` + SessionID + `"}`
	case "Target.getTargets":
		return `{"targetInfos":[` + targetInfo + `]}`
	case "Target.getTargetInfo":
		return `{"targetInfo":` + targetInfo + `}`
	case "Runtime.evaluate":
		return `{"result":{"type":"object","className":"Window","description":"Window","objectId":"1"}}`
	case "Page.getFrameTree":
		return `{"frameTree":{"frame":` + frame + `}}`
	case "DOM.getDocument":
		return `{"root":{"nodeId":1,"backendNodeId":1,"nodeType":9,"nodeName":"#document","localName":"","nodeValue":"","childNodeCount":0}}`
	}
	return `{}`
}

package transport

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/switchboard-hub/switchboard/internal/testutil"
)

// FuzzLineFraming feeds arbitrary bytes to the line transport, as a socket connection (first-line
// check, optional token) or as stdio, with a small message cap. Whatever arrives, the connection
// must not panic or hang, every message it hands on must be well-formed, every call answered
// through it must come back with the id exactly as sent, and everything it writes must be one JSON
// value per line.
//
// The seed corpus runs in `go test`; fuzz longer with
// `go test ./mcp/transport -run '^$' -fuzz FuzzLineFraming -fuzztime 5m`.
// initLine is a client's opening: initialize and its notification.
const initLine = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}` + "\n" +
	`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"

func FuzzLineFraming(f *testing.F) {
	seeds := []string{
		initLine,
		`{"jsonrpc":"2.0","id":1.5,"method":"ping"}` + "\n" + `{"jsonrpc":"2.0","id":1e400,"method":"ping"}` + "\n",
		`{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{}}` + "\n\n\r\n" + `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"a"}}`,
		"POST / HTTP/1.1\r\nHost: x\r\n\r\n" + initLine,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"bad":1},{"jsonrpc":"2.0","method":"n"}]` + "\n" + `[]` + "\n",
		`{"jsonrpc":"2.0","method":"switchboard/auth","params":{"token":"tok"}}` + "\n" + initLine,
		`{"jsonrpc":"2.0","id":7,"result":{}}` + "\n" + `{"jsonrpc":"2.0","id":8,"error":{"code":1,"message":"x"}}` + "\n",
		strings.Repeat("x", 300) + "\n" + `{"jsonrpc":"2.0","id":2,"method":"ping","params":"` + strings.Repeat("y", 300) + `"}` + "\n",
		`{"jsonrpc":"1.0","id":{},"method":1}` + "\n" + `{"id":` + "\n" + "\x00\xff\xfe\n",
	}
	for _, s := range seeds {
		for _, mode := range []byte{0, 1, 2} {
			f.Add([]byte(s), mode)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte, mode byte) {
		out := &testutil.SyncBuffer{}
		lt := &lineTransport{r: io.NopCloser(bytes.NewReader(data)), w: out, maxSize: 256}
		switch mode % 3 {
		case 1:
			lt.opts = lineOptions{socket: true}
		case 2:
			lt.opts = lineOptions{socket: true, token: "tok"}
		}
		conn, err := lt.Connect(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		var answered sync.WaitGroup
		for {
			msg, err := conn.Read(ctx)
			if err != nil {
				if errors.Is(err, context.DeadlineExceeded) {
					t.Fatalf("Read hung on %q", data)
				}
				break
			}
			switch m := msg.(type) {
			case *jsonrpc.Request:
				if m.IsCall() {
					if !m.ID.IsValid() {
						t.Fatalf("call with an invalid id handed on: %+v", m)
					}
					answered.Add(1)
					go func() { // answers like a server would, concurrently with reading
						defer answered.Done()
						_ = conn.Write(ctx, &jsonrpc.Response{ID: m.ID, Result: json.RawMessage(`{"ok":true}`)})
					}()
				}
			case *jsonrpc.Response:
				if !m.ID.IsValid() {
					t.Fatalf("response without id handed on: %+v", m)
				}
			default:
				t.Fatalf("unexpected message type %T", msg)
			}
		}
		answered.Wait()
		for _, line := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
			if line == "" {
				continue
			}
			if !json.Valid([]byte(line)) {
				t.Fatalf("wrote a line that is not JSON: %q (input %q)", line, data)
			}
			if strings.Contains(line, aliasPrefix) || strings.Contains(line, `\u0000switchboard-id-`) && !bytes.Contains(data, []byte(`\u0000switchboard-id-`)) {
				t.Fatalf("a stand-in id leaked to the client: %q (input %q)", line, data)
			}
		}
	})
}

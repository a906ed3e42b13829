package wshub

import (
	"bufio"
	"errors"
	"net"
	"net/http"
	"sync"
)

// maxBatchBytes caps how much one coalesced write holds; a frame at least
// this large is written straight through.
const maxBatchBytes = 64 << 10

var batchBufs = sync.Pool{New: func() any { b := make([]byte, 0, maxBatchBytes); return &b }}

// batchConn lets a client's writer goroutine coalesce the frames it drains
// from its queue into one write system call. gorilla/websocket issues one
// write per frame; with a backlog (a burst of process output, a fan-out to
// many clients) those syscalls were ~70% of the hub's CPU in
// BenchmarkFanout100/window=64, and batching them is where the throughput
// gain in docs/benchmarks.md comes from. Outside a batch (control frames,
// a lone event) writes go straight through, so latency is unchanged.
type batchConn struct {
	net.Conn
	mu     sync.Mutex // gorilla serialises its writes, but flush runs from our goroutine
	corked bool
	buf    *[]byte
}

// cork starts a batch: later writes are buffered until uncork.
func (b *batchConn) cork() {
	b.mu.Lock()
	b.corked = true
	b.mu.Unlock()
}

// uncork ends the batch and writes what it holds, under the write deadline
// gorilla last set on the connection.
func (b *batchConn) uncork() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.corked = false
	return b.flushLocked()
}

func (b *batchConn) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.corked {
		if err := b.flushLocked(); err != nil {
			return 0, err
		}
		return b.Conn.Write(p)
	}
	if b.buf != nil && len(*b.buf)+len(p) > maxBatchBytes {
		if err := b.flushLocked(); err != nil {
			return 0, err
		}
	}
	if len(p) >= maxBatchBytes {
		return b.Conn.Write(p)
	}
	if b.buf == nil {
		b.buf = batchBufs.Get().(*[]byte)
	}
	*b.buf = append(*b.buf, p...)
	return len(p), nil
}

func (b *batchConn) flushLocked() error {
	if b.buf == nil {
		return nil
	}
	buf := b.buf
	b.buf = nil
	_, err := b.Conn.Write(*buf)
	*buf = (*buf)[:0]
	batchBufs.Put(buf) // idle clients hold no batch buffer
	return err
}

// hijackCapture hands gorilla a batchConn instead of the raw connection.
type hijackCapture struct {
	http.ResponseWriter
	conn *batchConn
}

func (w *hijackCapture) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	hj, ok := w.ResponseWriter.(http.Hijacker)
	if !ok {
		return nil, nil, errors.New("hub: the server's ResponseWriter cannot be hijacked; mount the hub without response-wrapping middleware")
	}
	conn, brw, err := hj.Hijack()
	if err != nil {
		return nil, nil, err
	}
	w.conn = &batchConn{Conn: conn}
	return w.conn, brw, nil
}

//go:build unix

package process

import (
	"context"
	"io"
	"os/exec"
	"strconv"
	"testing"
)

const benchChunk = 64 << 10

// BenchmarkCapture measures output capture throughput: one process writes b.N*64 KiB to stdout
// and the Service captures it into the default 4 MiB ring.
func BenchmarkCapture(b *testing.B) {
	benchCapture(b, false)
}

// BenchmarkCaptureWithListener is BenchmarkCapture with an event subscriber, which costs a copy
// of every chunk.
func BenchmarkCaptureWithListener(b *testing.B) {
	benchCapture(b, true)
}

func benchCapture(b *testing.B, listen bool) {
	s := New(Options{})
	b.Cleanup(func() { _ = s.Shutdown(context.Background()) })
	var seen int64
	if listen {
		defer s.Subscribe(func(ev Event) {
			if ev.Chunk != nil {
				seen += int64(len(ev.Chunk.Data))
			}
		})()
	}
	total := int64(b.N) * benchChunk
	b.SetBytes(benchChunk)
	b.ResetTimer()
	info, err := s.Start(context.Background(), StartOptions{Command: "head", Args: []string{"-c", strconv.FormatInt(total, 10), "/dev/zero"}})
	if err != nil {
		b.Fatal(err)
	}
	final, err := s.Wait(context.Background(), info.ID)
	if err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	if final.OutputBytes != total || (listen && seen != total) {
		b.Fatalf("captured %d (listener %d) of %d bytes", final.OutputBytes, seen, total)
	}
}

// BenchmarkCapturePeerRawPipe is the peer for BenchmarkCapture: the same producer read through
// os/exec's StdoutPipe straight into io.Discard, i.e. the pipe's ceiling with no bookkeeping.
func BenchmarkCapturePeerRawPipe(b *testing.B) {
	total := int64(b.N) * benchChunk
	b.SetBytes(benchChunk)
	b.ResetTimer()
	cmd := exec.Command("head", "-c", strconv.FormatInt(total, 10), "/dev/zero")
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	n, err := io.CopyBuffer(io.Discard, out, make([]byte, readBufferSize))
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	if n != total {
		b.Fatalf("read %d of %d bytes", n, total)
	}
}

// BenchmarkRingWrite measures the ring alone, alternating streams, with the buffer full.
func BenchmarkRingWrite(b *testing.B) {
	r := newOutputRing(defaultBufferSize)
	p := make([]byte, 4096)
	streams := []string{StreamStdout, StreamStderr}
	b.SetBytes(int64(len(p)))
	for i := 0; b.Loop(); i++ {
		r.Write(streams[i&1], p)
	}
}

// BenchmarkExec measures a full Exec of `true` (fork, exec, pipes, reap).
func BenchmarkExec(b *testing.B) {
	s := New(Options{})
	b.Cleanup(func() { _ = s.Shutdown(context.Background()) })
	for b.Loop() {
		if _, err := s.Exec(context.Background(), ExecOptions{Command: "true"}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkExecPeerOSExec is the peer for BenchmarkExec: exec.Command("true").Output().
func BenchmarkExecPeerOSExec(b *testing.B) {
	for b.Loop() {
		if _, err := exec.Command("true").Output(); err != nil {
			b.Fatal(err)
		}
	}
}

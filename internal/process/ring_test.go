package process

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
)

// ringModel is the obvious, unbounded implementation the ring must agree with.
type ringModel struct {
	data []byte
	runs []segment // stream runs: run i starts at runs[i].off
}

func (m *ringModel) write(stream string, p []byte) {
	if len(p) == 0 {
		return
	}
	m.runs = append(m.runs, segment{off: int64(len(m.data)), stream: stream})
	m.data = append(m.data, p...)
}

// checkChunk fails unless every byte of c came from c.Stream.
func (m *ringModel) checkChunk(t *testing.T, c Chunk) {
	t.Helper()
	end := c.Offset + int64(len(c.Data))
	// The run holding c's first byte, then every run starting inside c.
	i := sort.Search(len(m.runs), func(i int) bool { return m.runs[i].off > c.Offset }) - 1
	for ; i < len(m.runs) && m.runs[i].off < end; i++ {
		if m.runs[i].stream != c.Stream {
			t.Fatalf("chunk [%d,%d) is %q but bytes from offset %d came from %q", c.Offset, end, c.Stream, max(m.runs[i].off, c.Offset), m.runs[i].stream)
		}
	}
}

// checkRing compares r.Read(from) with the model's last kept bytes.
func checkRing(t *testing.T, r *outputRing, m *ringModel, from int64) {
	t.Helper()
	if r.End() != int64(len(m.data)) {
		t.Fatalf("End = %d, want %d", r.End(), len(m.data))
	}
	if kept := r.End() - r.Start(); kept > int64(r.max) || r.Cap() > r.max {
		t.Fatalf("kept %d bytes in a %d-byte buffer, budget %d", kept, r.Cap(), r.max)
	}
	data, chunks := r.Read(from)
	lo := max(from, r.Start())
	if lo > r.End() {
		lo = r.End()
	}
	if want := m.data[lo:]; !bytes.Equal(data, want) {
		t.Fatalf("Read(%d) data = %q, want %q", from, data, want)
	}
	next := lo
	for i, c := range chunks {
		if c.Offset != next {
			t.Fatalf("chunk %d offset %d, want %d (chunks must be contiguous)", i, c.Offset, next)
		}
		if len(c.Data) == 0 {
			t.Fatalf("chunk %d is empty", i)
		}
		if i > 0 && chunks[i-1].Stream == c.Stream {
			t.Fatalf("chunks %d and %d both %q: same-stream neighbours must merge", i-1, i, c.Stream)
		}
		m.checkChunk(t, c)
		next += int64(len(c.Data))
	}
	if next != r.End() {
		t.Fatalf("chunks end at %d, want %d", next, r.End())
	}
}

func TestOutputRing(t *testing.T) {
	type write struct {
		stream string
		data   string
	}
	tests := []struct {
		name        string
		max         int
		writes      []write
		wantText    string
		wantDropped int64
		wantStreams []string
	}{
		{"empty", 8, nil, "", 0, nil},
		{"fits", 16, []write{{"stdout", "abc"}, {"stderr", "de"}, {"stdout", "f"}}, "abcdef", 0, []string{"stdout", "stderr", "stdout"}},
		{"same stream merges", 16, []write{{"stdout", "ab"}, {"stdout", "cd"}}, "abcd", 0, []string{"stdout"}},
		{"keeps the tail", 4, []write{{"stdout", "abc"}, {"stderr", "def"}}, "cdef", 2, []string{"stdout", "stderr"}},
		{"oldest segment dropped whole", 4, []write{{"stdout", "ab"}, {"stderr", "cdef"}}, "cdef", 2, []string{"stderr"}},
		{"single write larger than budget", 4, []write{{"stdout", "xy"}, {"stderr", "0123456789"}}, "6789", 8, []string{"stderr"}},
		{"exact budget", 4, []write{{"pty", "abcd"}}, "abcd", 0, []string{"pty"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newOutputRing(tt.max)
			m := &ringModel{}
			for _, w := range tt.writes {
				r.Write(w.stream, []byte(w.data))
				m.write(w.stream, []byte(w.data))
			}
			data, chunks := r.Read(0)
			if string(data) != tt.wantText {
				t.Errorf("text = %q, want %q", data, tt.wantText)
			}
			if r.Start() != tt.wantDropped {
				t.Errorf("dropped = %d, want %d", r.Start(), tt.wantDropped)
			}
			var streams []string
			for _, c := range chunks {
				streams = append(streams, c.Stream)
			}
			if !slices.Equal(streams, tt.wantStreams) {
				t.Errorf("streams = %v, want %v", streams, tt.wantStreams)
			}
			checkRing(t, r, m, 0)
		})
	}
}

// TestOutputRingRandom drives the ring through growth, wrap-around and drops with random writes
// and checks every read against the model.
func TestOutputRingRandom(t *testing.T) {
	for _, size := range []int{1, 7, 100, initialRingSize + 13, 3 * initialRingSize} {
		rng := rand.New(rand.NewPCG(uint64(size), 42))
		r := newOutputRing(size)
		m := &ringModel{}
		streams := []string{"stdout", "stderr"}
		for i := range 200 {
			n := rng.IntN(size/3 + 2)
			if i%50 == 0 {
				n = size + rng.IntN(10) // occasionally larger than the whole budget
			}
			p := make([]byte, n)
			for j := range p {
				p[j] = byte(rng.UintN(256))
			}
			s := streams[rng.IntN(2)]
			r.Write(s, p)
			m.write(s, p)
			checkRing(t, r, m, int64(rng.IntN(len(m.data)+5)))
		}
	}
}

// TestOutputRingSegmentCap: output alternating streams byte by byte must not grow the boundary
// queue beyond maxSegments.
func TestOutputRingSegmentCap(t *testing.T) {
	r := newOutputRing(4 * maxSegments)
	m := &ringModel{}
	streams := []string{"stdout", "stderr"}
	for i := range 3 * maxSegments {
		b := []byte{byte(i)}
		r.Write(streams[i%2], b)
		m.write(streams[i%2], b)
	}
	if n := len(r.segs) - r.head; n > maxSegments {
		t.Fatalf("%d segments kept, cap %d", n, maxSegments)
	}
	if r.Start() == 0 {
		t.Fatal("expected whole segments to be dropped once the cap was reached")
	}
	checkRing(t, r, m, 0)
}

package process

// outputRing keeps the most recent bytes of a process's combined output, remembering which stream
// each byte came from. Every byte ever written has a global offset (0 for the first byte); the
// ring keeps offsets [start, end) and start is also the number of bytes dropped.
//
// Bytes live in one circular buffer (the byte at offset o sits at buf[o % len(buf)]), which grows
// by doubling up to max so that a quiet process does not pin the full budget. Stream boundaries
// are kept as a queue of segments; the queue is capped too, so output that flips between stdout
// and stderr on every byte cannot grow bookkeeping without bound.
//
// Not safe for concurrent use; the owning process serialises access.
type outputRing struct {
	buf   []byte
	max   int
	start int64
	end   int64

	// segs[head:] are the stream segments still (partly) kept, oldest first. Segment i covers
	// [segs[i].off, segs[i+1].off), the last one up to end.
	segs []segment
	head int
}

type segment struct {
	off    int64
	stream string
}

// maxSegments caps the boundary queue. When it is full, the oldest segment is dropped whole even
// if the byte budget would still hold it: memory stays bounded at max + maxSegments*24 bytes.
const maxSegments = 1 << 16

const initialRingSize = 64 << 10

func newOutputRing(max int) *outputRing {
	if max < 1 {
		max = 1
	}
	return &outputRing{max: max}
}

// Write appends p as output of stream, dropping the oldest bytes beyond the budget.
func (r *outputRing) Write(stream string, p []byte) {
	if len(p) == 0 {
		return
	}
	if len(p) >= r.max {
		// Everything currently kept and the head of p fall out; keep the tail of p only.
		r.end += int64(len(p) - r.max)
		r.start = r.end
		r.segs, r.head = r.segs[:0], 0
		p = p[len(p)-r.max:]
	}
	kept := int(r.end - r.start)
	if need := kept + len(p); need > len(r.buf) && len(r.buf) < r.max {
		r.grow(need)
	}
	if over := kept + len(p) - len(r.buf); over > 0 {
		r.start += int64(over)
	}

	if n := len(r.segs); n == r.head || r.segs[n-1].stream != stream {
		if n-r.head >= maxSegments {
			// Drop the oldest segment whole to make room for the new boundary.
			r.start = max(r.start, r.segs[r.head+1].off)
			r.head++
		}
		r.segs = append(r.segs, segment{off: r.end, stream: stream})
	}

	pos := int(r.end % int64(len(r.buf)))
	n := copy(r.buf[pos:], p)
	copy(r.buf, p[n:])
	r.end += int64(len(p))
	r.trimSegments()
}

// grow reallocates the buffer to hold at least need bytes (capped at max) and re-places the kept
// bytes at their new positions.
func (r *outputRing) grow(need int) {
	size := max(len(r.buf), initialRingSize)
	for size < need {
		size *= 2
	}
	size = min(size, r.max)
	next := make([]byte, size)
	if kept := r.end - r.start; kept > 0 {
		tmp := make([]byte, kept)
		r.copyOut(tmp, r.start)
		pos := int(r.start % int64(size))
		n := copy(next[pos:], tmp)
		copy(next, tmp[n:])
	}
	r.buf = next
}

// trimSegments forgets segments that lie wholly before start and compacts the queue when most of
// its backing array is dead, so the slice does not creep forward forever.
func (r *outputRing) trimSegments() {
	for len(r.segs)-r.head > 1 && r.segs[r.head+1].off <= r.start {
		r.head++
	}
	if r.head > 0 && r.head >= len(r.segs)/2 {
		n := copy(r.segs, r.segs[r.head:])
		clear(r.segs[n:])
		r.segs, r.head = r.segs[:n], 0
	}
}

// copyOut fills dst with the bytes starting at global offset from, which must be kept.
func (r *outputRing) copyOut(dst []byte, from int64) {
	pos := int(from % int64(len(r.buf)))
	n := copy(dst, r.buf[pos:])
	copy(dst[n:], r.buf)
}

// Read returns a fresh copy of the kept output from offset from (clamped to what is kept) to the
// end, and the same bytes split at stream boundaries (the chunks alias data).
func (r *outputRing) Read(from int64) (data []byte, chunks []Chunk) {
	from = max(from, r.start)
	if from >= r.end {
		return nil, nil
	}
	data = make([]byte, r.end-from)
	r.copyOut(data, from)

	segs := r.segs[r.head:]
	for i, seg := range segs {
		segEnd := r.end
		if i+1 < len(segs) {
			segEnd = segs[i+1].off
		}
		lo, hi := max(seg.off, from), segEnd
		if lo >= hi {
			continue
		}
		chunks = append(chunks, Chunk{Stream: seg.stream, Offset: lo, Data: data[lo-from : hi-from : hi-from]})
	}
	return data, chunks
}

// Start is the offset of the oldest kept byte, which is also the number of bytes dropped.
func (r *outputRing) Start() int64 { return r.start }

// End is the offset one past the newest byte, which is also the total bytes ever written.
func (r *outputRing) End() int64 { return r.end }

// Cap is the memory currently reserved for bytes (never above the budget).
func (r *outputRing) Cap() int { return len(r.buf) }

package script

import (
	"runtime"
	"runtime/metrics"
	"time"
)

// heapSampleEvery is how often the memory watchdog looks at the heap. An allocation loop adds at
// most a few hundred megabytes in that time on this class of machine; reading runtime/metrics does
// not stop the world, unlike runtime.ReadMemStats.
const heapSampleEvery = 5 * time.Millisecond

// heapWatch measures the process heap's growth since a script started. goja allocates on the Go
// heap with no per-runtime accounting, so growth of the process is the only measure there is; a
// forced collection confirms a suspected excess, so garbage (the script's or anyone's) that the
// next GC would free never stops a script.
type heapWatch struct {
	limit     int64
	baseline  int64
	samples   []metrics.Sample
	lastForce time.Time
}

const (
	metricHeapObjects = "/memory/classes/heap/objects:bytes" // live and not yet swept, now
	metricHeapLive    = "/gc/heap/live:bytes"                // live as of the last GC
)

func newHeapWatch(limit int64) *heapWatch {
	w := &heapWatch{limit: limit, samples: []metrics.Sample{{Name: metricHeapObjects}, {Name: metricHeapLive}}}
	metrics.Read(w.samples)
	w.baseline = int64(w.samples[1].Value.Uint64())
	return w
}

// over reports the growth and whether it passes the limit after a collection.
func (w *heapWatch) over() (int64, bool) {
	metrics.Read(w.samples)
	grown := int64(w.samples[0].Value.Uint64()) - w.baseline
	if grown <= w.limit {
		return grown, false
	}
	// A collection costs milliseconds on a large heap: at most one per 50 ms per script.
	if time.Since(w.lastForce) < 50*time.Millisecond {
		return grown, false
	}
	w.lastForce = time.Now()
	runtime.GC()
	metrics.Read(w.samples)
	grown = int64(w.samples[1].Value.Uint64()) - w.baseline
	return grown, grown > w.limit
}

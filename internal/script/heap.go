package script

import (
	"runtime"
	"runtime/metrics"
	"time"
)

// heapSampleEvery is how often the memory watchdog looks at the heap. Reading runtime/metrics does
// not stop the world (runtime.ReadMemStats does), so sampling this often costs next to nothing.
const heapSampleEvery = 5 * time.Millisecond

// heapWatch measures the process heap's growth since a script started. goja allocates on the Go
// heap with no per-runtime accounting, so growth of the process is the only measure there is. A
// forced collection confirms a suspected excess, so garbage (the script's or anyone's) that the
// next GC would free never stops a script.
type heapWatch struct {
	limit    int64
	baseline int64
	samples  []metrics.Sample
	// A collection costs milliseconds on a large heap, so one is forced only when the heap
	// (objects, live and not yet swept) is past the limit and either has grown by another quarter
	// of the limit since the last forced one or forceEvery has passed: a script that churns
	// garbage does not force one every sample, and a bomb is confirmed soon.
	nextForce int64
	lastForce time.Time
}

const forceEvery = 250 * time.Millisecond

const (
	metricHeapObjects = "/memory/classes/heap/objects:bytes" // live and not yet swept, now
	metricHeapLive    = "/gc/heap/live:bytes"                // live as of the last GC
)

func newHeapWatch(limit int64) *heapWatch {
	w := &heapWatch{limit: limit, samples: []metrics.Sample{{Name: metricHeapObjects}, {Name: metricHeapLive}}}
	metrics.Read(w.samples)
	w.baseline = int64(w.samples[1].Value.Uint64())
	if w.baseline == 0 { // no collection yet in this process
		w.baseline = int64(w.samples[0].Value.Uint64())
	}
	w.nextForce = w.baseline + limit
	return w
}

// over reports the growth and whether it passes the limit after a collection.
func (w *heapWatch) over() (int64, bool) {
	metrics.Read(w.samples)
	objects := int64(w.samples[0].Value.Uint64())
	if objects <= w.baseline+w.limit || (objects <= w.nextForce && time.Since(w.lastForce) < forceEvery) {
		return objects - w.baseline, false
	}
	w.lastForce = time.Now()
	runtime.GC()
	metrics.Read(w.samples)
	grown := int64(w.samples[1].Value.Uint64()) - w.baseline
	w.nextForce = max(objects, w.baseline+w.limit) + w.limit/4
	return grown, grown > w.limit
}

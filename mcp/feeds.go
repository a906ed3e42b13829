package mcp

import (
	"github.com/switchboard-hub/switchboard/mcp/tools"
	"strings"
	"sync"
	"time"

	"github.com/switchboard-hub/switchboard/internal/process"
	"github.com/switchboard-hub/switchboard/internal/sessions"
	"github.com/switchboard-hub/switchboard/internal/wshub"
	"github.com/switchboard-hub/switchboard/mcp/channel"
)

// snapshotOutputBytes is how much process output a new subscriber receives in its snapshot; the
// rest stays readable with process_output.
const snapshotOutputBytes = 64 << 10

// wireFeeds connects the hub's channels to the state they mirror: every channel has a snapshot
// provider (so a dashboard that connects late misses nothing) and is fed by change events.
// Channel names and payloads are documented in docs/architecture.md.
func (s *Service) wireFeeds() {
	h := s.hub
	if h == nil {
		return
	}
	if s.hub != nil && s.notes != nil {
		tools.WireNotesFeed(s.hub, s.notes)
	}
	s.code.WireFeed(h)
	h.SetSnapshotProvider(channel.Sessions, func(string) (any, bool) {
		return SessionsSnapshot{Sessions: s.sessions.List()}, true
	})
	s.sessions.Subscribe(func(c sessions.Change) { h.Publish(channel.Sessions, wshub.TypeEvent, c) })

	h.SetSnapshotProvider(channel.Activity, func(string) (any, bool) {
		return ActivitySnapshot{Events: s.activity.list()}, true
	})
	s.activity.subscribe(func(e ActivityEntry) { h.Publish(channel.Activity, wshub.TypeEvent, e) })

	if s.browser != nil {
		s.browserFeed = newBrowserFeed(s.browser, h)
	}

	if s.procs == nil {
		return
	}
	h.SetSnapshotProvider(channel.Processes, func(string) (any, bool) {
		return ProcessesSnapshot{Processes: s.procs.List(false)}, true
	})
	h.SetSnapshotProvider(channel.ProcessPrefix, func(name string) (any, bool) {
		id := strings.TrimPrefix(name, channel.ProcessPrefix)
		info, err := s.procs.Get(id)
		if err != nil {
			return nil, false
		}
		out, err := s.procs.Output(id, process.OutputQuery{Tail: snapshotOutputBytes})
		if err != nil {
			return nil, false
		}
		return ProcessSnapshot{Process: info, Output: out.Text, Offset: out.Next}, true
	})
	co := newOutputCoalescer(func(id, stream string, offset int64, data []byte) {
		h.Publish(channel.ProcessPrefix+id, wshub.TypeEvent, ProcessOutputEvent{Kind: "output", Stream: stream, Data: string(data), Offset: offset})
	})
	s.procs.Subscribe(func(ev process.Event) {
		own := channel.ProcessPrefix + ev.Info.ID
		switch ev.Kind {
		case "output":
			if ev.Chunk != nil {
				co.add(ev.Info.ID, ev.Chunk)
			}
		case "started", "exited":
			if ev.Kind == "exited" {
				co.flush(ev.Info.ID) // the last output precedes the exit status
			}
			h.Publish(channel.Processes, wshub.TypeEvent, ProcessesEvent{Kind: ev.Kind, Process: ev.Info})
			h.Publish(own, wshub.TypeEvent, ProcessStatusEvent{Kind: "status", Process: ev.Info})
		}
	})
}

// outputFlushInterval bounds how often one process's output is published to the hub. A process
// writing tens of MB/s would otherwise produce thousands of tiny messages a second and get every
// browser dropped as a slow client; batching keeps the dashboard live at a steady 20 updates/s.
const (
	outputFlushInterval = 50 * time.Millisecond
	outputMaxPending    = 256 << 10 // per process and stream; older bytes stay readable via process_output
)

type pendingOutput struct {
	stream string
	offset int64
	data   []byte
	timer  *time.Timer
}

// outputCoalescer merges consecutive chunks of the same stream per process and publishes them at
// most every outputFlushInterval (a stream switch flushes at once, keeping stdout/stderr order).
type outputCoalescer struct {
	publish func(id, stream string, offset int64, data []byte)
	mu      sync.Mutex
	pending map[string]*pendingOutput
}

func newOutputCoalescer(publish func(id, stream string, offset int64, data []byte)) *outputCoalescer {
	return &outputCoalescer{publish: publish, pending: map[string]*pendingOutput{}}
}

func (c *outputCoalescer) add(id string, ch *process.Chunk) {
	c.mu.Lock()
	p := c.pending[id]
	if p != nil && p.stream != ch.Stream {
		c.flushLocked(id)
		p = nil
	}
	if p == nil {
		p = &pendingOutput{stream: ch.Stream, offset: ch.Offset}
		c.pending[id] = p
		p.timer = time.AfterFunc(outputFlushInterval, func() { c.flush(id) })
	}
	p.data = append(p.data, ch.Data...)
	if over := len(p.data) - outputMaxPending; over > 0 {
		p.data = append(p.data[:0], p.data[over:]...)
		p.offset += int64(over)
	}
	c.mu.Unlock()
}

func (c *outputCoalescer) flush(id string) {
	c.mu.Lock()
	c.flushLocked(id)
	c.mu.Unlock()
}

// flushLocked publishes under the lock so that batches of one process stay in order; Publish never
// blocks (the hub queues per client).
func (c *outputCoalescer) flushLocked(id string) {
	p := c.pending[id]
	if p == nil {
		return
	}
	delete(c.pending, id)
	p.timer.Stop()
	if len(p.data) > 0 {
		c.publish(id, p.stream, p.offset, p.data)
	}
}

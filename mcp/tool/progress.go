package tool

import (
	"context"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// ProgressInterval is how often Progress reports while a call runs: well under the 2 s the hub
// promises, so clients that cut silent calls (the TypeScript SDK resets its 60 s timeout on
// progress when asked to) keep waiting.
var ProgressInterval = time.Second

// Progress reports a long call's progress to the client that made it. Every long tool does
//
//	p := tool.StartProgress(ctx, req, "running go test")
//	defer p.Stop()
//	... p.Set(done, total, "3 of 10 files") as work advances (optional) ...
//
// When the request carries no progress token, StartProgress returns a Progress whose methods do
// nothing, so callers never check. Otherwise a goroutine sends notifications/progress every
// ProgressInterval until Stop, with the latest message and, when Set was called, done/total.
// The progress value always increases (the spec requires it): without Set it counts elapsed
// seconds. The goroutine ends when ctx ends (a cancelled call) or Stop is called.
type Progress struct {
	ss    *sdk.ServerSession
	token any

	mu      sync.Mutex
	done    float64
	total   float64
	sent    float64
	message string
	start   time.Time

	stop     chan struct{}
	stopOnce sync.Once
	wg       sync.WaitGroup
}

// StartProgress starts reporting for req (see Progress). message describes the work.
func StartProgress(ctx context.Context, req *sdk.CallToolRequest, message string) *Progress {
	p := &Progress{message: message, start: time.Now(), stop: make(chan struct{})}
	if req == nil || req.Session == nil || req.Params == nil {
		return p
	}
	token := req.Params.GetProgressToken()
	if token == nil {
		return p
	}
	p.ss, p.token = req.Session, token
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		t := time.NewTicker(ProgressInterval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-p.stop:
				return
			case <-t.C:
				p.send(ctx)
			}
		}
	}()
	return p
}

// Active reports whether the client asked for progress.
func (p *Progress) Active() bool { return p != nil && p.ss != nil }

// Set records how far the work is (done of total; total 0 if unknown) and, if non-empty, a new
// message; the next tick reports it.
func (p *Progress) Set(done, total float64, message string) {
	if !p.Active() {
		return
	}
	p.mu.Lock()
	p.done, p.total = done, total
	if message != "" {
		p.message = message
	}
	p.mu.Unlock()
}

func (p *Progress) send(ctx context.Context) {
	p.mu.Lock()
	progress, total := p.done, p.total
	if total == 0 {
		// No measure of the work: elapsed seconds, so the value still increases.
		progress = max(progress, time.Since(p.start).Seconds())
	}
	if progress <= p.sent {
		progress = p.sent + 0.001
	}
	if total > 0 && progress > total {
		total = progress
	}
	p.sent = progress
	msg := p.message
	p.mu.Unlock()
	_ = p.ss.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: p.token, Progress: progress, Total: total, Message: msg})
}

// Stop ends reporting and waits for the reporting goroutine. Safe to call more than once.
func (p *Progress) Stop() {
	if p == nil {
		return
	}
	p.stopOnce.Do(func() { close(p.stop) })
	p.wg.Wait()
}

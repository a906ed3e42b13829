package trust

import (
	"crypto/rand"
	"sync"
	"time"
)

// maxPending bounds the requestStates a table keeps for calls waiting on their clients' answers.
const maxPending = 1000

// pending is what the requestStates given to clients stand for, until the client's retry takes
// its own (once) or it expires: the answers of a direct call's earlier rounds (rounds.go), or a
// held outer call (held.go). A retry is tied to the caller and to the call (tool and arguments)
// the state was given for, so it cannot be taken by another client or pre-answered for another
// call. Expired entries are swept at each put, through expire when set.
type pending[V any] struct {
	expire func(V) // called for an entry swept unclaimed (nil: nothing to end)

	mu sync.Mutex
	m  map[string]pendingEntry[V]
}

type pendingEntry[V any] struct {
	v       V
	caller  any    // mcptransport.Caller: the session, or a stateless client's identity
	key     string // callKey: tool + arguments digest
	expires time.Time
}

// put keeps v for caller's retry of the call key, for ttl, and returns its requestState; false
// when maxPending states already wait.
func (p *pending[V]) put(v V, caller any, key string, ttl time.Duration) (string, bool) {
	token := rand.Text()
	now := time.Now()
	var swept []V
	p.mu.Lock()
	if p.m == nil {
		p.m = map[string]pendingEntry[V]{}
	}
	for k, e := range p.m { // sweep: abandoned retries must not pile up
		if now.After(e.expires) {
			delete(p.m, k)
			swept = append(swept, e.v)
		}
	}
	ok := len(p.m) < maxPending
	if ok {
		p.m[token] = pendingEntry[V]{v: v, caller: caller, key: key, expires: now.Add(ttl)}
	}
	p.mu.Unlock()
	if p.expire != nil {
		for _, v := range swept {
			p.expire(v)
		}
	}
	if !ok {
		return "", false
	}
	return token, true
}

// take removes the entry of token and returns its value when it is caller's, for the call key,
// and not expired (an expired one is removed too). Another caller's attempt leaves it in place.
func (p *pending[V]) take(token string, caller any, key string) (V, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	e, found := p.m[token]
	expired := found && time.Now().After(e.expires)
	if expired || found && e.caller == caller && e.key == key {
		delete(p.m, token)
	}
	if !found || expired || e.caller != caller || e.key != key {
		var zero V
		return zero, false
	}
	return e.v, true
}

// drop forgets token, whoever it was given to.
func (p *pending[V]) drop(token string) {
	p.mu.Lock()
	delete(p.m, token)
	p.mu.Unlock()
}

// Package clienttokens keeps one bearer token per MCP client: the identity a stateless
// (2026-07-28) client has on the hub's HTTP endpoint, where no session says who is calling.
//
// Only a digest of each token is kept (SHA-256: tokens are 256 random bits, so no stretching is
// needed), in one file of the hub's data directory written 0600; the token itself is shown once,
// to the code that writes it into the client's config. A token maps to its client's name; the
// Settings view lists tokens (client, created, last used) and revokes them, and a revoked token
// is refused from the next request on.
package clienttokens

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/switchboard-hub/switchboard/internal/atomicfile"
	"github.com/switchboard-hub/switchboard/internal/listeners"
)

// Prefix starts every client token, so a token found in a file or a log says what it is.
const Prefix = "sbc_"

// touchEvery bounds how often "last used" is written to disk: once a minute per token at most.
const touchEvery = time.Minute

// Token is one client's token as the Settings view lists it (never the token itself).
type Token struct {
	Client   string    `json:"client"`
	Created  time.Time `json:"created"`
	LastUsed time.Time `json:"last_used,omitzero"`
}

type entry struct {
	Token
	Digest string `json:"sha256"`
}

// Store is the hub's client tokens, persisted in one file. Safe for concurrent use.
type Store struct {
	path string

	mu       sync.Mutex
	byDigest map[string]*entry
	written  map[string]time.Time // digest → when its last_used was last written
	revoked  listeners.Set[string]
}

var clientName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// Open reads the store kept at path (a missing file is an empty store).
func Open(path string) (*Store, error) {
	s := &Store{path: path, byDigest: map[string]*entry{}, written: map[string]time.Time{}}
	raw, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return nil, fmt.Errorf("client tokens %s: %w", path, err)
	}
	var list []*entry
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, fmt.Errorf("client tokens %s: %w (remove the file to start over: every client then needs `switchboard clients connect` again)", path, err)
	}
	for _, e := range list {
		if len(e.Digest) == sha256.Size*2 && e.Client != "" {
			s.byDigest[e.Digest] = e
		}
	}
	return s, nil
}

func digest(token string) string {
	d := sha256.Sum256([]byte(token))
	return hex.EncodeToString(d[:])
}

// Issue makes a new token for client, replacing the one it had (one token per client), and
// returns it: the only time the token exists outside the client's config.
func (s *Store) Issue(client string) (string, error) {
	if !clientName.MatchString(client) {
		return "", fmt.Errorf("client token: client %q: use letters, digits, '.', '_' or '-' (at most 64)", client)
	}
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("client token: %w", err)
	}
	token := Prefix + hex.EncodeToString(b)
	s.mu.Lock()
	defer s.mu.Unlock()
	for d, e := range s.byDigest {
		if e.Client == client {
			delete(s.byDigest, d)
		}
	}
	s.byDigest[digest(token)] = &entry{Token: Token{Client: client, Created: time.Now().UTC().Truncate(time.Second)}, Digest: digest(token)}
	if err := s.saveLocked(); err != nil {
		return "", err
	}
	return token, nil
}

// Verify returns the client a token belongs to, and records its use.
func (s *Store) Verify(token string) (client string, ok bool) {
	if !strings.HasPrefix(token, Prefix) {
		return "", false
	}
	d := digest(token)
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.byDigest[d]
	if e == nil {
		return "", false
	}
	now := time.Now().UTC()
	e.LastUsed = now.Truncate(time.Second)
	if now.Sub(s.written[d]) >= touchEvery {
		s.written[d] = now
		_ = s.saveLocked() // last-used is informational: a failed write refuses nobody
	}
	return e.Client, true
}

// Revoke removes client's token; its next request is refused. It reports whether there was one.
func (s *Store) Revoke(client string) (bool, error) {
	s.mu.Lock()
	found := false
	for d, e := range s.byDigest {
		if e.Client == client {
			delete(s.byDigest, d)
			found = true
		}
	}
	var err error
	if found {
		err = s.saveLocked()
	}
	s.mu.Unlock()
	if found {
		s.revoked.Notify(client)
	}
	return found, err
}

// OnRevoke calls f with the client whose token was revoked, until cancel is called.
func (s *Store) OnRevoke(f func(client string)) (cancel func()) { return s.revoked.Add(f) }

// List is every client's token, by client name.
func (s *Store) List() []Token {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Token, 0, len(s.byDigest))
	for _, e := range s.byDigest {
		out = append(out, e.Token)
	}
	slices.SortFunc(out, func(a, b Token) int { return strings.Compare(a.Client, b.Client) })
	return out
}

func (s *Store) saveLocked() error {
	list := make([]*entry, 0, len(s.byDigest))
	for _, e := range s.byDigest {
		list = append(list, e)
	}
	slices.SortFunc(list, func(a, b *entry) int { return strings.Compare(a.Client, b.Client) })
	raw, err := json.MarshalIndent(list, "", "  ")
	if err != nil {
		return err
	}
	if err := atomicfile.Write(s.path, raw); err != nil {
		return fmt.Errorf("client tokens: %w", err)
	}
	return nil
}

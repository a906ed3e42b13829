package authserver

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/switchboard-hub/switchboard/internal/atomicfile"
)

// Client is a registered client (RFC 7591) or one identified by its metadata document (CIMD).
type Client struct {
	ID           string    `json:"client_id"`
	Name         string    `json:"client_name,omitempty"`
	RedirectURIs []string  `json:"redirect_uris"`
	AuthMethod   string    `json:"token_endpoint_auth_method"` // none, client_secret_post, client_secret_basic
	SecretHash   string    `json:"secret_hash,omitempty"`
	RegisteredAt time.Time `json:"registered_at"`
	// MetadataDocument: the client_id is the URL of its metadata document (CIMD), fetched
	// again when its cached copy is stale; never persisted.
	MetadataDocument bool `json:"-"`
	fetchedAt        time.Time
}

// grant is one client's permission to use the hub, with the hashes of its live tokens.
type grant struct {
	ID         string    `json:"id"`
	ClientID   string    `json:"client_id"`
	ClientName string    `json:"client_name"`
	Device     string    `json:"device"`
	Scopes     []string  `json:"scopes"`
	Resource   string    `json:"resource"`
	CreatedAt  time.Time `json:"created_at"`
	LastUsed   time.Time `json:"last_used,omitzero"`

	Access      []tokenHash `json:"access,omitempty"`
	Refresh     tokenHash   `json:"refresh"`
	UsedRefresh []string    `json:"used_refresh,omitempty"` // rotated-away refresh hashes: a replay revokes the grant
}

type tokenHash struct {
	Hash    string    `json:"hash"`
	Expires time.Time `json:"expires"`
}

// state is what the file holds.
type state struct {
	Clients map[string]*Client `json:"clients"`
	Grants  map[string]*grant  `json:"grants"`
}

// maxUsedRefresh bounds the rotated refresh hashes a grant remembers for replay detection.
const maxUsedRefresh = 8

// hashToken is how every token and secret is kept: its SHA-256, never the token itself. Tokens
// are 256-bit random values, so a plain hash is enough (no dictionary to attack).
func hashToken(tok string) string {
	h := sha256.Sum256([]byte(tok))
	return hex.EncodeToString(h[:])
}

// randomToken returns prefix and 32 random bytes, base64url.
func randomToken(prefix string) string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic(fmt.Sprintf("crypto/rand: %v", err)) // never fails on Linux (getrandom)
	}
	return prefix + base64.RawURLEncoding.EncodeToString(b)
}

func loadState(path string) (*state, error) {
	st := &state{Clients: map[string]*Client{}, Grants: map[string]*grant{}}
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read grants: %w", err)
	}
	if err := json.Unmarshal(b, st); err != nil {
		return nil, fmt.Errorf("read grants %s: %w (move the file away to start without grants)", path, err)
	}
	if st.Clients == nil {
		st.Clients = map[string]*Client{}
	}
	if st.Grants == nil {
		st.Grants = map[string]*grant{}
	}
	return st, nil
}

// save writes the state atomically, readable by this user only.
func (st *state) save(path string) error {
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return fmt.Errorf("encode grants: %w", err)
	}
	if err := atomicfile.Write(path, b); err != nil {
		return fmt.Errorf("save grants: %w", err)
	}
	return nil
}

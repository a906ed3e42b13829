package app

import (
	"errors"
	"fmt"
	"time"

	"github.com/switchboard-hub/switchboard/internal/clienttokens"
)

// The Settings view's client tokens: each MCP client's own bearer token for the HTTP endpoint,
// which names the client to the hub (the identity of a stateless 2026-07-28 client: its Sessions
// entry, its approvals and todos). Listed without the tokens (the hub keeps only digests),
// issued (the token is shown once) and revoked (refused from the next request on).

// ClientTokenList is ListClientTokens' answer.
type ClientTokenList struct {
	Tokens []ClientToken `json:"tokens"`
}

// ClientToken is one client's token as the Settings view lists it (never the token itself).
type ClientToken struct {
	Client   string    `json:"client"`
	Created  time.Time `json:"created"`
	LastUsed time.Time `json:"lastUsed,omitzero"`
}

func tokenList(s *clienttokens.Store) ClientTokenList {
	out := ClientTokenList{Tokens: []ClientToken{}}
	for _, t := range s.List() {
		out.Tokens = append(out.Tokens, ClientToken{Client: t.Client, Created: t.Created, LastUsed: t.LastUsed})
	}
	return out
}

// IssuedClientToken is IssueClientToken's answer: the only time the token is shown.
type IssuedClientToken struct {
	Client string `json:"client"`
	// Token is the new token, to put in the client's config as Authorization: Bearer <token>.
	Token string `json:"token"`
	// Replaced: the client had a token, which no longer works.
	Replaced bool `json:"replaced"`
}

type clientTokenArgs struct {
	Client string `json:"client"`
}

func (c *Controller) clientTokens() (*clienttokens.Store, error) {
	if c.st.ClientTokens == nil {
		return nil, errors.New("client tokens: this hub keeps none (no data directory)")
	}
	return c.st.ClientTokens, nil
}

// ListClientTokens lists every client's token: client, created, last used.
func (c *Controller) ListClientTokens() (ClientTokenList, error) {
	s, err := c.clientTokens()
	if err != nil {
		return ClientTokenList{}, err
	}
	return tokenList(s), nil
}

// IssueClientToken makes a new token for client (replacing its old one) and returns it once.
func (c *Controller) IssueClientToken(client string) (out IssuedClientToken, err error) {
	end := c.begin("client_token_issue", clientTokenArgs{client})
	defer func() { end(err) }()
	s, err := c.clientTokens()
	if err != nil {
		return out, err
	}
	had := false
	for _, t := range s.List() {
		had = had || t.Client == client
	}
	token, err := s.Issue(client)
	if err != nil {
		return out, err
	}
	return IssuedClientToken{Client: client, Token: token, Replaced: had}, nil
}

// RevokeClientToken revokes client's token: its next request is refused and its stateless
// Sessions entry goes at once.
func (c *Controller) RevokeClientToken(client string) (out ClientTokenList, err error) {
	end := c.begin("client_token_revoke", clientTokenArgs{client})
	defer func() { end(err) }()
	s, err := c.clientTokens()
	if err != nil {
		return out, err
	}
	found, err := s.Revoke(client)
	if err != nil {
		return out, err
	}
	if !found {
		return out, fmt.Errorf("client: %q has no token; the Settings view lists those that have one", client)
	}
	return tokenList(s), nil
}

// dropClientToken revokes client's token if it has one (`clients disconnect`: the entry that
// held it is gone); no token is no error.
func (c *Controller) dropClientToken(client string) (out ClientTokenList, err error) {
	s, err := c.clientTokens()
	if err != nil {
		return out, err
	}
	found, err := s.Revoke(client)
	if err != nil || !found {
		return tokenList(s), err
	}
	end := c.begin("client_token_revoke", clientTokenArgs{client})
	end(nil)
	return tokenList(s), nil
}

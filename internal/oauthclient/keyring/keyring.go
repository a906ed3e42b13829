// Package keyring keeps the grants of internal/oauthclient in the desktop keyring (the Secret
// Service, through internal/secrets). A package of its own so that oauthclient does not import
// secrets (whose tests import upstream, which imports oauthclient).
package keyring

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/switchboard-hub/switchboard/internal/oauthclient"
	"github.com/switchboard-hub/switchboard/internal/secrets"
)

// Store keeps each server's grant as one item of the desktop keyring (Secret Service),
// with the attributes {"application": "switchboard-oauth", "name": SERVER}: apart from the
// user's secrets, so a ${secret:NAME} reference cannot reach a grant. A connection per
// operation, as for secrets: a keyring unlocked after the hub started is found.
type Store struct{ Bus secrets.Bus }

func (s Store) open(ctx context.Context) (*secrets.Keyring, context.Context, context.CancelFunc, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	k, err := secrets.Open(ctx, s.Bus)
	if err != nil {
		cancel()
		return nil, nil, nil, err
	}
	return k, ctx, cancel, nil
}

// Load reads the server's grant; none stored is oauthclient.ErrNoGrant.
func (s Store) Load(ctx context.Context, server string) (*oauthclient.Grant, error) {
	k, ctx, cancel, err := s.open(ctx)
	if err != nil {
		return nil, err
	}
	defer cancel()
	defer k.Close()
	v, err := k.WithApplication(secrets.GrantsApplication).Lookup(ctx, server)
	if errors.Is(err, secrets.ErrNotFound) {
		return nil, oauthclient.ErrNoGrant
	}
	if err != nil {
		return nil, err
	}
	var g oauthclient.Grant
	if err := json.Unmarshal([]byte(v), &g); err != nil {
		return nil, fmt.Errorf("the keyring's sign-in item for %s is not a grant; sign in again", server)
	}
	return &g, nil
}

// Save stores the server's grant, replacing the one before.
func (s Store) Save(ctx context.Context, server string, g *oauthclient.Grant) error {
	b, err := json.Marshal(g)
	if err != nil {
		return err
	}
	k, ctx, cancel, err := s.open(ctx)
	if err != nil {
		return err
	}
	defer cancel()
	defer k.Close()
	return k.WithApplication(secrets.GrantsApplication).Store(ctx, server, string(b))
}

// Delete forgets the server's grant; none stored is not an error.
func (s Store) Delete(ctx context.Context, server string) error {
	k, ctx, cancel, err := s.open(ctx)
	if err != nil {
		return err
	}
	defer cancel()
	defer k.Close()
	err = k.WithApplication(secrets.GrantsApplication).Delete(ctx, server)
	if errors.Is(err, secrets.ErrNotFound) {
		return nil
	}
	return err
}

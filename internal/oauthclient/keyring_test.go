package oauthclient_test

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/switchboard-hub/switchboard/internal/oauthclient"
	"github.com/switchboard-hub/switchboard/internal/oauthclient/oauthtest"
	"github.com/switchboard-hub/switchboard/internal/secrets"
	"github.com/switchboard-hub/switchboard/internal/secrets/secretstest"
)

// The grant lives in the real keyring (gnome-keyring on a private bus), apart from the user's
// secrets: ${secret:NAME} cannot read it, `secret list` does not show it; logout forgets it.
func TestKeyringStore(t *testing.T) {
	secretstest.Start(t)
	store := oauthclient.KeyringStore{Bus: secrets.Bus{Address: os.Getenv("DBUS_SESSION_BUS_ADDRESS")}}
	as := oauthtest.NewAS(t)
	res := oauthtest.NewResource(t, as, okHandler)
	g, err := flow(t, res, store).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	got, err := store.Load(context.Background(), "remote")
	if err != nil || got.AccessToken != g.AccessToken || got.RefreshToken != g.RefreshToken {
		t.Fatalf("Load: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	k, err := secrets.Open(ctx, store.Bus)
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	if _, err := k.Lookup(ctx, "remote"); !errors.Is(err, secrets.ErrNotFound) {
		t.Errorf("${secret:remote} reads the grant: %v", err)
	}
	if names, _, _ := k.List(ctx); len(names) != 0 {
		t.Errorf("secret list shows %v", names)
	}
	if code, err := get(transport(t, res, store, nil), res.URL); code != 200 || err != nil {
		t.Fatalf("call with the stored grant: %d %v", code, err)
	}
	if err := store.Delete(context.Background(), "remote"); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Load(context.Background(), "remote"); !errors.Is(err, oauthclient.ErrNoGrant) {
		t.Errorf("after Delete: %v", err)
	}
	if err := store.Delete(context.Background(), "remote"); err != nil {
		t.Errorf("second Delete: %v", err)
	}
}

package keyring_test

import (
	"context"
	"errors"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-hub/switchboard/internal/oauthclient"
	"github.com/switchboard-hub/switchboard/internal/oauthclient/keyring"
	"github.com/switchboard-hub/switchboard/internal/oauthclient/oauthtest"
	"github.com/switchboard-hub/switchboard/internal/secrets"
	"github.com/switchboard-hub/switchboard/internal/secrets/secretstest"
)

// The grant lives in the real keyring (gnome-keyring on a private bus), apart from the user's
// secrets: ${secret:NAME} cannot read it, `secret list` does not show it; logout forgets it.
func TestKeyringStore(t *testing.T) {
	secretstest.Start(t)
	store := keyring.Store{Bus: secrets.Bus{Address: os.Getenv("DBUS_SESSION_BUS_ADDRESS")}}
	as := oauthtest.NewAS(t)
	res := oauthtest.NewResource(t, as, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("ok")) }))
	hc, err := oauthclient.HTTPClient(res.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	f := &oauthclient.Flow{Server: "remote", URL: res.URL, Store: store, HTTP: hc, Open: oauthtest.Browser(t), Timeout: 10 * time.Second}
	g, err := f.Run(context.Background())
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
	c := &http.Client{Transport: &oauthclient.Transport{Server: "remote", URL: res.URL, Store: store, HTTP: hc}}
	resp, err := c.Post(res.URL, "application/json", strings.NewReader("{}"))
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("call with the stored grant: %v %v", resp, err)
	}
	resp.Body.Close()
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

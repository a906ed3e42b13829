package app

import (
	"context"
	"time"

	"github.com/switchboard-hub/switchboard/internal/config"
	"github.com/switchboard-hub/switchboard/internal/secrets"
)

// KeyringLookup resolves ${secret:NAME} in a server's env or headers from the desktop keyring
// (Secret Service), once per server start: a new connection each time, so a keyring unlocked
// after the hub started is found, and nothing holds the bus while no server is starting.
func KeyringLookup(env config.Env) func(name string) (string, error) {
	return func(name string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		k, err := secrets.Open(ctx, SessionBus(env))
		if err != nil {
			return "", err
		}
		defer k.Close()
		return k.Lookup(ctx, name)
	}
}

// SessionBus is where env says the session bus is.
func SessionBus(env config.Env) secrets.Bus {
	return secrets.Bus{Address: env.DBusSession, RuntimeDir: env.XDGRuntimeDir}
}

// SecretTimeout bounds one keyring command: the bus may have to start the keyring daemon, and a
// daemon waiting on a prompt nobody sees would otherwise hang the command for good.
const SecretTimeout = 30 * time.Second

package app

import (
	"context"
	"time"

	"github.com/switchboard-hub/switchboard/internal/config"
	"github.com/switchboard-hub/switchboard/internal/secrets"
)

// keyringLookup resolves ${secret:NAME} in a server's env or headers from the desktop keyring
// (Secret Service), once per server start: a new connection each time, so a keyring unlocked
// after the hub started is found, and nothing holds the bus while no server is starting.
func keyringLookup(env config.Env) func(name string) (string, error) {
	return func(name string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		k, err := secrets.Open(ctx, sessionBus(env))
		if err != nil {
			return "", err
		}
		defer k.Close()
		return k.Lookup(ctx, name)
	}
}

// sessionBus is where env says the session bus is.
func sessionBus(env config.Env) secrets.Bus {
	return secrets.Bus{Address: env.DBusSession, RuntimeDir: env.XDGRuntimeDir}
}

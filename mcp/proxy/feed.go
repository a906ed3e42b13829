package proxy

import "github.com/switchboard-hub/switchboard/internal/upstream"

// What the proxy publishes for the dashboard, in a file of its own: the dashboard's TypeScript
// types are generated from this file (build/tygo.yaml, `make types`).

// ServersFeed is the payload of the "servers" channel.
type ServersFeed struct {
	Servers []upstream.Status `json:"servers"`
}

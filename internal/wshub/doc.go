// Package hub is Switchboard's WebSocket hub: one endpoint (/ws) that streams
// live state to the dashboard window and to any agent or tool that wants it.
// Producers (process service, MCP audit middleware, IDE bridge, ...) publish
// to named channels; clients subscribe to the channels they care about.
//
// # Connecting
//
// The endpoint is a plain WebSocket upgrade on GET /ws. Every client must
// present the hub token, either as a query parameter (ws://127.0.0.1:PORT/ws?token=T,
// the only option in a browser) or as an "Authorization: Bearer T" header.
// A missing or wrong token gets HTTP 401. Browsers always send an Origin
// header; it must be on the allow-list (Options.AllowedOrigins, plus always
// "wails://wails" and "http://wails.localhost" for the desktop window, the
// hub's own http://ADDR, and any http(s) origin equal to the request's own
// loopback Host, i.e. a page served by the same loopback server). Any other
// Origin gets HTTP 403. Requests without an Origin header (non-browser
// clients) are allowed; they still need the token.
//
// # Frames from the client
//
// Text frames holding one JSON object each (at most Options.MaxMessageSize
// bytes, 64 KiB by default; a larger frame closes the connection with 1009):
//
//	{"type":"subscribe","channel":"processes"}
//	{"type":"unsubscribe","channel":"processes"}
//	{"type":"ping"}
//
// A channel name is 1 to 256 bytes without control characters; a client can
// hold up to 1024 subscriptions.
//
// # Frames from the hub
//
// Every frame is one JSON envelope (see Message):
//
//	{"type":"event","channel":"processes","data":{...},"timestamp":"2025-01-02T15:04:05.999Z"}
//
// type is one of:
//   - "subscribed"   reply to subscribe; channel is set, no data.
//   - "snapshot"     sent right after "subscribed" when the channel has a
//     snapshot provider: data is the channel's current state.
//   - "event"        a live update on channel (data shape per channel).
//   - "unsubscribed" reply to unsubscribe. No event for that channel follows it
//     (until the next subscribe).
//   - "pong"         reply to {"type":"ping"}.
//   - "error"        a rejected frame; data is {"message":"..."} naming the
//     field and the fix; channel is set when the frame named one.
//
// Producers may also use other type values with Hub.Publish; clients should
// ignore types they do not know.
//
// # Ordering
//
// Per client, frames arrive in the order the hub queued them. On subscribe
// the hub queues "subscribed", then the snapshot, then every event published
// to the channel after the subscription was registered, in publish order:
// nothing published after the subscribe is missed and no event is delivered
// ahead of the snapshot. An event published while the snapshot was being
// taken may be reflected in the snapshot and also be delivered after it, so
// a client that needs exactness de-duplicates with the data's own offsets or
// IDs (process output events carry "offset" for this reason). For "nothing
// missed" to hold, a producer must update the state its snapshot provider
// reads before it publishes the event describing the change.
//
// Messages one goroutine publishes one after another reach every client in
// that order. Messages published concurrently by different goroutines have
// no defined order relative to each other.
//
// # Back-pressure
//
// Each client has a bounded send queue (Options.QueueSize, default 256
// frames). A producer never waits for a client: when a client's queue is
// full the hub drops that client's connection at once (a slow consumer) and
// counts it in Stats.SlowDisconnects; every other client keeps receiving.
// A client that reconnects and resubscribes gets a fresh snapshot, so a
// dashboard recovers its full state. A client's writer coalesces the frames
// waiting in its queue into writes of up to 64 KiB, so a backlog drains fast.
// The hub also pings each client every
// Options.PingInterval (default 20s) and drops a client that has sent
// nothing, not even a pong, for twice that long.
package wshub

package transport

import sdk "github.com/modelcontextprotocol/go-sdk/mcp"

// What a connection's client declared about itself, as the session negotiated it.

// MRTRProtocol is the first protocol revision in which a server may no longer send requests of
// its own during a call (SEP-2322): it answers input_required, and the client retries.
const MRTRProtocol = "2026-07-28"

// ClientName is the client's self-reported name ("" before initialize, or without a session).
// A label, not an identity: any client may claim any name.
func ClientName(ss *sdk.ServerSession) string {
	if ss == nil {
		return ""
	}
	if p := ss.InitializeParams(); p != nil && p.ClientInfo != nil {
		return p.ClientInfo.Name
	}
	return ""
}

// Protocol is the MCP revision the client speaks: the protocolVersion of its initialize
// (2025-11-25 and earlier), or the one each request of a 2026-07-28 client names in its _meta
// (which go-sdk exposes the same way). "" before the client said. For a session it is the
// revision the client asked for, which the hub accepts for every revision it serves.
func Protocol(ss *sdk.ServerSession) string {
	if ss == nil {
		return ""
	}
	if p := ss.InitializeParams(); p != nil {
		return p.ProtocolVersion
	}
	return ""
}

// CanElicit reports whether the client declared the elicitation capability.
func CanElicit(ss *sdk.ServerSession) bool {
	if ss == nil {
		return false
	}
	p := ss.InitializeParams()
	return p != nil && p.Capabilities != nil && p.Capabilities.Elicitation != nil
}

// SpeaksMRTR reports whether the session's protocol asks the client through input_required
// results instead of server requests (MRTRProtocol and later).
func SpeaksMRTR(ss *sdk.ServerSession) bool {
	p := ss.InitializeParams()
	return p != nil && p.ProtocolVersion >= MRTRProtocol
}

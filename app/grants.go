package app

import "github.com/switchboard-hub/switchboard/internal/authserver"

// GrantList is the OAuth clients allowed to use this hub (Settings), and the certificate's
// fingerprint when the hub serves TLS.
type GrantList struct {
	// Enabled: [http] auth = "oauth".
	Enabled bool                   `json:"enabled"`
	Grants  []authserver.GrantInfo `json:"grants"`
	// TLS, when the endpoint serves it: the certificate's SHA-256 fingerprint, whether the hub
	// made it, and its file (to copy to the other machines).
	Fingerprint string `json:"fingerprint,omitempty"`
	// TLS: the running HTTP transport serves this certificate now (beyond loopback, or the
	// user's own certificate); false: plain HTTP on loopback, the certificate kept for later.
	TLS        bool   `json:"tls"`
	SelfSigned bool   `json:"selfSigned,omitempty"`
	CertFile   string `json:"certFile,omitempty"`
}

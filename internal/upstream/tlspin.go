package upstream

import (
	"net/http"
	"net/url"

	"github.com/switchboard-hub/switchboard/internal/hubtls"
	"github.com/switchboard-hub/switchboard/internal/oauthclient"
)

// pinTransport sends the requests for the server's own origin over TLS that trusts the pinned
// certificate (tls_fingerprint) and nothing else; without a pin, a certificate the system does
// not trust is refused with its fingerprint and how to pin it. Other origins go through base.
func (s Spec) pinTransport(base *http.Transport) http.RoundTripper {
	u, err := url.Parse(s.URL)
	if err != nil {
		return base
	}
	pin := ""
	if s.TLSFingerprint != "" {
		pin, _ = hubtls.ParsePin(s.TLSFingerprint) // Validate checked it
	}
	return hubtls.PinnedTransport(base, u.Host, pin)
}

// oauthHTTP is the client for the requests made on the OAuth metadata's word (oauthclient's SSRF
// rules), with the server's pinned certificate for its own origin.
func oauthHTTP(sp Spec, serverURL string, allow []string) (*http.Client, error) {
	hc, err := oauthclient.HTTPClient(serverURL, allow)
	if err != nil {
		return nil, err
	}
	if tr, ok := hc.Transport.(*http.Transport); ok {
		hc.Transport = sp.pinTransport(tr)
	}
	return hc, nil
}

package hubtls

import (
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// PinPrefix starts a pinned fingerprint as written in a server's config entry:
// tls_fingerprint = "sha256:AB:CD:…" (the colons are optional, the case does not matter).
const PinPrefix = "sha256:"

// ParsePin reads a tls_fingerprint value and returns its 64 lower-case hex digits.
func ParsePin(v string) (string, error) {
	rest, ok := strings.CutPrefix(strings.TrimSpace(v), PinPrefix)
	if !ok {
		return "", fmt.Errorf("tls_fingerprint: %q: write it as \"sha256:\" and the certificate's SHA-256 fingerprint, like \"sha256:AB:CD:…\" (the other hub's Settings › Other machines shows it)", v)
	}
	h := strings.ToLower(strings.ReplaceAll(rest, ":", ""))
	if b, err := hex.DecodeString(h); err != nil || len(b) != sha256.Size {
		return "", fmt.Errorf("tls_fingerprint: %q is not a SHA-256 fingerprint (32 bytes in hex, like \"sha256:AB:CD:…\")", v)
	}
	return h, nil
}

// PinText is a certificate's fingerprint as tls_fingerprint takes it.
func PinText(der []byte) string { return PinPrefix + Fingerprint(der) }

// PinnedTransport sends requests to host (host:port as in the URL) over TLS trusting exactly the
// certificate whose SHA-256 fingerprint is pin (ParsePin's form; "" for none), whoever signed
// it: a hub's self-signed certificate has nothing else vouching for it. A certificate with
// another fingerprint is refused, with an error naming tls_fingerprint. Requests to other
// hosts, and to host without a pin, go through base as they are; a certificate base cannot
// verify is refused with the fingerprint seen and how to pin it. base is cloned, not changed.
func PinnedTransport(base *http.Transport, host, pin string) http.RoundTripper {
	p := &pinned{host: host, pin: pin, base: base}
	if pin != "" {
		tr := base.Clone()
		cfg := &tls.Config{MinVersion: tls.VersionTLS12}
		if tr.TLSClientConfig != nil {
			cfg = tr.TLSClientConfig.Clone()
		}
		// The fingerprint is the whole check: the chain and the name are not what is trusted.
		cfg.InsecureSkipVerify = true
		cfg.VerifyConnection = func(cs tls.ConnectionState) error {
			if len(cs.PeerCertificates) == 0 {
				return errors.New("tls_fingerprint: the server sent no certificate")
			}
			der := cs.PeerCertificates[0].Raw
			sum := sha256.Sum256(der)
			if hex.EncodeToString(sum[:]) != pin {
				return &PinError{Host: host, Seen: PinText(der)}
			}
			return nil
		}
		tr.TLSClientConfig = cfg
		p.pinnedTr = tr
	}
	return p
}

// PinError is a certificate that is not the pinned one.
type PinError struct{ Host, Seen string }

func (e *PinError) Error() string {
	return fmt.Sprintf("tls_fingerprint: the certificate of %s is %s, not the one pinned in this server's tls_fingerprint: refused (the other hub made a new certificate, or something stands in between; compare with Settings › Other machines on that hub before you pin the new one)", e.Host, e.Seen)
}

type pinned struct {
	host, pin string
	base      *http.Transport
	pinnedTr  *http.Transport
}

func (p *pinned) RoundTrip(r *http.Request) (*http.Response, error) {
	if !strings.EqualFold(r.URL.Scheme, "https") || !strings.EqualFold(r.URL.Host, p.host) {
		return p.base.RoundTrip(r)
	}
	if p.pinnedTr != nil {
		return p.pinnedTr.RoundTrip(r)
	}
	resp, err := p.base.RoundTrip(r)
	if err != nil {
		if seen := unverified(err); seen != "" {
			return nil, fmt.Errorf("%w; if %s is a Switchboard hub with its own certificate, check that the fingerprint its Settings › Other machines shows is %s, then pin it: tls_fingerprint = %q in this server's [[servers]] entry", err, p.host, seen, seen)
		}
	}
	return resp, err
}

// unverified is the fingerprint (tls_fingerprint's form) of a certificate err says could not be
// verified, or "".
func unverified(err error) string {
	var ua x509.UnknownAuthorityError
	if errors.As(err, &ua) && ua.Cert != nil {
		return PinText(ua.Cert.Raw)
	}
	var cv *tls.CertificateVerificationError
	if errors.As(err, &cv) && len(cv.UnverifiedCertificates) > 0 {
		return PinText(cv.UnverifiedCertificates[0].Raw)
	}
	return ""
}

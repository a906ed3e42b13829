// Package hubtls gives the hub's HTTP endpoint its TLS certificate when it listens beyond
// loopback: the one the user configured, or one the hub makes, self-signed, kept in its state
// directory so its fingerprint stays the same from run to run (clients pin it, the dashboard
// shows it). It imports nothing from MCP.
package hubtls

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Cert is a loaded certificate and how it came to be.
type Cert struct {
	Config *tls.Config
	// Fingerprint is the SHA-256 of the leaf certificate (DER), as colon-separated hex.
	Fingerprint string
	SelfSigned  bool
	NotAfter    time.Time
	// CertFile is where the certificate is (for the user to copy to other machines).
	CertFile string
}

// Load reads the user's certificate and key (PEM).
func Load(certFile, keyFile string) (*Cert, error) {
	pair, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("[http] cert/key: %w", err)
	}
	return newCert(pair, certFile, false)
}

// SelfSigned returns the hub's own certificate from dir (cert.pem, key.pem), made on first use
// for hosts (names and IP addresses) besides localhost and the loopback addresses, valid for
// two years; one that expires within 30 days or does not cover hosts is made again.
func SelfSigned(dir string, hosts []string) (*Cert, error) {
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if pair, err := tls.LoadX509KeyPair(certFile, keyFile); err == nil {
		if leaf, err := x509.ParseCertificate(pair.Certificate[0]); err == nil &&
			time.Until(leaf.NotAfter) > 30*24*time.Hour && covers(leaf, hosts) {
			return newCert(pair, certFile, true)
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("the hub's certificate in %s: %w (delete cert.pem and key.pem to make a new one)", dir, err)
	}
	if err := generate(certFile, keyFile, hosts); err != nil {
		return nil, err
	}
	pair, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("the hub's certificate: %w", err)
	}
	return newCert(pair, certFile, true)
}

func covers(leaf *x509.Certificate, hosts []string) bool {
	for _, h := range hosts {
		if leaf.VerifyHostname(h) != nil {
			return false
		}
	}
	return true
}

func newCert(pair tls.Certificate, file string, self bool) (*Cert, error) {
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		return nil, fmt.Errorf("certificate %s: %w", file, err)
	}
	return &Cert{
		Config:      &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12},
		Fingerprint: Fingerprint(leaf.Raw), SelfSigned: self, NotAfter: leaf.NotAfter, CertFile: file,
	}, nil
}

// Fingerprint is the SHA-256 of a DER certificate as colon-separated upper-case hex, the form
// browsers and `openssl x509 -fingerprint -sha256` show.
func Fingerprint(der []byte) string {
	sum := sha256.Sum256(der)
	h := strings.ToUpper(hex.EncodeToString(sum[:]))
	var b strings.Builder
	for i := 0; i < len(h); i += 2 {
		if i > 0 {
			b.WriteByte(':')
		}
		b.WriteString(h[i : i+2])
	}
	return b.String()
}

func generate(certFile, keyFile string, hosts []string) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return fmt.Errorf("make the hub's key: %w", err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return fmt.Errorf("make the hub's certificate: %w", err)
	}
	name, _ := os.Hostname()
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "Switchboard hub " + name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(2 * 365 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		DNSNames:              []string{"localhost"},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	}
	if name != "" {
		tmpl.DNSNames = append(tmpl.DNSNames, name)
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else if h != "" {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return fmt.Errorf("make the hub's certificate: %w", err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return fmt.Errorf("make the hub's key: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(certFile), 0o700); err != nil {
		return fmt.Errorf("save the hub's certificate: %w", err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		return fmt.Errorf("save the hub's key: %w", err)
	}
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		return fmt.Errorf("save the hub's certificate: %w", err)
	}
	return nil
}

// Hosts lists the names and addresses a certificate for a listen address should cover: the
// address's host when it is specific, else every address of the machine's interfaces.
func Hosts(listenAddr string) []string {
	host, _, err := net.SplitHostPort(listenAddr)
	if err == nil && host != "" {
		if ip := net.ParseIP(host); ip == nil || !ip.IsUnspecified() {
			return []string{host}
		}
	}
	var out []string
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() && !n.IP.IsLinkLocalUnicast() {
			out = append(out, n.IP.String())
		}
	}
	return out
}

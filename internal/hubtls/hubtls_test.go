package hubtls

import (
	"crypto/tls"
	"crypto/x509"
	"os"
	"path/filepath"
	"testing"
)

func TestSelfSignedIsKeptAndCoversItsHosts(t *testing.T) {
	dir := t.TempDir()
	a, err := SelfSigned(dir, []string{"192.0.2.7", "workstation.lan"})
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(a.Config.Certificates[0].Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range []string{"192.0.2.7", "workstation.lan", "localhost", "127.0.0.1"} {
		if err := leaf.VerifyHostname(h); err != nil {
			t.Errorf("the certificate does not cover %s: %v", h, err)
		}
	}
	if !a.SelfSigned || a.Fingerprint != Fingerprint(leaf.Raw) || len(a.Fingerprint) != 95 {
		t.Fatalf("cert %+v", a)
	}
	if fi, _ := os.Stat(filepath.Join(dir, "key.pem")); fi.Mode().Perm() != 0o600 {
		t.Errorf("key.pem mode %v", fi.Mode().Perm())
	}
	b, err := SelfSigned(dir, []string{"192.0.2.7"})
	if err != nil || b.Fingerprint != a.Fingerprint {
		t.Fatalf("the second start made another certificate: %v", err)
	}
	c, err := SelfSigned(dir, []string{"192.0.2.8"})
	if err != nil || c.Fingerprint == a.Fingerprint {
		t.Fatalf("a new address kept a certificate that does not cover it: %v", err)
	}
	// Served, a client sees the fingerprint Settings shows.
	ln, err := tls.Listen("tcp", "127.0.0.1:0", c.Config)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		conn, err := ln.Accept()
		if err == nil {
			_ = conn.(*tls.Conn).Handshake()
			conn.Close()
		}
	}()
	conn, err := tls.Dial("tcp", ln.Addr().String(), &tls.Config{InsecureSkipVerify: true})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if got := Fingerprint(conn.ConnectionState().PeerCertificates[0].Raw); got != c.Fingerprint {
		t.Fatalf("served %s, shown %s", got, c.Fingerprint)
	}
	// Load reads the user's pair (here, the one just made).
	u, err := Load(filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem"))
	if err != nil || u.SelfSigned || u.Fingerprint != c.Fingerprint {
		t.Fatalf("load: %+v %v", u, err)
	}
	if _, err := Load(filepath.Join(dir, "missing.pem"), filepath.Join(dir, "key.pem")); err == nil {
		t.Fatal("a missing certificate was loaded")
	}
}

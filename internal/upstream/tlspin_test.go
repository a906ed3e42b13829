package upstream

import (
	"strings"
	"testing"
)

// TestTLSFingerprintKey: tls_fingerprint is written and read back by the config file edits, is
// part of what the user approves (CommandHash), and is refused with its fix where it cannot
// apply (a local server, plain http) or is not a SHA-256 fingerprint.
func TestTLSFingerprintKey(t *testing.T) {
	pin := "sha256:" + strings.Repeat("0A:", 31) + "0A"
	sp := Spec{Name: "workstation", URL: "https://workstation:9101/mcp", TLSFingerprint: pin}
	data, err := AddServer(nil, sp)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `tls_fingerprint = "`+pin+`"`) {
		t.Fatalf("written:\n%s", data)
	}
	specs, err := ReadSpecs(data)
	if err != nil || len(specs) != 1 || specs[0].TLSFingerprint != pin {
		t.Fatalf("read back: %+v %v", specs, err)
	}
	unpinned := sp
	unpinned.TLSFingerprint = ""
	if sp.CommandHash() == unpinned.CommandHash() {
		t.Error("the pin is not part of the approved command: changing it would not ask the user again")
	}
	lower := sp
	lower.TLSFingerprint = "sha256:" + strings.Repeat("0a", 32) // colons optional, any case
	if err := lower.Validate(nil); err != nil {
		t.Errorf("a fingerprint without colons: %v", err)
	}
	for _, bad := range []struct {
		spec Spec
		want string
	}{
		{Spec{Name: "x", URL: "http://workstation:9101/mcp", TLSFingerprint: pin}, "only for a server reached over https"},
		{Spec{Name: "x", Command: "srv", TLSFingerprint: pin}, "only for a server reached over https"},
		{Spec{Name: "x", URL: "https://w/mcp", TLSFingerprint: strings.TrimPrefix(pin, "sha256:")}, `write it as "sha256:"`},
		{Spec{Name: "x", URL: "https://w/mcp", TLSFingerprint: "sha256:0A:0B"}, "not a SHA-256 fingerprint"},
	} {
		if err := bad.spec.Validate(nil); err == nil || !strings.Contains(err.Error(), bad.want) || !strings.Contains(err.Error(), "tls_fingerprint") {
			t.Errorf("%+v: %v, want %q", bad.spec, err, bad.want)
		}
	}
}

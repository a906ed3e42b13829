package clienttokens

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestIssueVerifyRevoke: a token names its client; one token per client (a new one replaces the
// old); only digests reach the file, which is 0600 and read back by a new Store; a revoked token
// is refused and its client announced; bad names and made-up tokens are refused.
func TestIssueVerifyRevoke(t *testing.T) {
	path := filepath.Join(t.TempDir(), "client-tokens.json")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	first, err := s.Issue("cursor")
	if err != nil {
		t.Fatal(err)
	}
	second, _ := s.Issue("cursor")
	other, _ := s.Issue("codex")
	if c, ok := s.Verify(second); !ok || c != "cursor" {
		t.Errorf("Verify(cursor's token) = %q, %v", c, ok)
	}
	if _, ok := s.Verify(first); ok {
		t.Errorf("the replaced token still works")
	}
	for _, bad := range []string{"", "sbc_", Prefix + strings.Repeat("0", 64), second + "x", "cursor"} {
		if _, ok := s.Verify(bad); ok {
			t.Errorf("Verify(%q) accepted", bad)
		}
	}
	if _, err := s.Issue("claude code"); err == nil || !strings.Contains(err.Error(), "letters, digits") {
		t.Errorf("a name with a space: %v", err)
	}

	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, tok := range []string{first, second, other} {
		if strings.Contains(string(raw), tok) || strings.Contains(string(raw), strings.TrimPrefix(tok, Prefix)) {
			t.Errorf("a token is in the file in plain text:\n%s", raw)
		}
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("file mode %v, want 0600", fi.Mode().Perm())
	}

	again, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if c, ok := again.Verify(other); !ok || c != "codex" {
		t.Errorf("a reopened store does not know codex's token: %q %v", c, ok)
	}
	var revoked []string
	again.OnRevoke(func(c string) { revoked = append(revoked, c) })
	if ok, err := again.Revoke("codex"); !ok || err != nil {
		t.Fatalf("revoke: %v %v", ok, err)
	}
	if _, ok := again.Verify(other); ok {
		t.Errorf("a revoked token still works")
	}
	if ok, _ := again.Revoke("codex"); ok {
		t.Errorf("revoking twice found a token")
	}
	if len(revoked) != 1 || revoked[0] != "codex" {
		t.Errorf("revocations announced: %v", revoked)
	}
	list := again.List()
	if len(list) != 1 || list[0].Client != "cursor" || list[0].Created.IsZero() || list[0].LastUsed.IsZero() {
		t.Errorf("List = %+v", list)
	}
	if err := os.WriteFile(path, []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(path); err == nil || !strings.Contains(err.Error(), "remove the file") {
		t.Errorf("a damaged file: %v", err)
	}
}

package upstream

import (
	"reflect"
	"strings"
	"testing"
)

// oauth = { … } is read, validated with errors naming the field and the fix, written back by
// AddServer, and part of the command the user approves.
func TestOAuthConfig(t *testing.T) {
	specs, err := ReadSpecs([]byte(`[[servers]]
name = "remote"
url = "https://example.test/mcp"
oauth = { client_id = "sb", client_secret = "${secret:remote-client-secret}", scopes = ["read", "write"] }
`))
	if err != nil {
		t.Fatal(err)
	}
	want := &OAuth{ClientID: "sb", ClientSecret: "${secret:remote-client-secret}", Scopes: []string{"read", "write"}}
	if len(specs) != 1 || !reflect.DeepEqual(specs[0].OAuth, want) {
		t.Fatalf("read %+v", specs[0].OAuth)
	}
	if err := specs[0].Validate(nil); err != nil {
		t.Fatal(err)
	}
	out, err := AddServer(nil, specs[0])
	if err != nil {
		t.Fatal(err)
	}
	back, err := ReadSpecs(out)
	if err != nil || !reflect.DeepEqual(back[0].OAuth, want) {
		t.Fatalf("written %s read back %+v %v", out, back, err)
	}
	plain := Spec{Name: "remote", URL: "https://example.test/mcp"}
	if plain.CommandHash() == specs[0].CommandHash() {
		t.Error("the oauth table is not part of the approved command")
	}
	if _, err := ReadSpecs([]byte("[[servers]]\nname = \"r\"\nurl = \"https://x.test\"\noauth = { client = \"x\" }\n")); err == nil || !strings.Contains(err.Error(), "oauth.client") {
		t.Errorf("unknown key: %v", err)
	}
	for _, c := range []struct {
		spec Spec
		want string
	}{
		{Spec{Name: "r", Command: "x", OAuth: &OAuth{}}, "oauth: only for a remote server"},
		{Spec{Name: "r", URL: "https://x.test", Headers: map[string]string{"authorization": "Bearer x"}, OAuth: &OAuth{}}, "already gets an Authorization header"},
		{Spec{Name: "r", URL: "https://x.test", OAuth: &OAuth{ClientSecret: "${secret:s}"}}, "client_secret without client_id"},
		{Spec{Name: "r", URL: "https://x.test", OAuth: &OAuth{ClientID: "a", ClientSecret: "plain-secret"}}, "client_secret = \"${secret:r-client-secret}\""},
		{Spec{Name: "r", URL: "https://x.test", OAuth: &OAuth{ClientID: "a", Scopes: []string{"read write"}}}, "scopes: \"read write\""},
	} {
		err := c.spec.Validate(nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v; want %q", c.spec.OAuth, err, c.want)
		}
	}
}

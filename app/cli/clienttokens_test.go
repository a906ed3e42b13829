//go:build unix

package cli

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/app/apptest"
)

type bearerRT struct{ token string }

func (b bearerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// TestClientTokenThroughRunningHub: `switchboard token --client NAME` gets a client its own token
// from the running hub; a go-sdk v1.8 client (2026-07-28, stateless) calls over HTTP with it;
// the token is nowhere in the hub's files or its log in plain text; `--revoke` refuses the
// client's very next request.
func TestClientTokenThroughRunningHub(t *testing.T) {
	bin := apptest.Binary(t)
	env := apptest.Env(t)
	sock := filepath.Join(apptest.EnvValue(env, "XDG_RUNTIME_DIR"), "switchboard", "mcp.sock")
	ws := t.TempDir()
	p, m := apptest.Start(t, bin, env, "", regexp.MustCompile(`http listening on (http://\S+)`),
		"serve", "--unix", sock, "--http", "127.0.0.1:0", "--token", "shared-secret", "--workspace", ws)
	url := m[1]
	p.Stderr.Wait(t, unixListening)

	out, errOut, err := runCLI(t, bin, env, ws, "token", "--client", "cursor")
	token := strings.TrimSpace(out)
	if err != nil || !strings.HasPrefix(token, "sbc_") {
		t.Fatalf("token --client cursor: %v\nstdout: %s\nstderr: %s", err, out, errOut)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tr := &sdk.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearerRT{token}}}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "cursor", Version: "1"}, nil).Connect(ctx, tr, nil)
	if err != nil {
		t.Fatalf("connect with the client's token: %v", err)
	}
	defer cs.Close()
	call := func() error {
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "lang_detect", Arguments: map[string]any{"path": "a.go"}})
		if err == nil && res.IsError {
			t.Fatalf("lang_detect: %+v", res)
		}
		return err
	}
	if err := call(); err != nil {
		t.Fatalf("a call with the client's token: %v", err)
	}

	// Plain text nowhere: the hub's data, config and state directories, and its log.
	for _, dir := range []string{apptest.EnvValue(env, "XDG_DATA_HOME"), apptest.EnvValue(env, "XDG_CONFIG_HOME"), apptest.EnvValue(env, "XDG_STATE_HOME")} {
		if dir == "" {
			continue
		}
		_ = filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return nil
			}
			if b, err := os.ReadFile(path); err == nil && strings.Contains(string(b), token) {
				t.Errorf("the client token is in %s in plain text", path)
			}
			return nil
		})
	}
	if strings.Contains(strings.Join(p.Stderr.Lines(), "\n"), token) {
		t.Errorf("the client token is in the hub's log")
	}

	if _, errOut, err := runCLI(t, bin, env, ws, "token", "--client", "cursor", "--revoke"); err != nil {
		t.Fatalf("token --revoke: %v\n%s", err, errOut)
	}
	if err := call(); err == nil || !strings.Contains(err.Error(), "401") && !strings.Contains(strings.ToLower(err.Error()), "unauthorized") {
		t.Errorf("a call after revocation: %v, want 401", err)
	}
}

package secrets

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"

	"github.com/switchboard-hub/switchboard/internal/secrets/secretstest"
	"github.com/switchboard-hub/switchboard/internal/upstream"
)

const fix = "install and unlock a keyring (gnome-keyring, KeePassXC) or use ${VAR} from the environment"

func open(t *testing.T) (*Keyring, context.Context) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	k, err := Open(ctx, envBus())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { k.Close() })
	return k, ctx
}

// secretTool runs libsecret's secret-tool, an independent Secret Service client, on the test's bus.
func secretTool(t *testing.T, stdin string, args ...string) string {
	t.Helper()
	cmd := exec.Command(secretstest.Need(t, "secret-tool", "libsecret-tools"), args...)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("secret-tool %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// TestKeyring runs every operation against a real gnome-keyring-daemon.
func TestKeyring(t *testing.T) {
	secretstest.Start(t)
	k, ctx := open(t)

	t.Run("store and look up", func(t *testing.T) {
		for _, c := range []struct{ name, value string }{
			{"github-token", "ghp_0123456789abcdef"},
			{"unicode.and_spaces", "pässwörd with spaces ✓"},
			{"newlines", "line 1\nline 2\n"},
			{"largest", strings.Repeat("x", MaxValue)},
		} {
			if err := k.Store(ctx, c.name, c.value); err != nil {
				t.Fatalf("Store(%s): %v", c.name, err)
			}
			got, err := k.Lookup(ctx, c.name)
			if err != nil || got != c.value {
				t.Errorf("Lookup(%s) = %.40q, %v; want %.40q", c.name, got, err, c.value)
			}
		}
	})

	t.Run("store replaces", func(t *testing.T) {
		for _, v := range []string{"one", "two"} {
			if err := k.Store(ctx, "rotated", v); err != nil {
				t.Fatal(err)
			}
		}
		if got, err := k.Lookup(ctx, "rotated"); got != "two" || err != nil {
			t.Errorf("Lookup = %q, %v; want the second value", got, err)
		}
		if unlocked, _, _ := k.search(ctx, k.attributes("rotated")); len(unlocked) != 1 {
			t.Errorf("%d items for one secret; Store must replace, not add", len(unlocked))
		}
	})

	t.Run("secret-tool reads what Store wrote", func(t *testing.T) {
		if err := k.Store(ctx, "to-libsecret", "s3cret value"); err != nil {
			t.Fatal(err)
		}
		if got := secretTool(t, "", "lookup", "application", "switchboard", "name", "to-libsecret"); got != "s3cret value" {
			t.Errorf("secret-tool lookup = %q", got)
		}
		if got := secretTool(t, "", "search", "application", "switchboard", "name", "to-libsecret"); !strings.Contains(got, "label = Switchboard: to-libsecret") {
			t.Errorf("secret-tool search:\n%s\nwant the label \"Switchboard: to-libsecret\"", got)
		}
	})

	t.Run("Lookup reads what secret-tool wrote; Store then replaces it", func(t *testing.T) {
		secretTool(t, "from libsecret", "store", "--label=by hand", "application", "switchboard", "name", "from-libsecret")
		if got, err := k.Lookup(ctx, "from-libsecret"); got != "from libsecret" || err != nil {
			t.Errorf("Lookup = %q, %v", got, err)
		}
		if err := k.Store(ctx, "from-libsecret", "new"); err != nil {
			t.Fatal(err)
		}
		unlocked, _, _ := k.search(ctx, k.attributes("from-libsecret"))
		if got, err := k.Lookup(ctx, "from-libsecret"); got != "new" || err != nil || len(unlocked) != 1 {
			t.Errorf("after Store: Lookup = %q, %v; %d items", got, err, len(unlocked))
		}
	})

	t.Run("list shows only Switchboard's names", func(t *testing.T) {
		secretTool(t, "not ours", "store", "--label=other", "application", "other-app", "name", "someone-elses")
		names, lockedCount, err := k.List(ctx)
		want := []string{"from-libsecret", "github-token", "largest", "newlines", "rotated", "to-libsecret", "unicode.and_spaces"}
		if err != nil || !slices.Equal(names, want) || lockedCount != 0 {
			t.Errorf("List = %q, %d, %v; want %q", names, lockedCount, err, want)
		}
		if _, err := k.Lookup(ctx, "someone-elses"); !errors.Is(err, ErrNotFound) {
			t.Errorf("Lookup of another application's item: %v; want ErrNotFound", err)
		}
	})

	t.Run("delete", func(t *testing.T) {
		if err := k.Delete(ctx, "github-token"); err != nil {
			t.Fatal(err)
		}
		_, err := k.Lookup(ctx, "github-token")
		if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "switchboard secret set github-token") {
			t.Errorf("Lookup after Delete: %v; want ErrNotFound saying how to store it", err)
		}
		if err := k.Delete(ctx, "github-token"); !errors.Is(err, ErrNotFound) {
			t.Errorf("second Delete: %v; want ErrNotFound", err)
		}
	})

	t.Run("upstream.Expand with LookupFunc", func(t *testing.T) {
		var lookup upstream.SecretLookup = k.LookupFunc(ctx) // the type the upstream package takes
		noEnv := func(string) (string, bool) { return "", false }
		got, err := upstream.Expand("Bearer ${secret:rotated}", noEnv, lookup)
		if got != "Bearer two" || err != nil {
			t.Errorf("Expand = %q, %v", got, err)
		}
		if _, err := upstream.Expand("${secret:missing}", noEnv, lookup); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "${secret:missing}") {
			t.Errorf("Expand of a missing secret: %v", err)
		}
	})

	t.Run("cancelled context", func(t *testing.T) {
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		if _, err := k.Lookup(cctx, "rotated"); !errors.Is(err, context.Canceled) {
			t.Errorf("Lookup with a cancelled context: %v", err)
		}
	})
}

// TestKeyringLocked: a locked collection is an error that says to unlock it, never a prompt.
func TestKeyringLocked(t *testing.T) {
	secretstest.Start(t)
	k, ctx := open(t)
	if err := k.Store(ctx, "api-key", "v"); err != nil {
		t.Fatal(err)
	}
	coll, err := k.defaultCollection(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var lockedObjs []dbus.ObjectPath
	var prompt dbus.ObjectPath
	if err := k.svc.CallWithContext(ctx, ifaceService+".Lock", 0, []dbus.ObjectPath{coll}).Store(&lockedObjs, &prompt); err != nil || prompt != noPrompt {
		t.Fatalf("lock %s: %v (prompt %s)", coll, err, prompt)
	}
	for _, c := range []struct {
		op string
		do func() error
	}{
		{"Lookup", func() error { _, err := k.Lookup(ctx, "api-key"); return err }},
		{"Store", func() error { return k.Store(ctx, "api-key", "w") }},
		{"Delete", func() error { return k.Delete(ctx, "api-key") }},
	} {
		err := c.do()
		if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), "unlock it") {
			t.Errorf("%s on a locked keyring: %v; want ErrLocked saying to unlock", c.op, err)
		}
	}
	names, lockedCount, err := k.List(ctx)
	if len(names) != 0 || lockedCount != 1 || err != nil {
		t.Errorf("List = %q, %d, %v; want no names and 1 locked item", names, lockedCount, err)
	}
}

func TestOpenWithoutSecretService(t *testing.T) {
	cases := []struct {
		name  string
		setup func(t *testing.T)
		cause string
	}{
		{"no session bus", func(t *testing.T) {
			t.Setenv("DBUS_SESSION_BUS_ADDRESS", "")
			t.Setenv("XDG_RUNTIME_DIR", t.TempDir())
		}, "DBUS_SESSION_BUS_ADDRESS is not set"},
		{"bus address that leads nowhere", func(t *testing.T) {
			t.Setenv("DBUS_SESSION_BUS_ADDRESS", "unix:path="+filepath.Join(t.TempDir(), "no-bus"))
		}, "cannot connect to"},
		{"bus without a Secret Service", func(t *testing.T) { secretstest.Bus(t) }, "nothing owns org.freedesktop.secrets"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.setup(t)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			k, err := Open(ctx, envBus())
			if k != nil {
				k.Close()
			}
			if !errors.Is(err, ErrNoService) || !strings.Contains(err.Error(), c.cause) || !strings.HasSuffix(err.Error(), fix) {
				t.Errorf("Open = %v; want ErrNoService with %q and the fix", err, c.cause)
			}
		})
	}
}

func TestValidName(t *testing.T) {
	cases := []struct {
		name string
		ok   bool
	}{
		{"github-token", true},
		{"OPENAI_API_KEY", true},
		{"a.b", true},
		{"9lives", true},
		{strings.Repeat("a", 128), true},
		{strings.Repeat("a", 129), false},
		{"", false},
		{"-flag", false},
		{"with space", false},
		{"a}b", false},
		{"a/b", false},
		{"ünï", false},
	}
	for _, c := range cases {
		err := ValidName(c.name)
		if (err == nil) != c.ok {
			t.Errorf("ValidName(%q) = %v; want ok=%v", c.name, err, c.ok)
		}
		if err != nil && !strings.Contains(err.Error(), "e.g. github-token") {
			t.Errorf("ValidName(%q) = %v; want an example of a good name", c.name, err)
		}
	}
}

// envBus is the bus the test environment names (secretstest points DBUS_SESSION_BUS_ADDRESS at
// its private bus), as the app's config.Env would.
func envBus() Bus {
	return Bus{Address: os.Getenv("DBUS_SESSION_BUS_ADDRESS"), RuntimeDir: os.Getenv("XDG_RUNTIME_DIR")}
}

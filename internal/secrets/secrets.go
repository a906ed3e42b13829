// Package secrets keeps Switchboard's secrets (the tokens ${secret:NAME} puts in an upstream
// server's environment or headers) in the desktop keyring, over the freedesktop Secret Service
// API: org.freedesktop.secrets on the session bus, served by gnome-keyring, KeePassXC (with its
// Secret Service integration on) and KWallet 5.97+. Pure Go (godbus): no libsecret, no cgo.
//
// A secret is an item whose attributes are {"application": "switchboard", "name": NAME}, the
// same as `secret-tool store --label=... application switchboard name NAME` writes, so either
// tool reads what the other stored. Switchboard shows no keyring prompts: a locked keyring is an
// error that says to unlock it.
package secrets

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/godbus/dbus/v5"
)

// Application is the "application" attribute of every item Switchboard stores.
const Application = "switchboard"

// Names on the bus, from the Secret Service API specification (0.2).
const (
	busName        = "org.freedesktop.secrets"
	servicePath    = dbus.ObjectPath("/org/freedesktop/secrets")
	ifaceService   = "org.freedesktop.Secret.Service"
	ifaceColl      = "org.freedesktop.Secret.Collection"
	ifaceItem      = "org.freedesktop.Secret.Item"
	ifaceSession   = "org.freedesktop.Secret.Session"
	noPrompt       = dbus.ObjectPath("/")
	errIsLocked    = "org.freedesktop.Secret.Error.IsLocked"
	errNoSuchObj   = "org.freedesktop.Secret.Error.NoSuchObject"
	errNoService   = "org.freedesktop.DBus.Error.ServiceUnknown"
	errNoOwner     = "org.freedesktop.DBus.Error.NameHasNoOwner"
	errSpawnPrefix = "org.freedesktop.DBus.Error.Spawn." // bus activation of the service failed
)

// Errors to test with errors.Is; each error returned also says what to do.
var (
	ErrNoService = errors.New("no Secret Service on the session bus; install and unlock a keyring (gnome-keyring, KeePassXC) or use ${VAR} from the environment")
	ErrNotFound  = errors.New("secret not in the keyring")
	ErrLocked    = errors.New("keyring locked")
)

// keyError is an error with its own message that still matches a sentinel with errors.Is.
type keyError struct {
	kind error
	msg  string
}

func (e *keyError) Error() string { return e.msg }
func (e *keyError) Unwrap() error { return e.kind }

func noService(cause string) error {
	return &keyError{ErrNoService, "no Secret Service on the session bus (" + cause + "); install and unlock a keyring (gnome-keyring, KeePassXC) or use ${VAR} from the environment"}
}

func notFound(name string) error {
	return &keyError{ErrNotFound, fmt.Sprintf("secret %q is not in the keyring; store it with: switchboard secret set %s", name, name)}
}

func locked(what string) error {
	return &keyError{ErrLocked, what + " is in a locked keyring; unlock it (log in again, or unlock it in your keyring app: Seahorse, KeePassXC) and retry; Switchboard does not show keyring prompts"}
}

// MaxValue is the largest secret Store accepts.
const MaxValue = 64 << 10

var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

// ValidName checks a secret's name: what ${secret:NAME} can refer to.
func ValidName(name string) error {
	if !nameRE.MatchString(name) {
		return fmt.Errorf("secret name %q: use letters, digits, '.', '_' and '-', starting with a letter or digit, at most 128 characters (e.g. github-token)", name)
	}
	return nil
}

// Keyring is a connection to the Secret Service. It is safe for concurrent use.
type Keyring struct {
	conn *dbus.Conn
	svc  dbus.BusObject
	app  string // the "application" attribute; "" is Application
}

// GrantsApplication is the "application" attribute of the OAuth grants the hub keeps for the
// remote servers it signed in to (internal/oauthclient): apart from the user's secrets, so
// ${secret:NAME} cannot reach them and `switchboard secret list` does not show them.
const GrantsApplication = "switchboard-oauth"

// WithApplication is k over the items of another "application" attribute (GrantsApplication).
// It shares k's connection: close one of them only.
func (k *Keyring) WithApplication(app string) *Keyring {
	c := *k
	c.app = app
	return &c
}

func (k *Keyring) application() string {
	if k.app == "" {
		return Application
	}
	return k.app
}

// Bus says where the session bus is: Address (DBUS_SESSION_BUS_ADDRESS) or, without one, the
// systemd user bus under RuntimeDir (XDG_RUNTIME_DIR). The app fills it from config.Env.
type Bus struct{ Address, RuntimeDir string }

// Open connects to the Secret Service on the session bus. On a desktop the bus starts the
// keyring daemon on demand (bus activation), so the first call may take a moment. Without a
// session bus or a Secret Service on it the error matches ErrNoService.
func Open(ctx context.Context, bus Bus) (*Keyring, error) {
	addr, err := bus.address()
	if err != nil {
		return nil, noService(err.Error())
	}
	conn, err := connect(ctx, addr)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("connect to the session bus: %w", ctx.Err())
		}
		return nil, noService(fmt.Sprintf("cannot connect to %s: %v", addr, err))
	}
	k := &Keyring{conn: conn, svc: conn.Object(busName, servicePath)}
	// Any call reaches the service, or has the bus start it.
	if _, err := k.property(ctx, k.svc, ifaceService, "Collections"); err != nil {
		conn.Close()
		return nil, k.wrap(err, "")
	}
	return k, nil
}

// Close closes the connection.
func (k *Keyring) Close() error { return k.conn.Close() }

// address is DBUS_SESSION_BUS_ADDRESS, or the systemd user bus socket. It is not
// dbus.ConnectSessionBus's lookup: with neither, that runs `dbus-launch --autolaunch`, which
// can leave a stray bus daemon behind, and it sets DBUS_SESSION_BUS_ADDRESS in the process
// environment behind the caller's back.
func (b Bus) address() (string, error) {
	if a := b.Address; a != "" && a != "autolaunch:" {
		return a, nil
	}
	if dir := b.RuntimeDir; dir != "" {
		p := filepath.Join(dir, "bus")
		if fi, err := os.Stat(p); err == nil && fi.Mode().Type() == os.ModeSocket {
			return "unix:path=" + dbus.EscapeBusAddressValue(p), nil
		}
	}
	return "", errors.New("DBUS_SESSION_BUS_ADDRESS is not set and there is no $XDG_RUNTIME_DIR/bus")
}

// connect is dbus.Connect (dial, authenticate, Hello) bounded by ctx. godbus takes no context
// for the handshake; on cancellation the connection, when it comes, is closed.
func connect(ctx context.Context, addr string) (*dbus.Conn, error) {
	type result struct {
		conn *dbus.Conn
		err  error
	}
	done := make(chan result, 1)
	go func() {
		c, err := dbus.Connect(addr)
		done <- result{c, err}
	}()
	select {
	case r := <-done:
		return r.conn, r.err
	case <-ctx.Done():
		go func() {
			if r := <-done; r.conn != nil {
				r.conn.Close()
			}
		}()
		return nil, ctx.Err()
	}
}

// wrap turns a bus error into one that says what to do; what names the secret, if any.
func (k *Keyring) wrap(err error, what string) error {
	var de dbus.Error
	if errors.As(err, &de) {
		switch {
		case de.Name == errNoService || de.Name == errNoOwner:
			return noService("nothing owns " + busName)
		case strings.HasPrefix(de.Name, errSpawnPrefix):
			return noService("the bus could not start the keyring daemon: " + errText(de))
		case de.Name == errIsLocked:
			if what == "" {
				what = "the secret"
			}
			return locked(what)
		}
		return fmt.Errorf("secret service: %s: %s", de.Name, errText(de))
	}
	return fmt.Errorf("secret service: %w", err)
}

func errText(de dbus.Error) string {
	if len(de.Body) > 0 {
		if s, ok := de.Body[0].(string); ok {
			return s
		}
	}
	return de.Name
}

func (k *Keyring) property(ctx context.Context, obj dbus.BusObject, iface, prop string) (dbus.Variant, error) {
	var v dbus.Variant
	err := obj.CallWithContext(ctx, "org.freedesktop.DBus.Properties.Get", 0, iface, prop).Store(&v)
	return v, err
}

func (k *Keyring) attributes(name string) map[string]string {
	return map[string]string{"application": k.application(), "name": name}
}

// search finds the items with these attributes in every collection.
func (k *Keyring) search(ctx context.Context, attrs map[string]string) (unlocked, lockedItems []dbus.ObjectPath, err error) {
	err = k.svc.CallWithContext(ctx, ifaceService+".SearchItems", 0, attrs).Store(&unlocked, &lockedItems)
	return unlocked, lockedItems, err
}

// secret is the Secret structure of the API: (oayays).
type secret struct {
	Session     dbus.ObjectPath
	Parameters  []byte
	Value       []byte
	ContentType string
}

// openSession opens a session with the "plain" algorithm: values travel unencrypted, over the
// private Unix socket to the bus (the API's own DH-AES option protects only against the bus
// daemon, which the user runs). A session per operation, not one per Keyring: the hub lives
// long and a keyring daemon that restarts forgets its sessions.
func (k *Keyring) openSession(ctx context.Context) (dbus.ObjectPath, error) {
	var out dbus.Variant
	var path dbus.ObjectPath
	err := k.svc.CallWithContext(ctx, ifaceService+".OpenSession", 0, "plain", dbus.MakeVariant("")).Store(&out, &path)
	return path, err
}

// closeSession closes a session without waiting for the answer (and so without a context that
// may be done by now); the service also closes it when the connection goes.
func (k *Keyring) closeSession(path dbus.ObjectPath) {
	k.conn.Object(busName, path).Go(ifaceSession+".Close", dbus.FlagNoReplyExpected, nil)
}

// defaultCollection is the collection the "default" alias points at, or "/" when none.
func (k *Keyring) defaultCollection(ctx context.Context) (dbus.ObjectPath, error) {
	var coll dbus.ObjectPath
	err := k.svc.CallWithContext(ctx, ifaceService+".ReadAlias", 0, "default").Store(&coll)
	return coll, err
}

// Lookup returns the value of the secret called name. Not there: an error matching
// ErrNotFound; only in a locked collection: one matching ErrLocked.
func (k *Keyring) Lookup(ctx context.Context, name string) (string, error) {
	if err := ValidName(name); err != nil {
		return "", err
	}
	what := fmt.Sprintf("secret %q", name)
	unlocked, lockedItems, err := k.search(ctx, k.attributes(name))
	if err != nil {
		return "", k.wrap(err, what)
	}
	if len(unlocked) == 0 {
		if len(lockedItems) > 0 {
			return "", locked(what)
		}
		return "", notFound(name)
	}
	item := unlocked[0]
	if len(unlocked) > 1 {
		// Stored in more than one collection (by hand, or by another tool): the default
		// collection's is the one Store writes, so it is the current one.
		item = k.preferDefault(ctx, unlocked)
	}
	sess, err := k.openSession(ctx)
	if err != nil {
		return "", k.wrap(err, what)
	}
	defer k.closeSession(sess)
	var got map[dbus.ObjectPath]secret
	if err := k.svc.CallWithContext(ctx, ifaceService+".GetSecrets", 0, []dbus.ObjectPath{item}, sess).Store(&got); err != nil {
		return "", k.wrap(err, what)
	}
	s, ok := got[item]
	if !ok {
		// GetSecrets leaves out items it cannot unlock without a prompt.
		return "", locked(what)
	}
	return string(s.Value), nil
}

func (k *Keyring) preferDefault(ctx context.Context, items []dbus.ObjectPath) dbus.ObjectPath {
	items = slices.Clone(items)
	slices.Sort(items) // the service's order is not specified
	if coll, err := k.defaultCollection(ctx); err == nil && coll != noPrompt {
		for _, it := range items {
			if strings.HasPrefix(string(it), string(coll)+"/") {
				return it
			}
		}
	}
	return items[0]
}

// LookupFunc binds Lookup to ctx, as the func(name string) (string, error) that
// upstream.SecretLookup is.
func (k *Keyring) LookupFunc(ctx context.Context) func(name string) (string, error) {
	return func(name string) (string, error) { return k.Lookup(ctx, name) }
}

// Store creates the secret called name in the default collection, or replaces its value there.
func (k *Keyring) Store(ctx context.Context, name, value string) error {
	if err := ValidName(name); err != nil {
		return err
	}
	switch {
	case value == "":
		return fmt.Errorf("secret %q: the value is empty; give the secret's value on standard input", name)
	case len(value) > MaxValue:
		return fmt.Errorf("secret %q: the value is %d bytes; at most %d fit", name, len(value), MaxValue)
	}
	coll, err := k.defaultCollection(ctx)
	if err != nil {
		return k.wrap(err, "")
	}
	if coll == noPrompt {
		return errors.New("the keyring has no default collection to store secrets in; create one in your keyring app (Seahorse: a new password keyring, set as default; KeePassXC: a database exposed to the Secret Service) and retry")
	}
	collObj := k.conn.Object(busName, coll)
	if v, err := k.property(ctx, collObj, ifaceColl, "Locked"); err != nil {
		return k.wrap(err, "")
	} else if isLocked, _ := v.Value().(bool); isLocked {
		return locked(fmt.Sprintf("the default collection (%s)", coll))
	}
	sess, err := k.openSession(ctx)
	if err != nil {
		return k.wrap(err, "")
	}
	defer k.closeSession(sess)
	props := map[string]dbus.Variant{
		ifaceItem + ".Label":      dbus.MakeVariant("Switchboard: " + name),
		ifaceItem + ".Attributes": dbus.MakeVariant(k.attributes(name)),
	}
	var item, prompt dbus.ObjectPath
	err = collObj.CallWithContext(ctx, ifaceColl+".CreateItem", 0, props,
		secret{Session: sess, Parameters: []byte{}, Value: []byte(value), ContentType: "text/plain"}, true).Store(&item, &prompt)
	if err != nil {
		return k.wrap(err, fmt.Sprintf("the default collection (%s)", coll))
	}
	if prompt != noPrompt {
		return locked(fmt.Sprintf("the default collection (%s)", coll))
	}
	return nil
}

// Delete removes the secret called name from every unlocked collection. Not there: an error
// matching ErrNotFound.
func (k *Keyring) Delete(ctx context.Context, name string) error {
	if err := ValidName(name); err != nil {
		return err
	}
	what := fmt.Sprintf("secret %q", name)
	unlocked, lockedItems, err := k.search(ctx, k.attributes(name))
	if err != nil {
		return k.wrap(err, what)
	}
	if len(unlocked) == 0 {
		if len(lockedItems) > 0 {
			return locked(what)
		}
		return notFound(name)
	}
	for _, it := range unlocked {
		var prompt dbus.ObjectPath
		err := k.conn.Object(busName, it).CallWithContext(ctx, ifaceItem+".Delete", 0).Store(&prompt)
		var de dbus.Error
		if errors.As(err, &de) && de.Name == errNoSuchObj {
			continue // deleted meanwhile
		}
		if err != nil {
			return k.wrap(err, what)
		}
		if prompt != noPrompt {
			return locked(what)
		}
	}
	return nil
}

// List returns the names of Switchboard's secrets in unlocked collections, sorted, and how many
// more items sit in locked ones (their names cannot be read until they are unlocked).
func (k *Keyring) List(ctx context.Context) (names []string, lockedCount int, err error) {
	unlocked, lockedItems, err := k.search(ctx, map[string]string{"application": k.application()})
	if err != nil {
		return nil, 0, k.wrap(err, "")
	}
	for _, it := range unlocked {
		v, err := k.property(ctx, k.conn.Object(busName, it), ifaceItem, "Attributes")
		if err != nil {
			var de dbus.Error
			if errors.As(err, &de) && de.Name == errNoSuchObj {
				continue // deleted meanwhile
			}
			return nil, 0, k.wrap(err, "")
		}
		if attrs, ok := v.Value().(map[string]string); ok && attrs["name"] != "" {
			names = append(names, attrs["name"])
		}
	}
	slices.Sort(names)
	return slices.Compact(names), len(lockedItems), nil
}

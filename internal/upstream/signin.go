package upstream

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/switchboard-hub/switchboard/internal/oauthclient"
)

// SignInMessage is what a call of a server waiting for the user to sign in answers.
func SignInMessage(name string) string { return oauthclient.SignInMessage(name) }

// LoginFlow is the sign-in to a configured remote server sp, with its oauth table's client
// secret resolved: the CLI runs it in its own process, the Manager's Login in the hub's.
func LoginFlow(sp Spec, o Options, open func(authURL string) error) (*oauthclient.Flow, error) {
	if sp.Kind() == TransportStdio {
		return nil, fmt.Errorf("server %q is a local server (command); only a remote one (url) is signed in to", sp.Name)
	}
	if hasHeader(sp.Headers, "Authorization") {
		return nil, fmt.Errorf("server %q gets an Authorization header from its headers; remove it to sign in with OAuth instead", sp.Name)
	}
	if o.OAuthStore == nil {
		return nil, errors.New("no keyring to keep the sign-in in; install and unlock a keyring (gnome-keyring, KeePassXC)")
	}
	hc, err := oauthHTTP(sp, sp.URL, o.OAuthAllow)
	if err != nil {
		return nil, err
	}
	f := &oauthclient.Flow{Server: sp.Name, URL: sp.URL, Store: o.OAuthStore, HTTP: hc, Open: open, ClientMetadataURL: o.ClientMetadataURL, Version: o.Version}
	if c := sp.OAuth; c != nil {
		f.Config = oauthclient.Config{ClientID: c.ClientID, Scopes: c.Scopes}
		if c.ClientSecret != "" {
			getenv := o.Getenv
			if getenv == nil {
				getenv = func(string) (string, bool) { return "", false }
			}
			v, err := Expand(c.ClientSecret, getenv, o.Secret)
			if err != nil {
				return nil, fmt.Errorf("server %q: oauth: client_secret: %w", sp.Name, err)
			}
			f.Config.ClientSecret = v
		}
	}
	return f, nil
}

// Login signs the hub in to a remote server: its authorization server's page is opened with
// open (the user's browser) and Login returns once the grant is in the keyring (or the user
// refused, or ctx ended). The server then starts, or goes on, with it. Its command must be
// approved: nothing is sent to a server before that.
func (m *Manager) Login(ctx context.Context, name string, open func(authURL string) error) error {
	s, err := m.get(name)
	if err != nil {
		return err
	}
	if !m.approvals.commandApproved(name, s.spec.CommandHash()) {
		return fmt.Errorf("server %q: its command (%s) is not approved; approve it first (`switchboard servers approve %s`), then sign in", name, s.spec.CommandLine(), name)
	}
	f, err := LoginFlow(s.spec, m.loginOptions(s), open)
	if err != nil {
		return err
	}
	s.log.add("hub", "sign-in started")
	g, err := f.Run(ctx)
	if err != nil {
		// Shown where the user looks (the row, `servers list`, the tray's tooltip): a sign-in
		// started from the dashboard answers before the browser comes back.
		s.fail(fmt.Errorf("sign-in failed: %v; %s", err, SignInMessage(name)))
		m.notify(name)
		return fmt.Errorf("server %q: sign-in: %w", name, err)
	}
	s.log.add("hub", "signed in with "+g.Issuer)
	return m.SignedIn(name)
}

func (m *Manager) loginOptions(s *server) Options {
	o := m.opts
	o.Secret = s.secretLookup()
	return o
}

// SignedIn tells the server that a grant was stored for it (by Login, or by another process:
// `switchboard servers login` run beside the hub): a server waiting for the user starts.
func (m *Manager) SignedIn(name string) error {
	s, err := m.get(name)
	if err != nil {
		return err
	}
	// The user just signed in: an on-demand server connects now too, so its tools can be
	// listed (and approved) without waiting for a call.
	s.mu.Lock()
	s.wanted = true
	s.mu.Unlock()
	select {
	case s.signedIn <- struct{}{}:
	default:
	}
	m.notify(name)
	return nil
}

// Logout forgets the server's grant: revoked at its authorization server where it can be
// (RFC 7009, best effort), deleted from the keyring; a running server's session ends and it
// waits for a sign-in, its tools still listed and answering with how to sign in.
func (m *Manager) Logout(ctx context.Context, name string) error {
	sp, err := m.Spec(name)
	if err != nil {
		return err
	}
	had, err := logout(ctx, sp, m.opts)
	if err != nil {
		return err
	}
	s, err := m.get(name)
	if err != nil {
		return err
	}
	if !had {
		if t := s.oauth.Load(); t == nil || !t.SignedIn() {
			return nil // no sign-in to forget: the server goes on as it is
		}
	}
	s.log.add("hub", "signed out by the user")
	s.needSignIn("signed out by the user")
	m.notify(name)
	// Return once a running server has left its session (a few ms), so the caller's answer is
	// the state after the sign-out, not one an event already overtook.
	wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	_ = m.Await(wctx, func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.state != StateRunning
	})
	return nil
}

// Logout forgets a server's grant (see Manager.Logout) without a running hub.
func Logout(ctx context.Context, sp Spec, o Options) error {
	_, err := logout(ctx, sp, o)
	return err
}

// logout revokes and deletes the server's grant and reports whether there was one.
func logout(ctx context.Context, sp Spec, o Options) (bool, error) {
	if o.OAuthStore == nil {
		return false, errors.New("no keyring holds sign-ins here")
	}
	g, err := o.OAuthStore.Load(ctx, sp.Name)
	if errors.Is(err, oauthclient.ErrNoGrant) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if hc, err := oauthHTTP(sp, g.Resource, o.OAuthAllow); err == nil {
		_ = oauthclient.Revoke(ctx, hc, g)
	}
	return true, o.OAuthStore.Delete(ctx, sp.Name)
}

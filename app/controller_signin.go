package app

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/switchboard-hub/switchboard/internal/upstream"
)

// Signing in to a remote server (issue 38): the Servers view's and the tray's "Sign in". The
// hub runs the sign-in (its loopback listener receives the browser's redirect) and answers as
// soon as the authorization URL is known; the server leaves the "signin" state once the user
// consented in the browser. Tokens never leave the hub's keyring.

// signIns are the sign-ins in progress, one per server: a new one ends the previous.
type signIns struct {
	mu      sync.Mutex
	next    int
	running map[string]signIn
}

type signIn struct {
	id     int
	cancel context.CancelFunc
}

func (s *signIns) start(name string) (context.Context, func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.running == nil {
		s.running = map[string]signIn{}
	}
	if old, ok := s.running[name]; ok {
		old.cancel()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	s.next++
	id := s.next
	s.running[name] = signIn{id, cancel}
	return ctx, func() {
		cancel()
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.running[name].id == id { // not a newer sign-in's entry
			delete(s.running, name)
		}
	}
}

// LoginServer starts signing the hub in to a remote server and returns the page the user signs
// in on (opened in their browser when the hub can), audited as server_login. The sign-in goes
// on for up to five minutes; the server's state says when it is done.
func (c *Controller) LoginServer(name string) (ServerSignIn, error) {
	m, err := c.upstreams()
	if err != nil {
		return ServerSignIn{}, err
	}
	end := c.begin("server_login", serverArgs{Server: name})
	ctx, done := c.st.logins.start(name)
	urls := make(chan ServerSignIn, 1)
	failed := make(chan error, 1)
	open := func(u string) error {
		si := ServerSignIn{Name: name, URL: u}
		if c.st.OpenURL != nil {
			si.Opened = c.st.OpenURL(u) == nil
		}
		urls <- si
		return nil
	}
	go func() {
		defer done()
		err := m.Login(ctx, name, open)
		end(err)
		failed <- err
	}()
	select {
	case si := <-urls:
		return si, nil
	case err := <-failed:
		if err == nil {
			err = errors.New("the sign-in ended before it needed the browser")
		}
		return ServerSignIn{}, err
	case <-time.After(time.Minute):
		return ServerSignIn{}, errors.New("the server's authorization server did not answer within a minute")
	}
}

// LogoutServer forgets the grant of a remote server (revoked at its authorization server where
// it can be) and restarts it, audited as server_logout.
func (c *Controller) LogoutServer(name string) (upstream.Status, error) {
	m, err := c.upstreams()
	if err != nil {
		return upstream.Status{}, err
	}
	end := c.begin("server_logout", serverArgs{Server: name})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err = m.Logout(ctx, name)
	end(err)
	if err != nil {
		return upstream.Status{}, err
	}
	return m.Status(name)
}

// ServerSignedIn tells the hub a grant was stored for a server by another process (`switchboard
// servers login` beside the hub): a server waiting for the user starts.
func (c *Controller) ServerSignedIn(name string) (upstream.Status, error) {
	m, err := c.upstreams()
	if err != nil {
		return upstream.Status{}, err
	}
	if err := m.SignedIn(name); err != nil {
		return upstream.Status{}, err
	}
	return m.Status(name)
}

package app

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/switchboard-hub/switchboard/internal/authserver"
	"github.com/switchboard-hub/switchboard/internal/config"
	"github.com/switchboard-hub/switchboard/internal/hubtls"
	"github.com/switchboard-hub/switchboard/internal/policy"
	"github.com/switchboard-hub/switchboard/mcp"
)

// HubAuth is the HTTP endpoint's OAuth side ([http] auth = "oauth"): the hub's authorization
// server and the TLS certificate it serves beyond loopback.
type HubAuth struct {
	Server *authserver.Server
	Cert   *hubtls.Cert // nil: plain HTTP (loopback only)
}

// openHubAuth builds the authorization server and picks the certificate for cfg; nil when
// [http] auth is not "oauth". approvals is where each new client is put to the user.
func openHubAuth(cfg config.Config, st *Stack, metadataHTTP *http.Client) (*HubAuth, error) {
	if !cfg.OAuth() {
		return nil, nil
	}
	if metadataHTTP == nil {
		// Client ID Metadata Documents are fetched under web_fetch's SSRF rules; its allow-list
		// ([web] allow, SWITCHBOARD_FETCH_ALLOW) opens internal hosts to them too.
		metadataHTTP = authserver.MetadataClient(append(slices.Clone(cfg.Web.Allow), cfg.Env.FetchAllowList()...))
	}
	as, err := authserver.New(authserver.Options{
		Dir:     cfg.OAuthDir(),
		Scopes:  st.grantableScopes,
		Approve: st.approveClient,
		Logger:  st.Logger,
		HTTP:    metadataHTTP,
		// Off for a hub that cannot reach where clients publish their documents: they register.
		NoMetadataDocuments: !cfg.ClientMetadataDocuments(),
	})
	if err != nil {
		return nil, fmt.Errorf("oauth: %w", err)
	}
	ha := &HubAuth{Server: as}
	if cfg.HTTP.Cert != "" {
		ha.Cert, err = hubtls.Load(cfg.HTTP.Cert, cfg.HTTP.Key)
	} else {
		// Made now even for a loopback address: Settings may move HTTP beyond loopback while
		// the hub runs. On loopback it is not served (plain HTTP), beyond it it is.
		hosts := hubtls.Hosts(cfg.HTTP.Addr)
		if loopbackListen(cfg.HTTP.Addr) {
			hosts = hubtls.Hosts("0.0.0.0:0") // every address of this machine
		}
		ha.Cert, err = hubtls.SelfSigned(cfg.TLSDir(), hosts)
	}
	if err != nil {
		as.Close()
		return nil, err
	}
	return ha, nil
}

func (ha *HubAuth) tlsConfig() *tls.Config {
	if ha == nil || ha.Cert == nil {
		return nil
	}
	return ha.Cert.Config
}

func (ha *HubAuth) resource() mcp.TransportConfig {
	if ha == nil {
		return mcp.TransportConfig{}
	}
	return mcp.TransportConfig{HTTPOAuth: mcp.NewOAuthResource(ha.Server), HTTPTLS: ha.tlsConfig(),
		HTTPTLSOnLoopback: ha.Cert != nil && !ha.Cert.SelfSigned}
}

func loopbackListen(addr string) bool {
	host := addr
	if i := strings.LastIndex(addr, ":"); i >= 0 {
		host = addr[:i]
	}
	host = strings.Trim(host, "[]")
	return host == "localhost" || host == "127.0.0.1" || host == "::1" || strings.HasPrefix(host, "127.")
}

// grantableScopes are the scopes a client may ask for: every toolset, the servers' included.
func (st *Stack) grantableScopes() []string {
	var out []string
	for _, ts := range st.Service.Toolsets() {
		out = append(out, ts.Name)
	}
	return out
}

// approveClient puts a client's authorization to the user: one more entry in the approvals the
// dashboard and tray show, answered by DecideApproval (which may narrow the toolsets).
func (st *Stack) approveClient(ctx context.Context, r authserver.Request) authserver.Decision {
	redirect := r.RedirectURI
	if u, err := url.Parse(r.RedirectURI); err == nil {
		redirect = u.Scheme + "://" + u.Host
	}
	out := st.Approvals.Ask(ctx, policy.Approval{Kind: policy.KindClient, Client: r.ClientName, Device: r.Device,
		Scopes: slices.Clone(r.Scopes), Redirect: redirect}, authserver.DefaultApprovalTimeout, nil)
	st.note.Info("oauth: a client asked to use this hub", "client", r.ClientName, "device", r.Device, "result", out.Result(), "by", out.By)
	if !out.Approved {
		return authserver.Decision{Reason: out.Reason}
	}
	return authserver.Decision{Allow: true, Scopes: out.Scopes}
}

// Grants lists the OAuth clients allowed to use this hub.
func (c *Controller) Grants() GrantList {
	ha := c.st.HubAuth
	if ha == nil {
		return GrantList{Grants: []authserver.GrantInfo{}}
	}
	out := GrantList{Enabled: true, Grants: ha.Server.Grants(), TLS: c.httpServesTLS()}
	if ha.Cert != nil {
		out.Fingerprint, out.SelfSigned, out.CertFile = ha.Cert.Fingerprint, ha.Cert.SelfSigned, ha.Cert.CertFile
	}
	return out
}

// httpServesTLS reports whether the running HTTP transport serves TLS.
func (c *Controller) httpServesTLS() bool {
	for _, s := range c.st.Transports.Status() {
		if s.Name == mcp.TransportHTTP {
			return strings.HasPrefix(s.URL, "https://")
		}
	}
	return false
}

// RevokeGrant ends an OAuth client's grant at once: its next request is refused (401).
func (c *Controller) RevokeGrant(id string) (GrantList, error) {
	ha := c.st.HubAuth
	if ha == nil {
		return GrantList{}, fmt.Errorf(`grant %q: this hub has no OAuth clients ([http] auth is not "oauth")`, id)
	}
	if err := ha.Server.Revoke(id); err != nil {
		return GrantList{}, err
	}
	return c.Grants(), nil
}

package mcp

import (
	"github.com/switchboard-hub/switchboard/internal/policy"
)

// Policy, approvals and each session's workspace are decided by mcp/trust; these are the front
// ends' entry points.

// WithPolicy enforces a policy store's rules on every tool call and asks questions through
// broker when no client can answer them (default: allow everything, a private broker).
func WithPolicy(store *policy.Store, broker *policy.Broker) Option {
	return func(s *Service) error { s.opts.policy, s.opts.approvals = store, broker; return nil }
}

// Policy returns the policy store in force.
func (s *Service) Policy() *policy.Store { return s.trust.Policy() }

// Approvals returns the broker holding questions for the dashboard and the tray.
func (s *Service) Approvals() *policy.Broker { return s.trust.Approvals() }

// DecideApproval answers a pending question from the dashboard or the tray.
// scopes, for a client's authorization (policy.KindClient), are the toolsets granted (none:
// those asked for).
func (s *Service) DecideApproval(id, decision, by string, scopes ...string) error {
	return s.trust.DecideApproval(id, decision, by, scopes...)
}

// GrantWorkspace answers, for one session, whether it may use dir (one of its roots or its relay
// directory) as its workspace: the dashboard's grant and revoke. The answer stands for the
// session, like one given to a prompt.
func (s *Service) GrantWorkspace(sessionID, dir string, allow bool, by string) error {
	return s.trust.GrantWorkspace(sessionID, dir, allow, by)
}

// SetClientProjects sets each client's project ([clients.NAME] project, by the name its own
// token was issued to): where that client works when it calls without a session (2026-07-28
// over HTTP) instead of the hub's workspace. In force from the next call.
func (s *Service) SetClientProjects(projects map[string]string) { s.trust.SetClientProjects(projects) }

package trust

import "github.com/switchboard-hub/switchboard/internal/policy"

// What trust publishes for the dashboard, in a file of its own: the dashboard's TypeScript types
// are generated from this file (build/tygo.yaml, `make types`).

// ApprovalsSnapshot is the `approvals` hub channel's snapshot: the open questions and the state
// of the policy file (so the dashboard can say why an edit did not take).
type ApprovalsSnapshot struct {
	Approvals []policy.Approval `json:"approvals"`
	Policy    policy.Status     `json:"policy"`
}

// ApprovalsEvent is one `approvals` channel event: a question added or resolved, or the policy
// reloaded (Kind "policy").
type ApprovalsEvent struct {
	Kind     string           `json:"kind" tstype:"'added' | 'resolved' | 'policy'"`
	Approval *policy.Approval `json:"approval,omitempty"`
	Outcome  *policy.Outcome  `json:"outcome,omitempty"`
	Policy   *policy.Status   `json:"policy,omitempty"`
}

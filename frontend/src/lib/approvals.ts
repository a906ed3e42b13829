// Approvals: tool calls and MCP roots waiting for the user's answer (hub channel `approvals`),
// plus the state of the policy file, so the dashboard can say when an edit did not take.

import type * as app from './generated/app';
import type * as policy from './generated/policy';
import type * as mcp from './generated/mcp';
import { payload, type HubMessage } from './types';
import { upsertById } from './reducers';

export type Approval = policy.Approval;
/** The policy file's state; error says why the file on disk is not in force (the last good one is). */
export type PolicyStatus = policy.Status;
/** GET /api/approvals and the Approvals binding (the same shape as the channel's snapshot). */
export type ApprovalList = app.ApprovalList;

export interface ApprovalsState {
  approvals: Approval[];
  policy: PolicyStatus | null;
}

export const initialApprovals: ApprovalsState = { approvals: [], policy: null };


export function reduceApprovals(state: ApprovalsState, msg: HubMessage): ApprovalsState {
  if (msg.type === 'snapshot') {
    const d = payload<ApprovalList>(msg);
    return { approvals: Array.isArray(d.approvals) ? d.approvals : [], policy: d.policy ?? null };
  }
  if (msg.type !== 'event') return state;
  const d = payload<mcp.ApprovalsEvent>(msg);
  switch (d.kind) {
    case 'added': {
      const a = d.approval;
      return a?.id ? { ...state, approvals: upsertById(state.approvals, a) } : state;
    }
    case 'resolved': {
      const a = d.approval;
      if (!a?.id || !state.approvals.some((x) => x.id === a.id)) return state;
      return { ...state, approvals: state.approvals.filter((x) => x.id !== a.id) };
    }
    case 'policy':
      return d.policy ? { ...state, policy: d.policy } : state;
    default:
      return state;
  }
}

/** What the question is about, in a few words. */
export function approvalTitle(a: Approval): string {
  if (a.kind === 'root') return `use ${a.root ?? 'a directory'} as its workspace`;
  return `run ${a.tool ?? 'a tool'}`;
}

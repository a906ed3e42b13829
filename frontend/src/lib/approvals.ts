// Approvals: tool calls and MCP roots waiting for the user's answer (hub channel `approvals`),
// plus the state of the policy file, so the dashboard can say when an edit did not take.

import type * as app from './generated/app';
import type * as policy from './generated/policy';
import type * as trust from './generated/trust';
import { payload, type HubMessage } from './types';
import { upsertById } from './reducers';

export type Approval = policy.Approval;
/** The policy file's state; error says why the file on disk is not in force (the last good one is). */
export type PolicyStatus = policy.Status;
/** GET /api/approvals and the Approvals binding (the same shape as the channel's snapshot). */
export type ApprovalList = app.ApprovalList;

/** A question that ended because its client went away, shown for a while as withdrawn. */
export interface Withdrawn {
  approval: Approval;
  reason: string;
  /** Epoch ms when the hub withdrew it. */
  at: number;
}

export interface ApprovalsState {
  approvals: Approval[];
  policy: PolicyStatus | null;
  /** The most recent withdrawn questions, newest first (at most MaxWithdrawn). */
  withdrawn: Withdrawn[];
}

export const initialApprovals: ApprovalsState = { approvals: [], policy: null, withdrawn: [] };

/** How many withdrawn questions the panel remembers, and for how long it shows them. */
export const MaxWithdrawn = 5;
export const WithdrawnShownMs = 60_000;


export function reduceApprovals(state: ApprovalsState, msg: HubMessage): ApprovalsState {
  if (msg.type === 'snapshot') {
    const d = payload<ApprovalList>(msg);
    return { approvals: Array.isArray(d.approvals) ? d.approvals : [], policy: d.policy ?? null, withdrawn: state.withdrawn ?? [] };
  }
  if (msg.type !== 'event') return state;
  const d = payload<trust.ApprovalsEvent>(msg);
  switch (d.kind) {
    case 'added': {
      const a = d.approval;
      return a?.id ? { ...state, approvals: upsertById(state.approvals, a) } : state;
    }
    case 'resolved': {
      const a = d.approval;
      if (!a?.id || !state.approvals.some((x) => x.id === a.id)) return state;
      const next = { ...state, approvals: state.approvals.filter((x) => x.id !== a.id) };
      const reason = d.outcome?.reason ?? '';
      if (reason.startsWith('withdrawn')) {
        const at = Date.parse(msg.timestamp);
        next.withdrawn = [{ approval: a, reason, at: Number.isFinite(at) ? at : Date.now() }, ...(state.withdrawn ?? [])].slice(0, MaxWithdrawn);
      }
      return next;
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
  if (a.kind === 'client') return `use this hub from ${a.device ?? 'another machine'}`;
  return `run ${a.tool ?? 'a tool'}`;
}

/** recentWithdrawn is what the panel shows: questions withdrawn within WithdrawnShownMs of now. */
export function recentWithdrawn(state: ApprovalsState, now: number): Withdrawn[] {
  return (state.withdrawn ?? []).filter((w) => now - w.at < WithdrawnShownMs);
}

/** The scope that limits a grant to read-only tools; the others are toolsets. */
export const ReadOnlyScope = 'readonly';

/** scopesText renders a grant's scopes for people: its toolsets, and "read-only" when limited. */
export function scopesText(scopes: readonly string[] | undefined | null): string {
  const list = scopes ?? [];
  const sets = list.filter((s) => s !== ReadOnlyScope);
  const text = sets.length ? sets.join(', ') : 'no toolset';
  return list.includes(ReadOnlyScope) ? `${text} (read-only)` : text;
}

/**
 * grantedScopes is what an answer to a client's authorization grants: the toolsets ticked, and
 * readonly when the user limited it to reading. Nothing ticked grants nothing (the user must
 * choose at least one toolset to allow).
 */
export function grantedScopes(ticked: Record<string, boolean>, readOnly: boolean): string[] {
  const out = Object.keys(ticked).filter((k) => ticked[k] && k !== ReadOnlyScope);
  if (readOnly && out.length) out.push(ReadOnlyScope);
  return out;
}

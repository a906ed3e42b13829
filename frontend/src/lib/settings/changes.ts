// What the Settings view has not saved yet: each section whose form differs from the settings as
// last read (after a save, that section's form is refilled from the file, so it is clean again).
// The Save bar lists them and saves them together; the navigation marks them.

import type { Settings, SettingsRAG } from '../types';
import { SECTIONS, type Section } from './common';
import { codeChanged, type CodeForm } from './code';
import { mlForm, type MLForm } from './ml';
import { policyForm, type PolicyForm } from './policy';
import { ragForm, type RAGKeyForm } from './rag';
import { securityForm, type SecurityForm } from './security';
import { tasksChanged, type TasksForm } from './taskafter';
import { toolsetsForm } from './toolsets';
import { transportsForm, type TransportForm } from './transports';
import { webForm, type WebForm } from './web';
import { workspaceForm } from './workspace';

/** The forms of the sections that have one (Upstream servers and Start at login have none). */
export interface SettingsForms {
  transports: TransportForm[];
  security: SecurityForm;
  toolsets: string[];
  workspace: string;
  policy: PolicyForm;
  web: WebForm;
  tasks: TasksForm;
  ml: MLForm;
  rag: SettingsRAG;
  ragKey: RAGKeyForm;
  code: CodeForm;
}

/** The sections a Save writes: every one with a form. */
export const SAVED_SECTIONS = ['transports', 'security', 'toolsets', 'workspace', 'policy', 'web', 'tasks', 'ml', 'rag', 'code'] as const satisfies readonly Section[];
export type SavedSection = (typeof SAVED_SECTIONS)[number];

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** Whether the RAG section's settings (backend, embedder, …) differ from the file's. */
export function ragChanged(f: SettingsForms, s: Settings): boolean {
  return !same(f.rag, ragForm(s));
}

/** Whether the RAG key is to change (a mode other than "keep as it is"). */
export function ragKeyChanged(f: SettingsForms): boolean {
  return f.ragKey.mode !== 'keep';
}

/** changedSections lists the sections whose form differs from s, in the view's order. */
export function changedSections(f: SettingsForms, s: Settings | null): SavedSection[] {
  if (!s) return [];
  const changed: Record<SavedSection, boolean> = {
    transports: !same(f.transports, transportsForm(s)),
    security: !same(f.security, securityForm(s)),
    // Checked in any order: the same set is no change.
    toolsets: !same([...f.toolsets].sort(), toolsetsForm(s).sort()),
    workspace: f.workspace.trim() !== workspaceForm(s).trim(),
    policy: !same(f.policy, policyForm(s)),
    web: !same(f.web, webForm(s)),
    tasks: tasksChanged(f.tasks, s),
    ml: !same(f.ml, mlForm(s)),
    rag: ragChanged(f, s) || ragKeyChanged(f),
    code: codeChanged(f.code, s),
  };
  return SECTIONS.filter((x): x is SavedSection => x in changed && changed[x as SavedSection]);
}

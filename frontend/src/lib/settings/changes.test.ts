import { describe, expect, it } from 'vitest';
import { changedSections, type SettingsForms } from './changes';
import { codeForm } from './code';
import { mlForm } from './ml';
import { newRule, policyForm } from './policy';
import { ragForm, ragKeyForm } from './rag';
import { securityForm } from './security';
import { tasksForm } from './taskafter';
import { toolsetsForm } from './toolsets';
import { transportsForm } from './transports';
import { webForm } from './web';
import { workspaceForm } from './workspace';
import { sampleSettings } from '../../test/settings';
import type { Settings } from '../types';

function forms(s: Settings): SettingsForms {
  return {
    transports: transportsForm(s),
    security: securityForm(s),
    toolsets: toolsetsForm(s),
    workspace: workspaceForm(s),
    policy: policyForm(s),
    web: webForm(s),
    tasks: tasksForm(s),
    ml: mlForm(s),
    rag: ragForm(s),
    ragKey: ragKeyForm(s),
    code: codeForm(s),
  };
}

describe('changedSections', () => {
  const s = sampleSettings();

  it('is empty for the forms as read, and before the settings are', () => {
    expect(changedSections(forms(s), s)).toEqual([]);
    expect(changedSections(forms(s), null)).toEqual([]);
  });

  it('lists each section whose form differs, in the view order', () => {
    const f = forms(s);
    f.policy.rules = [...f.policy.rules, newRule()];
    f.transports[1].enabled = true;
    f.web.timeout = '90s';
    f.code.servers.go = '/opt/gopls';
    f.tasks.taskAfter = 'off';
    expect(changedSections(f, s)).toEqual(['transports', 'policy', 'web', 'tasks', 'code']);
  });

  it('takes the same toolsets checked in another order, and a workspace with spaces round it, as no change', () => {
    const f = forms(s);
    f.toolsets = [...f.toolsets].reverse();
    f.workspace = ` ${f.workspace} `;
    expect(changedSections(f, s)).toEqual([]);
    f.toolsets = f.toolsets.slice(1);
    expect(changedSections(f, s)).toEqual(['toolsets']);
  });

  it('counts a RAG key to change as a change of the RAG section', () => {
    const f = forms(s);
    f.ragKey.mode = 'remove';
    expect(changedSections(f, s)).toEqual(['rag']);
  });
});

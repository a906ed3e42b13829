import { describe, expect, it } from 'vitest';
import { workspaceForm, workspaceInput } from './workspace';
import { sampleSettings } from '../../test/settings';

describe('workspace', () => {
  it('edits the saved workspace, not the running one, and sends it trimmed', () => {
    const s = sampleSettings();
    expect(workspaceForm(s)).toBe('');
    expect(workspaceForm(sampleSettings({ workspace: { saved: '/srv/p', running: '/home/u/proj' } }))).toBe('/srv/p');
    expect(workspaceInput('  /srv/p ')).toBe('/srv/p');
  });
});

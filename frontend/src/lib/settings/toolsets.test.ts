import { describe, expect, it } from 'vitest';
import { toolsetsForm, toolsetsInput, toolsetsOrder } from './toolsets';
import { sampleSettings } from '../../test/settings';

describe('toolsets', () => {
  it('checks the saved list, or the default set when the file has none', () => {
    const s = sampleSettings();
    expect(toolsetsForm(s)).toEqual(['files', 'process', 'git']);
    expect(toolsetsForm(sampleSettings({ toolsets: { ...s.toolsets, saved: ['git'] } }))).toEqual(['git']);
  });

  it('saves the checked ones in the hub order', () => {
    expect(toolsetsInput(['git', 'files', 'gone'], ['files', 'process', 'git'])).toEqual(['files', 'git']);
    expect(toolsetsOrder(sampleSettings())).toEqual(['files', 'process', 'ide', 'git']);
    expect(toolsetsOrder(null)).toEqual([]);
  });
});

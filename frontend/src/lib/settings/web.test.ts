import { describe, expect, it } from 'vitest';
import { webForm, webInput } from './web';
import { sampleSettings } from '../../test/settings';

describe('web fetch', () => {
  it('fills and builds the form, one entry per line', () => {
    const w = webForm(sampleSettings());
    expect(w).toEqual({ allow: 'intranet.example', timeout: '' });
    w.allow += '\n 10.0.0.0/8 \n';
    w.timeout = ' 90s ';
    expect(webInput(w)).toEqual({ allow: ['intranet.example', '10.0.0.0/8'], timeout: '90s' });
  });
});

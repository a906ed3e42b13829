import { describe, expect, it } from 'vitest';
import { clientNameError, headerLine, tokenRows } from './clienttokens';

describe('client tokens', () => {
  it('lists tokens in client order, never-used ones as never', () => {
    const rows = tokenRows(
      { tokens: [{ client: 'zed', created: 'c1' }, { client: 'cursor', created: 'c2', lastUsed: 'u2' }] },
      (s) => `<${s}>`,
    );
    expect(rows).toEqual([
      { client: 'cursor', created: '<c2>', lastUsed: '<u2>' },
      { client: 'zed', created: '<c1>', lastUsed: 'never' },
    ]);
    expect(tokenRows(null, (s) => s)).toEqual([]);
  });
  it('checks client names as the hub does', () => {
    expect(clientNameError('')).toMatch(/name the client/);
    expect(clientNameError('claude code')).toMatch(/letters, digits/);
    expect(clientNameError('claude-code')).toBe('');
  });
  it('shows the header line once issued', () => {
    expect(headerLine({ client: 'c', token: 'sbc_x', replaced: false })).toBe('Authorization: Bearer sbc_x');
  });
});

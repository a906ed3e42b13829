import { describe, expect, it } from 'vitest';
import { securityForm, securityInput, tokenTitle, tokenWhere } from './security';
import { sampleSettings } from '../../test/settings';

describe('transport security', () => {
  it('fills and builds the form, one origin per line', () => {
    const f = securityForm(sampleSettings());
    expect(f).toEqual({ tcpRequireToken: false, origins: 'http://localhost:6274' });
    f.tcpRequireToken = true;
    f.origins = ' http://localhost:6274 \n\nhttps://app.example.com\n';
    expect(securityInput(f)).toEqual({ tcpRequireToken: true, httpAllowedOrigins: ['http://localhost:6274', 'https://app.example.com'] });
  });

  it('describes tokens by where they are kept, never by value', () => {
    const [client, http, tcp] = sampleSettings().security.tokens;
    expect(tokenTitle(client)).toBe('Client token (HTTP, TCP)');
    expect(tokenWhere(client)).toBe('kept in /home/u/.config/switchboard/token');
    expect(tokenWhere({ ...client, exists: false })).toBe('kept in /home/u/.config/switchboard/token (created on first use)');
    expect(tokenWhere(http)).toBe('uses the client token');
    expect(tokenWhere(tcp)).toBe('set by the environment variable SWITCHBOARD_TCP_TOKEN');
    expect(tokenWhere({ ...http, source: 'config', where: '[http] token in /c.toml' })).toBe('set in [http] token in /c.toml');
    expect(tokenTitle({ ...client, usedBy: [] })).toBe('Client token (no transport now)');
    expect(tokenTitle(tcp)).toBe('TCP token');
  });
});

import { describe, expect, it } from 'vitest';
import { addrField, transportFields, transportsForm, transportsInput } from './transports';
import { sampleSettings } from '../../test/settings';

describe('transports', () => {
  it('fills the form from GET /api/settings and sends the addresses trimmed', () => {
    expect(transportsForm(sampleSettings())).toEqual([
      { name: 'unix', enabled: true, addr: '/run/user/1000/switchboard/mcp.sock' },
      { name: 'tcp', enabled: false, addr: '127.0.0.1:9100' },
      { name: 'http', enabled: false, addr: '127.0.0.1:9101' },
    ]);
    expect(transportsInput([{ name: 'tcp', enabled: true, addr: ' 127.0.0.1:9200 ' }])).toEqual([{ name: 'tcp', enabled: true, addr: '127.0.0.1:9200' }]);
  });

  it('names the fields as the hub does: the socket has a path, the others an address', () => {
    expect(addrField('unix')).toBe('unix.path');
    expect(addrField('tcp')).toBe('tcp.addr');
    expect(transportFields(transportsForm(sampleSettings()))).toEqual(['unix.path', 'tcp.addr', 'http.addr', 'unix.enabled', 'tcp.enabled', 'http.enabled']);
  });
});

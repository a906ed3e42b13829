// @vitest-environment jsdom
// One server's row: a server that is another Switchboard hub shows as such, with its machine.
import { afterEach, describe, expect, it } from 'vitest';
import { mount, unmount } from 'svelte';
import ServerRow from './ServerRow.svelte';
import { ServersController, type ServersControl } from '../../lib/servers.svelte';
import { server } from '../../test/servers';
import type { ServerStatus } from '../../lib/types';

let row: ReturnType<typeof mount> | null = null;
afterEach(() => {
  if (row) unmount(row);
  row = null;
  document.body.innerHTML = '';
});

function show(s: ServerStatus): HTMLElement {
  const control = {} as ServersControl; // nothing is clicked here
  const ctl = new ServersController({
    control,
    servers: { value: { servers: [s] }, loaded: true, apply() {} },
    run: async (action) => ({ ok: true as const, value: await action() }),
  });
  row = mount(ServerRow, { target: document.body, props: { ctl, control, s, now: Date.now() } });
  return document.querySelector(`[data-testid="server-row"][data-name="${s.name}"]`) as HTMLElement;
}

describe('ServerRow', () => {
  it('shows a hub on another machine as "Switchboard hub on <machine>", with a badge', () => {
    const el = show(
      server('workstation', {
        transport: 'http',
        command: 'https://192.168.1.20:9101/mcp',
        oauth: true,
        signed_in: true,
        server_info: 'switchboard v1.4.0',
        hub: { machine: 'workstation' },
      }),
    );
    const badge = el.querySelector<HTMLElement>('[data-testid="server-hub"]');
    expect(badge?.textContent).toBe('Switchboard hub on workstation');
    expect(badge?.dataset.machine).toBe('workstation');
    expect(badge?.classList.contains('badge')).toBe(true);
    expect(el.querySelector('[data-testid="server-command"]')?.textContent).toBe('https://192.168.1.20:9101/mcp');
  });

  it('a hub that did not say its machine reads "Switchboard hub"; other servers get no hub badge', () => {
    expect(show(server('anon', { transport: 'http', hub: { machine: '' } })).querySelector('[data-testid="server-hub"]')?.textContent).toBe('Switchboard hub');
    unmount(row!);
    row = null;
    expect(show(server('plain', { transport: 'http', server_info: 'everything 1.0' })).querySelector('[data-testid="server-hub"]')).toBeNull();
  });
});

// @vitest-environment jsdom
// Settings › Client tokens (views/settings/ClientTokens.svelte) against a fake control: the
// list, a new token shown once, a revoke.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { flushSync, mount, unmount } from 'svelte';
import ClientTokens from './views/settings/ClientTokens.svelte';
import type { ClientToken } from './lib/generated/app';
import type { ClientTokensControl } from './lib/settings/clienttokens';

let view: ReturnType<typeof mount> | undefined;
afterEach(() => {
  if (view) unmount(view);
  view = undefined;
  document.body.innerHTML = '';
});

describe('Settings › Client tokens', () => {
  it('lists, issues (shown once) and revokes', async () => {
    let tokens: ClientToken[] = [{ client: 'cursor', created: '2026-11-28T10:00:00Z', lastUsed: '2026-11-28T11:00:00Z' }];
    const calls: string[] = [];
    const control: ClientTokensControl = {
      clientTokens: vi.fn(async () => ({ tokens })),
      issueClientToken: vi.fn(async (client: string) => {
        calls.push(`issue ${client}`);
        tokens = [...tokens, { client, created: '2026-11-28T12:00:00Z' }];
        return { client, token: 'sbc_secret', replaced: false };
      }),
      revokeClientToken: vi.fn(async (client: string) => {
        calls.push(`revoke ${client}`);
        tokens = tokens.filter((t) => t.client !== client);
        return { tokens };
      }),
    };
    view = mount(ClientTokens, { target: document.body, props: { control } });
    await vi.waitFor(() => expect(document.querySelectorAll('[data-testid="client-token-row"]')).toHaveLength(1));
    expect(document.body.textContent).not.toContain('sbc_');

    const name = document.querySelector<HTMLInputElement>('[data-testid="client-token-name"]')!;
    const issue = document.querySelector<HTMLButtonElement>('[data-testid="client-token-issue"]')!;
    expect(issue.disabled).toBe(true); // no name yet
    name.value = 'codex';
    name.dispatchEvent(new Event('input'));
    flushSync();
    expect(issue.disabled).toBe(false);
    issue.click();
    await vi.waitFor(() => expect(document.querySelector('[data-testid="client-token-issued"]')?.textContent).toContain('Authorization: Bearer sbc_secret'));
    expect(document.querySelectorAll('[data-testid="client-token-row"]')).toHaveLength(2);
    expect(document.querySelector('[data-client="codex"]')?.textContent).toContain('never');

    document.querySelector<HTMLButtonElement>('[data-client="cursor"] [data-testid="client-token-revoke"]')!.click();
    await vi.waitFor(() => expect(document.querySelectorAll('[data-testid="client-token-row"]')).toHaveLength(1));
    expect(document.querySelector('[data-testid="client-token-issued"]')).toBeNull(); // shown once
    expect(calls).toEqual(['issue codex', 'revoke cursor']);
  });
});

import { describe, expect, it } from 'vitest';
import { BROWSER_CONSOLE_LIMIT, consoleTone, initialBrowser, reduceBrowser, sourceOf } from './browser';

const ts = '2026-01-01T00:00:00Z';
const msg = (type: string, data: unknown) => ({ type, channel: 'browser', data, timestamp: ts });
const state = (extra: object = {}) => ({
  connected: true,
  launched: true,
  url: 'http://127.0.0.1:8080/',
  title: 'Form',
  tabs: [
    { id: 'B', url: 'about:blank', title: '', active: false },
    { id: 'A', url: 'http://127.0.0.1:8080/', title: 'Form', active: true },
  ],
  ...extra,
});

describe('reduceBrowser', () => {
  it('takes a snapshot whole, active tab first', () => {
    const s = reduceBrowser(initialBrowser, msg('snapshot', { state: state(), screenshot: 'data:image/jpeg;base64,AA', shotAt: ts, console: [{ type: 'log', text: 'hi', timestamp: ts }] }));
    expect(s.status.connected).toBe(true);
    expect(s.status.title).toBe('Form');
    expect(s.status.tabs.map((t) => t.id)).toEqual(['A', 'B']);
    expect(s.screenshot).toBe('data:image/jpeg;base64,AA');
    expect(s.console).toHaveLength(1);
  });

  it('appends console messages of events, keeps the last ones, counts drops', () => {
    let s = reduceBrowser(initialBrowser, msg('snapshot', { state: state(), screenshot: '', console: [] }));
    for (let i = 0; i < BROWSER_CONSOLE_LIMIT + 10; i++) {
      s = reduceBrowser(s, msg('event', { state: state(), screenshot: 'x', console: [{ type: 'log', text: String(i), timestamp: ts }] }));
    }
    expect(s.console).toHaveLength(BROWSER_CONSOLE_LIMIT);
    expect(s.console[s.console.length - 1].text).toBe(String(BROWSER_CONSOLE_LIMIT + 9));
    s = reduceBrowser(s, msg('event', { state: state(), console: [], dropped: 3 }));
    expect(s.dropped).toBe(3);
    expect(s.screenshot).toBe('');
    // a resubscribe snapshot replaces the console and resets drops
    s = reduceBrowser(s, msg('snapshot', { state: state({ connected: false }), console: [] }));
    expect(s.console).toHaveLength(0);
    expect(s.dropped).toBe(0);
    expect(s.status.connected).toBe(false);
  });

  it('ignores other message types and survives junk', () => {
    expect(reduceBrowser(initialBrowser, msg('subscribed', {}))).toBe(initialBrowser);
    const s = reduceBrowser(initialBrowser, msg('event', 'junk'));
    expect(s.status.connected).toBe(false);
    expect(s.status.tabs).toEqual([]);
  });
});

describe('console helpers', () => {
  it('maps levels to tones and sources to path:line', () => {
    expect(consoleTone('exception')).toBe('tone-bad');
    expect(consoleTone('warning')).toBe('tone-busy');
    expect(consoleTone('log')).toBe('tone-idle');
    expect(sourceOf({ type: 'log', text: '', timestamp: ts, url: 'http://h:1/app.js', line: 3 })).toBe('/app.js:3');
    expect(sourceOf({ type: 'log', text: '', timestamp: ts })).toBe('');
  });
});

// The Browser view's state: the shared browser the agents drive (hub channel "browser", see
// docs/architecture.md). A snapshot replaces the state; an event carries the current state and
// screenshot plus the console messages since the previous event, which are appended.

import type * as mcp from './generated/mcp';
import type * as webview from './generated/webview';
import { payload, type HubMessage } from './types';

export type BrowserTab = webview.TabInfo;
export type BrowserConsoleMessage = webview.ConsoleMessage;
export type BrowserStatus = webview.State;
/** The "browser" channel's snapshot and events (mcp.BrowserFeed). */
export type BrowserFeed = mcp.BrowserFeed;

export interface BrowserState {
  status: BrowserStatus;
  /** data:image/jpeg;base64,... of the active tab's viewport, or '' */
  screenshot: string;
  shotAt: string;
  console: BrowserConsoleMessage[];
  /** console messages left out because they came too fast */
  dropped: number;
}

/** Console lines the view keeps. */
export const BROWSER_CONSOLE_LIMIT = 200;

export const initialBrowser: BrowserState = {
  status: { connected: false, launched: false, url: '', title: '', tabs: [] },
  screenshot: '',
  shotAt: '',
  console: [],
  dropped: 0,
};

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (v && typeof v === 'object' ? (v as Obj) : {});
const arr = <T>(v: unknown): T[] => (Array.isArray(v) ? (v as T[]) : []);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

function status(v: unknown): BrowserStatus {
  const s = obj(v);
  return {
    connected: s.connected === true,
    launched: s.launched === true,
    endpoint: str(s.endpoint) || undefined,
    url: str(s.url),
    title: str(s.title),
    tabs: arr<BrowserTab>(s.tabs).slice().sort((a, b) => Number(b.active) - Number(a.active) || a.id.localeCompare(b.id)),
  };
}

export function reduceBrowser(state: BrowserState, msg: HubMessage): BrowserState {
  if (msg.type !== 'snapshot' && msg.type !== 'event') return state;
  const d = payload<BrowserFeed>(msg);
  const incoming = arr<BrowserConsoleMessage>(d.console);
  let console = msg.type === 'snapshot' ? incoming : incoming.length ? [...state.console, ...incoming] : state.console;
  if (console.length > BROWSER_CONSOLE_LIMIT) console = console.slice(console.length - BROWSER_CONSOLE_LIMIT);
  const dropped = (msg.type === 'snapshot' ? 0 : state.dropped) + (typeof d.dropped === 'number' ? d.dropped : 0);
  return { status: status(d.state), screenshot: str(d.screenshot), shotAt: str(d.shotAt), console, dropped };
}

/** consoleTone maps a console level to the dashboard's tone classes. */
export function consoleTone(type: string): string {
  switch (type) {
    case 'error':
    case 'exception':
    case 'assert':
      return 'tone-bad';
    case 'warning':
    case 'warn':
      return 'tone-busy';
    default:
      return 'tone-idle';
  }
}

/** sourceOf renders "file.js:12" from a console message's url and line. */
export function sourceOf(m: BrowserConsoleMessage): string {
  if (!m.url) return '';
  const tail = m.url.replace(/^[a-z]+:\/\/[^/]*/i, '') || m.url;
  return m.line ? `${tail}:${m.line}` : tail;
}

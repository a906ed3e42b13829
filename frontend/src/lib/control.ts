// Control: every action the dashboard can take (toggle a transport, start/stop a process, chat...).
// Inside the Wails window the Go bindings (window.go.desktop.App) answer; in a browser the headless
// dashboard's HTTP API does, authenticated with the token from the page URL. Both return the same
// JSON, so views do not care which one they got.
//
// The controls themselves are declared once, in app/controls.go, and generated into
// ./generated/control.ts (`make types`): the method per control of the interface and of both
// implementations. This file only picks the implementation and says how each one calls: errors
// named after the action, the token, the base URL.

import { HttpControls, WailsControls, type Controls, type HttpMethod, type WailsApp } from './generated/control';

export type { WailsApp };

export interface Control extends Controls {
  /** "wails" or "http": which implementation answers (shown in the footer). */
  readonly kind: 'wails' | 'http';
}

export interface WindowLike {
  go?: { desktop?: { App?: WailsApp } };
  location: { href: string };
}

/** Wails rejects with a plain string; make every failure an Error with a readable message. */
function asError(action: string, err: unknown): Error {
  const text = err instanceof Error ? err.message : typeof err === 'string' ? err : JSON.stringify(err);
  return new Error(`${action}: ${text}`);
}

export class WailsControl extends WailsControls implements Control {
  readonly kind = 'wails' as const;

  protected async call<T>(action: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      throw asError(action, err);
    }
  }
}

export type FetchLike = (input: string, init?: RequestInit) => Promise<Response>;

export class HttpControl extends HttpControls implements Control {
  readonly kind = 'http' as const;

  /**
   * @param base URL the /api paths are resolved against (the page URL without query and hash).
   * @param token dashboard token, sent as a Bearer header.
   */
  constructor(
    private readonly base: string,
    private readonly token: string,
    private readonly fetchFn: FetchLike = (i, init) => fetch(i, init),
  ) {
    super();
  }

  protected async request<T>(action: string, method: HttpMethod, path: string, body?: unknown): Promise<T> {
    const headers: Record<string, string> = { Accept: 'application/json' };
    if (this.token) headers.Authorization = `Bearer ${this.token}`;
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    let res: Response;
    try {
      res = await this.fetchFn(new URL(path, this.base).toString(), {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch (err) {
      throw asError(action, err);
    }
    const text = await res.text();
    if (!res.ok) {
      let detail = text.trim() || res.statusText;
      try {
        const j = JSON.parse(text) as { error?: unknown; message?: unknown };
        if (typeof j.error === 'string') detail = j.error;
        else if (typeof j.message === 'string') detail = j.message;
      } catch {
        // not JSON: keep the raw text
      }
      if (res.status === 401) detail += ' (open the dashboard with the URL Switchboard printed: it carries ?token=)';
      throw new Error(`${action}: HTTP ${res.status}: ${detail}`);
    }
    return (text ? JSON.parse(text) : {}) as T;
  }
}

/** pageBase is the page URL without query and hash: /api paths resolve relative to it. */
export function pageBase(href: string): string {
  const u = new URL(href);
  u.search = '';
  u.hash = '';
  return u.toString();
}

/** tokenFromUrl reads ?token= from the page URL (the headless dashboard prints it that way). */
export function tokenFromUrl(href: string): string {
  try {
    return new URL(href).searchParams.get('token') ?? '';
  } catch {
    return '';
  }
}

/** createControl picks the Wails bindings when present, else the HTTP API of the page's server. */
export function createControl(win: WindowLike, fetchFn?: FetchLike): Control {
  const app = win.go?.desktop?.App;
  if (app && typeof app.Bootstrap === 'function') return new WailsControl(app);
  return new HttpControl(pageBase(win.location.href), tokenFromUrl(win.location.href), fetchFn);
}

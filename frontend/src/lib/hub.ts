// HubClient keeps one WebSocket to the Switchboard hub, multiplexes channel subscriptions over it and
// reconnects with exponential backoff. After every (re)connect it subscribes to every channel that
// still has listeners: the hub answers each subscribe with a snapshot, and reducers treat a snapshot
// as a full replacement, so state lost while disconnected is restored without replaying events.

import type { HubMessage } from './types';

/** The part of the browser WebSocket the client uses; tests pass a fake with the same surface. */
export interface SocketLike {
  readonly readyState: number;
  onopen: ((ev: unknown) => void) | null;
  onclose: ((ev: unknown) => void) | null;
  onerror: ((ev: unknown) => void) | null;
  onmessage: ((ev: { data: unknown }) => void) | null;
  send(data: string): void;
  close(code?: number, reason?: string): void;
}

export type SocketFactory = (url: string) => SocketLike;

export type HubStatus = 'idle' | 'connecting' | 'open' | 'closed';

export type MessageListener = (msg: HubMessage) => void;

export interface BackoffOptions {
  /** Delay before the first reconnect attempt. */
  initialMs: number;
  /** Upper bound of the delay. */
  maxMs: number;
  /** Growth per failed attempt. */
  factor: number;
}

export const DEFAULT_BACKOFF: BackoffOptions = { initialMs: 500, maxMs: 10_000, factor: 2 };

export interface Timers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export interface HubClientOptions {
  /** ws:// URL of the hub's /ws endpoint (from Bootstrap.hubUrl). */
  url: string;
  /** Hub token; sent as ?token= because browsers cannot set headers on a WebSocket. */
  token: string;
  createSocket?: SocketFactory;
  backoff?: Partial<BackoffOptions>;
  timers?: Timers;
  /** Called for hub "error" messages and undecodable frames. */
  onError?: (message: string) => void;
}

const OPEN = 1; // WebSocket.OPEN, without depending on a global WebSocket in tests

/** reconnectDelay is the wait before reconnect attempt n (0-based): initial * factor^n, capped. */
export function reconnectDelay(attempt: number, b: BackoffOptions = DEFAULT_BACKOFF): number {
  const d = b.initialMs * Math.pow(b.factor, Math.max(0, attempt));
  return Math.min(b.maxMs, d);
}

/** hubSocketUrl adds the token to the hub URL as a query parameter. */
export function hubSocketUrl(url: string, token: string): string {
  if (!token) return url;
  const u = new URL(url);
  u.searchParams.set('token', token);
  return u.toString();
}

export class HubClient {
  private readonly opts: HubClientOptions;
  private readonly backoff: BackoffOptions;
  private readonly timers: Timers;
  private readonly createSocket: SocketFactory;
  private readonly listeners = new Map<string, Set<MessageListener>>();
  private readonly statusListeners = new Set<(s: HubStatus) => void>();
  private socket: SocketLike | null = null;
  private retryTimer: unknown = null;
  private failures = 0;
  private stopped = true;
  private _status: HubStatus = 'idle';
  private _nextRetryAt: number | null = null;

  constructor(opts: HubClientOptions) {
    this.opts = opts;
    this.backoff = { ...DEFAULT_BACKOFF, ...opts.backoff };
    this.timers = opts.timers ?? {
      setTimeout: (fn, ms) => globalThis.setTimeout(fn, ms),
      clearTimeout: (h) => globalThis.clearTimeout(h as ReturnType<typeof setTimeout>),
    };
    this.createSocket = opts.createSocket ?? ((url) => new WebSocket(url) as unknown as SocketLike);
  }

  get status(): HubStatus {
    return this._status;
  }

  /** Epoch ms of the next reconnect attempt while waiting to reconnect, else null. */
  get nextRetryAt(): number | null {
    return this._nextRetryAt;
  }

  /** Consecutive failed connection attempts since the last successful open. */
  get failedAttempts(): number {
    return this.failures;
  }

  /** Channels that currently have at least one listener. */
  channels(): string[] {
    return [...this.listeners.keys()];
  }

  /** connect starts the connection loop; it keeps reconnecting until close(). */
  connect(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.open();
  }

  /** close stops reconnecting and closes the socket. Listeners stay registered for a later connect(). */
  close(): void {
    this.stopped = true;
    if (this.retryTimer !== null) {
      this.timers.clearTimeout(this.retryTimer);
      this.retryTimer = null;
    }
    this._nextRetryAt = null;
    const s = this.socket;
    this.socket = null;
    if (s) {
      s.onopen = s.onclose = s.onerror = null;
      s.onmessage = null;
      s.close(1000, 'client closed');
    }
    this.setStatus('closed');
  }

  /**
   * subscribe registers listener for channel and returns the function that removes it. The first
   * listener of a channel sends the subscribe frame (now if connected, else on the next open); the
   * last one to leave sends unsubscribe.
   */
  subscribe(channel: string, listener: MessageListener): () => void {
    let set = this.listeners.get(channel);
    const first = !set;
    if (!set) {
      set = new Set();
      this.listeners.set(channel, set);
    }
    set.add(listener);
    if (first) this.sendFrame({ type: 'subscribe', channel });
    let removed = false;
    return () => {
      if (removed) return;
      removed = true;
      const cur = this.listeners.get(channel);
      if (!cur) return;
      cur.delete(listener);
      if (cur.size === 0) {
        this.listeners.delete(channel);
        this.sendFrame({ type: 'unsubscribe', channel });
      }
    };
  }

  /** onStatus calls fn with the current status now and on every change; returns the remover. */
  onStatus(fn: (s: HubStatus) => void): () => void {
    this.statusListeners.add(fn);
    fn(this._status);
    return () => this.statusListeners.delete(fn);
  }

  /** ping asks the hub for a "pong"; false when not connected. */
  ping(): boolean {
    return this.sendFrame({ type: 'ping' });
  }

  private sendFrame(frame: { type: string; channel?: string }): boolean {
    const s = this.socket;
    if (!s || s.readyState !== OPEN) return false;
    s.send(JSON.stringify(frame));
    return true;
  }

  private setStatus(s: HubStatus): void {
    if (this._status === s) return;
    this._status = s;
    for (const fn of this.statusListeners) fn(s);
  }

  private open(): void {
    this.retryTimer = null;
    this._nextRetryAt = null;
    this.setStatus('connecting');
    let s: SocketLike;
    try {
      s = this.createSocket(hubSocketUrl(this.opts.url, this.opts.token));
    } catch (err) {
      this.opts.onError?.(`hub: cannot open ${this.opts.url}: ${String(err)}`);
      this.scheduleReconnect();
      return;
    }
    this.socket = s;
    s.onopen = () => {
      if (this.socket !== s) return;
      this.failures = 0;
      this.setStatus('open');
      for (const channel of this.listeners.keys()) this.sendFrame({ type: 'subscribe', channel });
    };
    s.onmessage = (ev) => {
      if (this.socket !== s) return;
      this.dispatch(ev.data);
    };
    // A failed handshake fires error then close; only close drives the reconnect.
    s.onerror = () => {};
    s.onclose = () => {
      if (this.socket !== s) return;
      this.socket = null;
      if (this.stopped) return;
      this.setStatus('closed');
      this.scheduleReconnect();
    };
  }

  private scheduleReconnect(): void {
    if (this.stopped) return;
    const delay = reconnectDelay(this.failures, this.backoff);
    this.failures++;
    this._nextRetryAt = Date.now() + delay;
    this.retryTimer = this.timers.setTimeout(() => this.open(), delay);
  }

  private dispatch(raw: unknown): void {
    let msg: HubMessage;
    try {
      msg = JSON.parse(String(raw)) as HubMessage;
    } catch {
      this.opts.onError?.('hub: received a frame that is not JSON');
      return;
    }
    if (!msg || typeof msg !== 'object' || typeof msg.type !== 'string') return;
    if (msg.type === 'error') {
      // The hub sends {"message": "..."}; accept a bare string too.
      const d = msg.data as { message?: unknown } | string | undefined;
      const detail = typeof d === 'string' ? d : typeof d?.message === 'string' ? d.message : JSON.stringify(d ?? '');
      this.opts.onError?.(`hub error${msg.channel ? ` on ${msg.channel}` : ''}: ${detail}`);
    }
    if (!msg.channel) return;
    const set = this.listeners.get(msg.channel);
    if (!set) return;
    // Copy: a listener may unsubscribe itself while we iterate.
    for (const fn of [...set]) fn(msg);
  }
}

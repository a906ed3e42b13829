// A WebSocket stand-in for tests: records what the client sends and lets the test play the hub
// (open, deliver frames, close) synchronously.

import type { SocketLike } from '../lib/hub';

export class FakeSocket implements SocketLike {
  static CONNECTING = 0;
  static OPEN = 1;
  static CLOSED = 3;

  readyState = FakeSocket.CONNECTING;
  onopen: ((ev: unknown) => void) | null = null;
  onclose: ((ev: unknown) => void) | null = null;
  onerror: ((ev: unknown) => void) | null = null;
  onmessage: ((ev: { data: unknown }) => void) | null = null;
  readonly sent: string[] = [];
  closedByClient = false;

  constructor(readonly url: string) {}

  send(data: string): void {
    if (this.readyState !== FakeSocket.OPEN) throw new Error('send on a socket that is not open');
    this.sent.push(data);
  }

  close(): void {
    this.closedByClient = true;
    this.readyState = FakeSocket.CLOSED;
  }

  /** frames returns the sent frames decoded. */
  frames(): { type: string; channel?: string }[] {
    return this.sent.map((s) => JSON.parse(s));
  }

  // ---- hub side ----

  serverOpen(): void {
    this.readyState = FakeSocket.OPEN;
    this.onopen?.({});
  }

  serverSend(msg: unknown): void {
    this.onmessage?.({ data: typeof msg === 'string' ? msg : JSON.stringify(msg) });
  }

  /** serverClose simulates the connection dropping (or a refused handshake: error then close). */
  serverClose(withError = false): void {
    this.readyState = FakeSocket.CLOSED;
    if (withError) this.onerror?.({});
    this.onclose?.({ code: 1006 });
  }
}

/** SocketRecorder is a SocketFactory that keeps every socket the client created. */
export class SocketRecorder {
  readonly sockets: FakeSocket[] = [];
  readonly create = (url: string): FakeSocket => {
    const s = new FakeSocket(url);
    this.sockets.push(s);
    return s;
  };
  get last(): FakeSocket {
    const s = this.sockets[this.sockets.length - 1];
    if (!s) throw new Error('no socket was created');
    return s;
  }
}

export function hubMsg(type: string, channel: string, data: unknown, timestamp = '2025-01-01T00:00:00Z') {
  return { type, channel, data, timestamp };
}

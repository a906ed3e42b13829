// A deliberately small MCP client: newline-delimited JSON-RPC 2.0 over a Unix or TCP socket (the
// framing switchboard's socket transports speak). It stays connected until close(), which the
// `switchboard call` CLI cannot do, so a test can watch a session appear, count calls and leave.
import net from 'node:net';

type Pending = { resolve: (v: unknown) => void; reject: (e: Error) => void };

export interface ClientInfo {
  name: string;
  version: string;
}

/** An MCP root the client declares (roots capability) and lists when the server asks. */
export interface ClientRoot {
  uri: string;
  name?: string;
}

export class McpClient {
  private nextId = 1;
  private buf = '';
  private readonly pending = new Map<number, Pending>();
  private closedErr: Error | null = null;
  serverInfo: { name?: string; version?: string } = {};
  /** Methods of the notifications received, in order (e.g. notifications/tools/list_changed). */
  readonly notifications: string[] = [];

  private constructor(
    private readonly sock: net.Socket,
    private readonly roots: ClientRoot[] | undefined,
  ) {
    sock.setEncoding('utf8');
    sock.on('data', (chunk: string) => this.onData(chunk));
    const fail = (err: Error) => {
      this.closedErr = err;
      for (const p of this.pending.values()) p.reject(err);
      this.pending.clear();
    };
    sock.on('error', (err) => fail(err));
    sock.on('close', () => fail(new Error('MCP connection closed')));
  }

  /**
   * Connects and completes the initialize handshake. With roots, the client declares the roots
   * capability and answers roots/list with them (the hub lists them right after initialized).
   */
  static async connect(
    target: { path: string } | { host: string; port: number },
    info: ClientInfo,
    opts: { roots?: ClientRoot[] } = {},
  ): Promise<McpClient> {
    const sock = await new Promise<net.Socket>((resolve, reject) => {
      const s = net.connect(target as net.NetConnectOpts);
      s.once('connect', () => resolve(s));
      s.once('error', reject);
    });
    const client = new McpClient(sock, opts.roots);
    const init = (await client.request('initialize', {
      protocolVersion: '2025-06-18',
      capabilities: opts.roots ? { roots: { listChanged: false } } : {},
      clientInfo: info,
    })) as { serverInfo?: { name?: string; version?: string } };
    client.serverInfo = init.serverInfo ?? {};
    client.notify('notifications/initialized', {});
    return client;
  }

  request(method: string, params: object, timeoutMs = 15_000): Promise<unknown> {
    if (this.closedErr) return Promise.reject(this.closedErr);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`MCP ${method}: no answer within ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending.set(id, {
        resolve: (v) => (clearTimeout(timer), resolve(v)),
        reject: (e) => (clearTimeout(timer), reject(e)),
      });
      this.write({ jsonrpc: '2.0', id, method, params });
    });
  }

  notify(method: string, params: object): void {
    this.write({ jsonrpc: '2.0', method, params });
  }

  /** tools/call; a tool error (isError) rejects with the tool's text. */
  async callTool(name: string, args: object): Promise<{ structuredContent?: unknown; content?: unknown[] }> {
    const res = (await this.request('tools/call', { name, arguments: args })) as {
      isError?: boolean;
      structuredContent?: unknown;
      content?: { type: string; text?: string }[];
    };
    if (res.isError) {
      throw new Error(`tool ${name}: ${(res.content ?? []).map((c) => c.text ?? '').join(' ')}`);
    }
    return res;
  }

  /** Closes the connection and waits until the socket is fully closed. */
  close(): Promise<void> {
    if (this.sock.destroyed) return Promise.resolve();
    return new Promise((resolve) => {
      this.sock.once('close', () => resolve());
      this.sock.end();
      setTimeout(() => this.sock.destroy(), 2_000).unref();
    });
  }

  private write(msg: object): void {
    this.sock.write(JSON.stringify(msg) + '\n');
  }

  private onData(chunk: string): void {
    this.buf += chunk;
    let nl: number;
    while ((nl = this.buf.indexOf('\n')) >= 0) {
      const line = this.buf.slice(0, nl).trim();
      this.buf = this.buf.slice(nl + 1);
      if (line) this.onMessage(JSON.parse(line));
    }
  }

  private onMessage(msg: { id?: number | string; method?: string; result?: unknown; error?: { code: number; message: string } }): void {
    if (msg.method !== undefined) {
      // A request from the server (e.g. ping): answer so it never waits on us.
      if (msg.id !== undefined) {
        if (msg.method === 'ping') this.write({ jsonrpc: '2.0', id: msg.id, result: {} });
        else if (msg.method === 'roots/list' && this.roots) this.write({ jsonrpc: '2.0', id: msg.id, result: { roots: this.roots } });
        else this.write({ jsonrpc: '2.0', id: msg.id, error: { code: -32601, message: `${msg.method}: not supported by the e2e client` } });
      }
      else this.notifications.push(msg.method);
      return;
    }
    const p = typeof msg.id === 'number' ? this.pending.get(msg.id) : undefined;
    if (!p) return;
    this.pending.delete(msg.id as number);
    if (msg.error) p.reject(new Error(`MCP error ${msg.error.code}: ${msg.error.message}`));
    else p.resolve(msg.result);
  }
}

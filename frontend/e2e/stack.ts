// Real processes under test: the switchboard binary (headless dashboard) and its agentic-backend
// simulator. Each is a child process of the test runner with its own temporary HOME, so runs never
// touch the user's config, socket or data, and every child is ended (TERM, then KILL) on stop.
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, mkdtempSync, rmSync, type WriteStream } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { artifactsDir, frontendDir } from './settings';

/** A running child with its stderr kept (the servers print their addresses there). */
export class Child {
  readonly proc: ChildProcess;
  readonly name: string;
  private stderr = '';
  private readonly exited: Promise<number | null>;
  private readonly log: WriteStream;
  private readonly waiters = new Set<() => void>();

  constructor(name: string, bin: string, args: string[], env: NodeJS.ProcessEnv, cwd: string) {
    this.name = name;
    mkdirSync(artifactsDir, { recursive: true });
    this.log = createWriteStream(path.join(artifactsDir, `${name}.log`), { flags: 'a' });
    this.log.write(`\n=== ${new Date().toISOString()} ${bin} ${args.join(' ')}\n`);
    this.proc = spawn(bin, args, { env, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    const onData = (chunk: Buffer) => {
      const text = chunk.toString('utf8');
      this.stderr += text;
      if (this.stderr.length > 1 << 20) this.stderr = this.stderr.slice(-(1 << 19));
      this.log.write(text);
      for (const w of this.waiters) w();
    };
    this.proc.stdout!.on('data', onData);
    this.proc.stderr!.on('data', onData);
    this.exited = new Promise((resolve) => {
      this.proc.on('exit', (code, signal) => {
        this.log.write(`=== exited code=${code} signal=${signal}\n`);
        resolve(code);
        for (const w of this.waiters) w();
      });
      this.proc.on('error', (err) => {
        this.log.write(`=== spawn error: ${err.message}\n`);
        resolve(null);
        for (const w of this.waiters) w();
      });
    });
  }

  get running(): boolean {
    return this.proc.exitCode === null && this.proc.signalCode === null;
  }

  /** Output so far (stdout and stderr interleaved). */
  get output(): string {
    return this.stderr;
  }

  /** Waits until the output matches re (searching from `from`), or fails on exit/timeout. */
  waitForOutput(re: RegExp, timeoutMs = 30_000, from = 0): Promise<RegExpMatchArray> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const m = this.stderr.slice(from).match(re);
        if (m) return done(() => resolve(m));
        if (!this.running) {
          done(() => reject(new Error(`${this.name} exited before printing ${re}; output:\n${this.tail()}`)));
        }
      };
      const timer = setTimeout(
        () => done(() => reject(new Error(`${this.name}: no ${re} within ${timeoutMs} ms; output:\n${this.tail()}`))),
        timeoutMs,
      );
      const done = (fn: () => void) => {
        clearTimeout(timer);
        this.waiters.delete(check);
        fn();
      };
      this.waiters.add(check);
      check();
    });
  }

  tail(n = 40): string {
    return this.stderr.split('\n').slice(-n).join('\n');
  }

  /** SIGTERM, then SIGKILL after graceMs; resolves once the process has exited. */
  async stop(graceMs = 8_000): Promise<void> {
    if (this.running) {
      this.proc.kill('SIGTERM');
      const timer = setTimeout(() => this.proc.kill('SIGKILL'), graceMs);
      await this.exited;
      clearTimeout(timer);
    }
    await new Promise<void>((resolve) => this.log.end(resolve));
  }
}

/** Builds the switchboard binary into dir (pure Go; it embeds frontend/dist), and beside it
 * switchboard-dev, the development tools (the agentic-backend simulator) kept out of it. */
export async function buildSwitchboard(dir: string): Promise<string> {
  const bin = path.join(dir, 'switchboard');
  const dist = path.join(frontendDir, 'dist', 'index.html');
  if (!existsSync(dist)) {
    throw new Error(`${dist} is missing: build the dashboard first (make frontend, or npm run build in frontend/)`);
  }
  for (const [out, pkg] of [
    [bin, '..'],
    [devBinary(bin), '../cmd/switchboard-dev'],
  ]) {
    await new Promise<void>((resolve, reject) => {
      execFile(
        'go',
        ['build', '-o', out, pkg],
        { cwd: frontendDir, env: { ...process.env, CGO_ENABLED: '0' }, maxBuffer: 16 << 20 },
        (err, _stdout, stderr) => {
          if (err) reject(new Error(`go build -o ${out} ${pkg} (in ${frontendDir}): ${err.message}\n${stderr}`));
          else resolve();
        },
      );
    });
  }
  return bin;
}

/** The switchboard-dev binary buildSwitchboard put beside bin. */
export function devBinary(bin: string): string {
  return path.join(path.dirname(bin), 'switchboard-dev');
}

/** A loopback port that was free a moment ago (for addresses that must be known in advance). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

/** Resolves true when a TCP connection to host:port is accepted, false when refused. */
export function canConnect(port: number, host = '127.0.0.1', timeoutMs = 2_000): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = net.connect({ host, port });
    const finish = (ok: boolean) => {
      sock.destroy();
      resolve(ok);
    };
    sock.setTimeout(timeoutMs, () => finish(false));
    sock.once('connect', () => finish(true));
    sock.once('error', () => finish(false));
  });
}

/** The environment of a child: this one's, minus anything that would point it at the user's setup. */
function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (k === 'DISPLAY' || k === 'WAYLAND_DISPLAY' || k === 'MCP_ADDR') continue;
    if (k.startsWith('SWITCHBOARD_') || k.startsWith('XDG_')) continue;
    env[k] = v;
  }
  return { ...env, ...extra };
}

export interface SimInfo {
  url: string; // ws://127.0.0.1:PORT/ws
  addr: string; // 127.0.0.1:PORT
}

/** `switchboard-dev agentic-sim`: the agentic backend stand-in (docs/ide-bridge.md). */
export class Simulator {
  private child: Child | null = null;
  info: SimInfo | null = null;

  constructor(
    private readonly bin: string,
    private readonly name: string,
    private readonly demo: boolean,
  ) {}

  /** Starts it on addr (default: a fresh port); restarting reuses the previous address. */
  async start(addr = this.info?.addr ?? '127.0.0.1:0'): Promise<SimInfo> {
    const args = ['agentic-sim', '--addr', addr];
    // A build every 4 s, 2 s long (40 lines, 50 ms apart): short waits, yet long enough to watch live.
    if (this.demo) args.push('--demo', '--demo-interval', '4s', '--line-interval', '50ms');
    const child = new Child(`${this.name}`, devBinary(this.bin), args, cleanEnv({}), os.tmpdir());
    this.child = child;
    // slog's text handler: ... msg="agentic backend simulator listening" url=ws://127.0.0.1:PORT/ws
    const m = await child.waitForOutput(/simulator listening.*url=(ws:\/\/([^\s/]+)\/ws)/);
    this.info = { url: m[1], addr: m[2] };
    return this.info;
  }

  get running(): boolean {
    return this.child?.running ?? false;
  }

  async stop(): Promise<void> {
    await this.child?.stop();
  }
}

export interface SwitchboardInfo {
  /** http://127.0.0.1:PORT/?token=T as printed. */
  dashboardUrl: string;
  /** http://127.0.0.1:PORT */
  origin: string;
  token: string;
  /** The hub's Unix socket (MCP clients connect here). */
  socket: string;
  workspace: string;
  /** The hub's temporary HOME (its XDG_CONFIG_HOME is HOME/.config): MCP clients' files go here. */
  home: string;
  /** The TCP transport's configured address (off at start). */
  tcpAddr: string;
}

/** The headless switchboard app: hub, Unix socket, dashboard over loopback HTTP. */
export class Switchboard {
  private child: Child | null = null;
  private home = '';
  info: SwitchboardInfo | null = null;

  constructor(
    readonly bin: string,
    private readonly name: string,
  ) {}

  /**
   * extraEnv adds variables for the child (e.g. OLLAMA_HOST for a spec's own backend). home reuses
   * a HOME (config file, data, socket directory), e.g. the one of a previous start stopped with
   * keepHome, to restart the same switchboard; by default each start gets a fresh one. fromHome
   * starts it as the application menu does: no --workspace, in the HOME directory.
   */
  async start(ideUrl: string, extraEnv: Record<string, string> = {}, home?: string, opts: { fromHome?: boolean } = {}): Promise<SwitchboardInfo> {
    // Unix socket paths are limited to 108 bytes: keep the temp dir short.
    this.home = home ?? mkdtempSync(path.join(os.tmpdir(), 'sb-e2e-'));
    const run = path.join(this.home, 'run');
    const workspace = path.join(this.home, 'ws');
    mkdirSync(run, { mode: 0o700, recursive: true });
    mkdirSync(workspace, { recursive: true });
    const tcpAddr = `127.0.0.1:${await freePort()}`;
    const env = cleanEnv({
      HOME: this.home,
      XDG_RUNTIME_DIR: run,
      SWITCHBOARD_IDE_URL: ideUrl,
      SWITCHBOARD_DASHBOARD_ADDR: '127.0.0.1:0',
      MCP_ADDR: tcpAddr, // the TCP transport's address; it stays off until switched on
      ...extraEnv,
    });
    const child = opts.fromHome
      ? new Child(this.name, this.bin, [], env, this.home)
      : new Child(this.name, this.bin, ['--workspace', workspace], env, workspace);
    this.child = child;
    const dash = await child.waitForOutput(/dashboard at (http:\/\/[^\s/]+)\/\?token=(\S+)/);
    const unix = child.output.match(/unix on unix:\/\/(\S+)/);
    if (!unix) throw new Error(`${this.name}: no "unix on unix://PATH" line; output:\n${child.tail()}`);
    this.info = {
      dashboardUrl: `${dash[1]}/?token=${dash[2]}`,
      origin: dash[1],
      token: dash[2],
      socket: unix[1],
      workspace,
      home: this.home,
      tcpAddr,
    };
    return this.info;
  }

  get output(): string {
    return this.child?.output ?? '';
  }

  /** Stops the child; its HOME goes too unless keepHome (for a restart with start(..., home)). */
  async stop(opts: { keepHome?: boolean } = {}): Promise<void> {
    await this.child?.stop();
    if (this.home && !opts.keepHome) rmSync(this.home, { recursive: true, force: true });
  }
}

/** `switchboard call TOOL --socket PATH --args JSON`: one call through the running hub. */
export function callTool(bin: string, socket: string, tool: string, args: object): Promise<unknown> {
  return new Promise((resolve, reject) => {
    execFile(
      bin,
      ['call', tool, '--socket', socket, '--args', JSON.stringify(args)],
      { env: cleanEnv({}), timeout: 20_000 },
      (err, stdout, stderr) => {
        if (err) return reject(new Error(`switchboard call ${tool}: ${err.message}\n${stderr}`));
        try {
          resolve(JSON.parse(stdout));
        } catch {
          reject(new Error(`switchboard call ${tool}: output is not JSON: ${stdout}`));
        }
      },
    );
  });
}
